/* SPDX-License-Identifier: MIT */
/*
 * harness.h - what every hpsync C test shares.
 *
 * Two parts:
 *  - small utilities (fail with one clear line, a watchdog that turns a hang
 *    into a failure with a message, deadlines, argument parsing), so that no
 *    test file grows its own copy;
 *  - the mutual-exclusion stress harness: N threads x M iterations increment
 *    a NON-atomic counter under a lock reached through an ops table, mixing
 *    lock, trylock (retried on EBUSY) and timed lock (near deadline, retried
 *    on ETIMEDOUT).  A second field and an owner word catch two threads
 *    inside the critical section at once, the final count catches lost
 *    updates.  Each lock flavour is a shim that fills in the ops table.
 *
 * Promise: on any failure a test prints exactly one line starting with its
 * name and "FAIL" on stderr and exits non-zero; on success it exits 0.
 */
#ifndef HPS_TEST_HARNESS_H
#define HPS_TEST_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- utilities ----------------------------------------------------------- */

/* Name printed in front of every failure line (defaults to "test"). */
void hps_test_set_name(const char *name);
const char *hps_test_name(void);

/* Print "<name>: FAIL <message>" on stderr and exit(1). */
void hps_test_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* Fail unless rc == want; `what` names the call in the message. */
#define HPS_CHECK_RC(what, rc, want) do { \
        int hps_rc_ = (rc), hps_want_ = (want); \
        if (hps_rc_ != hps_want_) \
            hps_test_fail("%s returned %s, expected %s (%s:%d)", (what), \
                          hps_errno_name(hps_rc_), hps_errno_name(hps_want_), __FILE__, __LINE__); \
    } while (0)
#define HPS_CHECK(cond, ...) do { if (!(cond)) hps_test_fail(__VA_ARGS__); } while (0)

/*
 * Abort the process with a FAIL line after `seconds` (SIGALRM).  CTest's own
 * timeout kills silently; this says which test hung.  Inherited across
 * fork, re-armed in children by calling it again.
 */
void hps_test_watchdog(unsigned seconds);

/* "EBUSY", "ETIMEDOUT", "0" ... for the errno values the tests meet. */
const char *hps_errno_name(int e);

/* Absolute deadline `ns` nanoseconds from now on `clock`. */
struct timespec hps_test_deadline(clockid_t clock, long long ns);
/* Monotonic nanoseconds, for measuring elapsed time. */
uint64_t hps_test_now_ns(void);

/*
 * Parse a thread count: "3" means 3, "4x" means 4 x the CPUs online at run
 * time (oversubscription whatever the machine).  Fails the test on garbage.
 */
unsigned hps_test_threads(const char *arg);
/* Nonzero when libhpsync-preload is in LD_PRELOAD (tools set their own). */
int hps_test_preloaded(void);
/* The process's resident set in kB (VmRSS), or -1 if unreadable. */
long hps_test_rss_kb(void);
/* RSS over a run of waves: the first sample once warmed up, and the peak.
 * Start from HPS_TEST_RSS_INIT; sample after each wave. */
typedef struct hps_test_rss {
    long warm, peak;
} hps_test_rss_t;
#define HPS_TEST_RSS_INIT { -1, 0 }
void hps_test_rss_sample(hps_test_rss_t *r, int warmed_up);
/* Fail if the peak exceeds the warm sample by more than max_growth_kb. */
void hps_test_rss_check(const hps_test_rss_t *r, long max_growth_kb, unsigned long threads);
/* The state letter of thread tid of this process (R, S, D, ...; 0 if gone). */
char hps_test_thread_state(int tid);
/* The calling thread's kernel id, and a wait until thread `tid` of this
 * process sleeps in the kernel (state S in /proc): it is then blocked in
 * the call it made, past any spinning.  Fails the test after 10 s. */
int hps_test_gettid(void);
void hps_test_wait_asleep(int tid);
/* A fresh private page of memory (fails the test if it cannot), and its
 * unmapping: an object alone on a page faults on any touch once unmapped. */
void *hps_test_page(void);
void hps_test_unmap_page(void *page);
/* Parse a positive integer argument or fail. */
unsigned long hps_test_ulong(const char *arg, const char *what);

/* What the test runs on, for its name: "glibc" without the interposer,
 * else the HPSYNC_LOCK algorithm, or "preload-default" when none is set. */
const char *hps_test_impl(void);

/* ---- case dispatcher (cases.c) ------------------------------------------- */

/*
 * A program that runs one of several cases, chosen by argv[1], lists them
 * in a table and leaves main() to the dispatcher:
 *
 *     static const hps_test_case_t cases[] = {
 *         { "rounds", .run_args = case_rounds, .args = "[threads|Nx] [rounds]", .max_args = 2 },
 *         { "pshared", .run = case_pshared },
 *     };
 *     static const hps_test_suite_t suite =
 *         HPS_TEST_SUITE("barrier_test", cases, 100, HPS_TEST_NAME_IMPL);
 *     int main(int argc, char **argv) { return hps_test_main(&suite, argc, argv); }
 *
 * The test's name (hps_test_name, in front of every FAIL line) becomes
 * "<prog>[<case>,<arguments>...]", with ",<hps_test_impl()>" appended under
 * HPS_TEST_NAME_IMPL.  No case, an unknown one or a wrong count of
 * arguments gives one line on stderr with the usage (every case and its
 * arguments) and exit status 2; "-h" or "--help" prints the usage on
 * stdout and exits 0.
 *
 * Exit statuses of a test program: 0 passed, 1 failed (hps_test_fail),
 * 2 usage, 3 watchdog, 77 skipped (CTest's SKIP_RETURN_CODE, where set);
 * a run_args case returns its own.
 */
typedef struct hps_test_case hps_test_case_t;
struct hps_test_case {
    const char *name;
    /* Exactly one of the two: a case without arguments (exit 0 when it
     * returns), or one with arguments, whose return value is the exit
     * status: argv[0] is the case's name, argv[1..argc-1] its arguments. */
    void (*run)(void);
    int (*run_args)(const hps_test_case_t *c, int argc, char **argv);
    const char *args;                 /* their usage, e.g. "[threads|Nx] [rounds]" */
    unsigned min_args, max_args;      /* the count run_args accepts */
    const void *data;                 /* for the case: one function, many cases */
};

enum { HPS_TEST_NAME_IMPL = 1 };

typedef struct hps_test_suite {
    const char *prog;                 /* in the usage and the test name */
    const hps_test_case_t *cases;
    size_t ncases;
    unsigned watchdog_s;              /* armed before the case runs; 0: not */
    unsigned flags;                   /* HPS_TEST_NAME_IMPL */
} hps_test_suite_t;

#define HPS_TEST_SUITE(prog, cases, watchdog_s, flags) \
    { (prog), (cases), sizeof(cases) / sizeof((cases)[0]), (watchdog_s), (flags) }

/* The case argv[1] names, its arguments checked, the name set and the
 * watchdog armed; exits as above when there is none.  For programs with
 * their own steps around every case (set-up, a final check). */
const hps_test_case_t *hps_test_case_select(const hps_test_suite_t *s, int argc, char **argv);
/* Run a selected case with the program's argc/argv; its exit status. */
int hps_test_case_run(const hps_test_case_t *c, int argc, char **argv);
/* Both: the whole main() of most test programs. */
int hps_test_main(const hps_test_suite_t *s, int argc, char **argv);

/* ---- stress harness ------------------------------------------------------ */

typedef struct hps_stress_ops {
    size_t size;                      /* sizeof(struct hps_stress_ops): ABI check */
    const char *name;
    int (*lock)(void *l);             /* 0 or an error */
    int (*trylock)(void *l);          /* 0, EBUSY or an error */
    /* 0, ETIMEDOUT or an error; `clock` is the clock abstime is on. */
    int (*timedlock)(void *l, clockid_t clock, const struct timespec *abstime);
    int (*unlock)(void *l);
    /* Optional: called inside the critical section to check type semantics
     * (e.g. a recursive relock); returns 0 or fails the test itself. */
    void (*in_cs)(void *l);
    /* Clocks the timed lock may use; the harness alternates between them. */
    clockid_t clocks[2];
} hps_stress_ops_t;

typedef struct hps_stress_cfg {
    const hps_stress_ops_t *ops;
    void *lock;
    unsigned threads;
    unsigned long iters;              /* per thread */
    unsigned watchdog_s;              /* 0: no watchdog */
} hps_stress_cfg_t;

/* Run the stress; prints one summary line on stdout; fails the test itself. */
void hps_stress_run(const hps_stress_cfg_t *cfg);

/*
 * The common command line of stress shims: <threads> <iters>, both optional
 * (defaults given), after the shim's own leading arguments.
 */
void hps_stress_args(int argc, char **argv, int first, hps_stress_cfg_t *cfg,
                     unsigned def_threads, unsigned long def_iters);

/*
 * Fill `ops` for pthread_mutex_* on a mutex of `type` (PTHREAD_MUTEX_*);
 * the in-CS check exercises the type's rules (recursion, EDEADLK, EBUSY)
 * while other threads contend.  One type per process.
 */
void hps_stress_pthread_ops(hps_stress_ops_t *ops, const char *name, int type);

/*
 * Deferred cancellation of a lock waiter (cancel.c).  A thread with deferred
 * cancellation blocks in ops->lock on a lock the caller holds; once it
 * sleeps in the kernel it is cancelled.  A lock is not a cancellation
 * point, so it must stay blocked (checked for about 50 ms), take the lock
 * when the caller releases it, and only then be cancelled, at a
 * pthread_testcancel() after its unlock.  Then the lock must still serve a
 * contended locker (a waiter cancelled inside a queue lock would leave its
 * node behind and hang it).  `lock` starts unlocked; ops->lock and
 * ops->unlock are used.  Fails the test itself.
 */
void hps_cancel_check(const hps_stress_ops_t *ops, void *lock);

#ifdef __cplusplus
}
#endif
#endif
