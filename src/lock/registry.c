// SPDX-License-Identifier: MIT
/* Lock algorithms by name: the table behind HPSYNC_LOCK and --lock,
 * generated from hpsync/lock/algorithms.def. */
#include <string.h>
#include "hpsync/lock.h"

static const struct algo_row {
    const char *name, *alias, *doc;
} rows[] = {
#define X(name, NAME, alias, doc) [HPS_LOCK_##NAME] = { #name, alias, doc },
#include "hpsync/lock/algorithms.def"
#undef X
};

/* "ttas, ticket, ...": every row's ", name" concatenated, minus the first ", ". */
static const char all_names[] =
#define X(name, NAME, alias, doc) ", " #name
#include "hpsync/lock/algorithms.def"
#undef X
    ;

static const struct algo_row *row(hps_lock_algo_t algo)
{
    return algo < HPS_LOCK_ALGO_MIN || algo > HPS_LOCK_ALGO_MAX ? NULL : &rows[algo];
}

HPS_EXPORT const char *hps_lock_algo_name(hps_lock_algo_t algo)
{
    return row(algo) ? row(algo)->name : "unknown";
}

HPS_EXPORT const char *hps_lock_algo_alias(hps_lock_algo_t algo)
{
    return row(algo) ? row(algo)->alias : "";
}

HPS_EXPORT const char *hps_lock_algo_doc(hps_lock_algo_t algo)
{
    return row(algo) ? row(algo)->doc : "";
}

HPS_EXPORT int hps_lock_algo_parse(const char *name, hps_lock_algo_t *algo)
{
    if (!name || !*name)
        return EINVAL;
    for (int a = HPS_LOCK_ALGO_MIN; a <= HPS_LOCK_ALGO_MAX; a++) {
        if (strcmp(name, rows[a].name) == 0 || strcmp(name, rows[a].alias) == 0) {
            *algo = (hps_lock_algo_t)a;
            return 0;
        }
    }
    if (strcmp(name, "default") == 0) {
        *algo = HPS_LOCK_DEFAULT;
        return 0;
    }
    return EINVAL;
}

HPS_EXPORT const char *hps_lock_algo_names(void)
{
    return all_names + 2;
}
