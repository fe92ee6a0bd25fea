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
    const char *call = "hps_ofi_init";
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
                          &s->scratch_mr, &s->scratch_desc))
        return -1;
    memset(c, 0, sizeof *c);
    c->dirty = calloc((size_t)hps_ofi.npes, sizeof *c->dirty);
    if (!c->dirty)
        return hps_ofi_fail(call, "out of memory");
    c->ep = s->ep;
    /* A locked context's puts all go through hps_ofi_put, which locks. */
    c->inject_max = locked ? 0 : s->inject_max;
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
    return ctx_setup(c, &hps_ofi.dflt, thread_multiple);
}

void hps_ofi_ctx_fini_all(void)
{
}

void hps_ofi_ctx_fini_default(void)
{
    ctx_release(&hps_ofi.dflt);
}

int hps_ofi_ctx_create(int options, hps_ofi_ctx_t **out)
{
    (void)options;
    *out = hps_ofi.dflt.c;
    return 0;
}

int hps_ofi_ctx_destroy(hps_ofi_ctx_t *c)
{
    return hps_ofi_quiet(c);
}
