// SPDX-License-Identifier: MIT
/*
 * Teams and the synchronisation every collective is built on (contexts:
 * ctx.c).
 *
 * When every member's heap is mapped here, a barrier is node.c's (flat up
 * to 8 members, each PE storing to its own line and reading the others';
 * dissemination above), on the team's channel or, for active sets, on
 * the active sets' channel, whose pair counts suit sets of any shape; pSync
 * is then left alone.  Otherwise barriers only use the internal RMA/AMO
 * layer (hps_amo64 and local polling), which also reaches libfabric peers:
 *  - teams: a dissemination barrier.  In round k a member adds 1 to
 *    flag[k] of the member 2^k ahead and waits until its own flag[k] has
 *    reached the team's barrier count.  Counts only grow, so nothing is
 *    ever reset and a fast PE's next barrier cannot be confused with this
 *    one; 2 PEs need one round (one atomic and one wait each);
 *  - active sets (1.3 pSync routines): pSync must come back to
 *    SHMEM_SYNC_VALUE and may be shared by differently shaped sets, so a
 *    counter there is used and reset: members add 1 to the root's pSync[0]
 *    and wait for their own to become 1; the root waits for size - 1,
 *    resets, then releases each member.  Each PE resets its own word
 *    before anyone can write it again.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "team.h"
#include "runtime/runtime.h"

HPS_API struct hps_shmem_team hps_shmem_team_world, hps_shmem_team_shared;
HPS_API struct hps_shmem_ctx hps_shmem_ctx_default;

/* Slots in use on this PE (bit s: slot s). */
static uint64_t g_slots;
static pthread_mutex_t g_team_lock = PTHREAD_MUTEX_INITIALIZER;
/* World PE -> its rank among the PEs whose heap is mapped here (the
 * active sets' pair index), -1 for the others. */
static int *g_node_rank;
/* Every PE of this node is mapped here: after the first barrier their
 * published CPU sets say whether the node is crowded (wait.h). */
static int g_crowd_pending;
/* The doorbell lines of the other mapped PEs (wait.h's neighbours), at
 * most this many: a wait reads them all at every clock read. */
#define HPS_NEIGHBOURS_MAX 64
static const hps_shmem_park_t **g_neighbours;

/* ---- synchronisation ------------------------------------------------------ */

/* The index of PE pe in the set {start + i * stride : i < size}, or -1
 * (stride 0: the set is start alone). */
static int strided_index(int pe, int start, int stride, int size)
{
    int d = pe - start;
    if (d < 0 || (stride ? d % stride : d) || (stride ? d / stride : 0) >= size)
        return -1;
    return stride ? d / stride : 0;
}

static void team_node(const struct hps_shmem_team *t, hps_ngrp_t *ng)
{
    ng->n = t->size;
    ng->me = t->me;
    ng->chan = t->slot;
    ng->m = t->node;
}

static void team_sync(const char *fn, struct hps_shmem_team *t)
{
    if (t->size <= 1)
        return;
    if (t->node) {
        hps_ngrp_t ng;
        team_node(t, &ng);
        hps_shmem_node_barrier(&ng);
        return;
    }
    uint64_t e = ++t->epoch;
    hps_team_sync_t *s = hps_slot_sync(t->slot);
    for (int k = 0, d = 1; d < t->size; k++, d <<= 1) {
        int to = hps_team_pe(t, (t->me + d) % t->size);
        hps_signal64(fn, HPS_AOP_ADD, &s->flag[k], 1, to);
        hps_shmem_wait_ge64(&s->flag[k], e);
    }
}

static void aset_sync(const char *fn, const hps_shmem_group_t *g)
{
    if (g->size <= 1)
        return;
    hps_ngrp_t ng;
    hps_shmem_node_peer_t m[HPS_NODE_MAX];
    if (hps_shmem_group_node(g, &ng, m)) {
        hps_shmem_node_barrier(&ng);
        return;
    }
    uint64_t *ps = (uint64_t *)g->psync;
    if (g->me == 0) {
        hps_shmem_wait_ge64(ps, (uint64_t)g->size - 1);
        hps_plain_store_relaxed(ps, 0);
        for (int i = 1; i < g->size; i++)
            hps_amo64(fn, HPS_AOP_ADD, ps, 1, hps_shmem_group_pe(g, i));
    } else {
        hps_amo64(fn, HPS_AOP_ADD, ps, 1, g->start);
        hps_shmem_wait_ge64(ps, 1);
        hps_plain_store_relaxed(ps, 0);
    }
}

void hps_shmem_group_sync(const char *fn, const hps_shmem_group_t *g)
{
    if (g->team)
        team_sync(fn, g->team);
    else
        aset_sync(fn, g);
}

int hps_shmem_group_node(const hps_shmem_group_t *g, hps_ngrp_t *ng, hps_shmem_node_peer_t *buf)
{
    if (g->team) {
        if (!g->team->node)
            return 0;
        team_node(g->team, ng);
        return 1;
    }
    if (g->size < 2 || g->size > HPS_NODE_MAX)
        return 0;
    for (int i = 0; i < g->size; i++) {
        int pe = hps_shmem_group_pe(g, i);
        buf[i].heap = hps_peer_map(HPS_REG_HEAP, pe);
        buf[i].pe = pe;
        buf[i].idx = g_node_rank[pe];
        if (!buf[i].heap || buf[i].idx < 0 || buf[i].idx >= HPS_NODE_MAX)
            return 0;
    }
    ng->n = g->size;
    ng->me = g->me;
    ng->chan = HPS_CHAN_ASET;
    ng->m = buf;
    return 1;
}

uint64_t *hps_shmem_group_scratch(const hps_shmem_group_t *g)
{
    return g->team ? &hps_slot_sync(g->team->slot)->count : (uint64_t *)&g->psync[1];
}

void hps_shmem_group_team(const char *fn, hps_shmem_group_t *g, shmem_team_t team)
{
    hps_check_running(fn);
    if (!team)
        hps_shmem_fatal(fn, "SHMEM_TEAM_INVALID is not a team");
    if (team->me < 0)
        hps_shmem_fatal(fn, "this PE is not a member of the team");
    g->team = team;
    g->start = g->stride = 0;
    g->size = team->size;
    g->me = team->me;
    g->psync = NULL;
}

void hps_shmem_group_aset(const char *fn, hps_shmem_group_t *g, int start, int log_stride, int size,
                    long *psync)
{
    hps_check_running(fn);
    g->team = NULL;
    g->start = start;
    g->stride = 1 << (log_stride < 0 || log_stride > 30 ? 0 : log_stride);
    g->size = size;
    g->psync = psync;
    long last = (long)start + (long)(size - 1) * g->stride;
    if (log_stride < 0 || log_stride > 30 || size < 1 || start < 0 || last >= (long)hps_shmem_sh.npes)
        hps_shmem_fatal(fn, "active set (PE_start %d, logPE_stride %d, PE_size %d) is outside 0..%u",
                  start, log_stride, size, hps_shmem_sh.npes - 1);
    g->me = strided_index((int)hps_shmem_sh.me, start, g->stride, size);
    if (g->me < 0)
        hps_shmem_fatal(fn, "PE %d is not in the active set (PE_start %d, logPE_stride %d, "
                  "PE_size %d)", hps_shmem_sh.me, start, log_stride, size);
    size_t off;
    if (hps_region_of(psync, &off) < 0)
        hps_shmem_bad_target(fn, psync, sizeof(long), hps_shmem_sh.me);
}

/* The PEs of this node have published their CPU sets (hps_shmem_node_init)
 * before the barrier that ends shmem_init: count the CPUs they share. */
static void settle_crowding(const char *fn)
{
    int n = (int)hps_shmem_sh.npes, k = 0;
    hps_shmem_node_peer_t *m = malloc((size_t)hps_shmem_wait_cfg.local_pes * sizeof *m);
    if (!m)
        hps_shmem_fatal(fn, "out of memory");
    for (int pe = 0; pe < n; pe++)
        if (g_node_rank[pe] >= 0)
            m[k++].heap = hps_peer_map(HPS_REG_HEAP, pe);
    hps_shmem_wait_set_node_cpus(hps_shmem_node_cpus(m, k));
    free(m);
    g_crowd_pending = 0;
}

void hps_shmem_barrier_all_internal(const char *fn)
{
    hps_quiet(fn);
    team_sync(fn, &hps_shmem_team_world);
    if (hps_unlikely(g_crowd_pending))
        settle_crowding(fn);
}

HPS_API void shmem_barrier_all(void)
{
    hps_check_running(__func__);
    hps_shmem_barrier_all_internal(__func__);
}

HPS_API void shmem_sync_all(void)
{
    hps_check_running(__func__);
    team_sync(__func__, &hps_shmem_team_world);
}

HPS_API int shmem_team_sync(shmem_team_t team)
{
    hps_shmem_group_t g;
    hps_shmem_group_team(__func__, &g, team);
    team_sync(__func__, team);
    return 0;
}

HPS_API void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    hps_shmem_group_t g;
    hps_shmem_group_aset(__func__, &g, PE_start, logPE_stride, PE_size, pSync);
    hps_quiet(__func__);
    aset_sync(__func__, &g);
}

HPS_API void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    hps_shmem_group_t g;
    hps_shmem_group_aset(__func__, &g, PE_start, logPE_stride, PE_size, pSync);
    aset_sync(__func__, &g);
}

/* ---- teams ------------------------------------------------------------------ */

static void team_set(struct hps_shmem_team *t, int start, int stride, int size, int slot)
{
    memset(t, 0, sizeof *t);
    t->start = start;
    t->stride = stride;
    t->size = size;
    t->slot = slot;
    t->me = strided_index((int)hps_shmem_sh.me, start, stride, size);
}

/* The on-node view of a team this PE belongs to (pair index = team rank),
 * or NULL when some member is reached through libfabric or the team is
 * too small or too large for it.  The same answer on every member: each
 * maps exactly the heaps of the PEs on its node. */
static hps_shmem_node_peer_t *node_view(const char *fn, const struct hps_shmem_team *t)
{
    if (t->me < 0 || t->size < 2 || t->size > HPS_NODE_MAX || t->slot >= HPS_NODE_TEAM_CHANS)
        return NULL;
    for (int i = 0; i < t->size; i++)
        if (!hps_peer_map(HPS_REG_HEAP, hps_team_pe(t, i)))
            return NULL;
    hps_shmem_node_peer_t *m = malloc((size_t)t->size * sizeof *m);
    if (!m)
        hps_shmem_fatal(fn, "out of memory");
    for (int i = 0; i < t->size; i++) {
        m[i].pe = hps_team_pe(t, i);
        m[i].heap = hps_peer_map(HPS_REG_HEAP, m[i].pe);
        m[i].idx = i;
    }
    return m;
}

void hps_shmem_teams_init(void)
{
    int n = (int)hps_shmem_sh.npes, me = hps_shmem_sh.me;
    team_set(&hps_shmem_team_world, 0, 1, n, 0);
    /* The shared team: PEs whose memory this PE maps (shmem_ptr works). */
    struct hps_shmem_team *sh = &hps_shmem_team_shared;
    int cnt = 0, first = -1, stride = 0, strided = 1;
    for (int pe = 0; pe < n; pe++) {
        if (pe != me && !hps_peer_map(HPS_REG_HEAP, pe))
            continue;
        if (cnt == 1)
            stride = pe - first;
        else if (cnt > 1 && pe - (first + (cnt - 1) * stride) != stride)
            strided = 0;
        if (cnt++ == 0)
            first = pe;
    }
    team_set(sh, first, cnt > 1 ? stride : 1, cnt, 1);
    if (!strided) {
        sh->list = malloc((size_t)cnt * sizeof *sh->list);
        if (!sh->list)
            hps_shmem_fatal("shmem_init", "out of memory");
        cnt = 0;
        for (int pe = 0; pe < n; pe++)
            if (pe == me || hps_peer_map(HPS_REG_HEAP, pe))
                sh->list[cnt++] = pe;
        for (int i = 0; i < cnt; i++)
            if (sh->list[i] == me)
                sh->me = i;
    }
    g_slots = 3;
    hps_shmem_ctx_default.team = &hps_shmem_team_world;
    hps_shmem_ctx_default.world = 1;

    /* The on-node path: this PE's doorbell and channels (the heap is fresh,
     * so every channel starts at zero), node ranks, the two teams' views. */
    hps_shmem_node_init((char *)hps_shmem_sh.base[HPS_REG_HEAP]);
    g_node_rank = malloc((size_t)n * sizeof *g_node_rank);
    if (!g_node_rank)
        hps_shmem_fatal("shmem_init", "out of memory");
    int mapped = 0;
    for (int pe = 0; pe < n; pe++)
        g_node_rank[pe] = hps_peer_map(HPS_REG_HEAP, pe) ? mapped++ : -1;
    g_crowd_pending = mapped > 1 && mapped == hps_shmem_wait_cfg.local_pes;
    g_neighbours = malloc(HPS_NEIGHBOURS_MAX * sizeof *g_neighbours);
    if (!g_neighbours)
        hps_shmem_fatal("shmem_init", "out of memory");
    int k = 0;
    for (int pe = 0; pe < n && k < HPS_NEIGHBOURS_MAX; pe++)
        if (pe != me && g_node_rank[pe] >= 0)
            g_neighbours[k++] = &hps_shmem_node_area(hps_peer_map(HPS_REG_HEAP, pe))->park;
    hps_shmem_wait_cfg.neighbours = g_neighbours;
    hps_shmem_wait_cfg.nneighbours = k;
    hps_shmem_team_world.node = node_view("shmem_init", &hps_shmem_team_world);
    sh->node = node_view("shmem_init", sh);
}

void hps_shmem_teams_fini(void)
{
    free(hps_shmem_team_shared.list);
    hps_shmem_team_shared.list = NULL;
    free(hps_shmem_team_shared.node);
    hps_shmem_team_shared.node = NULL;
    free(hps_shmem_team_world.node);
    hps_shmem_team_world.node = NULL;
    free(g_node_rank);
    g_node_rank = NULL;
    hps_shmem_wait_cfg.nneighbours = 0;
    hps_shmem_wait_cfg.neighbours = NULL;
    free(g_neighbours);
    g_neighbours = NULL;
}

/* The slots free on every member of parent (an OR of the members' masks,
 * through the parent's scratch word), so a new team can take one. */
static uint64_t slots_used_anywhere(const char *fn, struct hps_shmem_team *parent)
{
    hps_shmem_group_t g;
    hps_shmem_group_team(fn, &g, parent);
    uint64_t *scratch = hps_shmem_group_scratch(&g), all = 0, v;
    pthread_mutex_lock(&g_team_lock);
    *scratch = g_slots;
    pthread_mutex_unlock(&g_team_lock);
    team_sync(fn, parent);
    for (int i = 0; i < parent->size; i++) {
        hps_get(fn, &v, scratch, sizeof v, hps_team_pe(parent, i));
        all |= v;
    }
    team_sync(fn, parent);
    return all;
}

static int lowest_free(uint64_t used, int skip)
{
    for (int s = 0; s < HPS_TEAM_SLOTS; s++)
        if (!(used >> s & 1) && skip-- == 0)
            return s;
    return -1;
}

/* This PE's handle for the subset (start, stride, size) of parent (in the
 * parent's numbering) on slot: a new team, or SHMEM_TEAM_INVALID when the
 * PE is not a member. */
static shmem_team_t team_make(const char *fn, struct hps_shmem_team *parent, int start,
                              int stride, int size, int slot, const shmem_team_config_t *conf,
                              long mask)
{
    int me = strided_index(parent->me, start, stride, size);
    if (me < 0)
        return SHMEM_TEAM_INVALID;
    struct hps_shmem_team *t = malloc(sizeof *t);
    if (!t)
        hps_shmem_fatal(fn, "out of memory");
    if (parent->list) {
        team_set(t, 0, 1, size, slot);
        t->list = malloc((size_t)size * sizeof *t->list);
        if (!t->list)
            hps_shmem_fatal(fn, "out of memory");
        for (int i = 0; i < size; i++)
            t->list[i] = parent->list[start + i * stride];
        t->me = me;
    } else {
        team_set(t, hps_team_pe(parent, start), parent->stride * stride, size, slot);
    }
    if (conf && (mask & SHMEM_TEAM_NUM_CONTEXTS))
        t->config = *conf;
    pthread_mutex_lock(&g_team_lock);
    g_slots |= 1ull << slot;
    pthread_mutex_unlock(&g_team_lock);
    /* Fresh flags and channel before any member can signal (the parent
     * sync follows).  Nobody uses the slot here: it is free on every
     * member of the parent. */
    memset(hps_slot_sync(slot), 0, sizeof(hps_team_sync_t));
    if (slot < HPS_NODE_TEAM_CHANS)
        hps_shmem_node_chan_reset(slot);
    t->node = node_view(fn, t);
    return t;
}

static int team_bad(const char *fn, shmem_team_t parent)
{
    hps_check_running(fn);
    return !parent || parent->me < 0;
}

HPS_API int shmem_team_split_strided(shmem_team_t parent, int start, int stride, int size,
                                     const shmem_team_config_t *config, long config_mask,
                                     shmem_team_t *new_team)
{
    *new_team = SHMEM_TEAM_INVALID;
    if (team_bad(__func__, parent))
        return -1;
    if (size == 1)
        stride = stride ? stride : 1;
    long last = (long)start + (long)(size - 1) * stride;
    if (start < 0 || size < 1 || stride < 1 || last >= parent->size)
        return -1;
    int slot = lowest_free(slots_used_anywhere(__func__, parent), 0);
    if (slot < 0)
        return -1;                      /* the same answer on every member */
    *new_team = team_make(__func__, parent, start, stride, size, slot, config, config_mask);
    team_sync(__func__, parent);
    return 0;
}

HPS_API int shmem_team_split_2d(shmem_team_t parent, int xrange,
                                const shmem_team_config_t *xaxis_config, long xaxis_mask,
                                shmem_team_t *xaxis_team,
                                const shmem_team_config_t *yaxis_config, long yaxis_mask,
                                shmem_team_t *yaxis_team)
{
    *xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
    if (team_bad(__func__, parent) || xrange < 1)
        return -1;
    int n = parent->size, me = parent->me;
    if (xrange > n)
        xrange = n;
    /* Rows of xrange consecutive PEs, columns of PEs xrange apart: every
     * row is disjoint from the others, so all rows share one slot, and all
     * columns another. */
    uint64_t used = slots_used_anywhere(__func__, parent);
    int xs = lowest_free(used, 0), ys = lowest_free(used, 1);
    if (xs < 0 || ys < 0)
        return -1;
    int row = me / xrange * xrange, col = me % xrange;
    *xaxis_team = team_make(__func__, parent, row, 1, n - row < xrange ? n - row : xrange, xs,
                            xaxis_config, xaxis_mask);
    *yaxis_team = team_make(__func__, parent, col, xrange, (n - col + xrange - 1) / xrange, ys,
                            yaxis_config, yaxis_mask);
    team_sync(__func__, parent);
    return 0;
}

HPS_API void shmem_team_destroy(shmem_team_t team)
{
    hps_check_running(__func__);
    if (!team)
        return;
    if (team == SHMEM_TEAM_WORLD || team == SHMEM_TEAM_SHARED)
        hps_shmem_fatal(__func__, "the predefined teams cannot be destroyed");
    /* Nobody may still be signalling on the slot when it is handed out again. */
    hps_quiet(__func__);
    team_sync(__func__, team);
    if (team->node)
        hps_shmem_node_chan_retire(team->slot);
    pthread_mutex_lock(&g_team_lock);
    g_slots &= ~(1ull << team->slot);
    pthread_mutex_unlock(&g_team_lock);
    free(team->node);
    free(team->list);
    free(team);
}

HPS_API int shmem_team_my_pe(shmem_team_t team)
{
    hps_check_running(__func__);
    return team ? team->me : -1;
}

HPS_API int shmem_team_n_pes(shmem_team_t team)
{
    hps_check_running(__func__);
    return team ? team->size : -1;
}

HPS_API int shmem_team_get_config(shmem_team_t team, long config_mask,
                                  shmem_team_config_t *config)
{
    hps_check_running(__func__);
    if (!team || !config)
        return -1;
    if (config_mask & SHMEM_TEAM_NUM_CONTEXTS)
        config->num_contexts = team->config.num_contexts;
    return 0;
}

HPS_API int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)
{
    hps_check_running(__func__);
    if (!src_team || !dest_team || src_pe < 0 || src_pe >= src_team->size)
        return -1;
    int w = hps_team_pe(src_team, src_pe);
    for (int i = 0; i < dest_team->size; i++)
        if (hps_team_pe(dest_team, i) == w)
            return i;
    return -1;
}

/* OpenSHMEM 1.5: like shmem_ptr, with pe numbered in team.  NULL for
 * SHMEM_TEAM_INVALID, a pe outside the team, an address that is not
 * symmetric, or a PE whose memory is not mapped here (reached through
 * libfabric): every member of SHMEM_TEAM_SHARED gets a pointer. */
HPS_API void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe)
{
    hps_check_running(__func__);
    if (!team || pe < 0 || pe >= team->size)
        return NULL;
    return hps_shmem_local_ptr(dest, hps_team_pe(team, pe));
}

/* Last: the profiling names (pshmem_X) of the routines defined above. */
#include "pshmem_alias.h"
