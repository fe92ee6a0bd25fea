// SPDX-License-Identifier: MIT
/*
 * stamp_macros - compiled, never run: every macro STAMP 0.9.10's lib/tm.h
 * defines must exist in hpsync's STAMP header, or the build stops here
 * naming the missing one.  The list is STAMP's (its simulator interface, its
 * TM system interface and the shared/local accesses), plus TM_PURE and
 * TM_SAFE, which the GCC-TM ports of STAMP add.
 */
#include "tm.h"

#ifndef MAIN
#error "hpsync/stamp/tm.h does not define MAIN"
#endif
#ifndef MAIN_RETURN
#error "hpsync/stamp/tm.h does not define MAIN_RETURN"
#endif
#ifndef GOTO_SIM
#error "hpsync/stamp/tm.h does not define GOTO_SIM"
#endif
#ifndef GOTO_REAL
#error "hpsync/stamp/tm.h does not define GOTO_REAL"
#endif
#ifndef IS_IN_SIM
#error "hpsync/stamp/tm.h does not define IS_IN_SIM"
#endif
#ifndef SIM_GET_NUM_CPU
#error "hpsync/stamp/tm.h does not define SIM_GET_NUM_CPU"
#endif
#ifndef TM_PRINTF
#error "hpsync/stamp/tm.h does not define TM_PRINTF"
#endif
#ifndef TM_PRINT0
#error "hpsync/stamp/tm.h does not define TM_PRINT0"
#endif
#ifndef TM_PRINT1
#error "hpsync/stamp/tm.h does not define TM_PRINT1"
#endif
#ifndef TM_PRINT2
#error "hpsync/stamp/tm.h does not define TM_PRINT2"
#endif
#ifndef TM_PRINT3
#error "hpsync/stamp/tm.h does not define TM_PRINT3"
#endif
#ifndef P_MEMORY_STARTUP
#error "hpsync/stamp/tm.h does not define P_MEMORY_STARTUP"
#endif
#ifndef P_MEMORY_SHUTDOWN
#error "hpsync/stamp/tm.h does not define P_MEMORY_SHUTDOWN"
#endif
#ifndef TM_ARG
#error "hpsync/stamp/tm.h does not define TM_ARG"
#endif
#ifndef TM_ARG_ALONE
#error "hpsync/stamp/tm.h does not define TM_ARG_ALONE"
#endif
#ifndef TM_ARGDECL
#error "hpsync/stamp/tm.h does not define TM_ARGDECL"
#endif
#ifndef TM_ARGDECL_ALONE
#error "hpsync/stamp/tm.h does not define TM_ARGDECL_ALONE"
#endif
#ifndef TM_CALLABLE
#error "hpsync/stamp/tm.h does not define TM_CALLABLE"
#endif
#ifndef TM_PURE
#error "hpsync/stamp/tm.h does not define TM_PURE"
#endif
#ifndef TM_SAFE
#error "hpsync/stamp/tm.h does not define TM_SAFE"
#endif
#ifndef TM_STARTUP
#error "hpsync/stamp/tm.h does not define TM_STARTUP"
#endif
#ifndef TM_SHUTDOWN
#error "hpsync/stamp/tm.h does not define TM_SHUTDOWN"
#endif
#ifndef TM_THREAD_ENTER
#error "hpsync/stamp/tm.h does not define TM_THREAD_ENTER"
#endif
#ifndef TM_THREAD_EXIT
#error "hpsync/stamp/tm.h does not define TM_THREAD_EXIT"
#endif
#ifndef P_MALLOC
#error "hpsync/stamp/tm.h does not define P_MALLOC"
#endif
#ifndef P_FREE
#error "hpsync/stamp/tm.h does not define P_FREE"
#endif
#ifndef TM_MALLOC
#error "hpsync/stamp/tm.h does not define TM_MALLOC"
#endif
#ifndef TM_FREE
#error "hpsync/stamp/tm.h does not define TM_FREE"
#endif
#ifndef TM_BEGIN
#error "hpsync/stamp/tm.h does not define TM_BEGIN"
#endif
#ifndef TM_BEGIN_RO
#error "hpsync/stamp/tm.h does not define TM_BEGIN_RO"
#endif
#ifndef TM_END
#error "hpsync/stamp/tm.h does not define TM_END"
#endif
#ifndef TM_RESTART
#error "hpsync/stamp/tm.h does not define TM_RESTART"
#endif
#ifndef TM_EARLY_RELEASE
#error "hpsync/stamp/tm.h does not define TM_EARLY_RELEASE"
#endif
#ifndef TM_SHARED_READ
#error "hpsync/stamp/tm.h does not define TM_SHARED_READ"
#endif
#ifndef TM_SHARED_READ_P
#error "hpsync/stamp/tm.h does not define TM_SHARED_READ_P"
#endif
#ifndef TM_SHARED_READ_F
#error "hpsync/stamp/tm.h does not define TM_SHARED_READ_F"
#endif
#ifndef TM_SHARED_WRITE
#error "hpsync/stamp/tm.h does not define TM_SHARED_WRITE"
#endif
#ifndef TM_SHARED_WRITE_P
#error "hpsync/stamp/tm.h does not define TM_SHARED_WRITE_P"
#endif
#ifndef TM_SHARED_WRITE_F
#error "hpsync/stamp/tm.h does not define TM_SHARED_WRITE_F"
#endif
#ifndef TM_LOCAL_WRITE
#error "hpsync/stamp/tm.h does not define TM_LOCAL_WRITE"
#endif
#ifndef TM_LOCAL_WRITE_P
#error "hpsync/stamp/tm.h does not define TM_LOCAL_WRITE_P"
#endif
#ifndef TM_LOCAL_WRITE_F
#error "hpsync/stamp/tm.h does not define TM_LOCAL_WRITE_F"
#endif

/* An object file needs something in it. */
int hps_stamp_macros_checked = 42;
