/* SPDX-License-Identifier: MIT */
/*
 * ofi_ctx.c - the transport's contexts.
 *
 * A context is an endpoint with its own completion counters (and a
 * completion queue for errors, and a small registered scratch area), so
 * its quiet waits for its own operations only.  The default context uses
 * the endpoint every PE's operations target.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ofi_internal.h"

int hps_ofi_ctx_bind(hps_ofi_cstate_t *s, struct fid_ep *ep, int main)
{
    const char *call = "hps_ofi_init";
    struct fid_domain *d = hps_ofi.domain;
    int rc;
    /* Completions are selective and every operation is issued without
     * FI_COMPLETION, so the queue only ever holds errors; some providers
     * will not enable an endpoint without one. */
    struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE };
    if ((rc = fi_cq_open(d, &cq_attr, &s->cq, NULL)))
        return hps_ofi_fail_rc(call, "fi_cq_open", rc);
    /* No wait objects: see ofi_progress.c for why nothing blocks in the
     * provider (and sockets would stall: it signals every completion into
     * a pipe nobody drains, until its own thread blocks on the write). */
    struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE };
    if ((rc = fi_cntr_open(d, &cntr_attr, &s->put_cntr, NULL)) ||
        (rc = fi_cntr_open(d, &cntr_attr, &s->get_cntr, NULL)))
        return hps_ofi_fail_rc(call, "fi_cntr_open", rc);
    /* Where the provider counts operations that target us, the progress
     * thread uses that to tell an idle PE from a busy one. */
    if (main && (hps_ofi.info->caps & FI_RMA_EVENT) &&
        (rc = fi_cntr_open(d, &cntr_attr, &hps_ofi.remote_cntr, NULL)))
        return hps_ofi_fail_rc(call, "fi_cntr_open", rc);
    if ((rc = fi_ep_bind(ep, &s->cq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)) ||
        (rc = fi_ep_bind(ep, &s->put_cntr->fid, FI_WRITE)) ||
        (rc = fi_ep_bind(ep, &s->get_cntr->fid, FI_READ)) ||
        (main && hps_ofi.remote_cntr &&
         (rc = fi_ep_bind(ep, &hps_ofi.remote_cntr->fid, FI_REMOTE_WRITE | FI_REMOTE_READ))))
        return hps_ofi_fail_rc(call, "fi_ep_bind", rc);
    s->ep = ep;
    return 0;
}

/* The issuing half (c) and the rest of s, once s->ep works. */
static int ctx_setup(hps_ofi_ctx_t *c, hps_ofi_cstate_t *s, int locked)
{
    const char *call = "hps_ofi_ctx_create";
    s->c = c;
    s->inject_max = hps_ofi.info->tx_attr->inject_size;
    s->locked = locked;
    pthread_mutex_init(&s->lock, NULL);
    /* Page-aligned, so a provider that registers whole pages registers
     * nothing of anyone else's. */
    s->scratch = mmap(NULL, sizeof *s->scratch, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (s->scratch == MAP_FAILED) {
        s->scratch = NULL;
        return hps_ofi_fail(call, "out of memory");
    }
    if (hps_ofi_reg_local(call, "fi_mr_reg (scratch)", s->ep, s->scratch, sizeof *s->scratch,
                          FI_READ | FI_WRITE, &s->scratch_mr, &s->scratch_desc))
        return -1;
    memset(c, 0, sizeof *c);
    c->dirty = calloc((size_t)hps_ofi.npes, sizeof *c->dirty);
    if (!c->dirty)
        return hps_ofi_fail(call, "out of memory");
    c->ep = s->ep;
    /* A locked context's puts and atomics all go through the transport's
     * entry points, which lock. */
    c->inject_max = locked ? 0 : s->inject_max;
    c->amo_inject = locked ? 0 : hps_ofi_amo_inject_mask();
    c->st = s;
    return 0;
}

/* Everything ctx_setup and the binding made, whatever exists. */
static void ctx_release(hps_ofi_cstate_t *s)
{
    struct fid **fids[] = { s->own_ep ? (struct fid **)&s->ep : NULL, (struct fid **)&s->scratch_mr,
                            (struct fid **)&s->put_cntr, (struct fid **)&s->get_cntr,
                            (struct fid **)&s->cq };
    for (size_t i = 0; i < sizeof fids / sizeof fids[0]; i++)
        if (fids[i] && *fids[i]) {
            fi_close(*fids[i]);
            *fids[i] = NULL;
        }
    if (s->scratch)
        munmap(s->scratch, sizeof *s->scratch);
    s->scratch = NULL;
    if (s->c) {
        free(s->c->dirty);
        memset(s->c, 0, sizeof *s->c);
    }
    pthread_mutex_destroy(&s->lock);
}

int hps_ofi_ctx_init_default(hps_ofi_ctx_t *c, int thread_multiple)
{
    hps_ofi.thread_multiple = thread_multiple;
    return ctx_setup(c, &hps_ofi.dflt, thread_multiple);
}

/* A context made by ctx_create: both halves in one allocation, each on
 * lines of its own. */
typedef struct own_ctx {
    hps_ofi_ctx_t c;
    hps_ofi_cstate_t s __attribute__((aligned(HPS_CACHELINE)));
} own_ctx_t;

static void ctx_free(hps_ofi_cstate_t *s)
{
    ctx_release(s);
    free((own_ctx_t *)((char *)s - offsetof(own_ctx_t, s)));
}

void hps_ofi_ctx_fini_all(void)
{
    pthread_mutex_lock(&hps_ofi.ctx_lock);
    hps_ofi_cstate_t *lists[2] = { hps_ofi.dflt.next, hps_ofi.idle };
    hps_ofi.dflt.next = hps_ofi.idle = NULL;
    hps_ofi.nidle = 0;
    pthread_mutex_unlock(&hps_ofi.ctx_lock);
    for (int l = 0; l < 2; l++)
        for (hps_ofi_cstate_t *s = lists[l], *next; s; s = next) {
            next = s->next;
            ctx_free(s);
        }
}

void hps_ofi_ctx_fini_default(void)
{
    ctx_release(&hps_ofi.dflt);
}

/* Its own endpoint on the domain, bound to the one address vector (so a
 * peer's fi_addr_t is the same on every context) and to counters of its
 * own; operations from it target the peers' main endpoints. */
static int open_ep(hps_ofi_cstate_t *s)
{
    struct fid_ep *ep;
    if (fi_endpoint(hps_ofi.domain, hps_ofi.info, &ep, NULL))
        return -1;
    s->ep = ep;
    s->own_ep = 1;
    if (fi_ep_bind(ep, &hps_ofi.av->fid, 0) || hps_ofi_ctx_bind(s, ep, 0) || fi_enable(ep))
        return -1;
    return 0;
}

/*
 * A context with its own endpoint and counters, so its quiet waits for its
 * own operations only, and a context one thread uses at a time
 * (HPS_OFI_CTX_SINGLE: OpenSHMEM's private and serialized contexts)
 * writes only its own lines: the issuing half, the peers' dirty flags and
 * its scratch are its own, and its waits leave the shared count of
 * progress calls alone.  Under thread-multiple, any other context takes a
 * lock as the default one does.  Where an endpoint cannot be made (or
 * the provider binds registrations to one endpoint, FI_MR_ENDPOINT, which
 * the regions are not bound to), the context shares the default one: its
 * quiet then completes more than its own, which OpenSHMEM allows (a
 * libfabric call that failed has printed its line).
 */
/* Whether s may be used by several threads at once, which decides its
 * lock and whether its puts may take the inline path. */
static void ctx_mode(hps_ofi_cstate_t *s, int options)
{
    s->single = !!(options & HPS_OFI_CTX_SINGLE);
    s->locked = hps_ofi.thread_multiple && !s->single;
    s->c->inject_max = s->locked ? 0 : s->inject_max;
    s->c->amo_inject = s->locked ? 0 : hps_ofi_amo_inject_mask();
}

int hps_ofi_ctx_create(int options, hps_ofi_ctx_t **out)
{
    *out = hps_ofi.dflt.c;
    if (hps_ofi.info->domain_attr->mr_mode & FI_MR_ENDPOINT)
        return 0;
    /* A destroyed context's endpoint first: it is quiet, its counts carry
     * on from its counters, and its connections are up (an endpoint costs
     * 50-250 ms to enable on tcp;ofi_rxm, which preposts its receive
     * buffers, and a connection each peer's progress to accept). */
    pthread_mutex_lock(&hps_ofi.ctx_lock);
    hps_ofi_cstate_t *s = hps_ofi.idle;
    if (s) {
        hps_ofi.idle = s->next;
        hps_ofi.nidle--;
        s->next = hps_ofi.dflt.next;
        hps_ofi.dflt.next = s;
    }
    pthread_mutex_unlock(&hps_ofi.ctx_lock);
    if (s) {
        ctx_mode(s, options);
        *out = s->c;
        return 0;
    }
    own_ctx_t *o = aligned_alloc(HPS_CACHELINE, sizeof *o);
    if (!o)
        return -1;
    memset(o, 0, sizeof *o);
    s = &o->s;
    if (open_ep(s) || ctx_setup(&o->c, s, 0)) {
        ctx_free(s);
        return 0;
    }
    ctx_mode(s, options);
    pthread_mutex_lock(&hps_ofi.ctx_lock);
    s->next = hps_ofi.dflt.next;
    hps_ofi.dflt.next = s;
    pthread_mutex_unlock(&hps_ofi.ctx_lock);
    *out = &o->c;
    return 0;
}

int hps_ofi_ctx_destroy(hps_ofi_ctx_t *c)
{
    int rc = hps_ofi_quiet(c);
    hps_ofi_cstate_t *s = c->st;
    if (s == &hps_ofi.dflt)
        return rc;
    pthread_mutex_lock(&hps_ofi.ctx_lock);
    for (hps_ofi_cstate_t **p = &hps_ofi.dflt.next; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    /* Kept for the next create, up to a few (the progress thread does not
     * drive idle ones: they have nothing outstanding). */
    int keep = !rc && hps_ofi.nidle < HPS_OFI_IDLE_CTX;
    if (keep) {
        s->next = hps_ofi.idle;
        hps_ofi.idle = s;
        hps_ofi.nidle++;
    }
    pthread_mutex_unlock(&hps_ofi.ctx_lock);
    if (!keep)
        ctx_free(s);
    return rc;
}
