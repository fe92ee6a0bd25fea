// SPDX-License-Identifier: MIT
/*
 * rt_test - the OpenSHMEM runtime (src/shmem/runtime/runtime.h) on its own,
 * run as every PE of a job (under build/bin/oshrun, mpirun, or alone):
 *
 *   rt_test basic BACKEND N      joins as back-end BACKEND in a job of N PEs;
 *                                 key-value exchange with every PE (values of
 *                                 1 to 256 bytes, a key replaced, own keys
 *                                 before the exchange), barrier ordering,
 *                                 node_of, argument errors; prints
 *                                 "rt_test: PE r of N job ID" per PE
 *   rt_test barriers K MAXMS     K barriers, each checked for ordering;
 *                                 fails if they take longer than MAXMS ms
 *   rt_test exit S R             PE R exits with status S, the rest wait
 *   rt_test kill R               PE R kills itself with SIGKILL, the rest wait
 *   rt_test abort S R            PE R calls hps_rt_abort(S), the rest wait
 *   rt_test nofinalize R         PE R exits 0 without hps_rt_finalize, the rest wait
 *   rt_test stdin                PE 0 echoes stdin; others must read EOF
 *   rt_test rejoin               each PE starts a copy of itself, which must
 *                                 fail to join as the same PE (one line)
 *   rt_test hang                 every PE joins, prints "rt_test: PE r pid P
 *                                 waits" and sleeps until a signal ends it
 *
 * "Wait" is one more barrier, which only the launcher's teardown ends; the
 * waiting PEs print "rt_test: PE r not ended" if it ever returns (under
 * mpirun it does: the fence fails when a rank is gone).
 * Barrier ordering is checked through a counter in a shared file named
 * hpsync-shmem-<job>-test, which also stands for the library's own
 * segments: oshrun must remove it however the job ends.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "runtime.h"

static int g_rank, g_size;
static _Atomic unsigned *g_counter;
static char g_file[96];

static void join(void)
{
    HPS_CHECK(hps_rt_init() == 0, "hps_rt_init failed");
    g_rank = hps_rt_rank();
    g_size = hps_rt_size();
    HPS_CHECK(g_size >= 1 && g_rank >= 0 && g_rank < g_size, "rank %d of %d", g_rank, g_size);
    char name[64];
    snprintf(name, sizeof name, "rt_test PE %d", g_rank);
    hps_test_set_name(strdup(name));
}

/* Every PE maps the same counter (same size from every PE: ftruncate is
 * idempotent), then a barrier makes sure all have it before it is used. */
static void map_counter(void)
{
    snprintf(g_file, sizeof g_file, "/hpsync-shmem-%s-test", hps_rt_job_id());
    int fd = shm_open(g_file, O_RDWR | O_CREAT, 0600);
    HPS_CHECK(fd >= 0, "shm_open %s: %m", g_file);
    HPS_CHECK(ftruncate(fd, 4096) == 0, "ftruncate %s: %m", g_file);
    g_counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    HPS_CHECK(g_counter != MAP_FAILED, "mmap %s: %m", g_file);
    close(fd);
    HPS_CHECK(hps_rt_barrier() == 0, "hps_rt_barrier (after mapping) failed");
}

/* Round k: everyone increments, then after the barrier everyone must see all
 * increments of round k and none of round k+1 (the second barrier). */
static void ordered_barriers(unsigned long rounds)
{
    for (unsigned long k = 0; k < rounds; k++) {
        atomic_fetch_add(g_counter, 1);
        HPS_CHECK(hps_rt_barrier() == 0, "hps_rt_barrier failed");
        unsigned seen = atomic_load(g_counter);
        HPS_CHECK(seen == (unsigned)g_size * (k + 1),
                  "round %lu: counter %u after the barrier, expected %lu", k, seen,
                  (unsigned long)g_size * (k + 1));
        HPS_CHECK(hps_rt_barrier() == 0, "hps_rt_barrier failed");
    }
}

static void leave(void)
{
    HPS_CHECK(hps_rt_barrier() == 0, "final hps_rt_barrier failed");
    if (g_counter && g_rank == 0)
        shm_unlink(g_file);         /* under mpirun nobody else would */
    hps_rt_finalize();
}

static void fill(unsigned char *buf, size_t len, int pe, int salt)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)(pe * 31 + (int)i * 7 + salt);
}

static void check_kv(void)
{
    static const size_t lens[] = {1, 8, 100, HPS_RT_MAX_VALUE};
    unsigned char buf[HPS_RT_MAX_VALUE], want[HPS_RT_MAX_VALUE];
    char key[32];
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        snprintf(key, sizeof key, "v%zu", lens[i]);
        fill(buf, lens[i], g_rank, (int)i);
        HPS_CHECK(hps_rt_put(key, buf, lens[i]) == 0, "hps_rt_put %s", key);
    }
    HPS_CHECK(hps_rt_put("replaced", "old", 4) == 0, "hps_rt_put replaced");
    /* The longest key allowed: 31 characters. */
    HPS_CHECK(hps_rt_put("k123456789012345678901234567890", &g_rank, sizeof g_rank) == 0,
              "hps_rt_put with a 31-character key");
    /* A PE reads its own values back before any exchange (as with PMIx). */
    HPS_CHECK(hps_rt_get(g_rank, "v8", buf, 8) == 0, "own key before the exchange");
    HPS_CHECK(hps_rt_exchange() == 0, "hps_rt_exchange failed");

    for (int pe = 0; pe < g_size; pe++) {
        for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
            snprintf(key, sizeof key, "v%zu", lens[i]);
            fill(want, lens[i], pe, (int)i);
            memset(buf, 0, sizeof buf);
            HPS_CHECK(hps_rt_get(pe, key, buf, lens[i]) == 0, "hps_rt_get(%d, %s)", pe, key);
            HPS_CHECK(memcmp(buf, want, lens[i]) == 0, "PE %d's %s has the wrong bytes", pe, key);
        }
        int r = -1;
        HPS_CHECK(hps_rt_get(pe, "k123456789012345678901234567890", &r, sizeof r) == 0 && r == pe,
                  "PE %d's long key: %d", pe, r);
    }

    /* A key put again: everyone sees the new value after the next exchange. */
    HPS_CHECK(hps_rt_put("replaced", "new", 4) == 0, "hps_rt_put replaced again");
    HPS_CHECK(hps_rt_exchange() == 0, "second hps_rt_exchange failed");
    for (int pe = 0; pe < g_size; pe++) {
        char v[4] = "";
        HPS_CHECK(hps_rt_get(pe, "replaced", v, 4) == 0 && strcmp(v, "new") == 0,
                  "PE %d's replaced key reads '%.3s'", pe, v);
    }
}

/* Each error: -1 and exactly one line "hpsync-shmem: <call>: ..." on
 * stderr, which is captured here so that the check can count the lines. */
static void check_errors(void)
{
    fflush(stderr);
    int saved = dup(2), cap = memfd_create("rt_test-stderr", 0);
    HPS_CHECK(saved >= 0 && cap >= 0 && dup2(cap, 2) == 2, "cannot capture stderr: %m");
    int v = 0, errors = 0;
#define EXPECT_ERROR(call, what) do { errors++; \
        if ((call) != -1) { dup2(saved, 2); hps_test_fail("%s accepted", what); } } while (0)
    EXPECT_ERROR(hps_rt_get(g_size, "v8", &v, sizeof v), "get from PE size");
    EXPECT_ERROR(hps_rt_get(-1, "v8", &v, sizeof v), "get from PE -1");
    EXPECT_ERROR(hps_rt_get(0, "v8", &v, 4), "get with the wrong length");
    EXPECT_ERROR(hps_rt_put("k1234567890123456789012345678901", &v, 4), "a 32-character key");
    EXPECT_ERROR(hps_rt_put("", &v, 4), "an empty key");
    EXPECT_ERROR(hps_rt_put("big", &v, HPS_RT_MAX_VALUE + 1), "an oversized value");
    EXPECT_ERROR(hps_rt_node_of(g_size), "node_of(size)");
    /* A missing key under PMIx costs the server's timeout (2 s with Open
     * MPI): only the shared-memory back-ends check it here. */
    if (strcmp(hps_rt_name(), "pmix") != 0)
        EXPECT_ERROR(hps_rt_get(0, "never-put", &v, sizeof v), "a missing key");
#undef EXPECT_ERROR
    dup2(saved, 2);
    close(saved);
    char text[4096];
    ssize_t n = pread(cap, text, sizeof text - 1, 0);
    close(cap);
    text[n > 0 ? n : 0] = '\0';
    int lines = 0, ours = 0;
    for (char *l = text; *l; l = strchr(l, '\n') + 1) {
        HPS_CHECK(strchr(l, '\n'), "unterminated error line: %s", l);
        lines++;
        ours += strncmp(l, "hpsync-shmem: hps_rt_", 21) == 0;
    }
    HPS_CHECK(lines == errors && ours == errors, "%d errors gave %d lines (%d from the runtime):\n%s",
              errors, lines, ours, text);
}

static int basic(const char *backend, int size)
{
    HPS_CHECK(strcmp(hps_rt_name(), "none") == 0, "name before init: %s", hps_rt_name());
    join();
    HPS_CHECK(strcmp(hps_rt_name(), backend) == 0, "back-end %s, expected %s", hps_rt_name(), backend);
    HPS_CHECK(g_size == size, "size %d, expected %d", g_size, size);
    const char *id = hps_rt_job_id();
    HPS_CHECK(id[0] && strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
                  == strlen(id), "job id '%s' is not letters, digits and '-'", id);
    for (int pe = 0; pe < g_size; pe++)
        HPS_CHECK(hps_rt_node_of(pe) == 0, "node_of(%d) = %d on one machine", pe, hps_rt_node_of(pe));
    map_counter();
    check_kv();
    ordered_barriers(20);
    check_errors();
    printf("rt_test: PE %d of %d job %s\n", g_rank, g_size, id);
    fflush(stdout);
    leave();
    HPS_CHECK(strcmp(hps_rt_name(), "none") == 0, "name after finalize: %s", hps_rt_name());
    return 0;
}

static int barriers(unsigned long rounds, unsigned long max_ms)
{
    join();
    map_counter();
    uint64_t t0 = hps_test_now_ns();
    ordered_barriers(rounds);
    uint64_t ms = (hps_test_now_ns() - t0) / 1000000;
    HPS_CHECK(ms <= max_ms, "%lu barrier pairs took %llu ms (limit %lu ms)", rounds,
              (unsigned long long)ms, max_ms);
    if (g_rank == 0)
        printf("rt_test: %lu barrier pairs on %d PEs in %llu ms\n", rounds, g_size,
               (unsigned long long)ms);
    leave();
    return 0;
}

/* PE `who` does `act`; the others wait in a barrier only teardown ends. */
static int fault(const char *act, int status, int who)
{
    join();
    /* Under mpirun nobody would remove the file after the fault. */
    if (strcmp(hps_rt_name(), "local") == 0)
        map_counter();
    else
        HPS_CHECK(hps_rt_barrier() == 0, "hps_rt_barrier failed");
    if (g_rank == who) {
        if (strcmp(act, "exit") == 0)
            _exit(status);
        if (strcmp(act, "kill") == 0)
            raise(SIGKILL);
        if (strcmp(act, "abort") == 0) {
            printf("rt_test: PE %d ends the job with %d\n", g_rank, status);
            hps_rt_abort(status);
        }
        if (strcmp(act, "nofinalize") == 0)
            exit(0);
        hps_test_fail("unknown fault %s", act);
    }
    hps_rt_barrier();
    printf("rt_test: PE %d not ended\n", g_rank);
    return 1;
}

static int echo_stdin(void)
{
    join();
    char buf[256];
    size_t n = fread(buf, 1, sizeof buf, stdin);
    if (g_rank == 0)
        printf("rt_test: PE 0 read '%.*s'\n", (int)n, buf);
    else
        HPS_CHECK(n == 0 && feof(stdin), "PE %d read %zu bytes of stdin", g_rank, n);
    leave();
    return 0;
}

static int rejoin(void)
{
    join();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "/proc/%ld/exe rejoin-child 2>&1", (long)getpid());
    FILE *f = popen(cmd, "r");
    HPS_CHECK(f, "popen %s: %m", cmd);
    char line[512] = "", extra[512];
    HPS_CHECK(fgets(line, sizeof line, f), "the copy printed nothing");
    int more = fgets(extra, sizeof extra, f) != NULL;
    int st = pclose(f);
    HPS_CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && !more &&
              strstr(line, "hpsync-shmem: hps_rt_init: PE ") && strstr(line, "joined already"),
              "the copy: status %d, %s output '%s'", st, more ? "more than one line of" : "", line);
    leave();
    return 0;
}

static int rejoin_child(void)
{
    return hps_rt_init() == -1 && strcmp(hps_rt_name(), "none") == 0 ? 0 : 1;
}

static void hang(void) __attribute__((noreturn));
static void hang(void)
{
    join();
    map_counter();
    printf("rt_test: PE %d pid %ld waits\n", g_rank, (long)getpid());
    fflush(stdout);
    for (;;)
        pause();
}

/* ---- cases ------------------------------------------------------------- */

static int case_basic(const hps_test_case_t *c, int argc, char **argv)
{
    return basic(argv[1], (int)hps_test_ulong(argv[2], "size"));
}

static int case_barriers(const hps_test_case_t *c, int argc, char **argv)
{
    return barriers(hps_test_ulong(argv[1], "rounds"), hps_test_ulong(argv[2], "ms"));
}

/* exit S R, abort S R; kill R, nofinalize R: PE R ends the job (status S). */
static int case_fault(const hps_test_case_t *c, int argc, char **argv)
{
    if (argc == 3)
        return fault(c->name, atoi(argv[1]), atoi(argv[2]));
    return fault(c->name, 0, atoi(argv[1]));
}

static int case_echo_stdin(const hps_test_case_t *c, int argc, char **argv) { return echo_stdin(); }
static int case_rejoin(const hps_test_case_t *c, int argc, char **argv) { return rejoin(); }
static int case_rejoin_child(const hps_test_case_t *c, int argc, char **argv) { return rejoin_child(); }

static const hps_test_case_t cases[] = {
    { "basic", .run_args = case_basic, .args = "BACKEND N", .min_args = 2, .max_args = 2 },
    { "barriers", .run_args = case_barriers, .args = "K MAXMS", .min_args = 2, .max_args = 2 },
    { "exit", .run_args = case_fault, .args = "S R", .min_args = 2, .max_args = 2 },
    { "kill", .run_args = case_fault, .args = "R", .min_args = 1, .max_args = 1 },
    { "abort", .run_args = case_fault, .args = "S R", .min_args = 2, .max_args = 2 },
    { "nofinalize", .run_args = case_fault, .args = "R", .min_args = 1, .max_args = 1 },
    { "stdin", .run_args = case_echo_stdin },
    { "rejoin", .run_args = case_rejoin },
    /* What rejoin starts from a PE: it must not join as that PE. */
    { "rejoin-child", .run_args = case_rejoin_child },
    { "hang", .run = hang },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("rt_test", cases, 30, 0);

int main(int argc, char **argv) { return hps_test_main(&suite, argc, argv); }
