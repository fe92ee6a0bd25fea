// SPDX-License-Identifier: MIT
/*
 * hps-probe-membw: memory read and write bandwidth versus thread count,
 * under the compact, scatter and os thread placements.
 *
 *   hps-probe-membw [--quick] [--threads LIST] [--mappings LIST] [--reps R]
 *                   [--buffer-mib M]
 *
 * Each thread owns one buffer far larger than the last-level cache: 4x the
 * L3 (2x under --quick), or M MiB when given (tests use a tiny M; the
 * figures are then cache bandwidth, and the program says so on stderr).
 * The thread pins itself first and then maps and first-touches its buffer,
 * so on a NUMA machine the pages live on the thread's own node, as they
 * would for a well-behaved parallel program.
 *
 * A repetition is one sweep of every thread over its whole buffer; the
 * bandwidth is the bytes all threads swept divided by the wall time from the
 * first thread's start to the last one's end (the median repetition is the
 * curve's value).  Reads sum the buffer with 16-byte vector loads; writes
 * store 16-byte vectors with ordinary (not non-temporal) stores, so the
 * cache's read-for-ownership traffic happens but is not counted: "write"
 * bytes are bytes stored.
 *
 * Nothing can be skipped: the buffer holds word i = base + i * K, so every
 * read sweep must produce the closed-form sum n * base + K * n(n-1)/2, and
 * after the write sweeps an untimed read-back must find the last value
 * written in every word.  The program fails (exit 1) if either is wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include "hps_probe.h"

#define PATTERN_K 0x9E3779B97F4A7C15ull

typedef uint64_t v2u __attribute__((vector_size(16)));

#define USAGE "hps-probe-membw [--quick] [--threads LIST] [--mappings LIST] " \
              "[--reps R] [--buffer-mib M]"

/* ---- the kernels: one cache line (four vectors) per iteration ------------- */

__attribute__((noinline)) static uint64_t read_sweep(const v2u *p, size_t nvec)
{
    v2u a0 = { 0, 0 }, a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i < nvec; i += 4) {
        a0 += p[i];
        a1 += p[i + 1];
        a2 += p[i + 2];
        a3 += p[i + 3];
    }
    a0 += a1 + a2 + a3;
    return a0[0] + a0[1];
}

__attribute__((noinline)) static void write_sweep(v2u *p, size_t nvec, uint64_t v)
{
    /* v is a runtime value that is not one repeated byte, so the loop stays
     * stores and never becomes a memset call (which may go non-temporal). */
    const v2u x = { v, v };
    for (size_t i = 0; i < nvec; i += 4) {
        p[i] = x;
        p[i + 1] = x;
        p[i + 2] = x;
        p[i + 3] = x;
    }
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

/* The value rep r of thread t writes: differs per rep, never byte-uniform. */
static uint64_t write_value(int t, int r)
{
    return 0x0123456789ABCDEFull ^ ((uint64_t)t << 40) ^ (uint64_t)r;
}

/* ---- one curve point ---------------------------------------------------------- */

struct bw_state {
    size_t bytes;
    int reps;                         /* read reps; as many write reps follow */
    uint64_t *buf;
    uint64_t base;
    uint64_t sums[HPS_PROBE_MAX_REPS];
    int write_ok;
} __attribute__((aligned(64)));

static int bw_setup(hps_probe_member_t *m)
{
    struct bw_state *s = m->state;
    void *p = mmap(NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        hps_bench_log("cannot map %zu bytes for thread %d: %s", s->bytes, m->index,
                      strerror(errno));
        return -1;
    }
    s->buf = p;
    /* First touch, by the owner, after pinning: pages land on its node. */
    size_t n = s->bytes / sizeof *s->buf;
    for (size_t i = 0; i < n; i++)
        s->buf[i] = s->base + (uint64_t)i * PATTERN_K;
    return 0;
}

static void bw_pass(hps_probe_member_t *m, int rep)
{
    struct bw_state *s = m->state;
    size_t nvec = s->bytes / sizeof(v2u);
    if (rep < s->reps)
        s->sums[rep] = read_sweep((const v2u *)(void *)s->buf, nvec);
    else
        write_sweep((v2u *)(void *)s->buf, nvec, write_value(m->index, rep - s->reps));
}

static void bw_teardown(hps_probe_member_t *m)
{
    struct bw_state *s = m->state;
    if (!s->buf)
        return;
    size_t n = s->bytes / sizeof *s->buf;
    uint64_t want = write_value(m->index, s->reps - 1);
    s->write_ok = 1;
    for (size_t i = 0; i < n; i++)
        if (s->buf[i] != want) {
            s->write_ok = 0;
            break;
        }
    munmap(s->buf, s->bytes);
    s->buf = NULL;
}

struct point {
    hps_map_t map;
    int threads, reps;
    double read_bps[HPS_PROBE_MAX_REPS], write_bps[HPS_PROBE_MAX_REPS];
};

static int measure_point(struct point *p, size_t bytes)
{
    void **states;
    struct bw_state *st = hps_probe_team_states(p->threads, sizeof *st, &states);
    for (int i = 0; i < p->threads; i++) {
        st[i].bytes = bytes;
        st[i].reps = p->reps;
        st[i].base = 0x5851F42D4C957F2Dull * (uint64_t)(i + 1);
    }
    hps_probe_team_t team = { .n = p->threads, .reps = 2 * p->reps, .setup = bw_setup,
                          .pass = bw_pass, .teardown = bw_teardown };
    double secs[HPS_PROBE_MAX_REPS];
    int rc = hps_probe_team_run(&team, p->map, secs, states);
    hps_probe_team_free(&team);
    double total = (double)bytes * p->threads;
    uint64_t n = bytes / sizeof(uint64_t);
    for (int i = 0; i < p->threads && rc == 0; i++) {
        /* n(n-1)/2 without overflow: halve whichever factor is even. */
        uint64_t tri = n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2);
        uint64_t want = n * st[i].base + PATTERN_K * tri;
        for (int r = 0; r < p->reps; r++)
            if (st[i].sums[r] != want) {
                hps_bench_log("thread %d read sweep %d summed %016" PRIx64 ", expected %016" PRIx64
                              ": the sweep did not read the whole buffer", i, r,
                              st[i].sums[r], want);
                rc = 1;
            }
        if (!st[i].write_ok) {
            hps_bench_log("thread %d: the buffer does not hold the last value written", i);
            rc = 1;
        }
    }
    for (int r = 0; r < p->reps; r++) {
        p->read_bps[r] = total / secs[r];
        p->write_bps[r] = total / secs[p->reps + r];
    }
    free(st);
    free(states);
    return rc;
}

/* MemAvailable in bytes, or 0 when unknown. */
static uint64_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kb * 1024;
}

int main(int argc, char **argv)
{
    long reps, buffer_mib = 0;
    hps_probe_list_t threads = { 0 };
    hps_probe_maps_t maps;
    const hps_probe_opt_t opts[] = {
        { "--reps", &reps, 1, HPS_PROBE_MAX_REPS / 2, 3, 5 },   /* + as many writes */
        { "--buffer-mib", &buffer_mib, 1, 1L << 20, 0, 0 },
        HPS_PROBE_OPT_END };
    const hps_probe_cli_t cli = { .usage = USAGE, .help = 1, .threads = &threads,
                                  .maps = &maps, .opts = opts };
    int quick = hps_probe_parse(&cli, argc, argv);
    hps_topo_t topo;
    hps_probe_topo_threads(&topo, &threads);

    /* The last-level cache: L3, else L2; 32 MiB when the topology is silent. */
    const char *llc_level = topo.l3.size ? "L3" : topo.l2.size ? "L2" : "unknown";
    uint64_t llc = topo.l3.size ? topo.l3.size : topo.l2.size ? topo.l2.size : 32ull << 20;
    if (!topo.l3.size && !topo.l2.size)
        hps_bench_log("cache sizes unknown; assuming a 32 MiB last-level cache");
    int factor = quick ? 2 : 4;
    uint64_t mib = 1ull << 20;
    uint64_t bytes = buffer_mib ? (uint64_t)buffer_mib * mib : (factor * llc + mib - 1) / mib * mib;
    if (buffer_mib && bytes < 2 * llc)
        hps_bench_log("note: %ld MiB per thread is under 2x the %s (%" PRIu64 " KiB): "
                      "these figures include cache hits", buffer_mib, llc_level, llc >> 10);
    int tmax = 1;
    for (int i = 0; i < threads.n; i++)
        tmax = threads.v[i] > tmax ? threads.v[i] : tmax;
    uint64_t avail = mem_available();
    if (avail && (double)bytes * tmax > 0.8 * (double)avail) {
        hps_bench_log("%d threads x %" PRIu64 " MiB exceeds 80%% of available memory (%" PRIu64
                      " MiB); use fewer --threads or a smaller --buffer-mib",
                      tmax, bytes >> 20, avail >> 20);
        return 1;
    }

    int npoints = maps.n * threads.n;
    struct point *pts = calloc((size_t)npoints, sizeof *pts);
    if (!pts) {
        hps_bench_log("out of memory");
        return 1;
    }
    hps_probe_steal_start();
    for (int m = 0, k = 0; m < maps.n; m++)
        for (int t = 0; t < threads.n; t++, k++) {
            struct point *p = &pts[k];
            p->map = maps.v[m];
            p->threads = threads.v[t];
            p->reps = (int)reps;
            if (measure_point(p, (size_t)bytes) != 0)
                return 1;
            hps_bench_log("%s T=%d: read %.3g B/s, write %.3g B/s", hps_map_name(p->map),
                          p->threads, p->read_bps[0], p->write_bps[0]);
        }
    hps_probe_steal_stop();

    hps_probe_doc_begin("membw");
    hps_json_bool("quick", quick);
    hps_probe_params_lists(&threads, &maps);
    hps_json_int("reps", reps);
    hps_json_uint("buffer_bytes", bytes);
    hps_json_str("llc_level", llc_level);
    hps_json_uint("llc_bytes", llc);
    hps_json_num("buffer_llc_ratio", (double)bytes / (double)llc);
    hps_json_str("thp", hps_probe_thp_mode());
    hps_json_str("access", "16-byte vector loads (sum) / ordinary 16-byte stores");
    hps_json_str("value", "median of reps");
    hps_probe_doc_results();
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < npoints; i++) {
            hps_probe_row_curve(w ? "write_bytes_per_sec" : "read_bytes_per_sec", pts[i].map,
                            pts[i].threads, w ? pts[i].write_bps : pts[i].read_bps,
                            pts[i].reps, "B/s");
            hps_probe_row_end();
        }
    free(pts);
    return hps_probe_doc_end();
}
