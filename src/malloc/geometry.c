// SPDX-License-Identifier: MIT
/*
 * The L1 data cache's line size and number of sets, read once at start-up
 * without allocating: sysfs (cpu0's level-1 Data or Unified cache), else
 * sysconf (glibc answers from CPUID), else 64 B lines and 64 sets.
 * HPSYNC_MALLOC_LINE / HPSYNC_MALLOC_SETS override it (settings.c).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "geometry.h"

static int read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = 0;
    return 0;
}

static long read_num(const char *dir, const char *file)
{
    char path[128], buf[64];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (read_small(path, buf, sizeof buf) != 0)
        return -1;
    long v = 0;
    for (const char *s = buf; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (*s - '0');
        if (v > 1L << 30)
            return -1;
    }
    return v;
}

int hps_malloc_geometry_valid(long line, long sets)
{
    return line >= 16 && line <= 256 && !(line & (line - 1)) &&
           sets >= 1 && sets <= 65536 && !(sets & (sets - 1));
}

const char *hps_malloc_geometry_detect(uint32_t *line, uint32_t *sets)
{
    for (int i = 0; i < 8; i++) {
        char dir[96], buf[32];
        snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu0/cache/index%d", i);
        if (read_num(dir, "level") != 1)
            continue;
        char path[128];
        snprintf(path, sizeof path, "%s/type", dir);
        if (read_small(path, buf, sizeof buf) != 0 || (strcmp(buf, "Data") && strcmp(buf, "Unified")))
            continue;
        long l = read_num(dir, "coherency_line_size"), s = read_num(dir, "number_of_sets");
        if (hps_malloc_geometry_valid(l, s)) {
            *line = (uint32_t)l;
            *sets = (uint32_t)s;
            return "sysfs";
        }
    }
    long l = sysconf(_SC_LEVEL1_DCACHE_LINESIZE), size = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    long ways = sysconf(_SC_LEVEL1_DCACHE_ASSOC);
    if (l > 0 && size > 0 && ways > 0 && hps_malloc_geometry_valid(l, size / ways / l)) {
        *line = (uint32_t)l;
        *sets = (uint32_t)(size / ways / l);
        return "sysconf";
    }
    *line = 64;
    *sets = 64;
    return "default";
}
