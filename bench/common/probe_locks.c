// SPDX-License-Identifier: MIT
/* The lock variants of the mutex and handoff probes (see hps_probe_locks.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "hps_probe_locks.h"

struct hps_probe_pm hps_probe_pm[HPS_PROBE_NGLIBC];
struct hps_probe_hl hps_probe_hl[HPS_LOCK_ALGO_MAX + 1];

void hps_probe_locks_init(const char *names[HPS_PROBE_NLOCKS])
{
    names[0] = "glibc";
    names[1] = "glibc_adaptive_np";
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutex_init(&hps_probe_pm[0].m, &ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&hps_probe_pm[1].m, &ma);
    for (int al = HPS_LOCK_ALGO_MIN; al <= HPS_LOCK_ALGO_MAX; al++) {
        hps_lock_init(&hps_probe_hl[al].l, (hps_lock_algo_t)al);
        names[HPS_PROBE_NGLIBC + al - 1] = hps_lock_algo_name((hps_lock_algo_t)al);
    }
}
