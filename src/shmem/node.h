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
 * A pair's entries sit 4 to a line and a 2-PE barrier moves two lines:
 * each PE's store to its own line, each reading the other's.
 */
#ifndef HPS_SHMEM_NODE_H
#define HPS_SHMEM_NODE_H

#include <stddef.h>
#include <stdint.h>
#include "hpsync/pr.h"
#include "wait.h"

#define HPS_NODE_MAX 32         /* members of a group on the on-node path */
#define HPS_NODE_FLAT 8         /* flat signalling up to this many, then dissemination */
#define HPS_PAIRQ 8             /* payload messages in flight per pair */
#define HPS_RING_SLOTS 16
#define HPS_RING_BYTES 248      /* payload of one ring slot */
#define HPS_NODE_CHANS 65       /* one per team slot (HPS_TEAM_SLOTS), and active sets' */
#define HPS_CHAN_ASET (HPS_NODE_CHANS - 1)

typedef struct hps_pair {
    hps_au32 sig;
    hps_au32 ack;
    uint8_t q[HPS_PAIRQ];
} hps_pair_t;

typedef struct hps_chan {
    hps_pair_t pair[HPS_NODE_MAX];   /* by pair index: team rank, or node rank (active sets) */
} hps_chan_t;

typedef struct hps_ring_slot {
    uint32_t len;
    uint32_t pad_;
    unsigned char data[HPS_RING_BYTES];
} __attribute__((aligned(HPS_CACHELINE))) hps_ring_slot_t;

typedef struct hps_node_area {
    hps_park_t park;                 /* this PE's doorbell (wait.h) */
    hps_ring_slot_t ring[HPS_RING_SLOTS];
    hps_chan_t chan[HPS_NODE_CHANS];
} __attribute__((aligned(HPS_CACHELINE))) hps_node_area_t;

/* One member of an on-node group. */
typedef struct hps_node_peer {
    char *heap;                     /* its symmetric heap as mapped here */
    int pe;                         /* world PE */
    int idx;                        /* its pair index on the channel */
} hps_node_peer_t;

/* A collective's view of its group on the on-node path. */
typedef struct hps_ngrp {
    int n, me, chan;
    const hps_node_peer_t *m;       /* n members */
} hps_ngrp_t;

/* A received payload message: data stays valid until hps_node_release. */
typedef struct hps_node_msg {
    const unsigned char *data;
    size_t len;
    int from;                       /* member */
    uint32_t n;                     /* its number on the pair */
} hps_node_msg_t;

/* Payload-free messages: to every other member, to one, and waiting for
 * the next one from a member (or from all). */
void hps_node_signal_all(const hps_ngrp_t *g);
void hps_node_signal(const hps_ngrp_t *g, int k);
void hps_node_wait(const hps_ngrp_t *g, int k);
void hps_node_wait_all(const hps_ngrp_t *g);
/* Every member arrives before any leaves: flat up to HPS_NODE_FLAT
 * members, dissemination above. */
void hps_node_barrier(const hps_ngrp_t *g);

/* A payload message to every other member: begin returns the slot's data
 * (HPS_RING_BYTES) once it is free, post sends len bytes of it. */
void *hps_node_post_begin(const hps_ngrp_t *g, int *slot);
void hps_node_post(const hps_ngrp_t *g, int slot, size_t len);
/* The next message from member k (a payload message), and its release. */
void hps_node_recv(const hps_ngrp_t *g, int k, hps_node_msg_t *msg);
void hps_node_release(const hps_ngrp_t *g, const hps_node_msg_t *msg);

/* Set-up: this PE's node area and doorbell, once its heap exists; a
 * channel back to zero for a new team (no member signals on it yet); a
 * channel whose team is gone (after its last barrier). */
void hps_node_init(char *my_heap);
void hps_node_chan_reset(int chan);
void hps_node_chan_retire(int chan);

#endif
