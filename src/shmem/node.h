/* SPDX-License-Identifier: MIT */
/*
 * node.h - how the PEs of one node signal each other in collectives
 * (node.c), and the part of every PE's symmetric heap that carries it.
 *
 * Members of a group whose heaps are all mapped here talk through those
 * mappings, with no atomic read-modify-write on a shared line in the
 * common case.  Every PE writes only its own heap's node area; a member
 * polls the line its sender wrote.  Per channel (one per team slot, one for
 * the 1.3 active sets) and per pair of members there is
 *  - sig: how many messages the owner has sent to that member, a counter
 *    that only grows.  The member keeps its own count of what it consumed
 *    and waits for sig to pass it.  Counting per pair, not per group, makes
 *    one scheme serve teams (all members see every collective) and active
 *    sets (a PE takes part in sets of different shapes): both ends of a
 *    pair always agree on how many messages went between them.
 *  - ack: how many of that member's payload messages the owner consumed,
 *    which tells the member it may reuse its queue entry;
 *  - q: for the owner's payload messages to that member, which slot of the
 *    owner's ring holds each (message n: q[n % HPS_PAIRQ]).
 * A payload message (up to HPS_RING_BYTES) is copied once into a slot of
 * the sender's ring, read by every receiver from there, and the slot is
 * reused once every receiver's ack has passed the message.  So a sender's source is free
 * on return, a receiver's dest is written only by the receiver, during its
 * own call, and a root can run up to HPS_PAIRQ broadcasts ahead of a slow
 * member without waiting for it.
 *
 * A 2-PE barrier moves two lines: each PE's store to its own line, each
 * reading the other's.
 */
#ifndef HPS_SHMEM_NODE_H
#define HPS_SHMEM_NODE_H

#include <stddef.h>
#include <stdint.h>
#include "hpsync/pr.h"
#include "wait.h"

#define HPS_NODE_MAX 32         /* members of a group on the on-node path */
#define HPS_NODE_FLAT 8         /* flat signalling up to this many, then dissemination */
#define HPS_PAIRQ 32            /* payload messages in flight per pair */
#define HPS_RING_SLOTS 32
#define HPS_RING_BYTES 248      /* payload of one ring slot */
/* Channels: team slots 0 to HPS_NODE_TEAM_CHANS - 1 (the world, the shared
 * team, 14 more at a time; teams in higher slots use the point-to-point
 * algorithms), then the active sets'.  What fits the 64 KiB the heap may
 * lose to the library's area, with a line per pair. */
#define HPS_NODE_TEAM_CHANS 16
#define HPS_NODE_CHANS (HPS_NODE_TEAM_CHANS + 1)
#define HPS_CHAN_ASET HPS_NODE_TEAM_CHANS

/* A line per pair: a member polls only its own, and a sender's stores
 * for one member never take another's line away.  The first bytes of a
 * payload message meant for the member ride in the line as well (inl,
 * valid while itag is the message's number), so a member that keeps up
 * reads one line per message, not two. */
#define HPS_INLINE_BYTES 16
typedef struct hps_pair {
    hps_au32 sig;
    hps_au32 ack;
    hps_au32 itag;                  /* message inl holds, 0 while it is written */
    uint32_t pad_;
    hps_au64 inl[HPS_INLINE_BYTES / 8];
    uint8_t q[HPS_PAIRQ];
} __attribute__((aligned(HPS_CACHELINE))) hps_pair_t;

typedef struct hps_chan {
    hps_pair_t pair[HPS_NODE_MAX];   /* by pair index: team rank, or node rank (active sets) */
} hps_chan_t;

typedef struct hps_ring_slot {
    uint32_t len;
    uint32_t pad_;
    unsigned char data[HPS_RING_BYTES];
} __attribute__((aligned(HPS_CACHELINE))) hps_ring_slot_t;

#define HPS_NODE_CPU_WORDS 16    /* 1024 CPUs */
typedef struct hps_shmem_node_area {
    hps_shmem_park_t park;                 /* this PE's doorbell (wait.h) */
    uint64_t cpus[HPS_NODE_CPU_WORDS]; /* the CPUs this PE may run on */
    hps_ring_slot_t ring[HPS_RING_SLOTS];
    hps_chan_t chan[HPS_NODE_CHANS];
} __attribute__((aligned(HPS_CACHELINE))) hps_shmem_node_area_t;

/* One member of an on-node group. */
typedef struct hps_shmem_node_peer {
    char *heap;                     /* its symmetric heap as mapped here */
    int pe;                         /* world PE */
    int idx;                        /* its pair index on the channel */
} hps_shmem_node_peer_t;

/* A collective's view of its group on the on-node path. */
typedef struct hps_ngrp {
    int n, me, chan;
    const hps_shmem_node_peer_t *m;       /* n members */
} hps_ngrp_t;

/* A received payload message: data is the part asked for (from the line
 * when inl, else from the sender's ring, which ring always points into),
 * valid until hps_shmem_node_release. */
typedef struct hps_shmem_node_msg {
    const unsigned char *data, *ring;
    int inl;
    int from;                       /* member */
    uint32_t n;                     /* its number on the pair */
    uint64_t buf[HPS_INLINE_BYTES / 8];
} hps_shmem_node_msg_t;

/* Payload-free messages: to every other member, to one, and waiting for
 * the next one from a member (or from all). */
void hps_shmem_node_signal_all(const hps_ngrp_t *g);
void hps_shmem_node_signal(const hps_ngrp_t *g, int k);
void hps_shmem_node_wait(const hps_ngrp_t *g, int k);
void hps_shmem_node_wait_all(const hps_ngrp_t *g);
/* Every member arrives before any leaves: flat up to HPS_NODE_FLAT
 * members, dissemination above. */
void hps_shmem_node_barrier(const hps_ngrp_t *g);

/* A payload message to every other member: begin returns the slot's data
 * (HPS_RING_BYTES) once it is free, post sends len bytes of it; member k's
 * part starts at k * stride (stride 0: all read the same bytes). */
void *hps_shmem_node_post_begin(const hps_ngrp_t *g, int *slot);
void hps_shmem_node_post(const hps_ngrp_t *g, int slot, size_t len, size_t stride);
/* The next message from member k (a payload message), the part at off
 * (this member's: me * stride) of which want bytes are needed; then its
 * release. */
void hps_shmem_node_recv(const hps_ngrp_t *g, int k, hps_shmem_node_msg_t *msg, size_t off, size_t want);
void hps_shmem_node_release(const hps_ngrp_t *g, const hps_shmem_node_msg_t *msg);

/* Set-up: this PE's node area and doorbell, once its heap exists; a
 * channel back to zero for a new team (no member signals on it yet); a
 * channel whose team is gone (after its last barrier). */
void hps_shmem_node_init(char *my_heap);
/* The number of CPUs in the union of the n members' CPU sets (each PE
 * publishes its own at hps_shmem_node_init; read them after a barrier). */
int hps_shmem_node_cpus(const hps_shmem_node_peer_t *m, int n);
void hps_shmem_node_chan_reset(int chan);
void hps_shmem_node_chan_retire(int chan);

#endif
