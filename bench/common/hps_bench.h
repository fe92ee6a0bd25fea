/* SPDX-License-Identifier: MIT */
/*
 * hps_bench.h - the tiny harness every hpsync benchmark and probe shares.
 *
 * Promise: a program built on it prints exactly one JSON document on stdout
 * (the only thing the Python CLI reads) and writes every human message to
 * stderr.  The JSON writer is a streaming one with a small nesting stack, so
 * a benchmark emits rows as it measures them and never builds a tree in
 * memory.  Keys are given by the caller; pass NULL as the key inside arrays.
 */
#ifndef HPS_BENCH_H
#define HPS_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define HPS_BENCH_SCHEMA_VERSION 1

/* ---- JSON writer (stdout) ---------------------------------------------- */

void hps_json_begin_object(const char *key);
void hps_json_end_object(void);
void hps_json_begin_array(const char *key);
void hps_json_end_array(void);
void hps_json_str(const char *key, const char *val);     /* NULL val -> null */
void hps_json_int(const char *key, int64_t val);
void hps_json_uint(const char *key, uint64_t val);
void hps_json_num(const char *key, double val);          /* NaN/inf -> null */
void hps_json_bool(const char *key, int val);
void hps_json_null(const char *key);
/*
 * Start a value the caller writes itself (e.g. a JSON array produced by
 * another module); returns the stream to write it to.  The caller must write
 * exactly one complete JSON value.
 */
FILE *hps_json_raw(const char *key);
/* Finish the document: newline and flush; returns nonzero on a write error. */
int hps_json_finish(void);

/* ---- timing ------------------------------------------------------------ */

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t hps_bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* 1 when hps_bench_rdtsc() reads a real time-stamp counter (x86 only). */
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HPS_BENCH_HAVE_TSC 1
static inline uint64_t hps_bench_rdtsc(void) { return __rdtsc(); }
#else
#define HPS_BENCH_HAVE_TSC 0
static inline uint64_t hps_bench_rdtsc(void) { return 0; }
#endif

typedef struct hps_clock_cost {
    double call_ns;          /* mean cost of one clock_gettime(CLOCK_MONOTONIC) */
    uint64_t step_ns;        /* smallest nonzero difference between two calls */
} hps_clock_cost_t;
void hps_bench_clock_cost(hps_clock_cost_t *out);

/* The smallest nonzero difference that recurs among n back-to-back timer
 * differences (sorts diffs in place); 0 if none. */
uint64_t hps_bench_step(uint64_t *diffs, size_t n);
/* The most frequent nonzero difference (sorts diffs in place); 0 if none. */
uint64_t hps_bench_mode(uint64_t *diffs, size_t n);

/* The kernel's clock source ("tsc", "kvm-clock", ...) or "unknown". */
const char *hps_bench_clocksource(void);

/* Sort helper and order statistics over doubles (sorts in place). */
void hps_bench_sort(double *v, size_t n);
double hps_bench_median(double *v, size_t n);

/* ---- machine topology (hwloc) ------------------------------------------ */

typedef struct hps_cache_info {
    uint64_t size;           /* bytes; 0 when unknown */
    int ways;                /* -1 fully associative, 0 unknown */
    unsigned line;           /* bytes; 0 when unknown */
} hps_cache_info_t;

typedef struct hps_topo {
    int packages, cores, pus, numa_nodes;
    hps_cache_info_t l1d, l2, l3;
    char cpu_model[128];     /* hwloc's CPUModel, "unknown" when absent */
} hps_topo_t;

/* Fills *t; returns 0, or -1 (fields zero) when hwloc cannot load a topology. */
int hps_bench_topo(hps_topo_t *t);
/* Write a cache as {size, ways, line, sets} under key. */
void hps_bench_cache_json(const char *key, const hps_cache_info_t *c);

/* ---- the context block -------------------------------------------------- */

/*
 * Write "schema_version" and "context": {host, cpu_model, topology, l1d,
 * timer, compiler, compile_flags, git_commit, kernel, glibc} into the object
 * currently open.  Every benchmark calls this once, first.
 */
void hps_bench_context(void);

/* One line on stderr, prefixed with the program name. */
void hps_bench_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
