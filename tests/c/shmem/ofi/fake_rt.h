/* SPDX-License-Identifier: MIT */
/*
 * fake_rt.h - a test-only implementation of runtime.h, so the libfabric
 * transport can be tested without the launcher.
 *
 * Promise: fake_rt_run() forks npes processes that share one anonymous
 * shared mapping (the key-value store, a futex barrier, and a scratch area
 * tests may use as an out-of-band channel).  Each runs pe_main(arg); the
 * runtime calls (rank, size, put/exchange/get, barrier, abort) work in them
 * as the real ones do.  The parent waits for all; the first PE that fails,
 * dies or overruns timeout_s gets the rest killed.
 */
#ifndef HPS_TEST_FAKE_RT_H
#define HPS_TEST_FAKE_RT_H

#include "../../../../src/shmem/runtime/runtime.h"

#define FAKE_RT_MAX_PES 16
#define FAKE_RT_SHARED_BYTES 65536

/* 0 when every PE returned 0; otherwise 1 after one line on stderr naming
 * the PE and what happened to it. */
int fake_rt_run(int npes, int (*pe_main)(void *arg), void *arg, unsigned timeout_s);
/* FAKE_RT_SHARED_BYTES of zeroed memory every PE of the run shares. */
void *fake_rt_shared(void);

#endif
