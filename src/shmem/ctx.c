// SPDX-License-Identifier: MIT
/*
 * Communication contexts: create, destroy, get_team.
 *
 * On-node an operation completes as it returns, so a context is only its
 * team, in whose numbering its operations name their target PE.  Over libfabric each context gets an endpoint with counters of
 * its own (transport/ofi_ctx.c): its quiet waits for its own operations
 * only, and a SHMEM_CTX_PRIVATE or SHMEM_CTX_SERIALIZED one (used by one
 * thread at a time) writes only its own cache lines, with no lock and no
 * locked instruction.  Under SHMEM_THREAD_MULTIPLE any other context takes
 * a lock, as the default one does.  A context the transport cannot give
 * an endpoint shares the default one's (its quiet then completes more
 * than its own operations, which OpenSHMEM allows).
 */
#include <stdlib.h>
#include "team.h"

static int team_create_ctx(const char *fn, shmem_team_t team, long options, shmem_ctx_t *ctx)
{
    hps_check_running(fn);
    *ctx = SHMEM_CTX_INVALID;
    if (!team || team->me < 0)
        return -1;
    struct hps_shmem_ctx *c = malloc(sizeof *c);
    if (!c)
        return -1;
    c->team = team;
    c->world = team == SHMEM_TEAM_WORLD;
    c->options = options;
    c->ofi = NULL;
    if (hps_shmem_sh.ofi) {
        int single = (options & (SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED)) != 0;
        if (hps_ofi_ctx_create(single ? HPS_OFI_CTX_SINGLE : 0, &c->ofi) != 0) {
            free(c);
            return -1;
        }
    }
    *ctx = c;
    return 0;
}

HPS_API int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)
{
    return team_create_ctx(__func__, team, options, ctx);
}

int hps_shmem_ctx_team_pe(const char *fn, shmem_ctx_t ctx, int pe)
{
    if (ctx == SHMEM_CTX_INVALID)
        hps_shmem_fatal(fn, "invalid context (SHMEM_CTX_INVALID)");
    const struct hps_shmem_team *t = ctx->team;
    if (pe < 0 || pe >= t->size)
        hps_shmem_fatal(fn, "PE %d out of range 0..%d of the context's team", pe, t->size - 1);
    return hps_team_pe(t, pe);
}

HPS_API int shmem_ctx_create(long options, shmem_ctx_t *ctx)
{
    return team_create_ctx(__func__, SHMEM_TEAM_WORLD, options, ctx);
}

HPS_API void shmem_ctx_destroy(shmem_ctx_t ctx)
{
    hps_check_running(__func__);
    if (!ctx || ctx == SHMEM_CTX_DEFAULT)
        return;
    /* Its operations complete first (the transport quiets it). */
    if (ctx->ofi)
        HPS_OFI(__func__, hps_ofi_ctx_destroy(ctx->ofi));
    hps_fence_seq_cst();
    free(ctx);
}

HPS_API int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)
{
    hps_check_running(__func__);
    if (!ctx || !team) {
        if (team)
            *team = SHMEM_TEAM_INVALID;
        return -1;
    }
    *team = ctx->team;
    return 0;
}

/* Last: the profiling names (pshmem_X) of the routines defined above. */
#include "pshmem_alias.h"
