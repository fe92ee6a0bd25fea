/* SPDX-License-Identifier: MIT */
/*
 * local.c - the runtime back-end for PEs started by build/bin/oshrun: the
 * rendezvous file it created (rendezvous.h) carries the key-value exchange,
 * the barrier and the job's exit status.
 *
 * The barrier spins briefly and then sleeps on a futex, because PEs may
 * outnumber cores (4 PEs on 2 cores): a spinning waiter would steal the
 * time slice of the PE it waits for.  When PEs do outnumber the CPUs it
 * does not spin at all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../prim/cpus.h"
#include "../../prim/futex.h"
#include "backend.h"

/* Polls of the generation word before sleeping: a few tens of microseconds,
 * less than a futex sleep and wake-up costs, when every PE has a CPU. */
#define RDV_SPIN 2000

static hps_rdv_hdr_t *g_rdv;
static size_t g_bytes;
static int g_rank;
static unsigned g_spin;

static int env_int(const char *name, long lo, long hi, int *out)
{
    const char *s = secure_getenv(name);
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end || errno || v < lo || v > hi) {
        hps_shmem_errline("hps_rt_init", "%s='%s' is not a number from %ld to %ld "
                          "(set by build/bin/oshrun)", name, s ? s : "", lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int job_id_ok(const char *job)
{
    size_t n = strlen(job);
    if (n == 0 || n >= HPS_RT_JOB_ID_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((job[i] >= 'a' && job[i] <= 'z') || (job[i] >= 'A' && job[i] <= 'Z') ||
              (job[i] >= '0' && job[i] <= '9')))
            return 0;
    return 1;
}

/* Sense reversal with a generation counter instead of a sense bit, so the
 * word waiters sleep on changes at every episode.  The arrival is a
 * release: it publishes what this PE wrote before the barrier (its
 * key-value slots); the last arrival's fence acquires what every earlier
 * one wrote, and its release of the generation passes all of it on. */
static void rdv_barrier(void)
{
    hps_rdv_hdr_t *h = g_rdv;
    /* Exact: the generation cannot move until this PE arrives. */
    uint32_t gen = hps_load_acquire(&h->generation);
    if (hps_faa_release(&h->arrived, 1) == h->size - 1) {
        hps_fence_seq_cst();            /* acquire side of the arrivals */
        /* Nobody touches arrived again before seeing the new generation. */
        hps_store_relaxed(&h->arrived, 0);
        hps_faa_release(&h->generation, 1);
        /* Store-load against a waiter's sleepers increment (its fence below):
         * either it sees the new generation or this sees it asleep. */
        hps_fence_seq_cst();
        if (hps_load_relaxed(&h->sleepers))
            hps_futex_wake(&h->generation, INT_MAX, 1);
        return;
    }
    for (unsigned i = 0; i < g_spin; i++) {
        if (hps_load_acquire(&h->generation) != gen)
            return;
        hps_cpu_relax();
    }
    while (hps_load_acquire(&h->generation) == gen) {
        hps_faa_relaxed(&h->sleepers, 1);
        hps_fence_seq_cst();            /* pairs with the releaser's fence */
        if (hps_load_acquire(&h->generation) == gen)
            hps_futex_wait(&h->generation, gen, CLOCK_MONOTONIC, NULL, 1);
        hps_fas_release(&h->sleepers, 1);  /* pr.h's only fetch-sub; a stale count costs one wake */
    }
}

static int local_barrier(void)
{
    rdv_barrier();
    return 0;
}

/* Two barriers: the first so nobody still reads the values this PE is
 * about to overwrite (puts after an exchange may replace a key), the second
 * so everyone's new values are complete before anyone reads them. */
static int local_exchange(void)
{
    const hps_rdv_kv_t *staged = hps_rt_staged();
    hps_rdv_kv_t *mine = &g_rdv->pe[g_rank].kv;
    rdv_barrier();
    mine->nslots = staged->nslots;
    memcpy(mine->slot, staged->slot, staged->nslots * sizeof staged->slot[0]);
    rdv_barrier();
    return 0;
}

static int local_get(int pe, const char *key, void *val, size_t len)
{
    /* Own values are readable right after the put, as with PMIx. */
    const hps_rdv_kv_t *kv = pe == g_rank ? hps_rt_staged() : &g_rdv->pe[pe].kv;
    return hps_rt_kv_get(kv, pe, key, val, len);
}

static int local_node_of(int pe) { return 0; }

static void local_abort(int status)
{
    uint32_t none = 0;
    /* The first PE to end the job names its status.  Release is enough: the
     * launcher reads the word after this process is gone. */
    hps_cas_release(&g_rdv->exit_word, &none, HPS_RDV_EXIT_SET | ((uint32_t)status & 0xff));
}

static void local_finalize(void)
{
    /* Tells oshrun that this PE may exit now without stranding the others. */
    hps_store_release(&g_rdv->pe[g_rank].state, HPS_RDV_FINALIZED);
    munmap(g_rdv, g_bytes);
    g_rdv = NULL;
}

static const hps_rt_backend_t local_backend = {
    .name = "local",
    .put = hps_rt_stage_put,
    .exchange = local_exchange,
    .get = local_get,
    .barrier = local_barrier,
    .node_of = local_node_of,
    .abort = local_abort,
    .finalize = local_finalize,
};

int hps_rt_local_init(hps_rt_job_t *job, const hps_rt_backend_t **be)
{
    const char *id = secure_getenv(HPS_RDV_ENV_JOB);
    int rank, size;
    if (!job_id_ok(id)) {
        hps_shmem_errline("hps_rt_init", "%s='%.60s' is not a job id (letters and digits)",
                          HPS_RDV_ENV_JOB, id);
        return -1;
    }
    if (env_int(HPS_RDV_ENV_SIZE, 1, HPS_RDV_MAX_PES, &size) ||
        env_int(HPS_RDV_ENV_RANK, 0, size - 1, &rank))
        return -1;

    char name[96];
    hps_rdv_name(name, sizeof name, id);
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        hps_shmem_errline("hps_rt_init", "cannot open the launcher's rendezvous /dev/shm%s: %s "
                          "(was this PE started by build/bin/oshrun, which is still running?)",
                          name, strerror(errno));
        return -1;
    }
    size_t bytes = hps_rdv_bytes((uint32_t)size);
    struct stat st;
    void *p = MAP_FAILED;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size >= bytes)
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    hps_rdv_hdr_t *h = p;
    if (p == MAP_FAILED || h->magic != HPS_RDV_MAGIC || h->version != HPS_RDV_VERSION ||
        h->size != (uint32_t)size) {
        hps_shmem_errline("hps_rt_init", "rendezvous /dev/shm%s does not describe a job of %d PEs "
                          "(from another hpsync version?)", name, size);
        if (p != MAP_FAILED)
            munmap(p, bytes);
        return -1;
    }
    /* A second joiner as the same rank is a program started by a PE (it
     * inherited the PE's environment), which must not take the PE's place. */
    uint32_t idle = HPS_RDV_IDLE;
    /* Release pairs with oshrun's acquire load of the state once this PE
     * has exited (which orders it in practice anyway). */
    if (!hps_cas_release(&h->pe[rank].state, &idle, HPS_RDV_JOINED)) {
        hps_shmem_errline("hps_rt_init", "PE %d of job %s has joined already (is this a program "
                          "started by a PE, with its %s?)", rank, id, HPS_RDV_ENV_JOB);
        munmap(p, bytes);
        return -1;
    }
    g_rdv = h;
    g_bytes = bytes;
    g_rank = rank;
    g_spin = size <= hps_cpus_usable() ? RDV_SPIN : 0;

    job->rank = rank;
    job->size = size;
    strcpy(job->job_id, id);            /* length checked by job_id_ok */
    *be = &local_backend;
    return 0;
}
