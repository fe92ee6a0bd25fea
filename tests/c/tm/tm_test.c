// SPDX-License-Identifier: MIT
/*
 * tm_test - the one harness every TM backend runs (HPSYNC_TM picks it).
 *
 *   tm_test CASE [ARG]
 *
 * Each case asserts behaviour inside and after sections and fails with one
 * "tm_test[CASE]: FAIL ..." line; a watchdog turns a hang into a failure.
 * The concurrent cases run 8 threads whatever the machine (oversubscribed
 * on this 2-CPU one).  The cases live by subject in tm_consistency.c,
 * tm_control.c, tm_backends.c and tm_cond.c; CMakeLists.txt runs them per backend.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tm_test.h"

unsigned long g_iters = 4000;
hps_au32 g_stop;
uint64_t g_x, g_y, g_flag;

/* Busy work between two reads: widens the window in which a writer can
 * commit, so that an inconsistent read would be seen. */
void gap(void)
{
    for (int i = 0; i < 64; i++)
        hps_cpu_relax();
}

void run_threads(unsigned n, void *(*fn)(void *))
{
    pthread_t t[64];
    for (uintptr_t i = 0; i < n; i++)
        HPS_CHECK_RC("pthread_create", pthread_create(&t[i], NULL, fn, (void *)i), 0);
    for (unsigned i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}

/* bank [ITERATIONS]: a longer run, for timing by hand. */
static int run_bank(const hps_test_case_t *c, int argc, char **argv)
{
    (void)c;
    if (argc > 1)
        g_iters = hps_test_ulong(argv[1], "iterations");
    case_bank();
    return 0;
}

static int run_backend(const hps_test_case_t *c, int argc, char **argv)
{
    (void)c;
    (void)argc;
    case_backend(argv[1]);
    return 0;
}

static const hps_test_case_t cases[] = {
    { "bank", .run_args = run_bank, .args = "[iterations]", .max_args = 1 },
    { "counter", .run = case_counter },
    { "stripe", .run = case_stripe },
    { "opacity_sum", .run = case_opacity_sum },
    { "opacity_div", .run = case_opacity_div },
    { "opacity_chain", .run = case_chain },
    { "alloc", .run = case_alloc },
    { "privatize", .run = case_privatize },
    { "irrevocable", .run = case_irrevocable },
    { "restart", .run = case_restart },
    { "abort_many", .run = case_abort_many },
    { "serial_restart", .run = case_serial_restart },
    { "actions", .run = case_actions },
    { "nesting", .run = case_nesting },
    { "stats", .run = case_stats },
    { "subword", .run = case_subword },
    { "raw", .run = case_raw },
    { "fork", .run = case_fork },
    { "bias", .run = case_bias },
    { "bias_over", .run = case_bias_over },
    { "bias_coarse", .run = case_bias_coarse },
    { "membarrier_early", .run = case_membarrier_early },
    { "thread_exit", .run = case_thread_exit },
    { "cond_handoff", .run = case_cond_handoff },
    { "cond_stress", .run = case_cond_stress },
    { "cond_resume", .run = case_cond_resume },
    { "cond_abort_signal", .run = case_cond_abort_signal },
    { "coarsen_static", .run = case_coarsen_static },
    { "coarsen_abort", .run = case_coarsen_abort },
    { "coarsen_serial", .run = case_coarsen_serial },
    { "coarsen_dynamic", .run = case_coarsen_dynamic },
    { "coarsen_capacity", .run = case_coarsen_capacity },
    { "coarsen_leader", .run = case_coarsen_leader },
    { "coarsen_takeover", .run = case_coarsen_takeover },
    { "coarsen_fresh_thread", .run = case_coarsen_fresh_thread },
    { "coarsen_garbage_site", .run = case_coarsen_garbage_site },
    { "coarsen_bias", .run = case_coarsen_bias },
    { "hw_policy", .run = case_hw_policy },
    { "hw_own", .run = case_hw_own },
    { "backend", .run_args = run_backend, .args = "BACKEND", .min_args = 1, .max_args = 1 },
    { "auto", .run = case_auto },
    { "auto_churn", .run = case_auto_churn },
    { "auto_measure", .run = case_auto_measure },
    { "auto_crowded", .run = case_auto_crowded },
    { "auto_idle", .run = case_auto_idle },
    { "auto_small", .run = case_auto_small },
    { "auto_rtm", .run = case_auto_rtm },
    { "orecs_huge", .run = case_orecs_huge },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("tm_test", cases, 90, 0);

int main(int argc, char **argv)
{
    const hps_test_case_t *c = hps_test_case_select(&suite, argc, argv);
    /* The suites on real RTM (tests/c/tm/CMakeLists.txt) name the backend
     * they need; a machine without RTM runs another one: skip. */
    const char *want = getenv("TM_TEST_WANT_BACKEND");
    if (want && strcmp(want, hps_tm_backend_name()) != 0) {
        printf("%s: skipped: backend %s wanted, this machine runs %s\n", hps_test_name(), want,
               hps_tm_backend_name());
        return 77;
    }
    signal(SIGFPE, on_fpe);
    int rc = hps_test_case_run(c, argc, argv);
    printf("%s: ok (backend %s)\n", hps_test_name(), hps_tm_backend_name());
    return rc;
}
