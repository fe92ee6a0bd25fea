// SPDX-License-Identifier: MIT
/*
 * What a timed lock does with a bad argument, the same for every algorithm,
 * through the dispatcher (hps_lock_timedlock) and the algorithm's own
 * hps_<algo>_timedlock:
 *  - NULL abstime, tv_nsec outside 0..999999999, or a clock other than
 *    CLOCK_REALTIME / CLOCK_MONOTONIC (an unknown id, a CPU-time clock)
 *    give EINVAL when the call would have to wait, at once;
 *  - on a free lock the call takes it (as glibc, the deadline is looked at
 *    only when the call would wait);
 *  - hps_deadline_passed says EINVAL for a clock it cannot read.
 *   timed_args algo <algo> | deadline
 * A hang (an untimed wait, a deadline read from an unset clock value) is
 * caught by the watchdog.
 */
#include <errno.h>
#include <string.h>
#include "harness.h"
#include "hpsync/lock.h"

/* Each algorithm's own API, behind one shape. */
typedef struct algo_api {
    const char *name;
    void (*init)(void *l);
    int (*trylock)(void *l);
    int (*timedlock)(void *l, clockid_t clock, const struct timespec *abstime);
    void (*unlock)(void *l);
} algo_api_t;

#define ALGO_API(n)                                                                     \
    static void n##_init(void *l) { hps_##n##_init(l); }                                \
    static int n##_trylock(void *l) { return hps_##n##_trylock(l) ? 0 : EBUSY; }        \
    static int n##_timed(void *l, clockid_t c, const struct timespec *a)                \
    {                                                                                   \
        return hps_##n##_timedlock(l, c, a);                                            \
    }                                                                                   \
    static void n##_unlock(void *l) { hps_##n##_unlock(l); }
ALGO_API(ttas)
ALGO_API(ticket)
ALGO_API(mcs)
ALGO_API(hemlock)
ALGO_API(adaptive)
#define ALGO_ROW(n) { #n, n##_init, n##_trylock, n##_timed, n##_unlock }
static const algo_api_t algo_apis[] = {
    ALGO_ROW(ttas), ALGO_ROW(ticket), ALGO_ROW(mcs), ALGO_ROW(hemlock), ALGO_ROW(adaptive),
};

/* The dispatcher, behind the same shape (the lock's algorithm is set once). */
static hps_lock_algo_t disp_algo;
static void disp_init(void *l) { HPS_CHECK_RC("hps_lock_init", hps_lock_init(l, disp_algo), 0); }
static int disp_trylock(void *l) { return hps_lock_trylock(l); }
static int disp_timed(void *l, clockid_t c, const struct timespec *a) { return hps_lock_timedlock(l, c, a); }
static void disp_unlock(void *l) { hps_lock_unlock(l); }
static const algo_api_t disp_api = { "hps_lock", disp_init, disp_trylock, disp_timed, disp_unlock };

static void check_api(const algo_api_t *api)
{
    static union { hps_lock_t lock; hps_lock_state_t any; } obj;
    memset(&obj, 0, sizeof obj);
    api->init(&obj);
    struct timespec future = hps_test_deadline(CLOCK_MONOTONIC, 10000000000LL);
    struct timespec bad_nsec = future;
    bad_nsec.tv_nsec = 1000000000L;
    const struct { const char *what; clockid_t clock; const struct timespec *abs; } bad[] = {
        { "NULL abstime", CLOCK_MONOTONIC, NULL },
        { "NULL abstime, CLOCK_REALTIME", CLOCK_REALTIME, NULL },
        { "tv_nsec = 1e9", CLOCK_MONOTONIC, &bad_nsec },
        { "clock id 12345", (clockid_t)12345, &future },
        { "clock id -1", (clockid_t)-1, &future },
        { "CLOCK_PROCESS_CPUTIME_ID", CLOCK_PROCESS_CPUTIME_ID, &future },
    };

    /* Free lock: taken whatever the deadline says. */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = api->timedlock(&obj, bad[i].clock, bad[i].abs);
        if (rc != 0)
            hps_test_fail("%s timedlock on a free lock with %s returned %s, expected 0",
                          api->name, bad[i].what, hps_errno_name(rc));
        api->unlock(&obj);
    }
    /* Held lock (by us: these calls must not wait at all): EINVAL. */
    HPS_CHECK_RC("trylock of a free lock", api->trylock(&obj), 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t t0 = hps_test_now_ns();
        int rc = api->timedlock(&obj, bad[i].clock, bad[i].abs);
        if (rc != EINVAL)
            hps_test_fail("%s timedlock on a held lock with %s returned %s, expected EINVAL",
                          api->name, bad[i].what, hps_errno_name(rc));
        HPS_CHECK(hps_test_now_ns() - t0 < 1000000000ull,
                  "%s timedlock with %s waited before its EINVAL", api->name, bad[i].what);
    }
    /* A good deadline on a held lock still times out. */
    struct timespec soon = hps_test_deadline(CLOCK_REALTIME, 2000000);
    HPS_CHECK_RC("timedlock of a held lock, 2 ms", api->timedlock(&obj, CLOCK_REALTIME, &soon), ETIMEDOUT);
    api->unlock(&obj);
    HPS_CHECK_RC("trylock after the errors", api->trylock(&obj), 0);
    api->unlock(&obj);
}

static int case_algo(const hps_test_case_t *c, int argc, char **argv)
{
    HPS_CHECK(hps_lock_algo_parse(argv[1], &disp_algo) == 0, "unknown algorithm '%s'", argv[1]);
    check_api(&disp_api);
    for (size_t i = 0; i < sizeof algo_apis / sizeof algo_apis[0]; i++)
        if (!strcmp(algo_apis[i].name, hps_lock_algo_name(disp_algo)))
            check_api(&algo_apis[i]);
    return 0;
}

static void case_deadline(void)
{
    struct timespec past = { 0, 0 }, future = hps_test_deadline(CLOCK_MONOTONIC, 10000000000LL);
    HPS_CHECK_RC("hps_deadline_passed(past)", hps_deadline_passed(CLOCK_MONOTONIC, &past), ETIMEDOUT);
    HPS_CHECK_RC("hps_deadline_passed(future)", hps_deadline_passed(CLOCK_MONOTONIC, &future), 0);
    HPS_CHECK_RC("hps_deadline_passed(clock 12345)", hps_deadline_passed((clockid_t)12345, &past), EINVAL);
    HPS_CHECK_RC("hps_deadline_check(NULL)", hps_deadline_check(CLOCK_REALTIME, NULL), EINVAL);
    HPS_CHECK_RC("hps_deadline_check(cputime)", hps_deadline_check(CLOCK_PROCESS_CPUTIME_ID, &past), EINVAL);
    HPS_CHECK_RC("hps_deadline_check(ok)", hps_deadline_check(CLOCK_REALTIME, &past), 0);
}

static const hps_test_case_t cases[] = {
    { "algo", .run_args = case_algo, .args = "<algo>", .min_args = 1, .max_args = 1 },
    { "deadline", .run = case_deadline },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("timed_args", cases, 30, 0);

int main(int argc, char **argv) { return hps_test_main(&suite, argc, argv); }
