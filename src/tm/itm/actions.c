// SPDX-License-Identifier: MIT
/*
 * User actions, exceptions, and the ABI's version and error entries.
 *
 * A user commit action runs after the outermost transaction commits (in
 * the order added), an undo action each time it rolls back (newest first);
 * a cancelled nested transaction drops the commit actions it added and
 * runs its own undo actions.  Undo actions are the TM core's section abort
 * actions; commit actions are kept here, and run once this thread's
 * transaction state is clear, so that an action may run transactions.
 *
 * Exceptions: the _ITM_cxa_* entries are the C++ runtime's own functions,
 * with what a rollback must undo noted on the side: an exception object
 * allocated in the transaction and not yet thrown is freed if the
 * transaction (or the nested one that allocated it) rolls back, and so is
 * one in flight whose commit (_ITM_commitTransactionEH) aborted; catches
 * begun in an attempt that rolls back are ended.  An exception that leaves
 * a transaction commits it, as with libitm.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "itm.h"

HPS_EXPORT void _ITM_addUserCommitAction(void (*fn)(void *), uint32_t resuming_id, void *arg)
{
    hps_tm_desc_t *d = hps_itm_desc();
    if (!d || d->fast.depth == 0) {
        fn(arg);
        return;
    }
    hps_tm_log_push(&hps_itm_t.acts, (uintptr_t)fn, (uint64_t)(uintptr_t)arg);
    hps_itm_dirty(&hps_itm_t);
}

HPS_EXPORT void _ITM_addUserUndoAction(void (*fn)(void *), void *arg)
{
    hps_tm_desc_t *d = hps_itm_desc();
    if (hps_itm_revocable(d))
        hps_tm_log_push(&d->on_abort, (uintptr_t)fn, (uint64_t)(uintptr_t)arg);
}

void hps_itm_run_commit_actions(hps_itm_thread_t *t)
{
    hps_tm_log_t l = t->acts;
    t->acts = (hps_tm_log_t){ 0 };
    for (uint32_t i = 0; i < l.n; i++)
        ((void (*)(void *))l.e[i].a)((void *)(uintptr_t)l.e[i].v);
    /* Keep the larger buffer; an action's own transaction may have made one. */
    if (t->acts.cap == 0) {
        l.n = 0;
        t->acts = l;
    } else {
        free(l.e);
    }
}

/* A hint that the program no longer needs [p, p+n) to be transactional;
 * hpsync's backends have nothing to drop. */
HPS_EXPORT void _ITM_dropReferences(void *p, size_t n)
{
}

/* ---- version and errors ------------------------------------------------------ */

HPS_EXPORT const char *_ITM_libraryVersion(void)
{
    return "hpsync libhpsync-itm (GCC TM ABI " HPS_ITM_VERSION ")";
}

HPS_EXPORT int _ITM_versionCompatible(int version)
{
    return version == HPS_ITM_VERSION_NO;
}

HPS_EXPORT void _ITM_error(const void *where, int code)
{
    char line[96];
    snprintf(line, sizeof line, "hpsync: GCC TM runtime error %d\n", code);
    hps_itm_fatal(line);
}

/* ---- C++ exceptions ------------------------------------------------------------ */

extern void *__cxa_allocate_exception(size_t) __attribute__((weak));
extern void __cxa_free_exception(void *) __attribute__((weak));
extern void __cxa_throw(void *, void *, void (*)(void *)) __attribute__((weak, noreturn));
extern void *__cxa_begin_catch(void *) __attribute__((weak));
extern void __cxa_end_catch(void) __attribute__((weak));

static void need_cxx(const void *fn)
{
    if (!fn)
        hps_itm_fatal("hpsync: a C++ exception in a transaction without the C++ runtime\n");
}

/* libstdc++'s cleanup for transactions (CXXABI_TM_1): ends an exception
 * in flight and `caught` catches. */
extern void __cxa_tm_cleanup(void *unthrown, void *in_flight, unsigned caught) __attribute__((weak));
/* The Itanium C++ ABI's per-thread exception state. */
typedef struct {
    void *caught;
    unsigned int uncaught;
} hps_itm_cxa_globals_t;
extern hps_itm_cxa_globals_t *__cxa_get_globals(void) __attribute__((weak));

/* In a transaction that can still roll back (see hps_itm_revocable). */
static hps_itm_thread_t *undoable(void)
{
    return hps_itm_revocable(hps_itm_desc()) ? &hps_itm_t : NULL;
}

static void exc_forget(hps_itm_thread_t *t, const void *p)
{
    for (uint32_t i = t->exc_n; i > 0; i--) {
        if (t->exc[i - 1] == p) {
            memmove(&t->exc[i - 1], &t->exc[i], (t->exc_n - i) * sizeof *t->exc);
            t->exc_n--;
            return;
        }
    }
}

void hps_itm_exc_rollback(hps_itm_thread_t *t, uint32_t mark)
{
    while (t->exc_n > mark)
        __cxa_free_exception(t->exc[--t->exc_n]);
    if (mark)
        return;
    /* The whole transaction: its exception in flight (its commit aborted)
     * is abandoned, and the catches it began are over. */
    void *flight = t->exc_flight;
    uint32_t caught = t->catches;
    t->exc_flight = NULL;
    t->catches = 0;
    if ((flight || caught) && __cxa_tm_cleanup) {
        /* A thrown exception counts as uncaught until a catch begins. */
        if (flight && __cxa_get_globals && __cxa_get_globals()->uncaught)
            __cxa_get_globals()->uncaught--;
        __cxa_tm_cleanup(NULL, flight, caught);
    }
}

HPS_EXPORT void *_ITM_cxa_allocate_exception(size_t n)
{
    need_cxx((const void *)__cxa_allocate_exception);
    void *p = __cxa_allocate_exception(n);
    hps_itm_thread_t *t = undoable();
    if (t) {
        if (t->exc_n == t->exc_cap) {
            uint32_t cap = t->exc_cap ? 2 * t->exc_cap : 4;
            void **e = realloc(t->exc, cap * sizeof *e);
            if (!e)
                hps_itm_fatal("hpsync: out of memory noting a C++ exception in a transaction\n");
            t->exc = e;
            t->exc_cap = cap;
        }
        t->exc[t->exc_n++] = p;
        hps_itm_dirty(t);
    }
    return p;
}

HPS_EXPORT void _ITM_cxa_free_exception(void *p)
{
    need_cxx((const void *)__cxa_free_exception);
    exc_forget(&hps_itm_t, p);
    __cxa_free_exception(p);
}

HPS_EXPORT void _ITM_cxa_throw(void *obj, void *tinfo, void (*dest)(void *))
{
    need_cxx((const void *)__cxa_throw);
    exc_forget(&hps_itm_t, obj);     /* the unwinder's from here */
    __cxa_throw(obj, tinfo, dest);
}

HPS_EXPORT void *_ITM_cxa_begin_catch(void *exc)
{
    need_cxx((const void *)__cxa_begin_catch);
    hps_itm_thread_t *t = undoable();
    if (t) {
        t->catches++;
        hps_itm_dirty(t);
    }
    return __cxa_begin_catch(exc);
}

HPS_EXPORT void _ITM_cxa_end_catch(void)
{
    need_cxx((const void *)__cxa_end_catch);
    hps_itm_thread_t *t = undoable();
    if (t && t->catches)
        t->catches--;
    __cxa_end_catch();
}
