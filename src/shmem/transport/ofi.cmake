# SPDX-License-Identifier: MIT
# The libfabric transport: see ofi.h (interface), ofi_inline.h (the fast
# paths the core inlines) and ofi_internal.h (how the files divide the work).
find_package(PkgConfig REQUIRED)
pkg_check_modules(FABRIC REQUIRED IMPORTED_TARGET libfabric)
set(HPS_SHMEM_OFI_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/ofi_setup.c
  ${CMAKE_CURRENT_LIST_DIR}/ofi_rma.c
  ${CMAKE_CURRENT_LIST_DIR}/ofi_atomic.c
  ${CMAKE_CURRENT_LIST_DIR}/ofi_progress.c)
set(HPS_SHMEM_OFI_LIBS PkgConfig::FABRIC)
