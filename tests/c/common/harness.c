// SPDX-License-Identifier: MIT
/* The shared test utilities and the mutual-exclusion stress (see harness.h). */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "../../../src/common/hps_rand.h"

/* ---- utilities ----------------------------------------------------------- */

static const char *g_name = "test";
static char g_alarm_msg[256];

void hps_test_set_name(const char *name) { g_name = name; }
const char *hps_test_name(void) { return g_name; }

void hps_test_fail(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* One write(2) so that the line stays whole even if threads race here. */
    char line[640];
    int n = snprintf(line, sizeof line, "%s: FAIL %s\n", g_name, buf);
    if (n > 0)
        (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    /* _exit: other threads may be mid-way through a lock; atexit handlers
     * (and an interposer's statistics) must not run into them. */
    _exit(1);
}

static void on_alarm(int sig)
{
    (void)sig;
    (void)!write(2, g_alarm_msg, strlen(g_alarm_msg));
    _exit(3);
}

void hps_test_watchdog(unsigned seconds)
{
    snprintf(g_alarm_msg, sizeof g_alarm_msg,
             "%s: FAIL watchdog: not finished after %u s (hang or livelock)\n", g_name, seconds);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    alarm(seconds);
}

const char *hps_errno_name(int e)
{
    switch (e) {
    case 0:          return "0";
    case EBUSY:      return "EBUSY";
    case EINVAL:     return "EINVAL";
    case EDEADLK:    return "EDEADLK";
    case EPERM:      return "EPERM";
    case ETIMEDOUT:  return "ETIMEDOUT";
    case EAGAIN:     return "EAGAIN";
    case EOWNERDEAD: return "EOWNERDEAD";
    case ENOTRECOVERABLE: return "ENOTRECOVERABLE";
    case ENOMEM:     return "ENOMEM";
    case ENOSYS:     return "ENOSYS";
    case ENOTSUP:    return "ENOTSUP";
    case EINTR:      return "EINTR";
    case EOVERFLOW:  return "EOVERFLOW";
    default: {
        static __thread char buf[32];
        snprintf(buf, sizeof buf, "errno%d", e);
        return buf;
    }
    }
}

struct timespec hps_test_deadline(clockid_t clock, long long ns)
{
    struct timespec t;
    clock_gettime(clock, &t);
    long long s = ns / 1000000000LL, r = ns % 1000000000LL;
    t.tv_sec += (time_t)s;
    t.tv_nsec += (long)r;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    } else if (t.tv_nsec < 0) {
        /* A deadline in the past (ns < 0) read when the clock's nanoseconds
         * were below -ns: without the borrow tv_nsec was negative, and the
         * lock said EINVAL, not ETIMEDOUT (lock.api.adaptive.timed, once in
         * about a thousand runs). */
        t.tv_sec--;
        t.tv_nsec += 1000000000L;
    }
    return t;
}

uint64_t hps_test_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int hps_test_preloaded(void)
{
    const char *p = getenv("LD_PRELOAD");
    return p && strstr(p, "hpsync") != NULL;
}

long hps_test_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

void hps_test_rss_sample(hps_test_rss_t *r, int warmed_up)
{
    long kb = hps_test_rss_kb();
    if (r->warm < 0 && warmed_up)
        r->warm = kb;
    if (kb > r->peak)
        r->peak = kb;
}

void hps_test_rss_check(const hps_test_rss_t *r, long max_growth_kb, unsigned long threads)
{
    if (r->warm > 0 && r->peak - r->warm > max_growth_kb)
        hps_test_fail("RSS grew from %ld kB to %ld kB over %lu threads", r->warm, r->peak, threads);
}

int hps_test_gettid(void) { return (int)syscall(SYS_gettid); }

char hps_test_thread_state(int tid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    int fd = open(path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    /* The state follows the command name, which may hold spaces. */
    const char *st = strrchr(buf, ')');
    return st && st[1] == ' ' ? st[2] : 0;
}

void hps_test_wait_asleep(int tid)
{
    for (int i = 0; i < 10000; i++) {
        if (hps_test_thread_state(tid) == 'S')
            return;
        usleep(1000);
    }
    hps_test_fail("thread %d never went to sleep", tid);
}

void *hps_test_page(void)
{
    void *p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        hps_test_fail("mmap of a page failed");
    return p;
}

void hps_test_unmap_page(void *page) { munmap(page, (size_t)sysconf(_SC_PAGESIZE)); }

unsigned long hps_test_ulong(const char *arg, const char *what)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(arg, &end, 10);
    if (errno || end == arg || *end || v == 0)
        hps_test_fail("bad %s '%s' (want a positive integer)", what, arg);
    return v;
}

unsigned hps_test_threads(const char *arg)
{
    size_t n = strlen(arg);
    if (n > 1 && arg[n - 1] == 'x') {
        char num[32];
        snprintf(num, sizeof num, "%.*s", (int)(n - 1), arg);
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        return (unsigned)(hps_test_ulong(num, "thread factor") * (unsigned long)(cpus > 0 ? cpus : 1));
    }
    return (unsigned)hps_test_ulong(arg, "thread count");
}

/* ---- stress harness ------------------------------------------------------ */

/*
 * The protected data.  Plain (non-atomic) fields on purpose: a broken lock
 * shows up as a lost update, as a torn pair, or (under TSan) as a race.
 */
struct cs_data {
    uint64_t counter;
    uint64_t shadow;      /* equals counter whenever nobody is inside */
    unsigned owner;       /* thread index + 1 while inside, else 0 */
    unsigned last;        /* who was inside last: counts hand-overs */
};

struct worker {
    const hps_stress_cfg_t *cfg;
    struct cs_data *data;
    pthread_barrier_t *go;
    unsigned id;
    unsigned long n_lock, n_try, n_timed, n_busy, n_timeout, n_handoff;
} __attribute__((aligned(64)));

static void critical_section(struct worker *w, uint32_t rnd)
{
    /* volatile: every access really goes to memory, in program order, so a
     * second thread inside would see (or cause) a mismatch. */
    volatile struct cs_data *d = w->data;
    unsigned me = w->id + 1;
    if (d->owner != 0)
        hps_test_fail("%s: thread %u entered while thread %u was inside", w->cfg->ops->name, me, d->owner);
    d->owner = me;
    if (d->last != me) {
        d->last = me;
        w->n_handoff++;
    }
    uint64_t c = d->counter;
    if (d->shadow != c)
        hps_test_fail("%s: torn critical section (counter %llu, shadow %llu)", w->cfg->ops->name,
                      (unsigned long long)c, (unsigned long long)d->shadow);
    /* A little work between read and write widens the lost-update window. */
    for (unsigned i = 0; i < (rnd & 15); i++)
        __asm__ __volatile__("" ::: "memory");
    d->counter = c + 1;
    if (w->cfg->ops->in_cs)
        w->cfg->ops->in_cs(w->cfg->lock);
    d->shadow = c + 1;
    if (d->owner != me)
        hps_test_fail("%s: owner changed to %u while thread %u was inside", w->cfg->ops->name, d->owner, me);
    d->owner = 0;
}

static void acquire(struct worker *w, uint64_t *rng, unsigned long i)
{
    const hps_stress_ops_t *ops = w->cfg->ops;
    void *l = w->cfg->lock;
    uint32_t r = (uint32_t)(hps_xorshift64(rng) >> 32);
    unsigned mode = r % 4;                 /* 0,1: lock  2: trylock  3: timed */
    int rc;
    if (mode < 2 || (mode == 2 && !ops->trylock) || (mode == 3 && !ops->timedlock)) {
        rc = ops->lock(l);
        if (rc != 0)
            hps_test_fail("%s: lock returned %s", ops->name, hps_errno_name(rc));
        w->n_lock++;
    } else if (mode == 2) {
        unsigned spins = 0;
        while ((rc = ops->trylock(l)) == EBUSY) {
            w->n_busy++;
            /* Yield now and then: the holder may be preempted on a busy box. */
            if (++spins % 16 == 0)
                sched_yield();
        }
        if (rc != 0)
            hps_test_fail("%s: trylock returned %s", ops->name, hps_errno_name(rc));
        w->n_try++;
    } else {
        clockid_t clk = ops->clocks[i & 1];
        for (;;) {
            /* 1 .. 64 us ahead: short enough that timeouts really occur. */
            struct timespec ts = hps_test_deadline(clk, 1000 + (long long)(r % 64) * 1000);
            rc = ops->timedlock(l, clk, &ts);
            if (rc != ETIMEDOUT)
                break;
            w->n_timeout++;
            r = (uint32_t)(hps_xorshift64(rng) >> 32);
        }
        if (rc != 0)
            hps_test_fail("%s: timedlock returned %s", ops->name, hps_errno_name(rc));
        w->n_timed++;
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    uint64_t rng = 0x9E3779B97F4A7C15ull * (w->id + 1);
    /* A barrier, not an atomic flag: Helgrind and TSan both understand it. */
    pthread_barrier_wait(w->go);
    for (unsigned long i = 0; i < w->cfg->iters; i++) {
        acquire(w, &rng, i);
        critical_section(w, rng);
        int rc = w->cfg->ops->unlock(w->cfg->lock);
        if (rc != 0)
            hps_test_fail("%s: unlock returned %s", w->cfg->ops->name, hps_errno_name(rc));
        /* Some work outside: lets the other cores take the lock in between,
         * so ownership changes hands often instead of once per time slice. */
        for (unsigned k = 0; k < (rng >> 8) % 64; k++)
            __asm__ __volatile__("" ::: "memory");
        /* And a yield now and then, so that with more threads than cores
         * every thread runs interleaved with the others, not in turn. */
        if ((i & 255) == 255)
            sched_yield();
    }
    return NULL;
}

void hps_stress_run(const hps_stress_cfg_t *cfg)
{
    const hps_stress_ops_t *ops = cfg->ops;
    if (!ops || ops->size != sizeof *ops)
        hps_test_fail("stress ops table has the wrong size (rebuild the shim)");
    if (cfg->watchdog_s)
        hps_test_watchdog(cfg->watchdog_s);

    struct cs_data data = { 0, 0, 0, 0 };
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, cfg->threads + 1);
    struct worker *ws = calloc(cfg->threads, sizeof *ws);
    pthread_t *tids = calloc(cfg->threads, sizeof *tids);
    if (!ws || !tids)
        hps_test_fail("out of memory");
    for (unsigned t = 0; t < cfg->threads; t++) {
        ws[t] = (struct worker){ .cfg = cfg, .data = &data, .go = &go, .id = t };
        int rc = pthread_create(&tids[t], NULL, worker_main, &ws[t]);
        if (rc != 0)
            hps_test_fail("pthread_create: %s", strerror(rc));
    }
    pthread_barrier_wait(&go);
    uint64_t t0 = hps_test_now_ns();
    for (unsigned t = 0; t < cfg->threads; t++)
        pthread_join(tids[t], NULL);
    double secs = (double)(hps_test_now_ns() - t0) / 1e9;

    unsigned long n_lock = 0, n_try = 0, n_timed = 0, n_busy = 0, n_to = 0, n_ho = 0;
    for (unsigned t = 0; t < cfg->threads; t++) {
        n_lock += ws[t].n_lock;
        n_try += ws[t].n_try;
        n_timed += ws[t].n_timed;
        n_busy += ws[t].n_busy;
        n_to += ws[t].n_timeout;
        n_ho += ws[t].n_handoff;
    }
    uint64_t want = (uint64_t)cfg->threads * cfg->iters;
    if (data.counter != want)
        hps_test_fail("%s: lost updates: counter %llu, expected %llu (%llu lost)", ops->name,
                      (unsigned long long)data.counter, (unsigned long long)want,
                      (unsigned long long)(want - data.counter));
    if (data.shadow != want || data.owner != 0)
        hps_test_fail("%s: torn final state (shadow %llu, owner %u)", ops->name,
                      (unsigned long long)data.shadow, data.owner);
    printf("%s: ok: %u threads x %lu iterations in %.2f s (lock %lu, trylock %lu [%lu EBUSY], "
           "timed %lu [%lu ETIMEDOUT]; %lu hand-overs)\n", ops->name, cfg->threads, cfg->iters, secs,
           n_lock, n_try, n_busy, n_timed, n_to, n_ho);
    fflush(stdout);
    pthread_barrier_destroy(&go);
    free(ws);
    free(tids);
    if (cfg->watchdog_s)
        alarm(0);
}

void hps_stress_args(int argc, char **argv, int first, hps_stress_cfg_t *cfg,
                     unsigned def_threads, unsigned long def_iters)
{
    cfg->threads = argc > first ? hps_test_threads(argv[first]) : def_threads;
    cfg->iters = argc > first + 1 ? hps_test_ulong(argv[first + 1], "iteration count") : def_iters;
    if (argc > first + 2)
        hps_test_fail("too many arguments (usage: %s ... [threads|Nx] [iterations])", argv[0]);
}
