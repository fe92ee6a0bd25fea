/* SPDX-License-Identifier: MIT */
/*
 * ofi_atomic.c - OpenSHMEM atomics on libfabric atomics.
 *
 * Each operation maps onto one libfabric call: non-fetching ones on
 * fi_inject_atomic (the operand is copied at once), fetching ones on
 * fi_fetch_atomic (FI_ATOMIC_READ for fetch, FI_ATOMIC_WRITE for swap) and
 * compare-and-swap on fi_compare_atomic.  Init asks the provider which
 * (operation, type) pairs it supports (fi_atomicvalid & co); a missing one
 * is emulated with a compare-and-swap loop when FI_CSWAP exists at that
 * size, and otherwise fails with one line naming the operation.
 */
#include <string.h>

#include <rdma/fi_errno.h>

#include "ofi_internal.h"

enum form { NOFETCH, FETCH, FORMS };

/* The names, for messages (the libfabric operation and type:
 * hps_ofi_fi_op and hps_ofi_fi_type in ofi_inline.h). */
static const char *const names[] = {
    [HPS_AOP_SET] = "set", [HPS_AOP_FETCH] = "fetch", [HPS_AOP_SWAP] = "swap",
    [HPS_AOP_CSWAP] = "compare-swap", [HPS_AOP_ADD] = "add", [HPS_AOP_AND] = "and",
    [HPS_AOP_OR] = "or", [HPS_AOP_XOR] = "xor",
};
#define NOPS ((int)(sizeof names / sizeof names[0]))

/* native[op][size is 8][form]: the provider does it in one call. */
static unsigned char native[NOPS][2][FORMS];

uint32_t hps_ofi_amo_inject_mask(void)
{
    uint32_t m = 0;
    for (int op = 0; op < NOPS; op++)
        for (int w = 0; w < 2; w++)
            if (native[op][w][NOFETCH])
                m |= HPS_OFI_AMO_BIT(op, w ? 8 : 4);
    return m;
}

int hps_ofi_atomic_setup(void)
{
    for (int op = 0; op < NOPS; op++) {
        for (int s = 0; s < 2; s++) {
            enum fi_datatype dt = hps_ofi_fi_type(op, s ? 8 : 4);
            size_t count = 0;
            if (op == HPS_AOP_CSWAP) {
                native[op][s][FETCH] = !fi_compare_atomicvalid(hps_ofi.ep, dt, FI_CSWAP, &count) &&
                                       count >= 1;
                continue;
            }
            if (op != HPS_AOP_FETCH && op != HPS_AOP_SWAP)
                native[op][s][NOFETCH] = !fi_atomicvalid(hps_ofi.ep, dt, hps_ofi_fi_op(op), &count) &&
                                         count >= 1;
            count = 0;
            native[op][s][FETCH] = !fi_fetch_atomicvalid(hps_ofi.ep, dt, hps_ofi_fi_op(op), &count) &&
                                   count >= 1;
        }
    }
    /* Quiet's flush of atomics is an 8-byte atomic read where there is one
     * (ordered after atomics by FI_ORDER_ATOMIC_RAW), else an RMA read. */
    hps_ofi.flush_atomic = native[HPS_AOP_FETCH][1][FETCH];
    return 0;
}

/* ---- native operations --------------------------------------------------- */

typedef struct amo_arg {
    enum hps_ofi_aop op;
    const void *operand, *compare;
    void *result;
    void *desc[3];              /* operand, compare, result (FI_MR_LOCAL) */
    size_t size;
    const hps_ofi_target_t *t;
    size_t off;
} amo_arg_t;

static ssize_t amo_op(hps_ofi_cstate_t *s, void *p)
{
    const amo_arg_t *a = p;
    const hps_ofi_target_t *t = a->t;
    uint64_t raddr = t->base + a->off, key = t->key;
    enum fi_datatype dt = hps_ofi_fi_type(a->op, a->size);
    enum fi_op op = hps_ofi_fi_op(a->op);
    if (a->op == HPS_AOP_CSWAP)
        return fi_compare_atomic(s->ep, a->operand, 1, a->desc[0], a->compare, a->desc[1],
                                 a->result, a->desc[2], t->addr, raddr, key, dt, op, NULL);
    if (a->result)
        return fi_fetch_atomic(s->ep, a->operand, 1, a->desc[0], a->result, a->desc[2],
                               t->addr, raddr, key, dt, op, NULL);
    return fi_inject_atomic(s->ep, a->operand, 1, t->addr, raddr, key, dt, op);
}

/* Descriptors for the caller's buffers (FI_MR_LOCAL); registrations made
 * for this call land in tmp[] and force a blocking call. */
static int amo_descs(const char *call, hps_ofi_cstate_t *s, amo_arg_t *a, struct fid_mr *tmp[3])
{
    const void *buf[3] = { a->operand, a->compare, a->result };
    uint64_t access[3] = { FI_WRITE, FI_WRITE, FI_READ };
    for (int i = 0; i < 3; i++) {
        tmp[i] = NULL;
        a->desc[i] = NULL;
        /* Fetch ignores its operand; some providers still read the pointer. */
        if (buf[i] && hps_ofi_local_desc(call, s, buf[i], a->size, access[i], &a->desc[i], &tmp[i]))
            return -1;
    }
    return 0;
}

static void amo_descs_done(struct fid_mr *tmp[3])
{
    for (int i = 0; i < 3; i++)
        hps_ofi_local_done(tmp[i]);
}

static int issue_native(const char *call, hps_ofi_cstate_t *s, amo_arg_t *a, int blocking)
{
    struct fid_mr *tmp[3];
    if (amo_descs(call, s, a, tmp))
        return -1;
    hps_ofi_ctx_t *c = s->c;
    int rc = hps_ofi_issue(call, names[a->op], s, amo_op, a);
    if (!rc) {
        if (a->result) {
            hps_add_owned(&c->get_issued, 1);
        } else {
            c->dirty[a->t->pe].amo = 1;
            hps_add_owned(&c->put_issued, 1);
        }
        if (a->result && (blocking || tmp[0] || tmp[1] || tmp[2]))
            rc = hps_ofi_wait_gets(call, s);
    }
    amo_descs_done(tmp);
    return rc;
}

/*
 * A fetching atomic that completes at quiet: its operand and compare value
 * must stay readable until then, and the caller's may not, so they travel
 * in one of the context's registered scratch slots.  Slots are handed out
 * in order and all returned when a quiet finds every fetching operation
 * complete.  Only one thread issues on the context at a time (its lock,
 * if it has one, is held), so the slots need no lock of their own.
 */
static int issue_nbi(const char *call, hps_ofi_cstate_t *s, amo_arg_t *a)
{
    if (s->amo_used == HPS_OFI_AMO_SLOTS && hps_ofi_quiet_locked(call, s))
        return -1;
    hps_ofi_amo_slot_t *slot = &s->scratch->amo[s->amo_used++];
    memcpy(&slot->operand, a->operand, a->size);
    a->operand = &slot->operand;
    if (a->compare) {
        memcpy(&slot->compare, a->compare, a->size);
        a->compare = &slot->compare;
    }
    return issue_native(call, s, a, 0);
}

void hps_ofi_amo_release(hps_ofi_cstate_t *s, uint64_t gets)
{
    /* Quiet holds the context's lock, if any: an unchanged count means no
     * slot was taken since its snapshot. */
    if (hps_load_relaxed(&s->c->get_issued) == gets)
        s->amo_used = 0;
}

/* ---- emulation by compare-and-swap --------------------------------------- */

static uint64_t apply(enum hps_ofi_aop op, uint64_t old, uint64_t v)
{
    switch (op) {
    case HPS_AOP_ADD: return old + v;
    case HPS_AOP_AND: return old & v;
    case HPS_AOP_OR: return old | v;
    case HPS_AOP_XOR: return old ^ v;
    case HPS_AOP_FETCH: return old;
    default: return v;                               /* set, swap */
    }
}

/* Guess the old value (0 first), swap in f(guess) if the guess was right,
 * else retry with what the swap returned.  Blocking, returns the old value. */
static int emulate(const char *call, hps_ofi_cstate_t *s, amo_arg_t *a)
{
    uint64_t operand = 0, guess = 0, seen = 0, next;
    if (a->operand)
        memcpy(&operand, a->operand, a->size);
    for (;;) {
        next = apply(a->op, guess, operand);
        amo_arg_t c = *a;
        c.op = HPS_AOP_CSWAP;
        c.operand = &next;
        c.compare = &guess;
        c.result = &seen;
        if (issue_native(call, s, &c, 1))
            return -1;
        if (!memcmp(&seen, &guess, a->size))
            break;
        guess = seen;
    }
    if (a->result)
        memcpy(a->result, &guess, a->size);
    return 0;
}

/* ---- entry points -------------------------------------------------------- */

static int atomic(const char *call, hps_ofi_cstate_t *s, enum hps_ofi_aop op,
                  const hps_ofi_target_t *t, size_t off, const void *operand, const void *compare,
                  void *result, size_t size, int blocking)
{
    if (hps_unlikely((int)op < 0 || (int)op >= NOPS || (size != 4 && size != 8)))
        return hps_ofi_fail(call, "no atomic operation %d on %zu bytes", (int)op, size);
    if (hps_ofi_check(call, t, off, size))
        return -1;
    if (hps_unlikely(off % size))
        return hps_ofi_fail(call, "%zu-byte atomic at offset %zu is misaligned", size, off);
    int fetching = op == HPS_AOP_FETCH || op == HPS_AOP_SWAP || op == HPS_AOP_CSWAP;
    if (hps_unlikely(fetching && !result))
        return hps_ofi_fail(call, "%s needs a result buffer", names[op]);
    if (hps_unlikely(op == HPS_AOP_CSWAP && !compare))
        return hps_ofi_fail(call, "compare-swap needs a compare value");
    if (hps_unlikely(op != HPS_AOP_FETCH && !operand))
        return hps_ofi_fail(call, "%s needs an operand", names[op]);

    amo_arg_t a = { op, op == HPS_AOP_FETCH ? result : operand, compare, result, { 0 }, size,
                    t, off };
    int w = size == 8;
    if (native[op][w][result ? FETCH : NOFETCH])
        return blocking || !result ? issue_native(call, s, &a, blocking) : issue_nbi(call, s, &a);
    if (op != HPS_AOP_CSWAP && native[HPS_AOP_CSWAP][w][FETCH])
        return emulate(call, s, &a);
    return hps_ofi_fail(call, "libfabric provider %s has no %zu-byte atomic %s (fi_atomicvalid) "
                        "nor the compare-and-swap to emulate it", hps_ofi.provider, size,
                        names[op]);
}

int hps_ofi_atomic(hps_ofi_ctx_t *c, enum hps_ofi_aop op, const hps_ofi_target_t *t, size_t off,
                   const void *operand, const void *compare, void *result, size_t size)
{
    return HPS_OFI_LOCKED(c, atomic("hps_ofi_atomic", s_, op, t, off, operand, compare, result,
                                    size, 1));
}

int hps_ofi_atomic_nbi(hps_ofi_ctx_t *c, enum hps_ofi_aop op, const hps_ofi_target_t *t,
                       size_t off, const void *operand, const void *compare, void *result,
                       size_t size)
{
    return HPS_OFI_LOCKED(c, atomic("hps_ofi_atomic_nbi", s_, op, t, off, operand, compare,
                                    result, size, 0));
}
