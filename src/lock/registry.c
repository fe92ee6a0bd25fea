// SPDX-License-Identifier: MIT
/* Lock algorithms by name: the one table behind HPSYNC_LOCK and --lock. */
#include <string.h>
#include "hpsync/lock.h"

static const char *const names[] = {
    [HPS_LOCK_TTAS] = "ttas",
    [HPS_LOCK_TICKET] = "ticket",
    [HPS_LOCK_MCS] = "mcs",
    [HPS_LOCK_HEMLOCK] = "hemlock",
    [HPS_LOCK_ADAPTIVE] = "adaptive",
};

HPS_EXPORT const char *hps_lock_algo_name(hps_lock_algo_t algo)
{
    if (algo < HPS_LOCK_TTAS || algo > HPS_LOCK_ALGO_MAX)
        return "unknown";
    return names[algo];
}

HPS_EXPORT int hps_lock_algo_parse(const char *name, hps_lock_algo_t *algo)
{
    if (!name)
        return EINVAL;
    for (int a = HPS_LOCK_TTAS; a <= HPS_LOCK_ALGO_MAX; a++) {
        if (strcmp(name, names[a]) == 0) {
            *algo = (hps_lock_algo_t)a;
            return 0;
        }
    }
    /* "clh" is accepted as a synonym: Hemlock is our CLH-family lock. */
    if (strcmp(name, "clh") == 0 || strcmp(name, "default") == 0) {
        *algo = strcmp(name, "clh") == 0 ? HPS_LOCK_HEMLOCK : HPS_LOCK_DEFAULT;
        return 0;
    }
    return EINVAL;
}

HPS_EXPORT const char *hps_lock_algo_names(void)
{
    return "ttas, ticket, mcs, hemlock, adaptive";
}
