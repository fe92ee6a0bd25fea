// SPDX-License-Identifier: MIT
/*
 * On-node signalling for collectives (the scheme is in node.h): payload-
 * free messages, barriers, and payload messages through each PE's ring.
 *
 * Waits for a message are parkable: whoever sends one then fences and
 * rings the receiver's doorbell if it sleeps, so a member that polled for
 * HPSYNC_SHMEM_SPIN_US in vain sleeps instead of burning a CPU another PE
 * or program could use (wait.h).  Receivers' acks ring nobody (that keeps
 * a fence off every receive): the rare sender that runs out of ring slots
 * or queue entries polls and naps for them (wait_ack).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

_Static_assert(HPS_NODE_TEAM_CHANS <= HPS_TEAM_SLOTS, "a channel per team slot at most");
_Static_assert(sizeof(hps_pair_t) == HPS_CACHELINE, "a line per pair");
_Static_assert(HPS_HEAP_RESERVED < 65536, "the heap loses less than 64 KiB to the library");
_Static_assert(HPS_RING_SLOTS <= 256 && HPS_PAIRQ <= 32, "slot indices fit a byte, queue entries a mask");

/* This PE's side of a channel: what it sent to and consumed from each pair
 * index, and which payload message last used each queue entry. */
typedef struct chan_priv {
    uint32_t sent[HPS_NODE_MAX];
    uint32_t seen[HPS_NODE_MAX];
    uint32_t qused[HPS_NODE_MAX][HPS_PAIRQ];
    uint32_t qvalid[HPS_NODE_MAX];           /* bit e: qused[.][e] is a message */
} chan_priv_t;

/* Who must have consumed a ring slot's message before the slot is reused:
 * each receiver's ack word (in its heap) and the message's number there.
 * Receivers only store their ack: no read-modify-write on the sender's
 * lines, and the slot's line is only ever read by them. */
typedef struct slot_users {
    int n, chan;
    const hps_au32 *ack[HPS_NODE_MAX];
    uint32_t msg[HPS_NODE_MAX];
    const hps_shmem_park_t *park[HPS_NODE_MAX];
} slot_users_t;
static slot_users_t g_users[HPS_RING_SLOTS];

static hps_shmem_node_area_t *g_mine;
static chan_priv_t g_priv[HPS_NODE_CHANS];
/* Payload messages posted; the ring slot is this modulo HPS_RING_SLOTS. */
static hps_au64 g_ring_next;

void hps_shmem_node_init(char *my_heap)
{
    g_mine = hps_shmem_node_area(my_heap);
    hps_shmem_park_self = &g_mine->park;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < HPS_NODE_CPU_WORDS * 64 && c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set))
                g_mine->cpus[c / 64] |= 1ull << (c % 64);
}

int hps_shmem_node_cpus(const hps_shmem_node_peer_t *m, int n)
{
    int count = 0;
    for (int w = 0; w < HPS_NODE_CPU_WORDS; w++) {
        uint64_t any = 0;
        for (int k = 0; k < n; k++)
            any |= hps_shmem_node_area(m[k].heap)->cpus[w];
        count += __builtin_popcountll(any);
    }
    return count;
}

void hps_shmem_node_chan_reset(int chan)
{
    memset(&g_mine->chan[chan], 0, sizeof g_mine->chan[chan]);
    memset(&g_priv[chan], 0, sizeof g_priv[chan]);
    hps_shmem_node_chan_retire(chan);
}

void hps_shmem_node_chan_retire(int chan)
{
    /* Every message on the channel was consumed (its team's last barrier),
     * and the receivers will zero their acks for the channel's next team. */
    for (int s = 0; s < HPS_RING_SLOTS; s++)
        if (g_users[s].chan == chan)
            g_users[s].n = 0;
}

/* Member k's channel, its doorbell, its ring. */
static hps_chan_t *chan_of(const hps_ngrp_t *g, int k)
{
    return &hps_shmem_node_area(g->m[k].heap)->chan[g->chan];
}

static hps_shmem_park_t *park_of(const hps_ngrp_t *g, int k)
{
    return &hps_shmem_node_area(g->m[k].heap)->park;
}

/* Counters wrap: a has reached b when a - b is not negative. */
HPS_INLINE int reached(const hps_au32 *word, uint32_t goal)
{
    /* Acquire: what the writer did before the count is visible. */
    return (int32_t)(hps_load_acquire(word) - goal) >= 0;
}

/* Wait until *word reaches goal; peer is the doorbell line of the PE that
 * will write it (its last CPU decides spin or yield). */
static void wait_for(const hps_au32 *word, uint32_t goal, const hps_shmem_park_t *peer)
{
    if (hps_likely(reached(word, goal)))
        return;
    hps_shmem_waiter_t w = { .self = hps_shmem_park_self, .peer = peer };
    for (;;) {
        /* Peers behind libfabric still need this PE's polls (wait.h). */
        if (hps_unlikely(hps_shmem_sh.ofi))
            (void)hps_ofi_poll();
        if (hps_shmem_waiter_step(&w, 0, 0) == HPS_WAIT_PARK) {
            uint32_t bell = hps_shmem_park_arm(w.self);
            hps_shmem_park_finish(w.self, bell, !reached(word, goal));
        }
        if (reached(word, goal))
            return;
    }
}

/* ---- payload-free messages ------------------------------------------------------ */

static void send_one(const hps_ngrp_t *g, int k)
{
    int i = g->m[k].idx;
    /* Release: everything this PE did before the message is visible to
     * the member once it sees the count. */
    hps_store_release(&g_mine->chan[g->chan].pair[i].sig, ++g_priv[g->chan].sent[i]);
}

void hps_shmem_node_signal(const hps_ngrp_t *g, int k)
{
    send_one(g, k);
    /* Dekker with a member going to sleep (hps_shmem_park_arm): either it sees
     * the count, or this PE sees it parked. */
    hps_fence_seq_cst();
    hps_shmem_park_wake(park_of(g, k));
}

void hps_shmem_node_signal_all(const hps_ngrp_t *g)
{
    for (int k = 0; k < g->n; k++)
        if (k != g->me)
            send_one(g, k);
    hps_fence_seq_cst();              /* as in hps_shmem_node_signal */
    for (int k = 0; k < g->n; k++)
        if (k != g->me)
            hps_shmem_park_wake(park_of(g, k));
}

void hps_shmem_node_wait(const hps_ngrp_t *g, int k)
{
    uint32_t goal = ++g_priv[g->chan].seen[g->m[k].idx];
    wait_for(&chan_of(g, k)->pair[g->m[g->me].idx].sig, goal, park_of(g, k));
}

void hps_shmem_node_wait_all(const hps_ngrp_t *g)
{
    /* Starting with the next member spreads the first looks over the
     * senders' lines instead of everyone reading member 0's at once. */
    for (int d = 1; d < g->n; d++)
        hps_shmem_node_wait(g, (g->me + d) % g->n);
}

void hps_shmem_node_barrier(const hps_ngrp_t *g)
{
    if (g->n <= HPS_NODE_FLAT) {
        hps_shmem_node_signal_all(g);
        hps_shmem_node_wait_all(g);
        return;
    }
    /* Round d: tell the member d ahead, hear from the one d behind.  A pair
     * meets in at most one round, so the counts match the rounds. */
    for (int d = 1; d < g->n; d <<= 1) {
        hps_shmem_node_signal(g, (g->me + d) % g->n);
        hps_shmem_node_wait(g, (g->me - d % g->n + g->n) % g->n);
    }
}

/* ---- payload messages ------------------------------------------------------------- */


/* Flow control: wait until a receiver has consumed message n.  Not
 * parkable (a receiver does not ring after an ack, which keeps the
 * receive path free of fences): a sender waits here only when it is
 * HPS_PAIRQ messages or HPS_RING_SLOTS posts ahead of a receiver. */
static void wait_ack(const hps_au32 *ack, uint32_t n, const hps_shmem_park_t *peer)
{
    if (reached(ack, n))
        return;
    hps_shmem_waiter_t w = { .peer = peer };
    do {
        uint64_t t = hps_shmem_sh.ofi ? hps_ofi_poll() : 0;
        hps_shmem_waiter_step(&w, hps_shmem_sh.ofi, t);
    } while (!reached(ack, n));
}

void *hps_shmem_node_post_begin(const hps_ngrp_t *g, int *slot)
{
    (void)g;
    /* Relaxed: the counter only hands out slots in turn. */
    int s = (int)(hps_faa_relaxed(&g_ring_next, 1) % HPS_RING_SLOTS);
    slot_users_t *u = &g_users[s];
    for (int i = 0; i < u->n; i++)
        wait_ack(u->ack[i], u->msg[i], u->park[i]);
    *slot = s;
    return g_mine->ring[s].data;
}

/* The member's part of the message into its line, as a seqlock: itag 0
 * while the bytes change, the message's number once they are whole. */
static void put_inline(hps_pair_t *pr, uint32_t n, const unsigned char *part, size_t len)
{
    uint64_t w[HPS_INLINE_BYTES / 8] = { 0 };
    memcpy(w, part, len < sizeof w ? len : sizeof w);
    hps_store_relaxed(&pr->itag, 0);
    /* Release fence: the 0 is visible before any of the new bytes. */
    hps_fence_release();
    for (int i = 0; i < HPS_INLINE_BYTES / 8; i++)
        hps_store_relaxed(&pr->inl[i], w[i]);
    hps_store_release(&pr->itag, n);
}

void hps_shmem_node_post(const hps_ngrp_t *g, int slot, size_t len, size_t stride)
{
    chan_priv_t *p = &g_priv[g->chan];
    hps_chan_t *mine = &g_mine->chan[g->chan];
    hps_ring_slot_t *r = &g_mine->ring[slot];
    slot_users_t *u = &g_users[slot];
    int me_idx = g->m[g->me].idx;
    r->len = (uint32_t)len;
    u->n = 0;
    u->chan = g->chan;
    for (int k = 0; k < g->n; k++) {
        if (k == g->me)
            continue;
        int i = g->m[k].idx;
        hps_pair_t *pr = &mine->pair[i];
        const hps_au32 *ack = &chan_of(g, k)->pair[me_idx].ack;
        uint32_t n = ++p->sent[i], e = n % HPS_PAIRQ;
        /* The queue entry's last message must have been consumed. */
        if (p->qvalid[i] >> e & 1)
            wait_ack(ack, p->qused[i][e], park_of(g, k));
        p->qused[i][e] = n;
        p->qvalid[i] |= 1u << e;
        u->ack[u->n] = ack;
        u->msg[u->n] = n;
        u->park[u->n++] = park_of(g, k);
        pr->q[e] = (uint8_t)slot;
        size_t off = (size_t)k * stride;
        if (off < len)
            put_inline(pr, n, r->data + off, len - off);
        /* Release: the slot's data, the queue entry and the inline copy
         * come first. */
        hps_store_release(&pr->sig, n);
    }
    hps_fence_seq_cst();              /* as in hps_shmem_node_signal */
    for (int k = 0; k < g->n; k++)
        if (k != g->me)
            hps_shmem_park_wake(park_of(g, k));
}

void hps_shmem_node_recv(const hps_ngrp_t *g, int k, hps_shmem_node_msg_t *msg, size_t off, size_t want)
{
    hps_shmem_node_wait(g, k);
    uint32_t n = g_priv[g->chan].seen[g->m[k].idx];
    const hps_pair_t *pr = &chan_of(g, k)->pair[g->m[g->me].idx];
    int s = pr->q[n % HPS_PAIRQ];
    msg->ring = hps_shmem_node_area(g->m[k].heap)->ring[s].data + off;
    msg->data = msg->ring;
    msg->inl = 0;
    msg->from = k;
    msg->n = n;
    /* The line's copy is this message's unless the sender has moved on
     * (then the ring, which it cannot reuse before our ack, has it). */
    if (want <= HPS_INLINE_BYTES && hps_load_acquire(&pr->itag) == n) {
        for (int i = 0; i < HPS_INLINE_BYTES / 8; i++)
            msg->buf[i] = hps_load_relaxed(&pr->inl[i]);
        /* Acquire fence: the copy is read before itag is read again. */
        hps_fence_acquire();
        if (hps_load_relaxed(&pr->itag) == n) {
            msg->data = (const unsigned char *)msg->buf;
            msg->inl = 1;
        }
    }
}

void hps_shmem_node_release(const hps_ngrp_t *g, const hps_shmem_node_msg_t *msg)
{
    /* Release: our reads of the queue entry and the slot come first. */
    hps_store_release(&g_mine->chan[g->chan].pair[g->m[msg->from].idx].ack, msg->n);
}
