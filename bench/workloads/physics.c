// SPDX-License-Identifier: MIT
/*
 * hps-workload-physics: the pair-wise physics solver of the Intel TSX study
 * for HPC, the case it used lockset elision for.  B bodies, each with a
 * mass and an integer momentum (x, y, z); a run resolves a fixed list of
 * random pairs (i, j), i != j, in steps of S pairs, each pair one elastic
 * collision per component: a transfer d computed from both bodies' state
 * moves from i to j (p_i -= d, p_j += d), so total momentum is conserved to
 * the last bit whatever the interleaving, and each body counts its
 * collisions.  Few bodies (16) make two threads' pairs share a body nearly
 * always (high conflict); many (64 Ki) almost never, and the bodies no
 * longer fit in L1.
 *
 * Variants (operations: pairs resolved):
 *   mutex          a glibc mutex per body, the pair's two taken in address
 *                  order (the baseline)
 *   lockset        hpsync locks, the pair taken as one set
 *                  (hps_lockset_lock): elided where the elision layer runs
 *                  transactions (RTM, or HPSYNC_ELIDE_BACKEND=inject in the
 *                  tests), else taken in address order after the sort
 *   lockset-mutex  the pthread form over the mutex variant's mutexes
 *                  (hps_lockset_mutex_lock): glibc's, in order; under the
 *                  interposer hpsync locks with the hardware path
 *   colour         no locks: each step's pairs are partitioned into
 *                  conflict-free classes (no body twice in a class), the
 *                  threads share a class, a barrier between classes
 *   tm-k<K>, tm-dyn (the harness's) K pairs a transactional section
 *
 * The classes are levels: a pair's class is one past the last class of
 * either body in the step so far, so each body meets its pairs in list
 * order and the colour run computes exactly what a sequential run does.
 * Every variant walks the same class-ordered list, so a 1-thread run is
 * sequential too.
 *
 * Validation after every run: the total momentum of each component equals
 * the initial total exactly; every body's collision count equals the
 * number of pairs it is in (a lost update shows here); the kinetic energy
 * is within 0.1 % of the initial (an elastic collision keeps it but for
 * the rounding of d, a few 1e-5 here over a run, whatever the order; one
 * collision computed from a torn snapshot of its two bodies moves it by
 * about one body's share, which shows with few bodies, where conflicts
 * are); and where the result is deterministic (colour, or 1 thread) every
 * body's state equals the sequential run's.
 * Options: harness.h.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "harness.h"
#include "hps_rand.h"
#include "hpsync/lockset.h"

enum { V_MUTEX, V_LOCKSET, V_LOCKSET_MUTEX, V_COLOUR };
static const char *const k_variants[] = { "mutex", "lockset", "lockset-mutex", "colour" };

/* One pair a section, a few, a step's worth of work for a thread. */
static const long k_tm_k[] = { 1, 4, 16 };

/* a: bodies, b: pairs per step; n: pairs per run */
static const wl_row_t k_rows[] = {
    { "b16", 16, 1024, 1000000, 1, NULL },
    { "b256", 256, 1024, 1000000, 0, NULL },
    { "b4k", 4096, 1024, 1000000, 0, NULL },
    { "b64k", 65536, 1024, 1000000, 1, NULL },
};

#define DIMS 3

/* What a collision reads and writes; a line of its own, so bodies that no
 * pair shares never share a line either. */
typedef struct body {
    int64_t p[DIMS];
    int64_t hits;                    /* collisions so far */
    int64_t m;                       /* mass, 1..8; read-only during a run */
    char pad[64 - (DIMS + 2) * 8];
} body_t;

typedef struct pair {
    uint32_t i, j;
} pair_t;

typedef struct physics {
    long nb, np, step;
    int threads;
    body_t *b, *init, *ref;          /* the bodies; their start; the sequential result */
    pair_t *pairs;                   /* in class order within each step */
    long *cls;                       /* class c is pairs [cls[c], cls[c+1]) */
    long ncls;
    int64_t *want_hits;              /* pairs per body */
    pthread_mutex_t *mu;             /* per body: mutex, lockset-mutex */
    hps_lock_t *lk;                  /* per body: lockset */
    int64_t total0[DIMS];
    double energy0;
    int deterministic;               /* set by run: this run's result is the sequential one */
} physics_t;

/* floor(a / b), b > 0: rounding the same way for either sign keeps the
 * rounding's energy error from having one sign (truncation would always
 * lose energy). */
static inline int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return q - (a % b != 0 && a < 0);
}

/* One elastic collision per component: d = 2 (m_j p_i - m_i p_j) / (m_i +
 * m_j), which swaps the velocities' difference, rounded down; what leaves i
 * arrives at j. */
static inline void collide(int64_t *pi, int64_t *pj, int64_t mi, int64_t mj)
{
    for (int c = 0; c < DIMS; c++) {
        int64_t d = floor_div(2 * (mj * pi[c] - mi * pj[c]), mi + mj);
        pi[c] -= d;
        pj[c] += d;
    }
}

static void collide_plain(physics_t *s, const pair_t *pr)
{
    body_t *bi = &s->b[pr->i], *bj = &s->b[pr->j];
    collide(bi->p, bj->p, bi->m, bj->m);
    bi->hits++;
    bj->hits++;
}

/* The same collision through the TM layer: both bodies' state read, the
 * collision on local copies, written back (the masses never change: plain
 * reads). */
static void tm_pair(long k, void *ctx)
{
    physics_t *s = ctx;
    body_t *bi = &s->b[s->pairs[k].i], *bj = &s->b[s->pairs[k].j];
    int64_t pi[DIMS], pj[DIMS];
    for (int c = 0; c < DIMS; c++) {
        pi[c] = HPS_TM_READ(&bi->p[c]);
        pj[c] = HPS_TM_READ(&bj->p[c]);
    }
    collide(pi, pj, bi->m, bj->m);
    for (int c = 0; c < DIMS; c++) {
        HPS_TM_WRITE(&bi->p[c], pi[c]);
        HPS_TM_WRITE(&bj->p[c], pj[c]);
    }
    HPS_TM_WRITE(&bi->hits, HPS_TM_READ(&bi->hits) + 1);
    HPS_TM_WRITE(&bj->hits, HPS_TM_READ(&bj->hits) + 1);
}

static double energy(const body_t *b, long nb)
{
    double e = 0;
    for (long k = 0; k < nb; k++)
        for (int c = 0; c < DIMS; c++)
            e += (double)b[k].p[c] * (double)b[k].p[c] / (double)b[k].m;
    return e;                        /* twice the kinetic energy */
}

/* Split the pairs into steps, colour each step by levels, and reorder each
 * step by class (stable: a body's pairs keep their order). */
static void colour_steps(physics_t *s)
{
    long *next = wl_alloc(sizeof(long) * (size_t)s->nb);     /* a body's next free class */
    long *colour = wl_alloc(sizeof(long) * (size_t)s->step);
    long *count = wl_alloc(sizeof(long) * (size_t)(s->step + 1));
    pair_t *tmp = wl_alloc(sizeof(pair_t) * (size_t)s->step);
    /* at most one class per pair */
    s->cls = wl_alloc(sizeof(long) * (size_t)(s->np + 1));
    s->ncls = 0;
    for (long lo = 0; lo < s->np; lo += s->step) {
        long len = s->np - lo < s->step ? s->np - lo : s->step, ncol = 0;
        for (long k = 0; k < len; k++) {
            const pair_t *pr = &s->pairs[lo + k];
            long c = next[pr->i] > next[pr->j] ? next[pr->i] : next[pr->j];
            colour[k] = c;
            next[pr->i] = next[pr->j] = c + 1;
            ncol = c + 1 > ncol ? c + 1 : ncol;
        }
        memset(count, 0, sizeof(long) * (size_t)(ncol + 1));
        for (long k = 0; k < len; k++)
            count[colour[k] + 1]++;
        for (long c = 0; c < ncol; c++) {
            count[c + 1] += count[c];
            s->cls[s->ncls++] = lo + count[c];
        }
        for (long k = 0; k < len; k++)
            tmp[count[colour[k]]++] = s->pairs[lo + k];
        memcpy(&s->pairs[lo], tmp, sizeof(pair_t) * (size_t)len);
        for (long k = 0; k < len; k++)
            next[s->pairs[lo + k].i] = next[s->pairs[lo + k].j] = 0;
    }
    s->cls[s->ncls] = s->np;
    free(next);
    free(colour);
    free(count);
    free(tmp);
}

static void *setup(const wl_row_t *row, int threads, long n)
{
    physics_t *s = wl_alloc(sizeof *s);
    s->nb = row->a;
    s->step = row->b;
    s->np = n;
    s->threads = threads;
    s->b = wl_alloc(sizeof(body_t) * (size_t)s->nb);
    s->init = wl_alloc(sizeof(body_t) * (size_t)s->nb);
    s->ref = wl_alloc(sizeof(body_t) * (size_t)s->nb);
    s->want_hits = wl_alloc(sizeof(int64_t) * (size_t)s->nb);
    s->mu = wl_alloc(sizeof(pthread_mutex_t) * (size_t)s->nb);
    s->lk = wl_alloc(sizeof(hps_lock_t) * (size_t)s->nb);
    s->pairs = wl_alloc(sizeof(pair_t) * (size_t)s->np);
    uint64_t rng = 0xA0761D6478BD642Full ^ (uint64_t)(s->nb * 7919 + s->step);
    /* Velocities within +-2^20 per component: with masses <= 8 every
     * product in collide() stays far inside 64 bits. */
    for (long k = 0; k < s->nb; k++) {
        body_t *b = &s->init[k];
        b->m = 1 + (int64_t)(hps_xorshift64(&rng) % 8);
        for (int c = 0; c < DIMS; c++) {
            b->p[c] = b->m * ((int64_t)(hps_xorshift64(&rng) % (1u << 21)) - (1 << 20));
            s->total0[c] += b->p[c];
        }
        pthread_mutex_init(&s->mu[k], NULL);
        hps_lock_init(&s->lk[k], HPS_LOCK_DEFAULT);
    }
    s->energy0 = energy(s->init, s->nb);
    /* The sequential reference, in the pairs' drawn order (the class order
     * must give the same: that is what the colour variant's check tests). */
    memcpy(s->ref, s->init, sizeof(body_t) * (size_t)s->nb);
    for (long k = 0; k < s->np; k++) {
        pair_t *pr = &s->pairs[k];
        pr->i = (uint32_t)(hps_xorshift64(&rng) % (uint64_t)s->nb);
        pr->j = (uint32_t)(hps_xorshift64(&rng) % (uint64_t)(s->nb - 1));
        pr->j += pr->j >= pr->i;     /* i != j */
        s->want_hits[pr->i]++;
        s->want_hits[pr->j]++;
        collide(s->ref[pr->i].p, s->ref[pr->j].p, s->ref[pr->i].m, s->ref[pr->j].m);
        s->ref[pr->i].hits++;
        s->ref[pr->j].hits++;
    }
    colour_steps(s);
    return s;
}

static uint64_t ops(void *ctx)
{
    return (uint64_t)((physics_t *)ctx)->np;
}

static void params_json(void *ctx)
{
    physics_t *s = ctx;
    hps_json_int("bodies", s->nb);
    hps_json_int("pairs", s->np);
    hps_json_int("pairs_per_step", s->step);
    hps_json_int("colour_classes", s->ncls);
    hps_json_num("pairs_per_class", s->ncls ? (double)s->np / (double)s->ncls : 0);
}

static void reset(void *ctx)
{
    physics_t *s = ctx;
    memcpy(s->b, s->init, sizeof(body_t) * (size_t)s->nb);
    s->deterministic = 0;
}

static void run(void *ctx, const wl_variant_t *v, int tid, int n)
{
    physics_t *s = ctx;
    long lo = s->np * tid / n, hi = s->np * (tid + 1) / n;
    if (tid == 0)
        s->deterministic = v->id == V_COLOUR || n == 1;
    switch (v->id) {
    case V_MUTEX:
        for (long k = lo; k < hi; k++) {
            /* address order: the array's */
            uint32_t a = s->pairs[k].i < s->pairs[k].j ? s->pairs[k].i : s->pairs[k].j;
            uint32_t b = s->pairs[k].i ^ s->pairs[k].j ^ a;
            pthread_mutex_lock(&s->mu[a]);
            pthread_mutex_lock(&s->mu[b]);
            collide_plain(s, &s->pairs[k]);
            pthread_mutex_unlock(&s->mu[b]);
            pthread_mutex_unlock(&s->mu[a]);
        }
        break;
    case V_LOCKSET:
        for (long k = lo; k < hi; k++) {
            hps_lock_t *set[2] = { &s->lk[s->pairs[k].i], &s->lk[s->pairs[k].j] };
            hps_lockset_lock(set, 2);
            collide_plain(s, &s->pairs[k]);
            hps_lockset_unlock(set, 2);
        }
        break;
    case V_LOCKSET_MUTEX:
        for (long k = lo; k < hi; k++) {
            pthread_mutex_t *set[2] = { &s->mu[s->pairs[k].i], &s->mu[s->pairs[k].j] };
            hps_lockset_mutex_lock(set, 2);
            collide_plain(s, &s->pairs[k]);
            hps_lockset_mutex_unlock(set, 2);
        }
        break;
    case V_COLOUR:
        /* Every thread walks every class, taking its share of it; no body
         * appears twice in a class, so the shares never meet.  Alone, a
         * thread has no one to wait for. */
        for (long c = 0; c < s->ncls; c++) {
            long clo = s->cls[c], len = s->cls[c + 1] - clo;
            for (long k = clo + len * tid / n; k < clo + len * (tid + 1) / n; k++)
                collide_plain(s, &s->pairs[k]);
            if (n > 1)
                wl_barrier();
        }
        break;
    default:
        wl_tm_for(v, lo, hi, tm_pair, s);
        break;
    }
}

static int validate(void *ctx, char *why, size_t len)
{
    physics_t *s = ctx;
    int64_t total[DIMS] = { 0 }, hits = 0;
    for (long k = 0; k < s->nb; k++) {
        for (int c = 0; c < DIMS; c++)
            total[c] += s->b[k].p[c];
        hits += s->b[k].hits;
        if (s->b[k].hits != s->want_hits[k]) {
            snprintf(why, len, "body %ld counts %lld collisions, it is in %lld pairs", k,
                     (long long)s->b[k].hits, (long long)s->want_hits[k]);
            return -1;
        }
    }
    for (int c = 0; c < DIMS; c++)
        if (total[c] != s->total0[c]) {
            snprintf(why, len, "total momentum %c is %lld, it started at %lld", "xyz"[c],
                     (long long)total[c], (long long)s->total0[c]);
            return -1;
        }
    double e = energy(s->b, s->nb);
    double drift = e > s->energy0 ? e - s->energy0 : s->energy0 - e;
    if (!(drift <= 1e-3 * s->energy0)) {
        snprintf(why, len, "kinetic energy moved from %.9g to %.9g (more than 0.1 %%)", s->energy0, e);
        return -1;
    }
    if (s->deterministic)
        for (long k = 0; k < s->nb; k++)
            for (int c = 0; c < DIMS; c++)
                if (s->b[k].p[c] != s->ref[k].p[c]) {
                    snprintf(why, len, "body %ld momentum %c is %lld, the sequential run's %lld", k,
                             "xyz"[c], (long long)s->b[k].p[c], (long long)s->ref[k].p[c]);
                    return -1;
                }
    snprintf(why, len, "momentum conserved exactly, %lld collisions counted%s", (long long)hits,
             s->deterministic ? ", every body equals the sequential run" : "");
    return 0;
}

static void corrupt(void *ctx)
{
    physics_t *s = ctx;
    s->b[s->nb - 1].p[0] += 1;
}

static void teardown(void *ctx)
{
    physics_t *s = ctx;
    for (long k = 0; k < s->nb; k++)
        pthread_mutex_destroy(&s->mu[k]);
    free(s->mu);
    free(s->lk);
    free(s->b);
    free(s->init);
    free(s->ref);
    free(s->want_hits);
    free(s->pairs);
    free(s->cls);
    free(s);
}

static const wl_workload_t k_physics = {
    .name = "physics",
    .title = "physics: random pairs of bodies exchange momentum (16 to 64 Ki bodies; "
             "ordered mutexes, lockset elision, colouring, TM)",
    WL_TABLES(k_rows, k_variants),
    .mutex_variant = V_MUTEX,
    .seconds = 0.78,
    .tm_k = k_tm_k,
    .ntm_k = WL_COUNT(k_tm_k),
    WL_HOOKS,
};

int main(int argc, char **argv)
{
    return wl_main(&k_physics, argc, argv);
}
