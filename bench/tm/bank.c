/* SPDX-License-Identifier: MIT */
/*
 * bank.c - the bank row: accounts, transfers between two random accounts
 * (two reads, two writes) and, one operation in 100, an audit that sums
 * every account in a read-only section (a long read set that transfers keep
 * invalidating).  The total never changes: an audit that sees another one
 * counts as bad, and after the run every audit must have been right and the
 * accounts must still hold the starting total.
 */
#include <stdio.h>
#include "hps_rand.h"
#include "tm_bench.h"
#include "tx.h"

#define BANK_START 1000          /* each account's starting balance */
#define BANK_AUDIT_PER_MILLE 10

typedef struct tmb_bank {
    long n;
    int64_t total;
    int64_t balance[];
} tmb_bank_t;

static void *bank_create(const tmb_row_t *row, uint64_t *rng)
{
    tmb_bank_t *b = malloc(sizeof *b + (size_t)row->size * sizeof b->balance[0]);
    if (!b) {
        hps_bench_log("%s: out of memory", row->name);
        exit(1);
    }
    b->n = row->size;
    for (long i = 0; i < b->n; i++)
        b->balance[i] = BANK_START;
    b->total = (int64_t)BANK_START * b->n;
    return b;
}

static void transfer(tmb_bank_t *b, long from, long to, int64_t amount)
{
    TX_BEGIN();
    TX_WRITE(&b->balance[from], TX_READ(&b->balance[from]) - amount);
    TX_WRITE(&b->balance[to], TX_READ(&b->balance[to]) + amount);
    TX_END();
}

static int64_t audit(tmb_bank_t *b)
{
    int64_t sum;
    TX_BEGIN_RO();
    sum = 0;
    for (long i = 0; i < b->n; i++)
        sum += TX_READ(&b->balance[i]);
    TX_END();
    return sum;
}

static void bank_op(void *ds, const tmb_row_t *row, tmb_thread_t *t)
{
    tmb_bank_t *b = ds;
    uint64_t x = hps_xorshift64(&t->rng);
    if ((x & 1023) * 1000 < BANK_AUDIT_PER_MILLE * 1024) {
        if (audit(b) != b->total)
            t->bad++;
        return;
    }
    long from = (long)((x >> 10) % (uint64_t)b->n);
    long to = (long)((x >> 32) % (uint64_t)(b->n - 1));
    transfer(b, from, to >= from ? to + 1 : to, 1 + (int64_t)((x >> 20) & 7));
}

static int bank_validate(void *ds, const tmb_row_t *row, tmb_thread_t *const *ts, int n,
                         uint64_t ops, char *why, size_t len)
{
    tmb_bank_t *b = ds;
    uint64_t bad = 0;
    for (int i = 0; i < n; i++)
        bad += ts[i]->bad;
    int64_t sum = audit(b);
    if (bad || sum != b->total) {
        snprintf(why, len, "%llu audit(s) saw a wrong total; the accounts hold %lld, not %lld",
                 (unsigned long long)bad, (long long)sum, (long long)b->total);
        return -1;
    }
    snprintf(why, len, "total %lld kept, every audit right", (long long)sum);
    return 0;
}

static void bank_corrupt(void *ds, const tmb_row_t *row)
{
    ((tmb_bank_t *)ds)->balance[0]++;   /* money from nowhere */
}

const tmb_kind_t tmb_bank = { bank_create, bank_op, bank_validate, bank_corrupt, free };
