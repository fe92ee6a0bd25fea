// SPDX-License-Identifier: MIT
/*
 * Section actions: work a section schedules for its end.  A commit action
 * runs once the section has committed (a deferred condition-variable
 * signal, a GCC TM program's user commit action); an abort action runs
 * each time the section aborts, after its writes are undone (a user undo
 * action).  Either list is dropped by the other outcome.  Outside a
 * section the call is immediate (commit) or a no-op (abort): nothing can
 * roll back there.
 *
 * Commit actions run after the section is over (in_sec 0, depth 0), so an
 * action may itself run sections: the list is detached before it runs.
 */
#include "internal.h"

static hps_tm_desc_t *in_section(void)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)hps_tm_self_;
    return d && d->fast.depth && d->irrev != 1 ? d : NULL;
}

HPS_EXPORT void hps_tm_on_commit(void (*fn)(void *), void *arg)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)hps_tm_self_;
    if (!d || d->fast.depth == 0) {
        fn(arg);
        return;
    }
    /* An irrevocable section cannot abort, but its commit is still later:
     * a signal raised in it must not wake a waiter before its writes. */
    hps_tm_log_push(&d->on_commit, (uintptr_t)fn, (uint64_t)(uintptr_t)arg);
    d->slowc = 1;                    /* the library's commit runs it */
}

HPS_EXPORT void hps_tm_on_abort(void (*fn)(void *), void *arg)
{
    hps_tm_desc_t *d = in_section();
    if (d) {
        hps_tm_log_push(&d->on_abort, (uintptr_t)fn, (uint64_t)(uintptr_t)arg);
        d->slowc = 1;                /* the library's commit drops it */
    }
}

void hps_tm_actions_commit(hps_tm_desc_t *d)
{
    d->on_abort.n = 0;
    if (d->on_commit.n == 0)
        return;
    hps_tm_log_t l = d->on_commit;
    d->on_commit = (hps_tm_log_t){ 0 };
    for (uint32_t i = 0; i < l.n; i++)
        ((void (*)(void *))l.e[i].a)((void *)(uintptr_t)l.e[i].v);
    /* Keep the larger buffer; an action's own section may have made one. */
    if (d->on_commit.cap == 0) {
        l.n = 0;
        d->on_commit = l;
    } else {
        free(l.e);
    }
}

void hps_tm_actions_abort(hps_tm_desc_t *d)
{
    d->on_commit.n = 0;
    /* Newest first, as undo logs run. */
    while (d->on_abort.n) {
        hps_tm_pair_t e = d->on_abort.e[--d->on_abort.n];
        ((void (*)(void *))e.a)((void *)(uintptr_t)e.v);
    }
}
