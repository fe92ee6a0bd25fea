// SPDX-License-Identifier: MIT
/*
 * hps-probe-tlb: how many pages a program can touch before its loads pay
 * for address translation - the data TLB's reach - with the base page size
 * and with transparent huge pages.
 *
 * A dependent chain of loads (each address comes from the previous load)
 * visits one 64-byte line in each of P pages, in a random cyclic order, and
 * the figure is ns per load.  The line of page i is line i mod 64 of the
 * page, so up to 64 pages every line sits on its own L1 set and the lines
 * all stay in L1 (at 512 pages, 8 per set): what grows with P is the number
 * of pages, not the cache footprint.  While the pages fit the first-level
 * TLB a load costs the L1 hit latency; past it, each load adds a
 * second-level TLB lookup (or a page walk).
 *
 * Why it matters here: the ring workload's 2 KiB nodes span 64-67 pages
 * whatever allocator places them, so on a machine whose reach is smaller no
 * placement gets them to the 64 B ring's time (docs/characterize.md).
 *
 * Each repetition maps fresh memory, so the reps see different physical
 * pages (in a guest the host's backing of them differs too); a rep's figure
 * is the best of its timed batches (a batch hit by preemption is dropped),
 * the point's value the median of the reps.  The reach (the largest count
 * whose loads, and all smaller counts', stay within 10 % of the smallest
 * count's) is given from those medians and, in per_rep, from each rep alone:
 * near the edge it moves from rep to rep: where the pages land in physical
 * memory matters (AMD's TLBs, for one, can hold a run of physically
 * contiguous pages in one entry).  Points and variants take
 * turns within a repetition, sizes in alternating order, so drift of the
 * machine is spread over all of them.  Variants: "4k" (the base page,
 * MADV_NOHUGEPAGE, so base pages even when THP is "always") and "thp"
 * (aligned to THP's size, MADV_HUGEPAGE; each row says how much of it the
 * kernel backed with huge pages, and the variant is left out, with one
 * line, when THP is off).
 *
 *   hps-probe-tlb [--quick] [--reps N] [--max-pages N] [--batches N]
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "hps_probe.h"

#define USAGE "hps-probe-tlb [--quick] [--reps N] [--max-pages N] [--batches N]"
#define LINE 64
#define LOADS (1L << 20)            /* loads in a timed batch: 1-4 ms */
#define WITHIN 1.10                 /* "reach": every point up to it within 10 % of the floor */
#define MAX_PAGES 512               /* 8 lines a set: the chain still fits any L1 of 64 sets x 8 ways */

static long g_batches;              /* timed batches in a rep */
static size_t g_page = 4096;        /* the base page (sysconf) */
static size_t g_huge = 2UL << 20;   /* THP's size (sysfs hpage_pmd_size) */

/* The sweep: fine steps where first-level TLBs end (32-96 entries). */
static const int k_pages_full[] = { 4,  8,   16,  24,  32,  40,  48,  56,  64,  72,  80,
                                    96, 112, 128, 160, 192, 256, 320, 384, 448, 512 };
static const int k_pages_quick[] = { 8, 16, 32, 48, 56, 64, 72, 96, 128, 256 };
#define MAXPOINTS ((int)(sizeof k_pages_full / sizeof k_pages_full[0]))

enum { V_4K, V_THP, NVARIANTS };
static const char *const k_variant[NVARIANTS] = { "4k", "thp" };

struct point {
    int pages;
    double ns[NVARIANTS][HPS_PROBE_MAX_REPS];
    uint64_t huge_kib_min;          /* thp: least huge-page backing over the reps */
};

/* Walk n loads from p; noipa keeps the calls from being merged or dropped. */
__attribute__((noipa)) static void *chase(void *p, long n)
{
    while (n-- > 0)
        p = *(void **)p;
    return p;
}

/* kB of AnonHugePages in the mapping that contains addr (0 if unknown). */
static uint64_t huge_kib_at(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return 0;
    char line[256];
    int inside = 0;
    uint64_t kib = 0;
    while (fgets(line, sizeof line, f)) {
        uintptr_t lo, hi;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            inside = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
        else if (inside && sscanf(line, "AnonHugePages: %" SCNu64 " kB", &kib) == 1)
            break;
    }
    fclose(f);
    return inside ? kib : 0;
}

/* One rep of one point: map pages, link one line per page into a random
 * cycle, time the chase.  Returns ns per load, or -1 after logging. */
static double measure(int pages, int variant, uint64_t *rng, uint64_t *huge_kib)
{
    size_t len = (size_t)pages * g_page;
    size_t map_len = variant == V_THP ? (len + g_huge - 1) / g_huge * g_huge + g_huge : len;
    char *raw = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        hps_bench_log("mmap of %zu bytes failed", map_len);
        return -1;
    }
    char *base = raw;
    if (variant == V_THP) {
        base = (char *)(((uintptr_t)raw + g_huge - 1) & ~(uintptr_t)(g_huge - 1));
        (void)madvise(base, (len + g_huge - 1) / g_huge * g_huge, MADV_HUGEPAGE);
    } else {
        (void)madvise(base, len, MADV_NOHUGEPAGE);   /* no error when THP is compiled out */
    }
    static int order[MAX_PAGES];
    for (int i = 0; i < pages; i++)
        order[i] = i;
    for (int i = pages - 1; i > 0; i--) {             /* Fisher-Yates, xorshift64 */
        *rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
        int j = (int)(*rng % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j], order[j] = t;
    }
#define LINE_OF(pg) (base + (size_t)(pg) * g_page + (size_t)((pg) % 64) * LINE)
    for (int i = 0; i < pages; i++)
        *(void **)LINE_OF(order[i]) = LINE_OF(order[(i + 1) % pages]);
    void *p = LINE_OF(order[0]);
#undef LINE_OF
    if (variant == V_THP)
        *huge_kib = huge_kib_at(base);
    p = chase(p, 4L * pages);                          /* warm the TLBs and L1 */
    double best = -1;
    for (long b = 0; b < g_batches; b++) {
        uint64_t t0 = hps_bench_now_ns();
        p = chase(p, LOADS);
        double ns = (double)(hps_bench_now_ns() - t0) / LOADS;
        if (best < 0 || ns < best)
            best = ns;
    }
    if (p == NULL)                                     /* never: keeps p live */
        hps_bench_log("chase lost its ring");
    munmap(raw, map_len);
    return best;
}

/* THP can back a region advised MADV_HUGEPAGE. */
static int thp_usable(void)
{
    const char *m = hps_probe_thp_mode();
    return !strcmp(m, "always") || !strcmp(m, "madvise");
}

/* Largest swept page count up to which every point is within WITHIN of the
 * first (smallest) point's value v[0]; *beyond = 1 when that is the last point. */
static int reach(const double *v, const struct point *pts, int n, int *beyond)
{
    int r = pts[0].pages;
    *beyond = 1;
    for (int i = 1; i < n; i++) {
        if (v[i] > WITHIN * v[0]) {
            *beyond = 0;
            break;
        }
        r = pts[i].pages;
    }
    return r;
}

int main(int argc, char **argv)
{
    long reps, max_pages;
    const hps_probe_opt_t opts[] = {
        { "--reps", &reps, 1, HPS_PROBE_MAX_REPS, 3, 5 },
        { "--max-pages", &max_pages, 8, MAX_PAGES, 256, MAX_PAGES },
        { "--batches", &g_batches, 1, 100, 3, 5 },
        HPS_PROBE_OPT_END };
    const hps_probe_cli_t cli = { .usage = USAGE, .help = 1, .opts = opts };
    int quick = hps_probe_parse(&cli, argc, argv);

    const int *sweep = quick ? k_pages_quick : k_pages_full;
    int nsweep = quick ? (int)(sizeof k_pages_quick / sizeof *k_pages_quick) : MAXPOINTS;
    struct point pts[MAXPOINTS + 1];      /* the sweep, and --max-pages if off it */
    int n = 0;
    for (int i = 0; i < nsweep && sweep[i] <= max_pages; i++)
        pts[n++].pages = sweep[i];
    if (n == 0 || pts[n - 1].pages < max_pages)   /* the largest count asked for is on the curve */
        pts[n++].pages = (int)max_pages;
    long pg = sysconf(_SC_PAGESIZE);
    if (pg >= 4096 && (pg & (pg - 1)) == 0)
        g_page = (size_t)pg;             /* >= 64 lines: page i's line i mod 64 exists */
    FILE *hf = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
    unsigned long hs = 0;
    if (hf) {
        if (fscanf(hf, "%lu", &hs) == 1 && hs > g_page && (hs & (hs - 1)) == 0)
            g_huge = hs;
        fclose(hf);
    }
    int nvar = thp_usable() ? NVARIANTS : 1;
    if (nvar == 1)
        hps_bench_log("transparent huge pages are off here: only the 4k variant runs");
    for (int i = 0; i < n; i++)
        pts[i].huge_kib_min = UINT64_MAX;

    uint64_t rng = 0x9E3779B97F4A7C15ull;
    hps_probe_steal_start();
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < n; k++) {
            struct point *p = &pts[r % 2 ? n - 1 - k : k];
            for (int v = 0; v < nvar; v++) {
                uint64_t kib = 0;
                double ns = measure(p->pages, (v + r) % nvar, &rng, &kib);
                if (ns < 0)
                    return 1;
                p->ns[(v + r) % nvar][r] = ns;
                if ((v + r) % nvar == V_THP && kib < p->huge_kib_min)
                    p->huge_kib_min = kib;
            }
        }
    hps_probe_steal_stop();

    double med[NVARIANTS][MAXPOINTS];
    for (int v = 0; v < nvar; v++)
        for (int i = 0; i < n; i++) {
            double tmp[HPS_PROBE_MAX_REPS];
            memcpy(tmp, pts[i].ns[v], sizeof(double) * (size_t)reps);
            med[v][i] = hps_bench_median(tmp, (size_t)reps);
        }

    hps_probe_doc_begin("tlb");
    hps_json_bool("quick", quick);
    hps_json_int("reps", reps);
    hps_json_int("batches", g_batches);
    hps_json_int("loads_per_batch", LOADS);
    hps_json_int("page_bytes", (int64_t)g_page);
    hps_json_int("huge_page_bytes", (int64_t)g_huge);
    hps_json_int("max_pages", max_pages);
    hps_json_num("reach_within", WITHIN);
    hps_json_str("thp", nvar == NVARIANTS ? "usable" : "off");
    hps_json_str("access", "dependent loads, one 64 B line per page, line = page mod 64, random cyclic order");
    hps_json_str("value", "median over reps (fresh memory each) of the best batch");
    hps_probe_doc_results();
    for (int v = 0; v < nvar; v++) {
        for (int i = 0; i < n; i++) {
            hps_probe_row_begin("sweep", "load_ns", k_variant[v]);
            hps_json_str("x", "pages");
            hps_json_int("pages", pts[i].pages);
            hps_json_num("value", med[v][i]);
            hps_json_str("unit", "ns");
            hps_json_num_array("reps", pts[i].ns[v], (int)reps);
            if (v == V_THP)
                hps_json_uint("huge_kib", pts[i].huge_kib_min);
            hps_probe_row_end();
        }
        int beyond, b;
        int rp = reach(med[v], pts, n, &beyond);
        double per_rep[HPS_PROBE_MAX_REPS], col[MAXPOINTS];
        for (int r = 0; r < reps; r++) {      /* the same rule on each rep's own column */
            for (int i = 0; i < n; i++)
                col[i] = pts[i].ns[v][r];
            per_rep[r] = reach(col, pts, n, &b);
        }
        char metric[64];
        snprintf(metric, sizeof metric, "reach_pages_%s", k_variant[v]);
        hps_probe_row_begin("scalar", metric, NULL);
        hps_json_num("value", rp);
        hps_json_str("unit", "pages");
        hps_json_bool("beyond_sweep", beyond);
        hps_json_num_array("per_rep", per_rep, (int)reps);
        hps_probe_row_end();
        hps_bench_log("%s: %.3g ns a load at %d pages; within 10%% up to %d pages%s", k_variant[v],
                      med[v][0], pts[0].pages, rp, beyond ? " (the whole sweep)" : "");
    }
    return hps_probe_doc_end();
}
