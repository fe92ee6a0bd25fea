// SPDX-License-Identifier: MIT
/*
 * hps-bench-elide: what lock elision costs and what it buys.
 *
 * Linked against the static library (and src/ for the policy's header), so it
 * calls hps_elide_lock/unlock exactly as a user of <hpsync/elide.h> does and
 * can also time the pure policy function hps_elide_decide.  The backend is
 * whatever HPSYNC_ELIDE_BACKEND selects in this process (auto: RTM when
 * usable, else off); every document reports rtm_usable and the backend that
 * actually ran, so a figure is never mislabelled.
 *
 *   --mode info
 *       Only rtm_usable, backend and the context block.
 *   --mode overhead --iters N --reps R [--algos LIST]
 *       Uncontended lock+unlock, one thread: hps_lock_lock/unlock ("plain")
 *       against hps_elide_lock/unlock ("elided") on the same lock object, for
 *       each algorithm, in this one process.  Each repetition times one batch
 *       of N pairs per (algorithm, variant); plain and elided alternate order
 *       from one repetition to the next, so drift biases neither.  With the
 *       backend off this is the elision layer's cost when RTM is absent.
 *   --mode policy --iters N --reps R
 *       ns per hps_elide_decide() call over a fixed pseudo-random mix of abort
 *       statuses and attempt numbers (1024 entries, so the branch predictor
 *       cannot learn the sequence), next to the same loop calling a function
 *       that does nothing (the loop's own cost).
 *   --mode elided --iters N --reps R [--algo A]
 *       Uncontended elided lock+unlock under the backend the environment
 *       chose (the CLI runs it with inject:commit and an abort-heavy inject
 *       sequence), interleaved with the plain pair; then one untimed batch
 *       with statistics, reported per acquisition.
 *   --mode throughput --workload low|high --threads T --duration-ms D
 *          --variant plain|elided [--algo A] [--keys K] [--stats]
 *       T threads update a table of counters (one per cache line) under ONE
 *       lock.  low: thread t only touches keys k with k % T == t (disjoint);
 *       high: every thread picks among the same K keys (default 4).  The
 *       counters must sum to the operations the threads counted, or the
 *       program fails (exit 1).  --stats adds per-thread elision counters
 *       (a few atomic increments per operation: not for timed comparisons).
 *
 * Every timed batch uses CLOCK_MONOTONIC around N operations; the timer's
 * ~10 ns step is negligible once N >= 1e5.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "hps_rand.h"
#include "hps_bench.h"
#include "hpsync/elide.h"
#include "elide/backend.h"
#include "elide/policy.h"

#define MAX_REPS HPS_BENCH_MAX_REPS
#define NALGOS HPS_LOCK_ALGO_COUNT

/* Every algorithm of hpsync/lock/algorithms.def, the default first. */
static void default_algos(hps_lock_algo_t out[NALGOS])
{
    int n = 0;
    out[n++] = HPS_LOCK_DEFAULT;
    for (int a = HPS_LOCK_ALGO_MIN; a <= HPS_LOCK_ALGO_MAX; a++)
        if (a != HPS_LOCK_DEFAULT)
            out[n++] = (hps_lock_algo_t)a;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: hps-bench-elide --mode info\n"
            "       hps-bench-elide --mode overhead --iters N --reps R [--algos LIST]\n"
            "       hps-bench-elide --mode policy --iters N --reps R\n"
            "       hps-bench-elide --mode elided --iters N --reps R [--algo A]\n"
            "       hps-bench-elide --mode throughput --workload low|high --threads T\n"
            "                       --duration-ms D --variant plain|elided [--algo A] [--keys K] [--stats]\n");
}

static hps_lock_algo_t parse_algo(const char *s)
{
    hps_lock_algo_t a;
    if (!s || hps_lock_algo_parse(s, &a) != 0) {
        hps_bench_log("unknown lock '%s' (choose from %s)", s ? s : "", hps_lock_algo_names());
        exit(2);
    }
    return a;
}

/* Fields every document starts with: what can and does run transactions. */
static void emit_header(const char *mode)
{
    const char *env = getenv("HPSYNC_ELIDE_BACKEND");
    hps_json_str("program", "hps-bench-elide");
    hps_json_str("mode", mode);
    hps_json_bool("rtm_usable", hps_cpu_rtm_usable());
    hps_json_str("backend", hps_elide_backend_name());
    hps_json_bool("elide_active", hps_elide_active);
    hps_json_str("backend_env", env && *env ? env : NULL);
    hps_bench_context();
}

/* ---- uncontended batches -------------------------------------------------- */

/*
 * One lock (and its elision state) per algorithm, each on its own lines.  The
 * batch functions are separate and noinline so both variants are compiled
 * the same way: a loop around the public inline calls, with the algorithm
 * read from the lock at run time exactly as hps_lock_t users get it.
 */
static struct slot {
    hps_lock_t lock;
    hps_elide_state_t st;
} __attribute__((aligned(128))) g_slots[NALGOS];

static HPS_NOINLINE double batch_plain(hps_lock_t *l, long iters)
{
    return HPS_BENCH_TIME_PAIRS(iters, hps_lock_lock(l), hps_lock_unlock(l));
}

static HPS_NOINLINE double batch_elided(hps_lock_t *l, hps_elide_state_t *st, long iters)
{
    return HPS_BENCH_TIME_PAIRS(iters, hps_elide_lock(l, st), hps_elide_unlock(l, st));
}

static struct {
    int n;
    hps_lock_algo_t algo[NALGOS];
    double plain[NALGOS][MAX_REPS], elided[NALGOS][MAX_REPS];
} g_ov;

static int run_overhead(long iters, int reps)
{
    /* Our locks do not care, but a benchmark of lock calls should run in a
     * process that has been multithreaded, as every real user of a lock is. */
    if (hps_bench_become_multithreaded())
        return 1;
    for (int a = 0; a < g_ov.n; a++) {
        struct slot *s = &g_slots[a];
        hps_lock_init(&s->lock, g_ov.algo[a]);
        s->st = (hps_elide_state_t)HPS_ELIDE_STATE_INIT;
        /* Warm caches, predictors and (for queue locks) per-thread nodes. */
        batch_plain(&s->lock, iters / 10 + 1);
        batch_elided(&s->lock, &s->st, iters / 10 + 1);
    }
    for (int r = 0; r < reps; r++) {
        for (int k = 0; k < g_ov.n; k++) {
            /* Algorithms forward on even repetitions, backward on odd ones;
             * plain first on even ones, elided first on odd ones. */
            int a = r % 2 == 0 ? k : g_ov.n - 1 - k;
            struct slot *s = &g_slots[a];
            if (r % 2 == 0) {
                g_ov.plain[a][r] = batch_plain(&s->lock, iters);
                g_ov.elided[a][r] = batch_elided(&s->lock, &s->st, iters);
            } else {
                g_ov.elided[a][r] = batch_elided(&s->lock, &s->st, iters);
                g_ov.plain[a][r] = batch_plain(&s->lock, iters);
            }
        }
    }
    return 0;
}

static void emit_overhead(long iters, int reps)
{
    for (int a = 0; a < g_ov.n; a++) {
        hps_json_begin_object(NULL);
        hps_json_str("lock", hps_lock_algo_name(g_ov.algo[a]));
        hps_json_int("threads", 1);
        hps_json_int("iters", iters);
        hps_json_int("reps", reps);
        hps_json_num_array("plain_ns_per_op_reps", g_ov.plain[a], reps);
        hps_json_num_array("elided_ns_per_op_reps", g_ov.elided[a], reps);
        hps_json_end_object();
    }
}

/* ---- policy ---------------------------------------------------------------- */

#define MIX 1024
static struct decision { unsigned status, attempt; } g_mix[MIX];

/*
 * A mix of what an RTM workload with some contention sees: mostly conflicts
 * with RETRY at various attempts (some past the retry budget), busy locks,
 * a few capacity aborts, interrupts (status 0), conflicts without RETRY and
 * our own condvar abort.  Weights out of 32.
 */
static const struct { unsigned status; unsigned weight; } k_mix[] = {
    { HPS_TX_CONFLICT | HPS_TX_RETRY, 14 },
    { HPS_TX_EXPLICIT | (HPS_ABORT_BUSY << 24), 8 },
    { HPS_TX_CAPACITY, 3 },
    { 0, 3 },
    { HPS_TX_CONFLICT, 2 },
    { HPS_TX_EXPLICIT | (HPS_ABORT_COND << 24), 1 },
    { HPS_TX_DEBUG, 1 },
};


static void fill_mix(void)
{
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < MIX; i++) {
        unsigned pick = (unsigned)(hps_xorshift64(&seed) % 32), j = 0;
        while (pick >= k_mix[j].weight) {
            pick -= k_mix[j].weight;
            j++;
        }
        g_mix[i].status = k_mix[j].status;
        /* Attempts 0..4: most decisions are early, a few are past the budget. */
        unsigned r = (unsigned)(hps_xorshift64(&seed) % 16);
        g_mix[i].attempt = r < 8 ? 0 : r < 12 ? 1 : r < 14 ? 2 : r < 15 ? 3 : 4;
    }
}

/* The loop's own cost: the same call through the same kind of pointer to a
 * function that decides nothing.  noipa keeps the compiler from looking in. */
__attribute__((noipa)) static hps_elide_action_t decide_nothing(const hps_elide_cfg_t *cfg,
                                                               unsigned status, unsigned attempt)
{
    (void)cfg;
    (void)attempt;
    return (hps_elide_action_t)(status & 1u);
}

typedef hps_elide_action_t (*decide_fn)(const hps_elide_cfg_t *, unsigned, unsigned);

static HPS_NOINLINE double batch_decide(decide_fn fn, long iters, unsigned *sink)
{
    const hps_elide_cfg_t *cfg = &hps_elide_cfg;
    unsigned acc = 0;
    uint64_t t0 = hps_bench_now_ns();
    for (long i = 0; i < iters; i++) {
        const struct decision *d = &g_mix[i & (MIX - 1)];
        acc += (unsigned)fn(cfg, d->status, d->attempt);
    }
    double ns = (double)(hps_bench_now_ns() - t0) / (double)iters;
    *sink += acc;
    return ns;
}

static struct {
    double decide[MAX_REPS], empty[MAX_REPS];
    unsigned counts[3];
    unsigned sink;
} g_pol;

static int run_policy(long iters, int reps)
{
    fill_mix();
    for (int i = 0; i < MIX; i++) {
        hps_elide_action_t act = hps_elide_decide(&hps_elide_cfg, g_mix[i].status, g_mix[i].attempt);
        if ((unsigned)act < 3)
            g_pol.counts[act]++;
    }
    /* Through a volatile pointer so the calls stay real, indirect calls in
     * both loops (hps_elide_decide is out of line in the library anyway). */
    decide_fn volatile real = hps_elide_decide, empty = decide_nothing;
    batch_decide(real, iters / 10 + 1, &g_pol.sink);
    batch_decide(empty, iters / 10 + 1, &g_pol.sink);
    for (int r = 0; r < reps; r++) {
        if (r % 2 == 0) {
            g_pol.decide[r] = batch_decide(real, iters, &g_pol.sink);
            g_pol.empty[r] = batch_decide(empty, iters, &g_pol.sink);
        } else {
            g_pol.empty[r] = batch_decide(empty, iters, &g_pol.sink);
            g_pol.decide[r] = batch_decide(real, iters, &g_pol.sink);
        }
    }
    return 0;
}

static void emit_policy(long iters, int reps)
{
    hps_json_begin_object(NULL);
    hps_json_str("workload", "status-mix");
    hps_json_int("iters", iters);
    hps_json_int("reps", reps);
    hps_json_int("mix_entries", MIX);
    hps_json_num_array("ns_per_decision_reps", g_pol.decide, reps);
    hps_json_num_array("loop_ns_per_call_reps", g_pol.empty, reps);
    hps_json_begin_object("actions_in_mix");
    hps_json_uint("retry", g_pol.counts[HPS_ELIDE_RETRY]);
    hps_json_uint("wait_retry", g_pol.counts[HPS_ELIDE_WAIT_RETRY]);
    hps_json_uint("lock", g_pol.counts[HPS_ELIDE_LOCK]);
    hps_json_end_object();
    hps_json_begin_object("cfg");
    hps_json_uint("retries", hps_elide_cfg.retries);
    hps_json_uint("fails", hps_elide_cfg.fails);
    hps_json_uint("skip", hps_elide_cfg.skip);
    hps_json_uint("skip_max", hps_elide_cfg.skip_max);
    hps_json_end_object();
    hps_json_end_object();
}

/* ---- elided, under the chosen backend ------------------------------------- */

static struct {
    hps_lock_algo_t algo;
    double plain[MAX_REPS], elided[MAX_REPS];
    long stat_iters;
    hps_elide_stats_t stats;
} g_el;

static int run_elided(long iters, int reps)
{
    if (hps_bench_become_multithreaded())
        return 1;
    struct slot *s = &g_slots[0];
    hps_lock_init(&s->lock, g_el.algo);
    s->st = (hps_elide_state_t)HPS_ELIDE_STATE_INIT;
    batch_plain(&s->lock, iters / 10 + 1);
    batch_elided(&s->lock, &s->st, iters / 10 + 1);
    for (int r = 0; r < reps; r++) {
        if (r % 2 == 0) {
            g_el.plain[r] = batch_plain(&s->lock, iters);
            g_el.elided[r] = batch_elided(&s->lock, &s->st, iters);
        } else {
            g_el.elided[r] = batch_elided(&s->lock, &s->st, iters);
            g_el.plain[r] = batch_plain(&s->lock, iters);
        }
    }
    /* What the policy did, counted apart from the timed batches (the
     * counters are atomic increments that would distort them). */
    g_el.stat_iters = iters < 100000 ? iters : 100000;
    for (long i = 0; i < g_el.stat_iters; i++) {
        hps_elide_lock_ex(&s->lock, &s->st, &g_el.stats);
        __asm__ __volatile__("" ::: "memory");
        hps_elide_unlock_ex(&s->lock, &s->st, &g_el.stats);
    }
    return 0;
}

static void emit_stats(const char *key, const hps_elide_stats_t *st, double per)
{
    hps_json_begin_object(key);
    hps_json_num("attempts", (double)hps_load_relaxed(&st->attempts) / per);
    hps_json_num("commits", (double)hps_load_relaxed(&st->commits) / per);
    uint64_t total = 0;
    for (int c = 0; c < HPS_ELIDE_NCAUSES; c++)
        total += hps_load_relaxed(&st->aborts[c]);
    hps_json_num("aborts", (double)total / per);
    hps_json_num("aborts_conflict", (double)hps_load_relaxed(&st->aborts[HPS_ELIDE_ABORT_CONFLICT]) / per);
    hps_json_num("aborts_capacity", (double)hps_load_relaxed(&st->aborts[HPS_ELIDE_ABORT_CAPACITY]) / per);
    hps_json_num("aborts_busy", (double)hps_load_relaxed(&st->aborts[HPS_ELIDE_ABORT_BUSY]) / per);
    hps_json_num("aborts_explicit", (double)hps_load_relaxed(&st->aborts[HPS_ELIDE_ABORT_EXPLICIT]) / per);
    hps_json_num("aborts_other", (double)hps_load_relaxed(&st->aborts[HPS_ELIDE_ABORT_OTHER]) / per);
    hps_json_num("fallbacks", (double)hps_load_relaxed(&st->fallbacks) / per);
    hps_json_num("skips", (double)hps_load_relaxed(&st->skips) / per);
    hps_json_num("busy_waits", (double)hps_load_relaxed(&st->busy_waits) / per);
    hps_json_end_object();
}

static void emit_elided(long iters, int reps)
{
    hps_json_begin_object(NULL);
    hps_json_str("lock", hps_lock_algo_name(g_el.algo));
    hps_json_int("threads", 1);
    hps_json_int("iters", iters);
    hps_json_int("reps", reps);
    hps_json_num_array("plain_ns_per_op_reps", g_el.plain, reps);
    hps_json_num_array("elided_ns_per_op_reps", g_el.elided, reps);
    hps_json_int("stats_acquisitions", g_el.stat_iters);
    emit_stats("per_acquisition", &g_el.stats, (double)g_el.stat_iters);
    hps_json_end_object();
}

/* ---- throughput: one table under one lock --------------------------------- */

#define NKEYS 1024

/* The shared structure: counters on their own cache lines, so threads that
 * use different keys share no line except the lock's (which a transaction
 * only reads). */
static struct bucket {
    uint64_t count;
    uint64_t sum;
} __attribute__((aligned(64))) g_table[NKEYS];

static struct {
    hps_lock_t lock;
    hps_elide_state_t st;
} __attribute__((aligned(64))) g_tl;

struct worker {
    hps_bench_worker_t head;
    hps_elide_stats_t stats;
} __attribute__((aligned(64)));

static struct {
    int high, elided, stats, threads, keys;
    long duration_ms;
    hps_bench_totals_t t;
    hps_elide_stats_t stats_sum;
} g_tp;

static hps_bench_gate_t g_gate;

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    const int index = w->head.index;
    uint64_t seed = 0x2545F4914F6CDD1Dull * (uint64_t)(index + 1), ops = 0;
    const unsigned nthreads = (unsigned)g_tp.threads;
    /* low: keys index, index + T, index + 2T, ... (disjoint per thread);
     * high: keys 0..K-1, shared by everyone. */
    const unsigned span = g_tp.high ? (unsigned)g_tp.keys : (NKEYS - (unsigned)index + nthreads - 1) / nthreads;
    const int elided = g_tp.elided;
    hps_elide_stats_t *stats = g_tp.stats ? &w->stats : NULL;
    hps_bench_gate_enter(&g_gate);
    while (!hps_bench_gate_stopped(&g_gate)) {
        unsigned r = (unsigned)(hps_xorshift64(&seed) % span);
        unsigned key = g_tp.high ? r : (unsigned)index + r * nthreads;
        struct bucket *b = &g_table[key];
        if (elided)
            hps_elide_lock_ex(&g_tl.lock, &g_tl.st, stats);
        else
            hps_lock_lock(&g_tl.lock);
        /* The critical section: a couple of dependent updates of one entry. */
        b->count++;
        b->sum += b->count ^ key;
        if (elided)
            hps_elide_unlock_ex(&g_tl.lock, &g_tl.st, stats);
        else
            hps_lock_unlock(&g_tl.lock);
        ops++;
    }
    hps_bench_worker_done(&w->head, ops);
    return NULL;
}

static int run_throughput(hps_lock_algo_t algo)
{
    int n = g_tp.threads;
    hps_lock_init(&g_tl.lock, algo);
    hps_bench_totals_t *t = &g_tp.t;
    struct worker *w = hps_bench_run_workers(&g_gate, n, sizeof *w, worker_main, g_tp.duration_ms, t);
    if (!w)
        return 1;
    for (int i = 0; i < n; i++) {
        hps_elide_stats_t *s = &w[i].stats, *acc = &g_tp.stats_sum;
        hps_faa_relaxed(&acc->attempts, hps_load_relaxed(&s->attempts));
        hps_faa_relaxed(&acc->commits, hps_load_relaxed(&s->commits));
        for (int c = 0; c < HPS_ELIDE_NCAUSES; c++)
            hps_faa_relaxed(&acc->aborts[c], hps_load_relaxed(&s->aborts[c]));
        hps_faa_relaxed(&acc->fallbacks, hps_load_relaxed(&s->fallbacks));
        hps_faa_relaxed(&acc->skips, hps_load_relaxed(&s->skips));
        hps_faa_relaxed(&acc->busy_waits, hps_load_relaxed(&s->busy_waits));
    }
    free(w);
    uint64_t counted = 0;
    for (int k = 0; k < NKEYS; k++)
        counted += g_table[k].count;
    if (counted != t->total) {
        hps_bench_log("mutual exclusion violated: table counts %llu != %llu operations",
                      (unsigned long long)counted, (unsigned long long)t->total);
        return 1;
    }
    return 0;
}

static void emit_throughput(hps_lock_algo_t algo)
{
    hps_json_begin_object(NULL);
    hps_json_str("workload", g_tp.high ? "high-conflict" : "low-conflict");
    hps_json_str("variant", g_tp.elided ? "elided" : "plain");
    hps_json_str("lock", hps_lock_algo_name(algo));
    hps_json_int("threads", g_tp.threads);
    hps_json_int("keys", g_tp.high ? g_tp.keys : NKEYS);
    hps_json_int("duration_ms", g_tp.duration_ms);
    hps_bench_totals_json(&g_tp.t);
    if (g_tp.stats && g_tp.t.total)
        emit_stats("per_op", &g_tp.stats_sum, (double)g_tp.t.total);
    hps_json_end_object();
}

/* ---- main ------------------------------------------------------------------ */

static int parse_algos(const char *s)
{
    char buf[256];
    if (!s || strlen(s) >= sizeof buf) {
        hps_bench_log("--algos needs a comma-separated list of locks");
        exit(2);
    }
    strcpy(buf, s);
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        hps_lock_algo_t a = parse_algo(tok);
        for (int i = 0; i < n; i++)
            if (g_ov.algo[i] == a)
                goto dup;
        if (n == NALGOS)
            break;
        g_ov.algo[n++] = a;
    dup:;
    }
    if (n == 0) {
        hps_bench_log("--algos needs at least one lock");
        exit(2);
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *mode = NULL, *workload = NULL, *variant = NULL;
    hps_bench_args_t o = HPS_BENCH_ARGS_INIT;
    long keys = 4;
    hps_lock_algo_t algo = HPS_LOCK_DEFAULT;
    int stats = 0;
    g_ov.n = NALGOS;
    default_algos(g_ov.algo);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--stats")) {
            stats = 1;
            continue;
        }
        if (!v) {
            hps_bench_log("'%s' needs a value", a);
            usage();
            return 2;
        }
        if (!strcmp(a, "--mode")) {
            mode = v;
        } else if (!strcmp(a, "--workload")) {
            workload = v;
        } else if (!strcmp(a, "--variant")) {
            variant = v;
        } else if (!strcmp(a, "--algo")) {
            algo = parse_algo(v);
        } else if (!strcmp(a, "--algos")) {
            g_ov.n = parse_algos(v);
        } else if (hps_bench_parse_common(&o, a, v)) {
            /* --iters, --reps, --threads, --duration-ms */
        } else if (!strcmp(a, "--keys")) {
            keys = hps_bench_parse_num(a, v, 1, NKEYS);
        } else {
            hps_bench_log("unknown argument '%s'", a);
            usage();
            return 2;
        }
        i++;
    }
    static const char *const modes[] = { "info", "overhead", "policy", "elided", "throughput" };
    int m = -1;
    for (int i = 0; mode && i < 5; i++)
        if (!strcmp(mode, modes[i]))
            m = i;
    if (m < 0) {
        hps_bench_log("--mode must be info, overhead, policy, elided or throughput");
        usage();
        return 2;
    }
    if (m == 4) {
        if (!workload || (strcmp(workload, "low") && strcmp(workload, "high"))) {
            hps_bench_log("--workload must be low or high");
            return 2;
        }
        if (!variant || (strcmp(variant, "plain") && strcmp(variant, "elided"))) {
            hps_bench_log("--variant must be plain or elided");
            return 2;
        }
        g_tp.high = !strcmp(workload, "high");
        if (!g_tp.high && o.threads > NKEYS) {
            hps_bench_log("--workload low gives each thread its own keys: at most %d threads", NKEYS);
            return 2;
        }
        g_tp.elided = !strcmp(variant, "elided");
        g_tp.stats = stats;
        g_tp.threads = (int)o.threads;
        g_tp.keys = (int)keys;
        g_tp.duration_ms = o.duration_ms;
    }
    g_el.algo = algo;
    hps_elide_setup();

    /* Measure first, print afterwards: the context block's timer probe and
     * hwloc scan would otherwise run between the figures. */
    int rc = 0;
    switch (m) {
    case 1: rc = run_overhead(o.iters, (int)o.reps); break;
    case 2: rc = run_policy(o.iters, (int)o.reps); break;
    case 3: rc = run_elided(o.iters, (int)o.reps); break;
    case 4: rc = run_throughput(algo); break;
    default: break;
    }
    if (rc != 0)
        return rc;
    hps_json_begin_object(NULL);
    emit_header(mode);
    hps_json_begin_array("rows");
    switch (m) {
    case 1: emit_overhead(o.iters, (int)o.reps); break;
    case 2: emit_policy(o.iters, (int)o.reps); break;
    case 3: emit_elided(o.iters, (int)o.reps); break;
    case 4: emit_throughput(algo); break;
    default: break;
    }
    hps_json_end_array();
    hps_json_end_object();
    return hps_json_finish();
}
