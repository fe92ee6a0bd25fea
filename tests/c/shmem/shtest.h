/* SPDX-License-Identifier: MIT */
/*
 * shtest.h - what the OpenSHMEM tests share.
 *
 * Each family is a function run on every PE by `shmem_test FAMILY` (under
 * build/bin/oshrun, any number of PEs).  A failed check prints
 * "shmem_test FAMILY: PE r: FAIL <what> (file:line)" and ends the job with
 * shmem_global_exit(1), so one failing PE fails the run at once instead of
 * leaving the others waiting for it.
 */
#ifndef HPS_SHTEST_H
#define HPS_SHTEST_H

#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>

extern const char *t_family;

void t_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
#define T_CHECK(cond, ...) do { \
        if (!(cond)) \
            t_fail(__FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

/* me and n of the world, and the neighbours in a ring. */
#define T_ME shmem_my_pe()
#define T_N shmem_n_pes()
#define T_RIGHT ((T_ME + 1) % T_N)
#define T_LEFT ((T_ME + T_N - 1) % T_N)

/* The families (one file each). */
void t_rma(void);
void t_amo(void);
void t_sync(void);
void t_coll(void);
void t_reduce(void);
void t_team(void);
void t_lock_ctx(void);
void t_mem(void);
void t_compat(void);
void t_generic(void);
void t_gtypes(void);
void t_align(void);
void t_collstress(void);
void t_transport(void);
void t_threads(void);

#endif
