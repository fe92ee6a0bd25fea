# SPDX-License-Identifier: MIT
# The libfabric transport: see ofi.h (interface and why it is a module),
# ofi_inline.h (what the core inlines) and ofi_internal.h (how the files
# divide the work).  HPS_SHMEM_OFI_SOURCES are the transport proper, which
# the module and tests/c/shmem/ofi both link; ofi_module.c is the module's
# entry point and its forwards into the core.
find_package(PkgConfig REQUIRED)
pkg_check_modules(FABRIC REQUIRED IMPORTED_TARGET libfabric)
set(HPS_SHMEM_OFI_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/ofi_setup.c
  ${CMAKE_CURRENT_LIST_DIR}/ofi_ctx.c
  ${CMAKE_CURRENT_LIST_DIR}/ofi_rma.c
  ${CMAKE_CURRENT_LIST_DIR}/ofi_atomic.c
  ${CMAKE_CURRENT_LIST_DIR}/ofi_progress.c)
set(HPS_SHMEM_OFI_LIBS PkgConfig::FABRIC)
set(HPS_SHMEM_OFI_MODULE_FILE libhpsync-shmem-ofi.so)
