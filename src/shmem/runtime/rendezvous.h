/* SPDX-License-Identifier: MIT */
/*
 * rendezvous.h - the shared-memory file through which build/bin/oshrun and
 * the PEs it starts find each other (the "local" runtime back-end).
 *
 * Promise: one layout, used by both sides.  oshrun creates
 * /dev/shm/hpsync-shmem-<job>-rt (shm_open name "/hpsync-shmem-<job>-rt"),
 * sized by hps_rdv_bytes(), with the header filled in, before it starts any
 * PE; every PE maps it and never resizes it.  The environment tells a PE
 * where it is:
 *   HPSYNC_SHMEM_JOB   the job id <job> (letters and digits only)
 *   HPSYNC_SHMEM_RANK  this PE, 0..size-1
 *   HPSYNC_SHMEM_SIZE  the number of PEs (must equal the header's size)
 * Words written by several processes are atomics (hpsync/pr.h); the key-value
 * slots are plain memory ordered by the barrier around them.
 */
#ifndef HPS_SHMEM_RENDEZVOUS_H
#define HPS_SHMEM_RENDEZVOUS_H

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hpsync/pr.h"
#include "runtime.h"

#define HPS_RDV_ENV_JOB  "HPSYNC_SHMEM_JOB"
#define HPS_RDV_ENV_RANK "HPSYNC_SHMEM_RANK"
#define HPS_RDV_ENV_SIZE "HPSYNC_SHMEM_SIZE"

#define HPS_RDV_MAGIC    0x68707276u      /* "hprv" */
#define HPS_RDV_VERSION  1u
/* Keys each PE may publish: the library publishes a handful (heap and
 * data-segment bases, fabric addresses and keys); 64 leaves room. */
#define HPS_RDV_SLOTS    64
#define HPS_RDV_KEYLEN   32               /* including the terminating NUL */
/* Far above what one machine runs; bounds the file (about 19 KiB per PE). */
#define HPS_RDV_MAX_PES  4096

typedef struct hps_rdv_slot {
    char key[HPS_RDV_KEYLEN];
    uint32_t len;
    unsigned char val[HPS_RT_MAX_VALUE];
} hps_rdv_slot_t;

/* One PE's published keys (also the shape of its private staging table). */
typedef struct hps_rdv_kv {
    uint32_t nslots;
    hps_rdv_slot_t slot[HPS_RDV_SLOTS];
} hps_rdv_kv_t;

/* What oshrun learns about a PE beyond its exit status. */
enum hps_rdv_state {
    HPS_RDV_IDLE = 0,        /* never joined: not an OpenSHMEM program, or not yet */
    HPS_RDV_JOINED,          /* hps_rt_init done: others may wait for it */
    HPS_RDV_FINALIZED        /* hps_rt_finalize done: it may leave */
};

typedef struct hps_rdv_pe {
    alignas(HPS_CACHELINE) hps_au32 state;     /* enum hps_rdv_state */
    hps_rdv_kv_t kv;
} hps_rdv_pe_t;

typedef struct hps_rdv_hdr {
    uint32_t magic, version, size;
    /* Barrier: arrivals count up; the last one resets the count and bumps
     * the generation, which is also the futex word waiters sleep on.  Each
     * on its own line: arrivals write one, waiters poll the other. */
    alignas(HPS_CACHELINE) hps_au32 arrived;
    hps_au32 sleepers;                  /* waiters inside FUTEX_WAIT (or about to be) */
    alignas(HPS_CACHELINE) hps_au32 generation;
    /* hps_rt_abort: 0 = nobody, else HPS_RDV_EXIT_SET | status (first wins). */
    alignas(HPS_CACHELINE) hps_au32 exit_word;
    alignas(HPS_CACHELINE) hps_rdv_pe_t pe[];
} hps_rdv_hdr_t;

#define HPS_RDV_EXIT_SET 0x100u

static inline size_t hps_rdv_bytes(uint32_t size)
{
    return sizeof(hps_rdv_hdr_t) + (size_t)size * sizeof(hps_rdv_pe_t);
}

/* "/hpsync-shmem-<job>-rt" into buf (shm_open's name); 0, or -1 if too long. */
static inline int hps_rdv_name(char *buf, size_t cap, const char *job)
{
    int n = snprintf(buf, cap, "/hpsync-shmem-%s-rt", job);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

#endif
