// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "envparse.h"
#include "settings.h"

hps_shmem_settings_t hps_shmem_set;

void hps_shmem_settings_load(void)
{
#define X(field, name, kind, def, lo, hi, doc) \
    hps_env_row_##kind(#name, secure_getenv(#name), def, lo, hi, &hps_shmem_set.field);
#include "settings.def"
#undef X
    /* OpenSHMEM's own variable turns the report on too. */
    const char *info = secure_getenv("SHMEM_INFO");
    if (info && *info && *info != '0')
        hps_shmem_set.info = 1;
}

/* "64M" -> 67108864; 0 for anything that is not a size. */
static size_t parse_size(const char *s)
{
    char *end;
    if (!s || *s < '0' || *s > '9')
        return 0;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (errno || *end || v == 0 || v > (~0ull >> (shift + 1)))
        return 0;
    return (size_t)(v << shift);
}

size_t hps_shmem_heap_bytes(void)
{
    const char *env = "HPSYNC_SHMEM_HEAP_SIZE", *val = secure_getenv(env);
    if (!val) {
        env = "SHMEM_SYMMETRIC_SIZE";
        val = secure_getenv(env);
    }
    size_t n = parse_size(val);
    if (val && !n)
        hps_env_bad_value(env, val, "is not a size in bytes (with an optional K, M or G)", "256M");
    /* The library keeps its synchronisation slots at the heap's start. */
    if (n && n < HPS_SHMEM_HEAP_MIN) {
        hps_env_bad_value(env, val, "is below the 1M minimum", "256M");
        n = 0;
    }
    if (!n)
        n = (size_t)256 << 20;         /* the table's default, 256M */
    /* Whole pages, and a multiple of 64 for the translation's end check. */
    return (n + 4095) & ~(size_t)4095;
}
