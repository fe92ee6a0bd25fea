// SPDX-License-Identifier: MIT
/*
 * Semaphores, one case per run:
 *   sem_test mutex [threads|Nx] [iterations]   a binary semaphore as the
 *            stress harness's lock (wait, trywait, timedwait, clockwait)
 *   sem_test pc [threads|Nx]      bounded buffer on three semaphores
 *   sem_test ring [threads|Nx]    tokens passed round a ring of semaphores
 *   sem_test pshared              process-shared, parent and children
 *   sem_test interop              a sem_open'ed pair shared with a copy of
 *            this program run without the interposer (glibc's sem_*)
 *   sem_test destroy              the waiter unmaps the semaphore at once
 * Plain POSIX calls: run bare for glibc, under LD_PRELOAD for the
 * interposer.  Counts are checked exactly; a lost wake-up is a hang, which
 * the watchdog turns into a FAIL line.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "../../../src/common/hps_rand.h"

static int eno(int rc) { return rc == 0 ? 0 : errno; }

static void start(pthread_t *t, void *(*fn)(void *), void *arg)
{
    int rc = pthread_create(t, NULL, fn, arg);
    if (rc)
        hps_test_fail("pthread_create: %s", strerror(rc));
}

/* Take a token by one of the four ways, chosen by `how` (0..3); timeouts
 * and EAGAIN are retried, so every call eventually takes exactly one. */
static void take(sem_t *s, unsigned how)
{
    int rc;
    switch (how % 4) {
    case 0:
        HPS_CHECK_RC("sem_wait", eno(sem_wait(s)), 0);
        return;
    case 1: {
        unsigned n = 0;
        while ((rc = eno(sem_trywait(s))) == EAGAIN)
            if (++n % 16 == 0)
                sched_yield();
        HPS_CHECK_RC("sem_trywait", rc, 0);
        return;
    }
    case 2:
        for (;;) {
            struct timespec dl = hps_test_deadline(CLOCK_REALTIME, 20000);
            if ((rc = eno(sem_timedwait(s, &dl))) != ETIMEDOUT)
                break;
        }
        HPS_CHECK_RC("sem_timedwait", rc, 0);
        return;
    default:
        for (;;) {
            struct timespec dl = hps_test_deadline(CLOCK_MONOTONIC, 50000);
            if ((rc = eno(sem_clockwait(s, CLOCK_MONOTONIC, &dl))) != ETIMEDOUT)
                break;
        }
        HPS_CHECK_RC("sem_clockwait", rc, 0);
        return;
    }
}

static void expect_value(sem_t *s, int want, const char *what)
{
    int v = -1;
    HPS_CHECK_RC("sem_getvalue", sem_getvalue(s, &v), 0);
    HPS_CHECK(v == want, "%s: value %d, expected %d", what, v, want);
}

/* ---- mutex: the shared stress harness over a binary semaphore ----------- */

static int m_lock(void *s) { return eno(sem_wait(s)); }
static int m_trylock(void *s)
{
    int rc = eno(sem_trywait(s));
    return rc == EAGAIN ? EBUSY : rc;
}
static int m_timed(void *s, clockid_t clock, const struct timespec *abs)
{
    return eno(clock == CLOCK_REALTIME ? sem_timedwait(s, abs) : sem_clockwait(s, clock, abs));
}
static int m_unlock(void *s) { return eno(sem_post(s)); }
static void m_in_cs(void *s)
{
    int v = -1;
    sem_getvalue(s, &v);
    HPS_CHECK(v == 0, "value %d inside the critical section", v);
    HPS_CHECK_RC("sem_trywait while held", eno(sem_trywait(s)), EAGAIN);
}

static int case_mutex(const hps_test_case_t *c, int argc, char **argv)
{
    static sem_t s;
    HPS_CHECK_RC("sem_init", eno(sem_init(&s, 0, 1)), 0);
    hps_stress_ops_t ops = {
        .size = sizeof ops, .name = hps_test_name(), .lock = m_lock, .trylock = m_trylock,
        .timedlock = m_timed, .unlock = m_unlock, .in_cs = m_in_cs,
        .clocks = { CLOCK_REALTIME, CLOCK_MONOTONIC },
    };
    hps_stress_cfg_t cfg = { .ops = &ops, .lock = &s, .watchdog_s = 100 };
    hps_stress_args(argc, argv, 1, &cfg, 3, 100000);
    hps_stress_run(&cfg);
    expect_value(&s, 1, "after the stress");
    return 0;
}

/* ---- pc: bounded buffer on semaphores only -------------------------------- */

#define PC_CAP 4
#define PC_ITEMS 20000u                 /* per producer */
#define PC_POISON 0xffffffffu

static struct {
    sem_t slots, items, lock;           /* lock: a binary semaphore */
    uint32_t buf[PC_CAP];
    unsigned head, tail;
    unsigned char *seen;
    unsigned producers;
} pc;

static void *pc_producer(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    for (uint32_t i = 0; i < PC_ITEMS; i++) {
        take(&pc.slots, i + id);
        take(&pc.lock, 0);
        pc.buf[pc.tail++ % PC_CAP] = id * PC_ITEMS + i;
        sem_post(&pc.lock);
        sem_post(&pc.items);
    }
    return NULL;
}

static void *pc_consumer(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    for (unsigned n = 0;; n++) {
        take(&pc.items, n + id);
        take(&pc.lock, 0);
        uint32_t v = pc.buf[pc.head++ % PC_CAP];
        if (v != PC_POISON && pc.seen[v]++)
            hps_test_fail("item %u consumed twice", v);
        sem_post(&pc.lock);
        sem_post(&pc.slots);
        if (v == PC_POISON)
            return NULL;
    }
}

static void case_pc(unsigned threads)
{
    unsigned np = threads / 2 ? threads / 2 : 1, nc = threads - np ? threads - np : 1;
    pc.producers = np;
    pc.seen = calloc((size_t)np * PC_ITEMS, 1);
    HPS_CHECK(pc.seen, "out of memory");
    sem_init(&pc.slots, 0, PC_CAP);
    sem_init(&pc.items, 0, 0);
    sem_init(&pc.lock, 0, 1);
    pthread_t *t = calloc(np + nc, sizeof *t);
    for (unsigned i = 0; i < nc; i++)
        start(&t[np + i], pc_consumer, (void *)(uintptr_t)i);
    for (unsigned i = 0; i < np; i++)
        start(&t[i], pc_producer, (void *)(uintptr_t)i);
    for (unsigned i = 0; i < np; i++)
        pthread_join(t[i], NULL);
    for (unsigned i = 0; i < nc; i++) {
        take(&pc.slots, 0);
        take(&pc.lock, 0);
        pc.buf[pc.tail++ % PC_CAP] = PC_POISON;
        sem_post(&pc.lock);
        sem_post(&pc.items);
    }
    for (unsigned i = 0; i < nc; i++)
        pthread_join(t[np + i], NULL);
    for (size_t v = 0; v < (size_t)np * PC_ITEMS; v++)
        HPS_CHECK(pc.seen[v] == 1, "item %zu consumed %u times", v, pc.seen[v]);
    expect_value(&pc.slots, PC_CAP, "slots at the end");
    expect_value(&pc.items, 0, "items at the end");
    expect_value(&pc.lock, 1, "lock at the end");
    printf("%s: ok: %u producers x %u items, %u consumers\n", hps_test_name(), np, PC_ITEMS, nc);
    free(t);
    free(pc.seen);
}

/* ---- ring: tokens round a ring of threads, one semaphore each ----------- */

#define RING_PASSES 20000u

static struct {
    unsigned n;
    sem_t *s;
    unsigned long *passes;
} ring;

static void *ring_thread(void *arg)
{
    unsigned i = (unsigned)(uintptr_t)arg;
    for (unsigned k = 0; k < RING_PASSES; k++) {
        take(&ring.s[i], k + i);
        ring.passes[i]++;
        HPS_CHECK_RC("sem_post", eno(sem_post(&ring.s[(i + 1) % ring.n])), 0);
    }
    return NULL;
}

static void case_ring(unsigned threads)
{
    ring.n = threads < 2 ? 2 : threads;
    unsigned tokens = ring.n / 2;
    ring.s = calloc(ring.n, sizeof *ring.s);
    ring.passes = calloc(ring.n, sizeof *ring.passes);
    pthread_t *t = calloc(ring.n, sizeof *t);
    HPS_CHECK(ring.s && ring.passes && t, "out of memory");
    for (unsigned i = 0; i < ring.n; i++)
        sem_init(&ring.s[i], 0, i < tokens);
    for (unsigned i = 0; i < ring.n; i++)
        start(&t[i], ring_thread, (void *)(uintptr_t)i);
    int left = 0;
    for (unsigned i = 0; i < ring.n; i++) {
        pthread_join(t[i], NULL);
        HPS_CHECK(ring.passes[i] == RING_PASSES, "thread %u passed %lu tokens", i, ring.passes[i]);
    }
    for (unsigned i = 0; i < ring.n; i++) {
        int v;
        sem_getvalue(&ring.s[i], &v);
        left += v;
    }
    HPS_CHECK(left == (int)tokens, "%d tokens left in the ring, expected %u", left, tokens);
    printf("%s: ok: %u threads, %u tokens, %u passes each\n", hps_test_name(), ring.n, tokens, RING_PASSES);
    free(t);
    free(ring.s);
    free(ring.passes);
}

/* ---- pshared: processes share a semaphore pair and a pool ---------------- */

#define PS_TRIPS 5000
#define PS_CHILDREN 3
#define PS_TOKENS 30000                 /* divisible by PS_CHILDREN */

struct ps_shared {
    sem_t ping, pong, pool;
    _Atomic unsigned long taken[PS_CHILDREN];
};

static void case_pshared(void)
{
    struct ps_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    HPS_CHECK(sh != MAP_FAILED, "mmap failed");
    sem_init(&sh->ping, 1, 0);
    sem_init(&sh->pong, 1, 0);
    sem_init(&sh->pool, 1, 0);
    pid_t kids[PS_CHILDREN];
    for (int c = 0; c < PS_CHILDREN; c++) {
        kids[c] = fork();
        HPS_CHECK(kids[c] >= 0, "fork failed");
        if (kids[c] == 0) {
            hps_test_watchdog(60);
            if (c == 0)         /* the first child also plays ping-pong */
                for (unsigned i = 0; i < PS_TRIPS; i++) {
                    take(&sh->ping, i);
                    sem_post(&sh->pong);
                }
            for (unsigned i = 0; i < PS_TOKENS / PS_CHILDREN; i++) {
                take(&sh->pool, i + (unsigned)c);
                atomic_fetch_add(&sh->taken[c], 1);
            }
            _exit(0);
        }
    }
    for (unsigned i = 0; i < PS_TRIPS; i++) {
        sem_post(&sh->ping);
        take(&sh->pong, i);
    }
    uint64_t rng = 42;
    for (unsigned i = 0; i < PS_TOKENS; i++) {
        sem_post(&sh->pool);
        if (hps_xorshift64(&rng) % 512 == 0)
            usleep(200);        /* let the children go to sleep now and then */
    }
    unsigned long total = 0;
    for (int c = 0; c < PS_CHILDREN; c++) {
        int st;
        waitpid(kids[c], &st, 0);
        HPS_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %d failed (status 0x%x)", c, st);
        total += atomic_load(&sh->taken[c]);
    }
    HPS_CHECK(total == PS_TOKENS, "children took %lu tokens, expected %d", total, PS_TOKENS);
    expect_value(&sh->pool, 0, "pool at the end");
    expect_value(&sh->ping, 0, "ping at the end");
    expect_value(&sh->pong, 0, "pong at the end");
    printf("%s: ok: %d round trips, %d tokens over %d processes\n", hps_test_name(), PS_TRIPS,
           PS_TOKENS, PS_CHILDREN);
    munmap(sh, sizeof *sh);
}

/* ---- interop: a named pair shared with glibc's sem_* in another process -- */

#define IO_TRIPS 3000

static const char *sem_post_object(void)
{
    Dl_info di;
    void *f = dlsym(RTLD_DEFAULT, "sem_post");
    return f && dladdr(f, &di) && di.dli_fname ? di.dli_fname : "?";
}

/* Every 8th trip one side naps first, so the other really sleeps in the
 * kernel, registered by its own library's rules. */
static void io_loop(sem_t *mine, sem_t *theirs, int first, unsigned salt, void (*after_first_trip)(void))
{
    for (unsigned i = 0; i < IO_TRIPS; i++) {
        if (i == 1 && after_first_trip)
            after_first_trip();
        if (first) {
            if ((i + salt) % 8 == 0)
                usleep(300);
            HPS_CHECK_RC("sem_post", eno(sem_post(theirs)), 0);
            take(mine, i % 3 == 0 ? 0 : i % 3 + 1);    /* wait, timedwait, clockwait */
        } else {
            take(mine, i % 3 == 0 ? 0 : i % 3 + 1);
            if ((i + salt) % 8 == 4)
                usleep(300);
            HPS_CHECK_RC("sem_post", eno(sem_post(theirs)), 0);
        }
    }
}

static void case_interop_peer(const char *base)
{
    char a[96], b[96];
    snprintf(a, sizeof a, "%s-a", base);
    snprintf(b, sizeof b, "%s-b", base);
    if (strstr(sem_post_object(), "hpsync"))
        hps_test_fail("the peer's sem_post comes from %s, not glibc", sem_post_object());
    sem_t *sa = sem_open(a, 0), *sb = sem_open(b, 0);
    HPS_CHECK(sa != SEM_FAILED && sb != SEM_FAILED, "peer: sem_open failed: %s", strerror(errno));
    io_loop(sa, sb, 0, 3, NULL);
    sem_close(sa);
    sem_close(sb);
}

static char io_a[96], io_b[96];

/* Once the peer has answered, it has both open: the names can go, so that
 * nothing is left in /dev/shm even if this test dies. */
static void io_unlink(void)
{
    sem_unlink(io_a);
    sem_unlink(io_b);
}

static void case_interop(void)
{
    char base[64], *a = io_a, *b = io_b;
    snprintf(base, sizeof base, "/hpsync-sem-test-%d", (int)getpid());
    snprintf(io_a, sizeof io_a, "%s-a", base);
    snprintf(io_b, sizeof io_b, "%s-b", base);
    sem_unlink(a);
    sem_unlink(b);
    sem_t *sa = sem_open(a, O_CREAT | O_EXCL, 0600, 0), *sb = sem_open(b, O_CREAT | O_EXCL, 0600, 0);
    HPS_CHECK(sa != SEM_FAILED && sb != SEM_FAILED, "sem_open failed: %s", strerror(errno));
    const char *ours = sem_post_object();
    if (hps_test_preloaded() && !strstr(ours, "hpsync"))
        hps_test_fail("under the interposer, sem_post comes from %s", ours);
    pid_t pid = fork();
    HPS_CHECK(pid >= 0, "fork failed");
    if (pid == 0) {
        unsetenv("LD_PRELOAD");
        execl("/proc/self/exe", "sem_test", "interop_peer", base, (char *)NULL);
        _exit(127);
    }
    io_loop(sb, sa, 1, 0, io_unlink);
    int st;
    waitpid(pid, &st, 0);
    HPS_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the bare peer failed (status 0x%x)", st);
    expect_value(sa, 0, "a at the end");
    expect_value(sb, 0, "b at the end");
    printf("%s: ok: %d round trips between sem_post from %s and a bare peer's glibc\n",
           hps_test_name(), IO_TRIPS, ours);
    sem_close(sa);
    sem_close(sb);
}

/* ---- destroy: the waiter that took the last token unmaps the semaphore --- */

#define DS_ROUNDS 2000

static void *ds_waiter(void *arg)
{
    sem_t *s = arg;
    HPS_CHECK_RC("sem_wait", eno(sem_wait(s)), 0);
    /* Legal at once: no other call on it is still running (POSIX counts
     * the post that gave our token as finished). */
    HPS_CHECK_RC("sem_destroy", eno(sem_destroy(s)), 0);
    hps_test_unmap_page(s);
    return NULL;
}

static void case_destroy(void)
{
    for (unsigned r = 0; r < DS_ROUNDS; r++) {
        sem_t *s = hps_test_page();
        sem_init(s, 0, 0);
        pthread_t t;
        start(&t, ds_waiter, s);
        if (r % 2)
            usleep(50);         /* half the rounds, the waiter is asleep */
        /* Any touch of the semaphore after the token is out faults. */
        HPS_CHECK_RC("sem_post", eno(sem_post(s)), 0);
        pthread_join(t, NULL);
    }
    printf("%s: ok: %d rounds of unmap right after the wait\n", hps_test_name(), DS_ROUNDS);
}

static int case_pc_args(const hps_test_case_t *c, int argc, char **argv)
{
    case_pc(argc > 1 ? hps_test_threads(argv[1]) : 4);
    return 0;
}

static int case_ring_args(const hps_test_case_t *c, int argc, char **argv)
{
    case_ring(argc > 1 ? hps_test_threads(argv[1]) : 4);
    return 0;
}

static int case_interop_peer_args(const hps_test_case_t *c, int argc, char **argv)
{
    case_interop_peer(argv[1]);
    return 0;
}

static const hps_test_case_t cases[] = {
    { "mutex", .run_args = case_mutex, .args = "[threads|Nx] [iterations]", .max_args = 2 },
    { "pc", .run_args = case_pc_args, .args = "[threads|Nx]", .max_args = 1 },
    { "ring", .run_args = case_ring_args, .args = "[threads|Nx]", .max_args = 1 },
    { "pshared", .run = case_pshared },
    { "interop", .run = case_interop },
    /* The other process of interop: the program re-run without the interposer. */
    { "interop_peer", .run_args = case_interop_peer_args, .args = "<name>", .min_args = 1, .max_args = 1 },
    { "destroy", .run = case_destroy },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("sem_test", cases, 100, HPS_TEST_NAME_IMPL);

int main(int argc, char **argv) { return hps_test_main(&suite, argc, argv); }
