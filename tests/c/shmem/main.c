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

static const struct {
    const char *name;
    void (*run)(void);
} families[] = {
    { "rma", t_rma }, { "amo", t_amo }, { "sync", t_sync }, { "coll", t_coll },
    { "reduce", t_reduce }, { "team", t_team }, { "lock_ctx", t_lock_ctx }, { "mem", t_mem },
    { "compat", t_compat }, { "generic", t_generic }, { "gtypes", t_gtypes },
    { "align", t_align }, { "collstress", t_collstress },
    { "transport", t_transport }, { "threads", t_threads },
};

int main(int argc, char **argv)
{
    /* A hang is a failure with a message, not a CTest timeout. */
    alarm(60);
    for (size_t i = 0; argc == 2 && i < sizeof families / sizeof families[0]; i++) {
        if (strcmp(argv[1], families[i].name))
            continue;
        t_family = families[i].name;
        /* mem and threads call shmem_init_thread themselves. */
        if (strcmp(t_family, "mem") && strcmp(t_family, "threads"))
            shmem_init();
        families[i].run();
        shmem_barrier_all();
        if (shmem_my_pe() == 0)
            printf("shmem_test %s: ok (%d PEs, transport to PE %d: %s)\n", t_family,
                   shmem_n_pes(), shmem_n_pes() - 1, shmemx_transport(shmem_n_pes() - 1));
        shmem_finalize();
        return 0;
    }
    fprintf(stderr, "usage: shmem_test rma|amo|sync|coll|reduce|team|lock_ctx|mem|compat|generic|gtypes|align|collstress|transport|threads\n");
    return 2;
}
