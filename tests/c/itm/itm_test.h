/* SPDX-License-Identifier: MIT */
/*
 * itm_test.h - what the GCC TM test programs share (built with -fgnu-tm).
 *
 * Each case prints one "CASE: ..." line of results that do not depend on
 * the interleaving, and fails with one FAIL line (harness.h) when an
 * invariant breaks; itm_same.sh runs it on libitm and on libhpsync-itm and
 * compares the lines.
 */
#ifndef HPS_ITM_TEST_H
#define HPS_ITM_TEST_H

#include <pthread.h>
#include <stdint.h>
#include "harness.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI's own queries (libitm.h is not installed with gcc): the tests
 * ask them to check what mode a section runs in. */
int _ITM_inTransaction(void);          /* 0 outside, 1 retryable, 2 irrevocable */
uint32_t _ITM_getTransactionId(void) __attribute__((transaction_pure));
void _ITM_addUserCommitAction(void (*fn)(void *), uint32_t tid, void *arg) __attribute__((transaction_pure));
void _ITM_addUserUndoAction(void (*fn)(void *), void *arg) __attribute__((transaction_pure));

const char *_ITM_libraryVersion(void);
/* 1 when the program runs on libhpsync-itm (a few checks hold only there,
 * where libitm differs; each says why). */
int itm_on_hpsync(void);

/* itm_ext.c, built without -fgnu-tm: code the compiler cannot instrument. */
void itm_ext_bump(long *p);
int itm_ext_mode(void);
long itm_ext_load(const long *p);

/* Threads: n copies of fn(i); the count oversubscribes this machine. */
void itm_run_threads(unsigned n, void *(*fn)(void *));
#define ITM_THREADS 8

#ifdef __cplusplus
}
#endif
#endif
