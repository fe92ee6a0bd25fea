/* SPDX-License-Identifier: MIT */
/*
 * ofi_internal.h - state shared by the libfabric transport's files:
 *   ofi_module.c    the module's entry point and what it borrows from the core
 *   ofi_setup.c     provider choice, fabric objects, registration, addresses
 *   ofi_ctx.c       contexts: the default one, and those with endpoints of their own
 *   ofi_rma.c       puts and gets
 *   ofi_atomic.c    atomics (native, or emulated by compare-and-swap)
 *   ofi_progress.c  counter waits, quiet, fence, the progress thread
 * Nothing here is seen outside the transport and its tests.
 */
#ifndef HPS_SHMEM_OFI_INTERNAL_H
#define HPS_SHMEM_OFI_INTERNAL_H

#include <pthread.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "ofi_inline.h"

#define HPS_OFI_HIDDEN __attribute__((visibility("hidden")))

/* Bounce area for operands of non-blocking fetching atomics, which must
 * stay valid until the operation completes (the caller's may not). */
#define HPS_OFI_AMO_SLOTS 256
/* Destroyed contexts kept, endpoints open, for the next ones. */
#define HPS_OFI_IDLE_CTX 8
typedef struct hps_ofi_amo_slot {
    uint64_t operand, compare;
} hps_ofi_amo_slot_t;

/* Memory a context registers for its own use: the flush reads' landing
 * place and the atomic operand slots. */
typedef struct hps_ofi_scratch {
    uint64_t flush[2];
    hps_ofi_amo_slot_t amo[HPS_OFI_AMO_SLOTS];
} hps_ofi_scratch_t;

/* The transport's part of a context (the issuing part is hps_ofi_ctx_t). */
typedef struct hps_ofi_cstate {
    hps_ofi_ctx_t *c;
    struct fid_ep *ep;
    struct fid_cq *cq;              /* error completions only */
    struct fid_cntr *put_cntr;      /* FI_WRITE: writes, non-fetching atomics */
    struct fid_cntr *get_cntr;      /* FI_READ: reads, fetching atomics */
    hps_au64 put_err, get_err;      /* counter error totals already reported */
    size_t inject_max;              /* the provider's (c->inject_max may be 0) */
    /* Several threads may use the context at once: every operation holds
     * the lock, and quiet holds it while it waits, so no operation is
     * issued between its snapshot of the counts and the counters reaching
     * them (a counter counts, it does not say which operations finished). */
    int locked;
    pthread_mutex_t lock;
    int own_ep;                     /* its own endpoint (not the default one) */
    int single;                     /* one thread at a time: writes only its own lines */
    hps_ofi_scratch_t *scratch;
    struct fid_mr *scratch_mr;
    void *scratch_desc;
    int amo_used;                   /* operand slots handed out since the last quiet */
    struct hps_ofi_cstate *next;    /* every context, for finalize */
} hps_ofi_cstate_t;

typedef struct hps_ofi_state {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_ep *ep;              /* the endpoint every PE's operations target */
    struct fid_cntr *remote_cntr;   /* operations targeting us (FI_RMA_EVENT), or NULL */
    struct fid_mr *mr[HPS_OFI_REGIONS];
    void *desc[HPS_OFI_REGIONS];    /* local descriptors (FI_MR_LOCAL) */
    hps_ofi_region_t region[HPS_OFI_REGIONS];
    hps_ofi_target_t *row[HPS_OFI_REGIONS];   /* [region][pe] */

    int me, npes;
    int mr_local;                   /* pass descriptors for local buffers */
    int fence_is_free;              /* the provider orders writes (see fence) */
    int flush_region;               /* a region with 8 readable bytes, or -1 */
    size_t flush_off;               /* where in it: the first 8-byte aligned word */
    int flush_atomic;               /* flush atomics with an atomic read */
    int progress_rx;                /* waits also read remote_cntr, to receive (sockets) */
    size_t max_msg;                 /* largest single transfer */
    char provider[64];

    hps_ofi_cstate_t dflt;          /* the default context's part; .next: the others */
    hps_ofi_cstate_t *idle;         /* destroyed contexts kept for reuse */
    int nidle;
    pthread_mutex_t ctx_lock;       /* those lists */
    int thread_multiple;            /* contexts threads may share at once take a lock */

    pthread_t progress_thread;
    int progress_running;
    _Atomic int progress_stop;
    hps_au64 progress_calls;        /* the application's waits and progress calls */
} hps_ofi_state_t;

extern hps_ofi_state_t hps_ofi HPS_OFI_HIDDEN;

/* One line "hpsync-shmem: <call>: <why>" (hps_shmem_errline); returns -1. */
int hps_ofi_fail(const char *call, const char *fmt, ...)
    __attribute__((format(printf, 2, 3))) HPS_OFI_HIDDEN;
/* The same for a libfabric return code (negative fi_errno). */
int hps_ofi_fail_rc(const char *call, const char *what, ssize_t rc) HPS_OFI_HIDDEN;

/* pe's row for region (tests name targets so). */
const hps_ofi_target_t *hps_ofi_row(int region, int pe) HPS_OFI_HIDDEN;

/* Local descriptor for buf (FI_MR_LOCAL): a region's, or a registration
 * made for this call in *tmp (close it with hps_ofi_local_done once the
 * operation completed).  NULL when the provider needs none.  0 or -1. */
int hps_ofi_local_desc(const char *call, hps_ofi_cstate_t *s, const void *buf, size_t len,
                       uint64_t access, void **desc, struct fid_mr **tmp) HPS_OFI_HIDDEN;
void hps_ofi_local_done(struct fid_mr *tmp) HPS_OFI_HIDDEN;
/* Register len bytes at buf for this PE's own use (access: FI_READ,
 * FI_WRITE) on endpoint ep, with a key of its own; 0 or -1. */
int hps_ofi_reg_local(const char *call, const char *what, struct fid_ep *ep, void *buf,
                      size_t len, uint64_t access, struct fid_mr **mr, void **desc) HPS_OFI_HIDDEN;
/* Initialized, the row one of ours, [off, off + len) inside its region;
 * -1 after one error line otherwise. */
int hps_ofi_check(const char *call, const hps_ofi_target_t *t, size_t off, size_t len) HPS_OFI_HIDDEN;

/* A context's lock, when several threads may use it at once. */
static inline void hps_ofi_enter(hps_ofi_cstate_t *s)
{
    if (s->locked)
        pthread_mutex_lock(&s->lock);
}
static inline void hps_ofi_leave(hps_ofi_cstate_t *s)
{
    if (s->locked)
        pthread_mutex_unlock(&s->lock);
}
/* expr (an int) evaluated with c's state as s_ and its lock held. */
#define HPS_OFI_LOCKED(c, expr) ({ \
        hps_ofi_cstate_t *s_ = (c)->st; \
        hps_ofi_enter(s_); \
        int rc_ = (expr); \
        hps_ofi_leave(s_); \
        rc_; })

/*
 * Issue one operation on s's endpoint: op() is retried while the provider
 * says -FI_EAGAIN (transmit queue full), making progress in between by the
 * waits' policy.  Returns 0 or -1 after one line.
 */
typedef ssize_t (*hps_ofi_issue_fn)(hps_ofi_cstate_t *s, void *arg);
int hps_ofi_issue(const char *call, const char *what, hps_ofi_cstate_t *s, hps_ofi_issue_fn op,
                  void *arg) HPS_OFI_HIDDEN;

/* Wait until s's put (get) counter reaches the number of operations issued
 * on it so far.  0 or -1 after one line naming call and the failed
 * operation. */
int hps_ofi_wait_puts(const char *call, hps_ofi_cstate_t *s) HPS_OFI_HIDDEN;
int hps_ofi_wait_gets(const char *call, hps_ofi_cstate_t *s) HPS_OFI_HIDDEN;
/* quiet and fence with the context's lock already held. */
int hps_ofi_quiet_locked(const char *call, hps_ofi_cstate_t *s) HPS_OFI_HIDDEN;

/* Start (if the provider needs one) and stop the progress thread. */
int hps_ofi_progress_start(void) HPS_OFI_HIDDEN;
void hps_ofi_progress_stop(void) HPS_OFI_HIDDEN;

/* Contexts (ofi_ctx.c): set up the default one on the main endpoint;
 * close every other context (finalize, or a failed init), then, once the
 * main endpoint is closed, what the default one holds. */
int hps_ofi_ctx_init_default(hps_ofi_ctx_t *c, int thread_multiple) HPS_OFI_HIDDEN;
void hps_ofi_ctx_fini_all(void) HPS_OFI_HIDDEN;
void hps_ofi_ctx_fini_default(void) HPS_OFI_HIDDEN;
/* Open the completion queue and counters of s and bind them to ep
 * (main: also the counter of operations targeting this PE). */
int hps_ofi_ctx_bind(hps_ofi_cstate_t *s, struct fid_ep *ep, int main) HPS_OFI_HIDDEN;

/* Atomic capability table, filled at init from fi_atomicvalid & co.; the
 * non-fetching ones the provider injects, as hps_ofi_ctx_t.amo_inject. */
int hps_ofi_atomic_setup(void) HPS_OFI_HIDDEN;
uint32_t hps_ofi_amo_inject_mask(void) HPS_OFI_HIDDEN;
/* Quiet saw every fetching operation up to gets complete: the operand
 * slots of those may be reused. */
void hps_ofi_amo_release(hps_ofi_cstate_t *s, uint64_t gets) HPS_OFI_HIDDEN;

/* Test hook: act as if the provider required FI_MR_LOCAL, so the descriptor
 * paths run on providers that do not need them.  Call before init. */
void hps_ofi_test_force_mr_local(int on) HPS_OFI_HIDDEN;

#endif
