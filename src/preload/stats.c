// SPDX-License-Identifier: MIT
/*
 * Per-lock statistics for HPSYNC_STATS=1.
 *
 * Only when statistics are on does anything look a lock up: a fixed,
 * lock-free open-addressing table keyed by the mutex address, in anonymous
 * memory mapped at start (no malloc inside a lock call).  Waits of contended
 * acquisitions go into a log-linear histogram (4 buckets per power of two),
 * so the p99 printed is exact to within 25%.  Locks beyond the table's size
 * are counted but not itemised.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "preload.h"
#include "../common/env.h"

#define NENT  4096
#define NHIST 256

struct entry {
    _Atomic uintptr_t key;
    void *caller;                     /* first call site seen */
    uint32_t kind;                    /* hps_preload_stats_kind_t, set by whoever added the entry */
    hps_au64 acq, contended, wait_sum;
    hps_au64 extra;                   /* semaphore posts, barrier serial returns */
    hps_au32 hist[NHIST];
    hps_elide_stats_t el;             /* only used with HPSYNC_ELIDE=1 */
};

static struct entry *g_tab;
static int g_err_fd = 2;      /* a private copy of stderr, taken at start */
static hps_au64 g_untracked;

uint64_t hps_preload_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static unsigned bucket_of(uint64_t v)
{
    if (v < 8)
        return (unsigned)v;
    unsigned msb = 63u - (unsigned)__builtin_clzll(v);
    unsigned b = 8 + (msb - 3) * 4 + (unsigned)((v >> (msb - 2)) & 3);
    return b < NHIST ? b : NHIST - 1;
}

static uint64_t bucket_low(unsigned b)
{
    if (b < 8)
        return b;
    unsigned msb = (b - 8) / 4 + 3, sub = (b - 8) % 4;
    return (1ull << msb) | ((uint64_t)sub << (msb - 2));
}

void hps_preload_stats_start(void)
{
    void *p = mmap(NULL, sizeof(struct entry) * NENT, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED)
        g_tab = p;
    /* Programs such as coreutils close stderr in an atexit handler, before
     * our destructor runs: keep our own descriptor for the report. */
    int fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
    if (fd >= 0)
        g_err_fd = fd;
}

static struct entry *find(const void *lock, hps_preload_stats_kind_t kind, void *caller)
{
    if (!g_tab)
        return NULL;
    uintptr_t k = (uintptr_t)lock;
    size_t h = (size_t)((k >> 4) * 0x9E3779B97F4A7C15ull) % NENT;
    for (size_t i = 0; i < NENT; i++) {
        struct entry *e = &g_tab[(h + i) % NENT];
        uintptr_t cur = hps_load_acquire(&e->key);
        if (cur == k)
            return e;
        if (cur == 0) {
            e->caller = caller;   /* benign race: some first caller wins */
            if (hps_cas_seq_cst(&e->key, &cur, k)) {
                e->kind = kind;   /* read only at exit */
                return e;
            }
            if (cur == k)
                return e;
        }
    }
    return NULL;
}

void hps_preload_stats_record(const void *lock, hps_preload_stats_kind_t kind, void *caller, int contended, uint64_t wait_ns)
{
    struct entry *e = find(lock, kind, caller);
    if (!e) {
        hps_faa_relaxed(&g_untracked, 1);
        return;
    }
    /* Relaxed throughout: counters are read once, at exit. */
    hps_faa_relaxed(&e->acq, 1);
    if (contended) {
        hps_faa_relaxed(&e->contended, 1);
        hps_faa_relaxed(&e->wait_sum, wait_ns);
        hps_faa_relaxed(&e->hist[bucket_of(wait_ns)], 1);
    }
}

void hps_preload_stats_extra(const void *obj, hps_preload_stats_kind_t kind, void *caller)
{
    struct entry *e = find(obj, kind, caller);
    if (e)
        hps_faa_relaxed(&e->extra, 1);
    else
        hps_faa_relaxed(&g_untracked, 1);
}

hps_elide_stats_t *hps_preload_stats_elide(const void *lock, void *caller)
{
    struct entry *e = find(lock, HPS_STATS_MUTEX, caller);
    return e ? &e->el : NULL;
}

static uint64_t p99_of(struct entry *e)
{
    uint64_t n = hps_load_relaxed(&e->contended), seen = 0;
    if (n == 0)
        return 0;
    uint64_t want = n - n / 100;        /* the sample at the 99th percentile */
    for (unsigned b = 0; b < NHIST; b++) {
        seen += hps_load_relaxed(&e->hist[b]);
        if (seen >= want)
            return bucket_low(b + 1 < NHIST ? b + 1 : b);
    }
    return 0;
}

static void fmt_ns(char *buf, size_t n, double ns)
{
    if (ns < 1e3)
        snprintf(buf, n, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(buf, n, "%.1f us", ns / 1e3);
    else
        snprintf(buf, n, "%.1f ms", ns / 1e6);
}

int hps_preload_symtab_name(const void *addr, char *buf, size_t n);

/* The file name of an object; the main program reports an empty path. */
static const char *base_name(const char *path)
{
    if (!path || !*path)
        return program_invocation_short_name;
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void describe(char *buf, size_t n, struct entry *e)
{
    Dl_info di;
    const void *lock = (const void *)hps_load_relaxed(&e->key);
    if (hps_preload_symtab_name(lock, buf, n) == 0)
        return;
    if (dladdr(lock, &di) && di.dli_sname && di.dli_saddr) {
        size_t off = (size_t)((const char *)lock - (const char *)di.dli_saddr);
        if (off)
            snprintf(buf, n, "%s+%zu (%s)", di.dli_sname, off, base_name(di.dli_fname));
        else
            snprintf(buf, n, "%s (%s)", di.dli_sname, base_name(di.dli_fname));
        return;
    }
    if (e->caller && dladdr(e->caller, &di)) {
        const char *verb = e->kind == HPS_STATS_MUTEX ? "locked" : "used";
        if (di.dli_sname)
            snprintf(buf, n, "first %s in %s+0x%zx (%s)", verb, di.dli_sname,
                     (size_t)((char *)e->caller - (char *)di.dli_saddr), base_name(di.dli_fname));
        else
            snprintf(buf, n, "first %s at %s+0x%zx", verb, base_name(di.dli_fname),
                     (size_t)((char *)e->caller - (char *)di.dli_fbase));
        return;
    }
    snprintf(buf, n, "-");
}

#define LD(x) ((unsigned long long)hps_load_relaxed(&(x)))

/* Which entries a table lists, and in which order. */
typedef int (*keep_fn)(const struct entry *e);
typedef int (*before_fn)(const struct entry *a, const struct entry *b);

/* The first not-yet-shown entry in `before` order (now marked shown), or
 * NULL.  Selection by repeated maximum: no allocation, fine at exit. */
static struct entry *next_best(unsigned char *shown, keep_fn keep, before_fn before)
{
    struct entry *best = NULL;
    for (size_t i = 0; i < NENT; i++) {
        struct entry *e = &g_tab[i];
        if (!shown[i] && hps_load_relaxed(&e->key) && keep(e) &&
            (!best || before(e, best)))
            best = e;
    }
    if (best)
        shown[best - g_tab] = 1;
    return best;
}

/* The kind the table being printed lists. */
static hps_preload_stats_kind_t g_table_kind;
static int of_table_kind(const struct entry *e) { return e->kind == g_table_kind; }

/* Most contended first, then most acquired. */
static int more_contended(const struct entry *a, const struct entry *b)
{
    uint64_t ca = LD(a->contended), cb = LD(b->contended);
    return ca > cb || (ca == cb && LD(a->acq) > LD(b->acq));
}

static int tried_elision(const struct entry *e) { return LD(e->el.attempts) + LD(e->el.skips) != 0; }
static int more_attempts(const struct entry *a, const struct entry *b)
{
    return LD(a->el.attempts) > LD(b->el.attempts);
}

static unsigned char g_shown[NENT];

/* The elision table: only locks that tried to elide, most attempts first. */
static void report_elision(FILE *out)
{
    size_t n = 0;
    for (size_t i = 0; i < NENT; i++)
        n += tried_elision(&g_tab[i]);
    if (n == 0)
        return;
    fprintf(out, "hpsync elision (backend %s): %zu locks\n", hps_elide_backend_name(), n);
    fprintf(out, "%-18s %10s %10s %9s %9s %9s %9s %9s %10s %8s %8s  %s\n", "lock", "attempts", "commits",
            "conflict", "capacity", "busy", "explicit", "other", "fallbacks", "skips", "waits", "where");
    memset(g_shown, 0, sizeof g_shown);
    for (size_t k = 0; k < n && k < hps_settings()->stats_top; k++) {
        struct entry *e = next_best(g_shown, tried_elision, more_attempts);
        if (!e)
            break;
        hps_elide_stats_t *el = &e->el;
        char where[256];
        describe(where, sizeof where, e);
        fprintf(out, "%-18p %10llu %10llu %9llu %9llu %9llu %9llu %9llu %10llu %8llu %8llu  %s\n",
                (void *)hps_load_relaxed(&e->key),
                LD(el->attempts), LD(el->commits), LD(el->aborts[HPS_ELIDE_ABORT_CONFLICT]),
                LD(el->aborts[HPS_ELIDE_ABORT_CAPACITY]), LD(el->aborts[HPS_ELIDE_ABORT_BUSY]),
                LD(el->aborts[HPS_ELIDE_ABORT_EXPLICIT]), LD(el->aborts[HPS_ELIDE_ABORT_OTHER]),
                LD(el->fallbacks), LD(el->skips), LD(el->busy_waits), where);
    }
}

/*
 * One table per kind of object.  Mutexes always get theirs (its first line
 * is the report's header); semaphores and barriers only when the program
 * used some.  Columns: how often the object was taken (semaphore waits,
 * barrier passes), how many of those had to wait, the waits' mean and p99,
 * and the kind's other event (posts; a barrier's rounds, i.e. its serial
 * returns, in place of "contended", which for a barrier is every arrival
 * but the last of each round).
 */
static const struct table_def {
    hps_preload_stats_kind_t kind;
    const char *title, *noun, *taken, *second, *extra;
} g_tables[] = {
    { HPS_STATS_MUTEX, "locks", "lock", "acquisitions", "contended", NULL },
    { HPS_STATS_SEM, "semaphores", "semaphore", "waits", "contended", "posts" },
    { HPS_STATS_BARRIER, "barriers", "barrier", "waits", "rounds", NULL },
};

static void report_table(FILE *out, const struct table_def *t, unsigned top_max, int pid)
{
    size_t used = 0;
    for (size_t i = 0; i < NENT; i++)
        used += hps_load_relaxed(&g_tab[i].key) != 0 && g_tab[i].kind == t->kind;
    if (used == 0 && t->kind != HPS_STATS_MUTEX)
        return;
    unsigned top = top_max < used ? top_max : (unsigned)used;
    if (t->kind == HPS_STATS_MUTEX) {
        fprintf(out, "hpsync stats: pid %d, lock %s, %zu locks seen, %u shown (most contended first)",
                pid, hps_lock_algo_name(hps_preload_algo), used, top);
        uint64_t un = hps_load_relaxed(&g_untracked);
        if (un)
            fprintf(out, ", %llu calls on objects beyond the table", (unsigned long long)un);
        fputc('\n', out);
    } else {
        fprintf(out, "hpsync %s: %zu seen, %u shown (most contended first)\n", t->title, used, top);
    }
    fprintf(out, "%-18s %14s %12s %12s %12s", t->noun, t->taken, t->second, "mean wait", "p99 wait");
    if (t->extra)
        fprintf(out, " %12s", t->extra);
    fprintf(out, "  %s\n", "where");
    memset(g_shown, 0, sizeof g_shown);
    g_table_kind = t->kind;
    for (unsigned k = 0; k < top; k++) {
        struct entry *e = next_best(g_shown, of_table_kind, more_contended);
        if (!e)
            break;
        uint64_t c = hps_load_relaxed(&e->contended);
        char mean[32] = "-", p99[32] = "-", where[256];
        if (c) {
            fmt_ns(mean, sizeof mean, (double)hps_load_relaxed(&e->wait_sum) / (double)c);
            fmt_ns(p99, sizeof p99, (double)p99_of(e));
        }
        describe(where, sizeof where, e);
        uint64_t second = t->kind == HPS_STATS_BARRIER ? hps_load_relaxed(&e->extra) : c;
        fprintf(out, "%-18p %14llu %12llu %12s %12s", (void *)hps_load_relaxed(&e->key),
                LD(e->acq), (unsigned long long)second, mean, p99);
        if (t->extra)
            fprintf(out, " %12llu", LD(e->extra));
        fprintf(out, "  %s\n", where);
    }
}

__attribute__((destructor)) static void stats_report(void)
{
    if (!g_tab)
        return;
    const hps_settings_t *s = hps_settings();
    FILE *err = g_err_fd == 2 ? stderr : fdopen(g_err_fd, "w");
    if (!err)
        err = stderr;
    FILE *out = err;
    if (s->stats_file && *s->stats_file) {
        out = fopen(s->stats_file, "a");
        if (!out) {
            fprintf(err, "hpsync: cannot open HPSYNC_STATS_FILE='%s'; writing statistics to stderr\n", s->stats_file);
            out = err;
        }
    }
    for (size_t t = 0; t < sizeof g_tables / sizeof g_tables[0]; t++)
        report_table(out, &g_tables[t], s->stats_top, (int)getpid());
    report_elision(out);
    fflush(out);
    if (out != err)
        fclose(out);
    if (err != stderr)
        fclose(err);
}
