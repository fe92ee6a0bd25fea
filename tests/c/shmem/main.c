// SPDX-License-Identifier: MIT
/*
 * shmem_test FAMILY - one routine family of libhpsync-shmem checked on
 * every PE of the job; prints "shmem_test FAMILY: ok (N PEs, transport T)"
 * on PE 0 when all pass.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"
#include "shtest.h"

const char *t_family = "?";

void t_fail(const char *file, int line, const char *fmt, ...)
{
    char buf[512];
    int n = snprintf(buf, sizeof buf, "shmem_test %s: PE %d: FAIL ", t_family, shmem_my_pe());
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    if (n < (int)sizeof buf)
        snprintf(buf + n, sizeof buf - (size_t)n, " (%s:%d)\n", file, line);
    (void)!write(2, buf, strlen(buf));
    shmem_global_exit(1);
}

/* mem and threads call shmem_init_thread themselves: their datum says so. */
static const char self_init[] = "calls shmem_init_thread itself";
static const hps_test_case_t families[] = {
    { "rma", .run = t_rma }, { "amo", .run = t_amo }, { "sync", .run = t_sync },
    { "coll", .run = t_coll }, { "reduce", .run = t_reduce }, { "team", .run = t_team },
    { "lock_ctx", .run = t_lock_ctx }, { "mem", .run = t_mem, .data = self_init },
    { "compat", .run = t_compat }, { "generic", .run = t_generic }, { "gtypes", .run = t_gtypes },
    { "align", .run = t_align }, { "collstress", .run = t_collstress },
    { "transport", .run = t_transport }, { "threads", .run = t_threads, .data = self_init },
};
/* A hang is a failure with a message, not a CTest timeout. */
static const hps_test_suite_t suite = HPS_TEST_SUITE("shmem_test", families, 60, 0);

int main(int argc, char **argv)
{
    const hps_test_case_t *c = hps_test_case_select(&suite, argc, argv);
    t_family = c->name;
    if (!c->data)
        shmem_init();
    hps_test_case_run(c, argc, argv);
    shmem_barrier_all();
    if (shmem_my_pe() == 0)
        printf("shmem_test %s: ok (%d PEs, transport to PE %d: %s)\n", t_family,
               shmem_n_pes(), shmem_n_pes() - 1, shmemx_transport(shmem_n_pes() - 1));
    shmem_finalize();
    return 0;
}
