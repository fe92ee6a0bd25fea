/* SPDX-License-Identifier: MIT */
/*
 * ofi_rma.c - puts and gets over the libfabric transport.
 *
 * Puts up to the provider's inject size go by fi_inject_write: the source
 * is copied at once, so even the blocking put returns without waiting, and
 * quiet makes them remote-complete (hps_ofi_quiet).  Larger puts and all
 * gets go by fi_write/fi_read, split at the provider's largest message,
 * counted on the put/get counters; the blocking forms wait for their
 * counter before returning.
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

static ssize_t inject_op(void *p)
{
    const rma_arg_t *a = p;
    return fi_inject_write(hps_ofi.ep, a->local, a->len, a->addr, a->raddr, a->key);
}

static ssize_t write_op(void *p)
{
    const rma_arg_t *a = p;
    return fi_write(hps_ofi.ep, a->local, a->len, a->desc, a->addr, a->raddr, a->key, NULL);
}

static ssize_t read_op(void *p)
{
    const rma_arg_t *a = p;
    return fi_read(hps_ofi.ep, a->local, a->len, a->desc, a->addr, a->raddr, a->key, NULL);
}

/* The arguments every entry point checks (RMA and atomics): a slow path, so
 * cheap enough. */
int hps_ofi_check(const char *call, int region, size_t off, size_t len, int pe)
{
    if (hps_unlikely(!hps_ofi.ep))
        return hps_ofi_fail(call, "the libfabric transport is not initialized");
    if (hps_unlikely(pe < 0 || pe >= hps_ofi.npes))
        return hps_ofi_fail(call, "PE %d is not in 0..%d", pe, hps_ofi.npes - 1);
    if (hps_unlikely(region < 0 || region >= HPS_OFI_REGIONS || off > hps_ofi.region[region].size ||
                     len > hps_ofi.region[region].size - off))
        return hps_ofi_fail(call, "%zu bytes at offset %zu are outside symmetric region %d", len,
                            off, region);
    return 0;
}

/* Issue len bytes as transfers of at most max_msg, counting each on *issued. */
static int transfer(const char *call, const char *what, hps_ofi_issue_fn op, void *local,
                    void *desc, int region, size_t off, size_t len, int pe, hps_au64 *issued)
{
    const hps_ofi_target_t *t = hps_ofi_tgt(region, pe);
    for (size_t done = 0; done < len;) {
        size_t n = len - done < hps_ofi.max_msg ? len - done : hps_ofi.max_msg;
        rma_arg_t a = { (char *)local + done, n, desc, t->addr, t->base + off + done, t->key };
        if (hps_ofi_issue(call, what, op, &a))
            return -1;
        hps_faa_relaxed(issued, 1);
        done += n;
    }
    return 0;
}

static int put(const char *call, int region, size_t off, const void *src, size_t len, int pe,
               int blocking)
{
    if (hps_ofi_check(call, region, off, len, pe))
        return -1;
    if (!len)
        return 0;
    if (len <= hps_ofi_fast.inject_max) {
        const hps_ofi_target_t *t = hps_ofi_tgt(region, pe);
        rma_arg_t a = { (void *)src, len, NULL, t->addr, t->base + off, t->key };
        if (hps_ofi_issue(call, "fi_inject_write", inject_op, &a))
            return -1;
        hps_ofi_injected(pe);
        return 0;
    }
    void *desc;
    struct fid_mr *tmp;
    if (hps_ofi_local_desc(call, src, len, FI_WRITE, &desc, &tmp))
        return -1;
    int rc = transfer(call, "fi_write", write_op, (void *)src, desc, region, off, len, pe,
                      &hps_ofi_fast.put_issued);
    /* Blocking: src is reusable once the write completed (delivery
     * complete, so it has also arrived).  A temporary registration must
     * outlive the transfer, so such a put is blocking too. */
    if (!rc && (blocking || tmp))
        rc = hps_ofi_wait_puts(call);
    hps_ofi_local_done(tmp);
    return rc;
}

static int get(const char *call, void *dst, int region, size_t off, size_t len, int pe,
               int blocking)
{
    if (hps_ofi_check(call, region, off, len, pe))
        return -1;
    if (!len)
        return 0;
    void *desc;
    struct fid_mr *tmp;
    if (hps_ofi_local_desc(call, dst, len, FI_READ, &desc, &tmp))
        return -1;
    int rc = transfer(call, "fi_read", read_op, dst, desc, region, off, len, pe,
                      &hps_ofi_fast.get_issued);
    if (!rc && (blocking || tmp))
        rc = hps_ofi_wait_gets(call);
    hps_ofi_local_done(tmp);
    return rc;
}

int hps_ofi_put(int region, size_t off, const void *src, size_t len, int pe)
{
    return put("hps_ofi_put", region, off, src, len, pe, 1);
}

int hps_ofi_put_nbi(int region, size_t off, const void *src, size_t len, int pe)
{
    return put("hps_ofi_put_nbi", region, off, src, len, pe, 0);
}

int hps_ofi_get(void *dst, int region, size_t off, size_t len, int pe)
{
    return get("hps_ofi_get", dst, region, off, len, pe, 1);
}

int hps_ofi_get_nbi(void *dst, int region, size_t off, size_t len, int pe)
{
    return get("hps_ofi_get_nbi", dst, region, off, len, pe, 0);
}

int hps_ofi_get_wait(void)
{
    return hps_ofi_wait_gets("hps_ofi_get_wait");
}
