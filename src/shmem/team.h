/* SPDX-License-Identifier: MIT */
/*
 * team.h - teams and the groups collectives run over (contexts:
 * internal.h, ctx.c).
 *
 * A team is a list of world PEs, strided (start + i * stride) except for a
 * SHMEM_TEAM_SHARED whose node's PEs are not evenly spaced.  Each team owns
 * a slot of the internal symmetric area (internal.h): barrier flags for
 * the point-to-point algorithms, and the slot's channel for the on-node
 * ones (node.h); the members of a new team agree on a slot free on all of
 * them with an OR over the parent team.
 *
 * A group is what one collective call runs over: a team, or an OpenSHMEM
 * 1.3 active set (PE_start, logPE_stride, PE_size) synchronising through
 * the caller's pSync array.
 */
#ifndef HPS_SHMEM_TEAM_H
#define HPS_SHMEM_TEAM_H

#include "internal.h"

struct hps_shmem_team {
    int start, stride, size;    /* members: start + i * stride, i < size */
    int *list;                  /* or these world PEs (when not strided) */
    int me;                     /* this PE's index, -1 if not a member */
    int slot;                   /* internal sync block */
    uint64_t epoch;             /* barriers this PE has done on the team */
    hps_shmem_node_peer_t *node;      /* the members, when all are on this node (node.h) */
    shmem_team_config_t config;
};

typedef struct hps_group {
    shmem_team_t team;          /* a team, or (team == NULL) an active set: */
    int start, stride, size, me;
    long *psync;
} hps_shmem_group_t;

HPS_INLINE int hps_team_pe(const struct hps_shmem_team *t, int i)
{
    return t->list ? t->list[i] : t->start + i * t->stride;
}

HPS_INLINE int hps_shmem_group_pe(const hps_shmem_group_t *g, int i)
{
    return g->team ? hps_team_pe(g->team, i) : g->start + i * g->stride;
}

/* The team or active set of a collective call; aborts on a bad handle,
 * an empty or out-of-range set, or a caller that is not a member. */
void hps_shmem_group_team(const char *fn, hps_shmem_group_t *g, shmem_team_t team);
void hps_shmem_group_aset(const char *fn, hps_shmem_group_t *g, int start, int log_stride, int size,
                    long *psync);
/* All members arrive before any leaves (no completion of puts implied). */
void hps_shmem_group_sync(const char *fn, const hps_shmem_group_t *g);
/* The on-node view of g, when every member's heap is mapped here and g
 * has 2 to HPS_NODE_MAX members (1: ng is set; an active set's members go
 * to buf, HPS_NODE_MAX entries); 0: the point-to-point algorithms. */
int hps_shmem_group_node(const hps_shmem_group_t *g, hps_ngrp_t *ng, hps_shmem_node_peer_t *buf);
/* A word of symmetric scratch per member, for collect's counts. */
uint64_t *hps_shmem_group_scratch(const hps_shmem_group_t *g);

#endif
