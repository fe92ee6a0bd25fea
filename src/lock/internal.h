/* SPDX-License-Identifier: MIT */
#ifndef HPS_LOCK_INTERNAL_H
#define HPS_LOCK_INTERNAL_H
#include <time.h>
/* Poll try(l) under the waiting policy until abstime; 0, ETIMEDOUT or EINVAL. */
int hps_timed_poll(int (*try)(void *), void *l, clockid_t clock, const struct timespec *abstime);
#endif
