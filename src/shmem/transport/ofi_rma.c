/* SPDX-License-Identifier: MIT */
/*
 * ofi_rma.c - puts and gets over the libfabric transport.
 *
 * Puts up to the provider's inject size go by fi_inject_write: the source
 * is copied at once, so even the blocking put returns without waiting, and
 * quiet makes them remote-complete (hps_ofi_quiet).  Larger puts and all
 * gets go by fi_write/fi_read, split at the provider's largest message,
 * counted on the context's put/get counters; the blocking forms wait for
 * their counter before returning.
 */
#include <stdio.h>

#include <rdma/fi_errno.h>

#include "ofi_internal.h"

typedef struct rma_arg {
    void *local;
    size_t len;
    void *desc;
    fi_addr_t addr;
    uint64_t raddr, key;
} rma_arg_t;

static ssize_t inject_op(hps_ofi_cstate_t *s, void *p)
{
    const rma_arg_t *a = p;
    return fi_inject_write(s->ep, a->local, a->len, a->addr, a->raddr, a->key);
}

static ssize_t write_op(hps_ofi_cstate_t *s, void *p)
{
    const rma_arg_t *a = p;
    return fi_write(s->ep, a->local, a->len, a->desc, a->addr, a->raddr, a->key, NULL);
}

static ssize_t read_op(hps_ofi_cstate_t *s, void *p)
{
    const rma_arg_t *a = p;
    return fi_read(s->ep, a->local, a->len, a->desc, a->addr, a->raddr, a->key, NULL);
}

/* The arguments every entry point checks (RMA and atomics): a slow path, so
 * cheap enough. */
int hps_ofi_check(const char *call, const hps_ofi_target_t *t, size_t off, size_t len)
{
    if (hps_unlikely(!hps_ofi.ep))
        return hps_ofi_fail(call, "the libfabric transport is not initialized");
    int r = t ? t->region : -1;
    if (hps_unlikely(r < 0 || r >= HPS_OFI_REGIONS || (unsigned)t->pe >= (unsigned)hps_ofi.npes ||
                     t != &hps_ofi.row[r][t->pe]))
        return hps_ofi_fail(call, "not a target row of this transport");
    if (hps_unlikely(off > hps_ofi.region[r].size || len > hps_ofi.region[r].size - off))
        return hps_ofi_fail(call, "%zu bytes at offset %zu are outside symmetric region %d", len,
                            off, r);
    return 0;
}

/* Issue len bytes as transfers of at most max_msg, counting each on *issued. */
static int transfer(const char *call, const char *what, hps_ofi_cstate_t *s, hps_ofi_issue_fn op,
                    void *local, void *desc, const hps_ofi_target_t *t, size_t off, size_t len,
                    hps_au64 *issued)
{
    for (size_t done = 0; done < len;) {
        size_t n = len - done < hps_ofi.max_msg ? len - done : hps_ofi.max_msg;
        rma_arg_t a = { (char *)local + done, n, desc, t->addr, t->base + off + done, t->key };
        if (hps_ofi_issue(call, what, s, op, &a))
            return -1;
        hps_add_owned(issued, 1);
        done += n;
    }
    return 0;
}

static int put(const char *call, hps_ofi_cstate_t *s, const hps_ofi_target_t *t, size_t off,
               const void *src, size_t len, int blocking)
{
    if (hps_ofi_check(call, t, off, len))
        return -1;
    if (!len)
        return 0;
    hps_ofi_ctx_t *c = s->c;
    if (len <= s->inject_max) {
        rma_arg_t a = { (void *)src, len, NULL, t->addr, t->base + off, t->key };
        if (hps_ofi_issue(call, "fi_inject_write", s, inject_op, &a))
            return -1;
        hps_ofi_injected(c, t->pe);
        return 0;
    }
    void *desc;
    struct fid_mr *tmp;
    if (hps_ofi_local_desc(call, s, src, len, FI_WRITE, &desc, &tmp))
        return -1;
    int rc = transfer(call, "fi_write", s, write_op, (void *)src, desc, t, off, len,
                      &c->put_issued);
    /* Blocking: src is reusable once the write completed (delivery
     * complete, so it has also arrived).  A temporary registration must
     * outlive the transfer, so such a put is blocking too. */
    if (!rc && (blocking || tmp))
        rc = hps_ofi_wait_puts(call, s);
    hps_ofi_local_done(tmp);
    return rc;
}

static int get(const char *call, hps_ofi_cstate_t *s, void *dst, const hps_ofi_target_t *t,
               size_t off, size_t len, int blocking)
{
    if (hps_ofi_check(call, t, off, len))
        return -1;
    if (!len)
        return 0;
    void *desc;
    struct fid_mr *tmp;
    if (hps_ofi_local_desc(call, s, dst, len, FI_READ, &desc, &tmp))
        return -1;
    int rc = transfer(call, "fi_read", s, read_op, dst, desc, t, off, len, &s->c->get_issued);
    if (!rc && (blocking || tmp))
        rc = hps_ofi_wait_gets(call, s);
    hps_ofi_local_done(tmp);
    return rc;
}

/* The entry points: the context's lock (if it has one) around each. */
int hps_ofi_put(hps_ofi_ctx_t *c, const hps_ofi_target_t *t, size_t off, const void *src,
                size_t len)
{
    return HPS_OFI_LOCKED(c, put("hps_ofi_put", s_, t, off, src, len, 1));
}

int hps_ofi_put_nbi(hps_ofi_ctx_t *c, const hps_ofi_target_t *t, size_t off, const void *src,
                    size_t len)
{
    return HPS_OFI_LOCKED(c, put("hps_ofi_put_nbi", s_, t, off, src, len, 0));
}

int hps_ofi_get(hps_ofi_ctx_t *c, void *dst, const hps_ofi_target_t *t, size_t off, size_t len)
{
    return HPS_OFI_LOCKED(c, get("hps_ofi_get", s_, dst, t, off, len, 1));
}

int hps_ofi_get_nbi(hps_ofi_ctx_t *c, void *dst, const hps_ofi_target_t *t, size_t off,
                    size_t len)
{
    return HPS_OFI_LOCKED(c, get("hps_ofi_get_nbi", s_, dst, t, off, len, 0));
}

int hps_ofi_get_wait(hps_ofi_ctx_t *c)
{
    return HPS_OFI_LOCKED(c, hps_ofi_wait_gets("hps_ofi_get_wait", s_));
}
