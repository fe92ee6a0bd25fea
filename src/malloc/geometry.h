/* SPDX-License-Identifier: MIT */
/* geometry.h - L1 data cache geometry, read without allocating. */
#ifndef HPS_MALLOC_GEOMETRY_H
#define HPS_MALLOC_GEOMETRY_H

#include <stdint.h>

/* Fill *line and *sets; returns where they came from ("sysfs", "sysconf", "default"). */
const char *hps_malloc_geometry_detect(uint32_t *line, uint32_t *sets);
/* Power-of-two line of 16..256 bytes and 1..65536 sets. */
int hps_malloc_geometry_valid(long line, long sets);

#endif
