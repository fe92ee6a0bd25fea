/* SPDX-License-Identifier: MIT */
/*
 * runtime.h - how a PE finds its job: who it is, who else is there, a
 * key-value exchange for wiring up, a barrier for start-up and shut-down,
 * and a way to end the whole job.
 *
 * Promise: one interface, three back-ends chosen by hps_rt_init():
 *   local      started by build/bin/oshrun (HPSYNC_SHMEM_JOB in the environment):
 *              a shared-memory rendezvous file the launcher created;
 *   pmix       started by a PMIx launcher (PMIX_RANK in the environment:
 *              Open MPI's mpirun, srun --mpi=pmix), through libpmix;
 *   singleton  neither: one PE, nothing to exchange.
 * Every call is made by the library's own start-up and shut-down code, never
 * on a communication fast path.  Errors are one line on stderr naming the
 * call ("hpsync-shmem: <what>: <why>") and a -1 return; hps_rt_abort() never
 * returns.
 */
#ifndef HPS_SHMEM_RUNTIME_H
#define HPS_SHMEM_RUNTIME_H

#include <stddef.h>

/* Join the job.  0 on success. */
int hps_rt_init(void);
/* Which back-end joined: "local", "pmix" or "singleton". */
const char *hps_rt_name(void);
int hps_rt_rank(void);                 /* this PE, 0..size-1 */
int hps_rt_size(void);                 /* number of PEs */
/* A short printable id unique to this job on this machine (letters, digits,
 * '-'), for naming shared-memory objects: "/hpsync-shmem-<id>-...". */
const char *hps_rt_job_id(void);
/* Node number of a PE (0..nodes-1): PEs with the same number run on one
 * machine and may map each other's shared memory. */
int hps_rt_node_of(int pe);

/* Publish a value under a key (keys: up to 31 characters; values: up to
 * HPS_RT_MAX_VALUE bytes).  Visible to others after the next exchange. */
#define HPS_RT_MAX_VALUE 256
int hps_rt_put(const char *key, const void *val, size_t len);
/* Collective over all PEs: afterwards every PE's puts are readable. */
int hps_rt_exchange(void);
/* Read pe's value for key into val (len bytes, must match what was put). */
int hps_rt_get(int pe, const char *key, void *val, size_t len);
/* Collective over all PEs, for start-up and shut-down only. */
int hps_rt_barrier(void);

/* End the whole job: every PE stops and the job's exit status is status.
 * Used by shmem_global_exit and by fatal errors (after their one line). */
void hps_rt_abort(int status) __attribute__((noreturn));
/* Leave the job (after the final barrier). */
void hps_rt_finalize(void);

#endif
