// SPDX-License-Identifier: MIT
/*
 * Section statistics: adding them up, this thread's, the causes' names and
 * the summary HPSYNC_TM_STATS=1 prints at exit (the totals over threads
 * live in core.c, under its thread table's lock).
 */
#include <string.h>
#include "internal.h"

HPS_EXPORT void hps_tm_stats_add(hps_tm_stats_t *to, const hps_tm_stats_t *s)
{
    /* s may be a running thread's: relaxed loads, against its owner's
     * relaxed stores (HPS_TM_COUNT_); each counter is exact, the set of
     * them a snapshot. */
#define LD(x) hps_plain_load_relaxed(&(x))
    to->commits += LD(s->commits);
    to->commits_ro += LD(s->commits_ro);
    to->aborts += LD(s->aborts);
    to->retries += LD(s->retries);
    to->irrevocable += LD(s->irrevocable);
    for (int c = 0; c < HPS_TM_CAUSES; c++)
        to->aborts_by_cause[c] += LD(s->aborts_by_cause[c]);
    to->solo += LD(s->solo);
    to->serial += LD(s->serial);
    to->reads += LD(s->reads);
    to->writes += LD(s->writes);
    uint64_t mr = LD(s->max_read_set), mw = LD(s->max_write_set);
#undef LD
    if (mr > to->max_read_set)
        to->max_read_set = mr;
    if (mw > to->max_write_set)
        to->max_write_set = mw;
}

HPS_EXPORT void hps_tm_stats_get(hps_tm_stats_t *out)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)hps_tm_self_;
    if (d)
        *out = d->st;
    else
        memset(out, 0, sizeof *out);
}

static const char *const cause_names[HPS_TM_CAUSES] = {
    "conflict", "validation", "capacity", "explicit", "ro_write", "irrevocable",
    "htm_conflict", "htm_capacity", "htm_other", "cancel",
};

HPS_EXPORT const char *hps_tm_cause_name(int cause)
{
    return cause >= 0 && cause < HPS_TM_CAUSES ? cause_names[cause] : "unknown";
}

/* The HPSYNC_TM_STATS summary's first lines (core.c adds the bias's and
 * auto's). */
void hps_tm_stats_print(FILE *f, const hps_tm_stats_t *s, const char *backend, const char *why,
                        uint32_t threads)
{
    fprintf(f, "hpsync tm: backend %s (%s), threads %u\n", backend, why, threads);
    fprintf(f, "hpsync tm: commits %llu (read-only %llu), aborts %llu, retried sections %llu, "
            "irrevocable %llu, serialized %llu\n", (unsigned long long)s->commits,
            (unsigned long long)s->commits_ro, (unsigned long long)s->aborts,
            (unsigned long long)s->retries, (unsigned long long)s->irrevocable,
            (unsigned long long)s->serial);
    fprintf(f, "hpsync tm: aborts by cause:");
    for (int c = 0; c < HPS_TM_CAUSES; c++)
        fprintf(f, " %s %llu", cause_names[c], (unsigned long long)s->aborts_by_cause[c]);
    fprintf(f, "\nhpsync tm: words read %llu, written %llu; largest read set %llu, write set %llu\n",
            (unsigned long long)s->reads, (unsigned long long)s->writes,
            (unsigned long long)s->max_read_set, (unsigned long long)s->max_write_set);
}

