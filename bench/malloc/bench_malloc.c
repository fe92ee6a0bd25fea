// SPDX-License-Identifier: MIT
/*
 * hps-bench-malloc: an allocator as an unmodified program sees it.
 *
 * Only plain malloc/free are called, so run bare it measures glibc and run
 * under LD_PRELOAD=<allocator>.so it measures that allocator.  Each
 * document says which shared object provided malloc, so the caller can check
 * that the preload took.
 *
 *   --mode spread [--warmup N]
 *       128 back-to-back blocks of each size from 64 B to 64 KiB (every 2^k,
 *       2^k - 16 and 3 * 2^(k-1)), their addresses; once in the fresh
 *       process, once after N mixed malloc/free operations.
 *   --mode ring [--laps N] [--reps R] [--sim]
 *       Rings of 128 nodes of each size (64 B .. 8 KiB) in a random cyclic
 *       order; each lap takes a mutex and walks the ring.  ns per node (best
 *       of R batches of N laps, sizes interleaved).  --sim walks 2 warm-up
 *       laps and then N laps per size, untimed, and skips the context
 *       block: the run cachegrind simulates.
 *   --mode mix --pattern local|prodcons --threads T --duration-ms D [--window W]
 *       malloc/free operations per second and peak RSS.
 *   --mode mix --pattern large|stress|server|pipeline --threads T --duration-ms D
 *       the same figures for the patterns of patterns.c (their own windows
 *       and sizes; --window does not apply).
 *
 * The L1 geometry used for set indices (and shown to cachegrind by the
 * CLI) is read from sysfs and printed in every document.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "malloc_bench.h"

static void usage(void)
{
    fprintf(stderr,
            "usage: hps-bench-malloc --mode spread [--warmup N]\n"
            "       hps-bench-malloc --mode ring [--laps N] [--reps R] [--sim]\n"
            "       hps-bench-malloc --mode mix --pattern local|prodcons --threads T "
            "--duration-ms D [--window W]\n"
            "       hps-bench-malloc --mode mix --pattern large|stress|server|pipeline "
            "--threads T --duration-ms D\n");
}

/* ---- cache geometry from sysfs --------------------------------------------- */

static int read_sysfs(const char *dir, const char *file, char *buf, size_t len)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

static long sysfs_num(const char *dir, const char *file)
{
    char buf[64];
    if (read_sysfs(dir, file, buf, sizeof buf) != 0)
        return -1;
    char *end;
    long v = strtol(buf, &end, 10);
    /* "size" reads "32K" or "1024K". */
    if (*end == 'K')
        v <<= 10;
    else if (*end == 'M')
        v <<= 20;
    return v;
}

static int cache_from_dir(const char *dir, mb_cache_t *c)
{
    long size = sysfs_num(dir, "size"), ways = sysfs_num(dir, "ways_of_associativity");
    long line = sysfs_num(dir, "coherency_line_size"), sets = sysfs_num(dir, "number_of_sets");
    /* Only a consistent, set-associative geometry is usable for set indices. */
    if (size <= 0 || ways <= 0 || line <= 0 || sets <= 0 || size != ways * line * sets)
        return -1;
    *c = (mb_cache_t){ (uint64_t)size, (unsigned)ways, (unsigned)line, (unsigned)sets, "sysfs" };
    return 0;
}

void mb_caches(mb_cache_t *l1d, mb_cache_t *llc)
{
    *l1d = (mb_cache_t){ 32768, 8, 64, 64, "default" };
    *llc = (mb_cache_t){ 8u << 20, 16, 64, 8192, "default" };
    int best_level = 0;
    for (int i = 0; i < 16; i++) {
        char dir[128], type[32];
        snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu0/cache/index%d", i);
        long level = sysfs_num(dir, "level");
        if (level < 0 || read_sysfs(dir, "type", type, sizeof type) != 0)
            continue;
        mb_cache_t c;
        if (cache_from_dir(dir, &c) != 0)
            continue;
        if (level == 1 && !strcmp(type, "Data"))
            *l1d = c;
        else if (level > best_level && strcmp(type, "Instruction") != 0) {
            *llc = c;
            best_level = (int)level;
        }
    }
}

void mb_cache_json(const char *key, const mb_cache_t *c)
{
    hps_json_begin_object(key);
    hps_json_uint("size", c->size);
    hps_json_uint("ways", c->ways);
    hps_json_uint("line", c->line);
    hps_json_uint("sets", c->sets);
    hps_json_str("source", c->source);
    hps_json_end_object();
}

void mb_addresses_json(const char *key, void *const *blocks, int n)
{
    FILE *f = hps_json_raw(key);
    fputc('[', f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%" PRIuPTR, i ? "," : "", (uintptr_t)blocks[i]);
    fputc(']', f);
}

/* ---- main ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    const char *mode = NULL, *pattern = "local";
    hps_bench_args_t o = HPS_BENCH_ARGS_INIT;
    long warmup = 20000, laps = 2000, window = 16384;
    int sim = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--sim")) {
            sim = 1;
            continue;
        }
        if (!strcmp(a, "--mode") && v)
            mode = v;
        else if (!strcmp(a, "--pattern") && v)
            pattern = v;
        else if (!strcmp(a, "--warmup"))
            warmup = hps_bench_parse_num(a, v, 0, 100000000L);
        else if (!strcmp(a, "--laps"))
            laps = hps_bench_parse_num(a, v, 1, 100000000L);
        else if (!strcmp(a, "--window"))
            window = hps_bench_parse_num(a, v, 16, 1L << 24);
        else if (!hps_bench_parse_common(&o, a, v)) {
            hps_bench_log("unknown or incomplete argument '%s'", a);
            usage();
            return 2;
        }
        i++;
    }
    int m = !mode ? -1 : !strcmp(mode, "spread") ? 0 : !strcmp(mode, "ring") ? 1
                       : !strcmp(mode, "mix") ? 2 : -1;
    if (m < 0) {
        hps_bench_log("--mode must be spread, ring or mix");
        usage();
        return 2;
    }
    if (sim && m != 1) {
        hps_bench_log("--sim only applies to --mode ring");
        return 2;
    }
    /* Measure first, print afterwards: the context block's hwloc scan
     * allocates, and must neither run between figures nor shape the heap
     * the figures are taken from. */
    int rc = m == 0 ? mb_spread_run(warmup)
           : m == 1 ? mb_ring_run(laps, (int)o.reps, sim)
                    : mb_mix_run(pattern, (int)o.threads, o.duration_ms, window);
    if (rc != 0)
        return rc;
    mb_cache_t l1d, llc;
    mb_caches(&l1d, &llc);
    hps_json_begin_object(NULL);
    hps_json_str("program", "hps-bench-malloc");
    hps_json_str("mode", mode);
    hps_json_str("malloc_provider", hps_bench_provider("malloc"));
    mb_cache_json("l1d", &l1d);
    mb_cache_json("llc", &llc);
    /* Under cachegrind hwloc's scan takes seconds and says nothing new. */
    if (!sim)
        hps_bench_context();
    hps_json_begin_array("rows");
    if (m == 0)
        mb_spread_emit();
    else if (m == 1)
        mb_ring_emit();
    else
        mb_mix_emit();
    hps_json_end_array();
    hps_json_end_object();
    return hps_json_finish();
}
