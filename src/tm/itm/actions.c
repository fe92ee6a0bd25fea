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
 * Exceptions: the _ITM_cxa_* entries are the C++ runtime's own functions;
 * an exception that leaves a transaction commits it
 * (_ITM_commitTransactionEH), as with libitm.  An exception object
 * allocated by a section that then aborts is not freed.
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

HPS_EXPORT void *_ITM_cxa_allocate_exception(size_t n)
{
    need_cxx((const void *)__cxa_allocate_exception);
    return __cxa_allocate_exception(n);
}

HPS_EXPORT void _ITM_cxa_free_exception(void *p)
{
    need_cxx((const void *)__cxa_free_exception);
    __cxa_free_exception(p);
}

HPS_EXPORT void _ITM_cxa_throw(void *obj, void *tinfo, void (*dest)(void *))
{
    need_cxx((const void *)__cxa_throw);
    __cxa_throw(obj, tinfo, dest);
}

HPS_EXPORT void *_ITM_cxa_begin_catch(void *exc)
{
    need_cxx((const void *)__cxa_begin_catch);
    return __cxa_begin_catch(exc);
}

HPS_EXPORT void _ITM_cxa_end_catch(void)
{
    need_cxx((const void *)__cxa_end_catch);
    __cxa_end_catch();
}
