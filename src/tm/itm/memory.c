// SPDX-License-Identifier: MIT
/*
 * Memory in transactions, and the clone tables.
 *
 * _ITM_malloc/_ITM_calloc/_ITM_free are hpsync's section allocation
 * (src/tm/mem.c): an allocation is freed again if the section aborts, a
 * free waits for commit and then for every section that could still read
 * the block (epochs).  A nested frame (a transaction that may cancel) can
 * roll back even inside an irrevocable section, so there the allocation
 * and the free are recorded too.
 *
 * C++: GCC calls transactional clones of operator new and delete
 * (_ZGTtnwm, _ZGTtdlPv, ...).  new calls the program's operator new and
 * deletes the block if the section aborts; delete is deferred to commit:
 * through the epochs when operator delete is libstdc++'s (which is free()),
 * else as a commit action.
 *
 * Clone tables: every object built with -fgnu-tm carries a table of
 * (function, its transactional clone) pairs, registered by crtbegin.o's
 * constructor.  A call through a function pointer inside a transaction
 * asks for the clone (_ITM_getTMCloneOrIrrevocable, _ITM_getTMCloneSafe);
 * a function without one runs with the section irrevocable.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "itm.h"

/* ---- malloc and free ------------------------------------------------------- */

static void *alloc(size_t n)
{
    void *p = hps_tm_malloc(n);
    hps_tm_desc_t *d = hps_itm_desc();
    /* hps_tm_malloc records it unless the section is irrevocable. */
    if (p && d && d->fast.depth && d->irrev && hps_itm_t.nframes)
        hps_tm_pvec_push(&d->allocs, p);
    return p;
}

HPS_EXPORT void *_ITM_malloc(size_t n)
{
    return alloc(n);
}

HPS_EXPORT void *_ITM_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = alloc(n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

HPS_EXPORT void _ITM_free(void *p)
{
    hps_tm_desc_t *d = hps_itm_desc();
    if (p && d && d->fast.depth && d->irrev && hps_itm_t.nframes) {
        hps_tm_pvec_push(&d->frees, p);
        return;
    }
    hps_tm_free(p);
}

/* ---- operator new and delete ------------------------------------------------- */

/* The program's operators (libstdc++'s, or its own replacements); weak, so
 * that a C program loads this library without libstdc++. */
extern void *_Znwm(size_t) __attribute__((weak));
extern void *_Znam(size_t) __attribute__((weak));
extern void *_ZnwmRKSt9nothrow_t(size_t, const void *) __attribute__((weak));
extern void *_ZnamRKSt9nothrow_t(size_t, const void *) __attribute__((weak));
extern void _ZdlPv(void *) __attribute__((weak));
extern void _ZdaPv(void *) __attribute__((weak));

static void need(const void *fn)
{
    if (!fn)
        hps_itm_fatal("hpsync: a transactional operator new/delete without libstdc++\n");
}

/* A new block: deleted again if the section aborts (an abort action, so a
 * cancelled nested frame deletes its own). */
static void *noted(void *p, void (*del)(void *))
{
    hps_tm_desc_t *d = hps_itm_desc();
    if (p && hps_itm_revocable(d))
        hps_tm_log_push(&d->on_abort, (uintptr_t)del, (uint64_t)(uintptr_t)p);
    return p;
}

HPS_EXPORT void *_ZGTtnwm(size_t n) { need(_Znwm); return noted(_Znwm(n), _ZdlPv); }
HPS_EXPORT void *_ZGTtnam(size_t n) { need(_Znam); return noted(_Znam(n), _ZdaPv); }
HPS_EXPORT void *_ZGTtnwmRKSt9nothrow_t(size_t n, const void *nt)
{
    need(_ZnwmRKSt9nothrow_t);
    return noted(_ZnwmRKSt9nothrow_t(n, nt), _ZdlPv);
}
HPS_EXPORT void *_ZGTtnamRKSt9nothrow_t(size_t n, const void *nt)
{
    need(_ZnamRKSt9nothrow_t);
    return noted(_ZnamRKSt9nothrow_t(n, nt), _ZdaPv);
}

/* 1 when fn is libstdc++'s (whose operator delete is free()). */
static int from_libstdcxx(void (*fn)(void *))
{
    Dl_info info;
    return dladdr((void *)fn, &info) && info.dli_fname && strstr(info.dli_fname, "libstdc++");
}

static int g_delete_is_free = -1;    /* benign race: every thread computes the same */

static void deleted(void *p, void (*del)(void *))
{
    if (!p)
        return;
    need((const void *)del);
    hps_tm_desc_t *d = hps_itm_desc();
    if (!d || d->fast.depth == 0) {
        del(p);
        return;
    }
    if (g_delete_is_free < 0)
        g_delete_is_free = from_libstdcxx(_ZdlPv) && from_libstdcxx(_ZdaPv);
    if (g_delete_is_free) {
        _ITM_free(p);
        return;
    }
    hps_tm_log_push(&hps_itm_t.acts, (uintptr_t)del, (uint64_t)(uintptr_t)p);
    hps_itm_dirty(&hps_itm_t);
}

HPS_EXPORT void _ZGTtdlPv(void *p) { deleted(p, _ZdlPv); }
HPS_EXPORT void _ZGTtdaPv(void *p) { deleted(p, _ZdaPv); }
HPS_EXPORT void _ZGTtdlPvRKSt9nothrow_t(void *p, const void *nt) { deleted(p, _ZdlPv); }
HPS_EXPORT void _ZGTtdaPvRKSt9nothrow_t(void *p, const void *nt) { deleted(p, _ZdaPv); }
/* Sized delete: the size is a hint the unsized operator does without. */
HPS_EXPORT void _ZGTtdlPvm(void *p, size_t n) { deleted(p, _ZdlPv); }
HPS_EXPORT void _ZGTtdlPvmRKSt9nothrow_t(void *p, size_t n, const void *nt) { deleted(p, _ZdlPv); }

/* ---- clone tables ------------------------------------------------------------ */

typedef struct clone_pair {
    const void *fn, *clone;
} clone_pair_t;

/* One registered table, its pairs sorted by function.  The list is only
 * prepended to under the mutex and read without it (acquire): tables are
 * registered by constructors, before the transactions that use them. */
typedef struct clone_table {
    const void *key;                 /* the address crtbegin registered */
    clone_pair_t *e;
    size_t n;
    hps_aptr next;                   /* struct clone_table * */
} clone_table_t;

static pthread_mutex_t g_clone_mu = PTHREAD_MUTEX_INITIALIZER;
static hps_aptr g_tables;            /* clone_table_t * */

static int pair_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const clone_pair_t *)a)->fn;
    uintptr_t y = (uintptr_t)((const clone_pair_t *)b)->fn;
    return x < y ? -1 : x > y;
}

HPS_EXPORT void _ITM_registerTMCloneTable(void *table, size_t n)
{
    clone_table_t *t = malloc(sizeof *t);
    clone_pair_t *e = malloc((n ? n : 1) * sizeof *e);
    if (!t || !e)
        hps_itm_fatal("hpsync: out of memory registering a TM clone table\n");
    memcpy(e, table, n * sizeof *e);
    qsort(e, n, sizeof *e, pair_cmp);
    t->key = table;
    t->e = e;
    t->n = n;
    pthread_mutex_lock(&g_clone_mu);
    hps_store_relaxed(&t->next, hps_load_relaxed(&g_tables));
    /* Release: a reader that sees the table sees its sorted pairs. */
    hps_store_release(&g_tables, t);
    pthread_mutex_unlock(&g_clone_mu);
}

/* At dlclose: the table leaves the list.  Its memory stays (a reader may
 * be walking past it; no transaction may call into an unloaded object). */
HPS_EXPORT void _ITM_deregisterTMCloneTable(void *table)
{
    pthread_mutex_lock(&g_clone_mu);
    clone_table_t *prev = NULL;
    for (clone_table_t *t = hps_load_relaxed(&g_tables); t; prev = t, t = hps_load_relaxed(&t->next)) {
        if (t->key != table)
            continue;
        /* Release: as at registration. */
        hps_store_release(prev ? &prev->next : &g_tables, hps_load_relaxed(&t->next));
        break;
    }
    pthread_mutex_unlock(&g_clone_mu);
}

static void *clone_of(const void *fn)
{
    for (clone_table_t *t = hps_load_acquire(&g_tables); t; t = hps_load_acquire(&t->next)) {
        size_t lo = 0, hi = t->n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (t->e[mid].fn == fn)
                return (void *)t->e[mid].clone;
            if ((uintptr_t)t->e[mid].fn < (uintptr_t)fn)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    return NULL;
}

HPS_EXPORT void *_ITM_getTMCloneOrIrrevocable(void *fn)
{
    void *c = clone_of(fn);
    if (c)
        return c;
    /* No clone: the call runs uninstrumented, so the section must be
     * irrevocable first (in place where it can be, else by a restart). */
    _ITM_changeTransactionMode(HPS_ITM_MODE_SERIAL_IRREVOCABLE);
    return fn;
}

HPS_EXPORT void *_ITM_getTMCloneSafe(void *fn)
{
    void *c = clone_of(fn);
    if (!c)
        hps_itm_fatal("hpsync: a transaction_safe function pointer without a transactional clone\n");
    return c;
}
