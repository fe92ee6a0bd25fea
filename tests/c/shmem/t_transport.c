// SPDX-License-Identifier: MIT
/*
 * transport: libfabric is mapped into a PE only when some peer is reached
 * through it.  Linking libfabric costs ~0.2 s before main (docs/shmem.md),
 * so the library loads its libfabric transport module at shmem_init, and
 * only when needed: an on-node job must never map libfabric.so, an ofi one
 * must (and the transport module with it).
 */
#include <stdio.h>
#include <string.h>
#include "shtest.h"

/* Does any mapping of this process name a file containing what? */
static int mapped(const char *what)
{
    FILE *f = fopen("/proc/self/maps", "r");
    T_CHECK(f != NULL, "cannot read /proc/self/maps");
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, what) != NULL;
    fclose(f);
    return found;
}

void t_transport(void)
{
    int ofi = 0;
    for (int pe = 0; pe < T_N; pe++)
        ofi |= !strcmp(shmemx_transport(pe), "ofi");
    T_CHECK(ofi == (shmemx_provider() != NULL), "a peer over ofi but no provider, or the reverse");
    T_CHECK(mapped("/libfabric.so") == ofi, "libfabric.so is %smapped with %s peers",
            ofi ? "not " : "", ofi ? "ofi" : "only on-node");
    T_CHECK(mapped("/libhpsync-shmem-ofi.so") == ofi, "the transport module is %smapped",
            ofi ? "not " : "");
    /* Operations after the check still work (the module is whole). */
    static long word;
    shmem_long_atomic_add(&word, 1, T_RIGHT);
    shmem_barrier_all();
    T_CHECK(word == 1, "an add from the left: %ld", word);
}
