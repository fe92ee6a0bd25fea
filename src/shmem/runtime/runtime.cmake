# SPDX-License-Identifier: MIT
# The runtime back-ends (local rendezvous, PMIx, singleton): see runtime.h;
# and errline.c, the library's one error line, which every layer above
# uses too (listed here because the runtime is the layer all of them link).
#   HPS_SHMEM_RUNTIME_SOURCES  to compile into libhpsync-shmem
#   HPS_SHMEM_RUNTIME_LIBS     to link it with (libpmix)
#   hps_shmem_rt               the runtime alone, a static library for its
#                              own tests (tests/c/shmem/runtime) and nothing else
# The sources include "hpsync/pr.h" (include/) and relative paths only.
find_package(PkgConfig REQUIRED)
# GLOBAL: targets in other directories (the tests) link through hps_shmem_rt.
pkg_check_modules(PMIX REQUIRED IMPORTED_TARGET GLOBAL pmix)

set(HPS_SHMEM_RUNTIME_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/errline.c
  ${CMAKE_CURRENT_LIST_DIR}/runtime.c
  ${CMAKE_CURRENT_LIST_DIR}/local.c
  ${CMAKE_CURRENT_LIST_DIR}/pmix.c
  ${CMAKE_CURRENT_LIST_DIR}/singleton.c)
set(HPS_SHMEM_RUNTIME_LIBS PkgConfig::PMIX)

if(NOT TARGET hps_shmem_rt)
  add_library(hps_shmem_rt STATIC ${HPS_SHMEM_RUNTIME_SOURCES})
  target_include_directories(hps_shmem_rt PUBLIC ${CMAKE_CURRENT_LIST_DIR}
                             PRIVATE ${CMAKE_SOURCE_DIR}/include)
  target_link_libraries(hps_shmem_rt PRIVATE ${HPS_SHMEM_RUNTIME_LIBS})
  set_target_properties(hps_shmem_rt PROPERTIES C_VISIBILITY_PRESET hidden)
endif()
