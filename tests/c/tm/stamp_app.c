// SPDX-License-Identifier: MIT
/*
 * stamp_app - a small program written the way STAMP's applications are
 * (MAIN, a pool of threads that each run TM_THREAD_ENTER ... TM_THREAD_EXIT,
 * TM_BEGIN/TM_END sections with TM_SHARED_READ/WRITE in their _P, _F and _D
 * forms, TM_MALLOC/TM_FREE, a TM_RESTART wait, P_MALLOC/P_FREE), built
 * against hpsync's STAMP header as an application would be: `#include
 * "tm.h"` finds include/hpsync/stamp/tm.h first (CMakeLists.txt), and the
 * program links -lhpsync.  HPSYNC_TM picks the backend.
 *
 *   stamp_app [THREADS [ITEMS]]     (defaults 8 and 2000)
 *
 * Every thread pushes ITEMS items onto a shared stack (each a fresh
 * TM_MALLOC block), waits at a barrier built from a section and TM_RESTART,
 * then pops ITEMS items (TM_FREE), logging each popped key; transfers
 * between accounts and read-only audits run throughout.  Afterwards it
 * checks the stack is empty, every key was popped exactly once, the sums
 * (long, int, float, double) are the items', the accounts keep their total,
 * no audit saw another and the barrier held.  Exit 0, or one "stamp_app:
 * FAIL ..." line and 1; a watchdog turns a hang into a failure.
 */
#define _POSIX_C_SOURCE 200809L    /* pthread barriers under -std=c99 too */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>
#include "tm.h"

#define NUM_ACCOUNT 64
#define ACCOUNT_START 1000L

typedef struct item {
    long key;
    float weight;                /* small integers: float sums stay exact */
    struct item *next;
} item_t;

typedef struct manager {
    long account[NUM_ACCOUNT];
    item_t *stack;
    long pushed;                 /* committed pushes */
    long arrived;                /* threads at the barrier */
    long keySum;                 /* of the popped items */
    int popCount;                /* a 4-byte counter, as kmeans keeps them */
    float weightSum;
    double weightSumD;
    long badAudit;               /* audits that saw another total */
    long badBarrier;             /* threads that left the barrier early */
    long emptyPop;               /* pops that found the stack empty */
} manager_t;

static manager_t *global_mgr;
static long global_numThread;
static long global_numItem;
static long **global_popped;     /* per thread: the keys it popped */

static void fail(const char *what, long got, long want)
{
    fprintf(stderr, "stamp_app: FAIL %s: %ld, expected %ld\n", what, got, want);
    exit(1);
}

static void on_alarm(int sig)
{
    static const char msg[] = "stamp_app: FAIL watchdog: no result after 100 s (hang?)\n";
    (void)sig;
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

/* ---- a pool in the manner of STAMP's lib/thread.c ------------------------ */

static __thread long thread_id;
/* Every thread starts its work at once, as STAMP's pool does (its threads
 * wait at a barrier for thread_start), so sections overlap from the start. */
static pthread_barrier_t pool_gate;

typedef struct pool_arg {
    long id;
    void (*fn)(void *);
    void *arg;
} pool_arg_t;

static void *pool_trampoline(void *p)
{
    pool_arg_t *a = p;
    thread_id = a->id;
    pthread_barrier_wait(&pool_gate);
    a->fn(a->arg);
    return NULL;
}

/* Run fn on numThread threads: the caller is thread 0. */
static void pool_run(long numThread, void (*fn)(void *), void *arg)
{
    pthread_t *tids = P_MALLOC(numThread * sizeof *tids);
    pool_arg_t *args = P_MALLOC(numThread * sizeof *args);
    assert(tids && args);
    pthread_barrier_init(&pool_gate, NULL, (unsigned)numThread);
    for (long i = 0; i < numThread; i++)
        args[i] = (pool_arg_t){ i, fn, arg };
    for (long i = 1; i < numThread; i++)
        if (pthread_create(&tids[i], NULL, pool_trampoline, &args[i]) != 0)
            fail("pthread_create", i, -1);
    pool_trampoline(&args[0]);
    for (long i = 1; i < numThread; i++)
        pthread_join(tids[i], NULL);
    pthread_barrier_destroy(&pool_gate);
    free(tids);
    free(args);
}

/* ---- the sections ----------------------------------------------------------- */

static unsigned long rnd(unsigned long *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Busy work inside a section between its reads and its writes: widens the
 * window in which another thread's section overlaps it, so sections do
 * conflict even when threads get long time slices. */
TM_PURE static void spin(void)
{
    for (volatile int i = 0; i < 48; i++)
        ;
}

TM_CALLABLE static void push(TM_ARGDECL manager_t *m, long key)
{
    TM_BEGIN();
    item_t *it = (item_t *)TM_MALLOC(sizeof *it);
    assert(it);
    it->key = key;               /* private until published below */
    it->weight = (float)(key % 7 + 1);
    it->next = TM_SHARED_READ_P(m->stack);
    spin();
    TM_SHARED_WRITE_P(m->stack, it);
    TM_SHARED_WRITE(m->pushed, TM_SHARED_READ(m->pushed) + 1);
    TM_END();
}

/* The key popped, or 0 for an empty stack (counted as a failure). */
TM_CALLABLE static long pop(TM_ARGDECL manager_t *m)
{
    long key = 0;
    TM_BEGIN();
    item_t *top = TM_SHARED_READ_P(m->stack);   /* declared in the section... */
    if (top) {
        spin();
        TM_SHARED_WRITE_P(m->stack, TM_SHARED_READ_P(top->next));
        TM_LOCAL_WRITE(key, TM_SHARED_READ(top->key));
        float w = TM_SHARED_READ_F(top->weight);
        TM_SHARED_WRITE(m->keySum, TM_SHARED_READ(m->keySum) + key);
        TM_SHARED_WRITE(m->popCount, TM_SHARED_READ(m->popCount) + 1);
        TM_SHARED_WRITE_F(m->weightSum, TM_SHARED_READ_F(m->weightSum) + w);
        TM_SHARED_WRITE_D(m->weightSumD, TM_SHARED_READ_D(m->weightSumD) + w);
        TM_FREE(top);
    } else {
        key = 0;
    }
    TM_END();
    if (!top) {                  /* ...and still in scope after it, as in STAMP */
        TM_BEGIN();
        TM_SHARED_WRITE(m->emptyPop, TM_SHARED_READ(m->emptyPop) + 1);
        TM_END();
    }
    return key;
}

TM_CALLABLE static void transfer(TM_ARGDECL manager_t *m, unsigned long *seed)
{
    long a = (long)(rnd(seed) % NUM_ACCOUNT), b = (long)(rnd(seed) % NUM_ACCOUNT);
    long amount = (long)(rnd(seed) % 20);
    TM_BEGIN();
    long x = TM_SHARED_READ(m->account[a]);
    spin();
    if (x >= amount && a != b) {
        TM_SHARED_WRITE(m->account[a], x - amount);
        TM_SHARED_WRITE(m->account[b], TM_SHARED_READ(m->account[b]) + amount);
    }
    TM_END();
}

TM_CALLABLE static void audit(TM_ARGDECL manager_t *m)
{
    long sum;
    TM_BEGIN_RO();
    sum = 0;
    for (long i = 0; i < NUM_ACCOUNT; i++) {
        sum += TM_SHARED_READ(m->account[i]);
        TM_EARLY_RELEASE(m->account[i]);
    }
    TM_END();
    if (sum != NUM_ACCOUNT * ACCOUNT_START) {
        TM_BEGIN();
        TM_SHARED_WRITE(m->badAudit, TM_SHARED_READ(m->badAudit) + 1);
        TM_END();
    }
}

/* A barrier from a section: arrive, then restart until everyone has. The
 * first attempt of the arrival restarts once on purpose (the local is
 * volatile: it is written after the checkpoint and read after a restart). */
TM_CALLABLE static void barrier(TM_ARGDECL manager_t *m)
{
    volatile int attempt = 0;
    TM_BEGIN();
    if (attempt++ == 0)
        TM_RESTART();
    TM_SHARED_WRITE(m->arrived, TM_SHARED_READ(m->arrived) + 1);
    TM_END();
    long pushed;
    TM_BEGIN_RO();
    if (TM_SHARED_READ(m->arrived) < global_numThread)
        TM_RESTART();
    pushed = TM_SHARED_READ(m->pushed);
    TM_END();
    if (pushed != global_numThread * global_numItem) {
        TM_BEGIN();
        TM_SHARED_WRITE(m->badBarrier, TM_SHARED_READ(m->badBarrier) + 1);
        TM_END();
    }
}

static void work(void *argPtr)
{
    TM_THREAD_ENTER();
    manager_t *m = argPtr;
    long id = thread_id;
    unsigned long seed = 0x9E3779B97F4A7C15ul * (unsigned long)(id + 1) | 1;
    long *log = P_MALLOC(global_numItem * sizeof *log);
    assert(log);
    for (long i = 0; i < global_numItem; i++) {
        push(TM_ARG m, 1 + id * global_numItem + i);
        if (i % 8 == 0)
            audit(TM_ARG_ALONE m);
        transfer(TM_ARG m, &seed);
    }
    barrier(TM_ARG m);
    for (long i = 0; i < global_numItem; i++) {
        log[i] = pop(TM_ARG m);
        if (i % 8 == 0)
            audit(TM_ARG_ALONE m);
        transfer(TM_ARG m, &seed);
    }
    global_popped[id] = log;     /* P_FREE'd by main after the check */
    TM_THREAD_EXIT();
}

MAIN(argc, argv)
{
    GOTO_REAL();
    long numThread = argc > 1 ? atol(argv[1]) : 8;
    long numItem = argc > 2 ? atol(argv[2]) : 2000;
    if (numThread < 1 || numThread > 256 || numItem < 1 || numItem > 1000000) {
        fprintf(stderr, "usage: stamp_app [THREADS 1..256 [ITEMS 1..1000000]]\n");
        exit(2);
    }
    long numCpu = 0;
    SIM_GET_NUM_CPU(numCpu);
    signal(SIGALRM, on_alarm);
    alarm(100);

    TM_STARTUP(numThread);
    P_MEMORY_STARTUP(numThread);
    global_numThread = numThread;
    global_numItem = numItem;
    global_mgr = P_MALLOC(sizeof *global_mgr);
    global_popped = P_MALLOC(numThread * sizeof *global_popped);
    assert(global_mgr && global_popped);
    memset(global_mgr, 0, sizeof *global_mgr);
    for (long i = 0; i < NUM_ACCOUNT; i++)
        global_mgr->account[i] = ACCOUNT_START;

    GOTO_SIM();
    pool_run(numThread, work, global_mgr);
    GOTO_REAL();

    /* The checks, outside any section. */
    manager_t *m = global_mgr;
    long n = numThread * numItem, total = 0;
    for (long i = 0; i < NUM_ACCOUNT; i++)
        total += m->account[i];
    if (total != NUM_ACCOUNT * ACCOUNT_START)
        fail("account total", total, NUM_ACCOUNT * ACCOUNT_START);
    if (m->badAudit)
        fail("audits that saw another total", m->badAudit, 0);
    if (m->badBarrier)
        fail("threads past the barrier before every push committed", m->badBarrier, 0);
    if (m->emptyPop)
        fail("pops that found the stack empty", m->emptyPop, 0);
    if (m->stack)
        fail("items left on the stack (first key)", m->stack->key, 0);
    if (m->pushed != n)
        fail("pushes", m->pushed, n);
    if (m->popCount != n)
        fail("pops (int counter)", m->popCount, n);
    unsigned char *seen = calloc((size_t)n + 1, 1);
    assert(seen);
    double weights = 0;
    for (long t = 0; t < numThread; t++) {
        for (long i = 0; i < numItem; i++) {
            long k = global_popped[t][i];
            if (k < 1 || k > n || seen[k]++)
                fail("a key popped twice or out of range", k, -1);
            weights += (double)(k % 7 + 1);
        }
        P_FREE(global_popped[t]);
    }
    if (m->keySum != n * (n + 1) / 2)
        fail("sum of popped keys", m->keySum, n * (n + 1) / 2);
    if (m->weightSum != (float)weights)
        fail("float sum of weights", (long)m->weightSum, (long)weights);
    if (m->weightSumD != weights)
        fail("double sum of weights", (long)m->weightSumD, (long)weights);
    /* Beyond STAMP: hpsync's statistics confirm the deliberate restarts ran. */
    hps_tm_stats_t st;
    hps_tm_stats_total(&st);
    if (st.aborts_by_cause[HPS_TM_CAUSE_EXPLICIT] < (uint64_t)numThread)
        fail("explicit restarts", (long)st.aborts_by_cause[HPS_TM_CAUSE_EXPLICIT], numThread);
    TM_PRINTF("stamp_app: %s, %ld threads x %ld items: every check passed (%llu commits, "
              "%llu aborts)\n", hps_tm_backend_name(), numThread, numItem,
              (unsigned long long)st.commits, (unsigned long long)st.aborts);

    free(seen);
    P_FREE(global_popped);
    P_FREE(global_mgr);
    TM_SHUTDOWN();
    P_MEMORY_SHUTDOWN();
    (void)numCpu;
    (void)IS_IN_SIM();
    MAIN_RETURN(0);
}
