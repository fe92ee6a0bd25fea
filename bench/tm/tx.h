/* SPDX-License-Identifier: MIT */
/*
 * tx.h - the access layer the TM benchmark's data structures are written
 * against, once, and that each variant maps differently.
 *
 * Exactly one of these is defined by the build (bench/tm/CMakeLists.txt):
 *   TMB_SEQ     plain code, one thread: the uninstrumented baseline;
 *   TMB_MUTEX   one glibc pthread mutex around every section;
 *   TMB_ITM     GCC TM (-fgnu-tm, libitm): __transaction_atomic with plain
 *               accesses, the compiler instruments them; the method is
 *               libitm's choice, ITM_DEFAULT_METHOD=ml_wt|gl_wt|serialirr;
 *   TMB_HPSYNC  hpsync's sections (<hpsync/tm.h>, docs/api/tm.md); the backend
 *               is HPSYNC_TM's choice;
 *   TMB_LOCK    one global lock the program picks at run time (the workloads
 *               of bench/workloads/: glibc mutex, hpsync TTS, elided TTS),
 *               through tmb_lock_enter()/tmb_lock_exit(), which it defines.
 *
 * The rules the structures keep so that every mapping is correct:
 *   - TX_BEGIN()/TX_BEGIN_RO() and TX_END() pair in one function, as { and }
 *     do, and nothing leaves a section early (no return, break or goto out
 *     of it): the mutex must be released, and hpsync's commit must run.
 *   - Locals assigned in a section are assigned on every path through it,
 *     since hpsync re-runs an aborted section from its BEGIN without
 *     restoring them (setjmp semantics).
 *   - Shared words are read with TX_READ/TX_READP and written with
 *     TX_WRITE/TX_WRITEP (words no section ever writes, such as a hash
 *     set's mask, may be read plainly); a node allocated in the section itself is private
 *     until a TX_WRITEP publishes it and may be initialised with plain stores
 *     (hps_tm_malloc frees it again if the section aborts; libitm does too).
 *   - A function called inside a section is declared TX_CALLABLE (GCC TM
 *     needs transaction_safe on functions it instruments); TX_PURE marks
 *     one that touches no shared data and may run uninstrumented.
 * Outside a section every mapping's accesses are plain loads and stores, so
 * setup and validation call the same functions.
 */
#ifndef TMB_TX_H
#define TMB_TX_H

#include <stdint.h>
#include <stdlib.h>

#if defined(TMB_SEQ) + defined(TMB_MUTEX) + defined(TMB_ITM) + defined(TMB_HPSYNC) + \
    defined(TMB_LOCK) != 1
#error "define exactly one of TMB_SEQ, TMB_MUTEX, TMB_ITM, TMB_HPSYNC, TMB_LOCK"
#endif

#if defined(TMB_HPSYNC)

#include <hpsync/tm.h>
#define TMB_VARIANT "hpsync"
#define TX_BEGIN() HPS_TM_BEGIN(); {
#define TX_BEGIN_RO() HPS_TM_BEGIN_RO(); {
#define TX_END() } HPS_TM_END()
#define TX_READ(p) HPS_TM_READ(p)
#define TX_WRITE(p, v) HPS_TM_WRITE(p, v)
/* Pointer fields go through the API's untyped pointer accessors (a _Generic
 * cannot name "any struct pointer"; the void * converts back implicitly). */
#define TX_READP(p) hps_tm_read_ptr((void *const *)(p))
#define TX_WRITEP(p, v) hps_tm_write_ptr((void **)(p), (void *)(v))
#define TX_MALLOC(n) hps_tm_malloc(n)
#define TX_FREE(q) hps_tm_free(q)
#define TX_CALLABLE
#define TX_PURE

#else /* the three mappings whose accesses are plain C */

#define TX_READ(p) (*(p))
#define TX_WRITE(p, v) ((void)(*(p) = (v)))
#define TX_READP(p) (*(p))
#define TX_WRITEP(p, v) ((void)(*(p) = (v)))
#define TX_MALLOC(n) malloc(n)
#define TX_FREE(q) free(q)

#if defined(TMB_ITM)
#define TMB_VARIANT "itm"
/* GCC instruments every access in the block and in the transaction_safe
 * functions it calls; malloc and free inside are libitm's (undone on abort,
 * deferred to commit). */
#define TX_BEGIN() __transaction_atomic {
#define TX_BEGIN_RO() TX_BEGIN()
#define TX_END() }
#define TX_CALLABLE __attribute__((transaction_safe))
#define TX_PURE __attribute__((transaction_pure))
#elif defined(TMB_LOCK)
#define TMB_VARIANT "lock"
void tmb_lock_enter(void);
void tmb_lock_exit(void);
#define TX_BEGIN() tmb_lock_enter(); {
#define TX_BEGIN_RO() TX_BEGIN()
#define TX_END() } tmb_lock_exit()
#define TX_CALLABLE
#define TX_PURE
#elif defined(TMB_MUTEX)
#include <pthread.h>
#define TMB_VARIANT "mutex"
extern pthread_mutex_t tmb_sgl;
#define TX_BEGIN() pthread_mutex_lock(&tmb_sgl); {
#define TX_BEGIN_RO() TX_BEGIN()
#define TX_END() } pthread_mutex_unlock(&tmb_sgl)
#define TX_CALLABLE
#define TX_PURE
#else
#define TMB_VARIANT "seq"
#define TX_BEGIN() {
#define TX_BEGIN_RO() {
#define TX_END() }
#define TX_CALLABLE
#define TX_PURE
#endif

#endif

/* A failed TX_MALLOC: one line and exit status 1 (no figure is better than
 * a wrong one); callable from any section. */
TX_PURE __attribute__((noreturn)) void tmb_out_of_memory(void);

#endif
