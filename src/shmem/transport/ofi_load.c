/* SPDX-License-Identifier: MIT */
/*
 * ofi_load.c - finding and opening the libfabric transport module
 * (libhpsync-shmem-ofi.so), the core's side of ofi.h.
 *
 * Where: beside the library the core is in (its own path from dladdr, so a
 * build tree and an install tree moved elsewhere both work), else wherever
 * the dynamic loader finds it by name (LD_LIBRARY_PATH, the cache), else
 * the library directory the build was configured to install into (a
 * program linked with the static library has no directory of its own).
 * A failure is one line naming what was tried and the loader's reason
 * (a missing libfabric.so.1 shows there), and the job ends.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../runtime/errline.h"
#include "../runtime/runtime.h"
#include "../wait.h"
#include "ofi_inline.h"

hps_ofi_ops_t hps_ofi_ops;
hps_ofi_ctx_t hps_ofi_dflt;

static const hps_ofi_core_t core = {
    .size = sizeof(hps_ofi_core_t),
    .version = HPS_OFI_OPS_VERSION,
    .rt_rank = hps_rt_rank,
    .rt_size = hps_rt_size,
    .rt_node_of = hps_rt_node_of,
    .rt_put = hps_rt_put,
    .rt_exchange = hps_rt_exchange,
    .rt_get = hps_rt_get,
    .rt_barrier = hps_rt_barrier,
    .verrline = hps_shmem_verrline,
    .waiter_step = hps_shmem_waiter_step,
    .ctx_size = sizeof(hps_ofi_ctx_t),
    .target_size = sizeof(hps_ofi_target_t),
};

/* The directory of the object holding this code, or "" (the program
 * itself: linked with the static library). */
static void own_dir(char *dir, size_t len)
{
    Dl_info info;
    dir[0] = 0;
    if (!dladdr((void *)own_dir, &info) || !info.dli_fname || !strchr(info.dli_fname, '/'))
        return;
    snprintf(dir, len, "%s", info.dli_fname);
    char *slash = strrchr(dir, '/');
    /* The program's own path is no library directory. */
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char real[PATH_MAX];
        if (realpath(dir, real) && !strcmp(real, exe)) {
            dir[0] = 0;
            return;
        }
    }
    *slash = 0;
}

int hps_ofi_load(const char *fn, const char *why)
{
    static int loaded;
    if (loaded)
        return 0;
    char dir[PATH_MAX], path[PATH_MAX + 64];
    const char *tried[3];
    int ntried = 0;
    own_dir(dir, sizeof dir);
    void *h = NULL;
    if (dir[0]) {
        snprintf(path, sizeof path, "%s/%s", dir, HPS_OFI_MODULE_FILE);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        /* The module is there but does not load (libfabric missing, say):
         * that reason is the one to give, whatever the other places hold. */
        if (!h && access(path, F_OK) == 0) {
            hps_shmem_errline(fn, "%s needs the libfabric transport, but %s", why, dlerror());
            return -1;
        }
        tried[ntried++] = dir;
    }
    if (!h) {
        h = dlopen(HPS_OFI_MODULE_FILE, RTLD_NOW | RTLD_LOCAL);
        tried[ntried++] = "the loader's search path";
    }
    if (!h) {
        snprintf(path, sizeof path, "%s/%s", HPS_OFI_INSTALL_LIBDIR, HPS_OFI_MODULE_FILE);
        if (strcmp(HPS_OFI_INSTALL_LIBDIR, dir) != 0) {
            h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            tried[ntried++] = HPS_OFI_INSTALL_LIBDIR;
        }
    }
    if (!h) {
        hps_shmem_errline(fn, "%s needs the libfabric transport, but %s was found in none of: "
                          "%s%s%s%s%s", why, HPS_OFI_MODULE_FILE, tried[0],
                          ntried > 1 ? ", " : "", ntried > 1 ? tried[1] : "",
                          ntried > 2 ? ", " : "", ntried > 2 ? tried[2] : "");
        return -1;
    }
    hps_ofi_module_fn entry = (hps_ofi_module_fn)dlsym(h, HPS_OFI_MODULE_ENTRY);
    const hps_ofi_ops_t *ops = entry ? entry(&core) : NULL;
    if (!ops || ops->size != sizeof hps_ofi_ops || ops->version != HPS_OFI_OPS_VERSION) {
        Dl_info info;
        const char *where = entry && dladdr((void *)entry, &info) ? info.dli_fname : HPS_OFI_MODULE_FILE;
        hps_shmem_errline(fn, "%s needs the libfabric transport, but %s is not from this build "
                          "of libhpsync-shmem (version %u)", why, where, HPS_OFI_OPS_VERSION);
        dlclose(h);
        return -1;
    }
    memcpy(&hps_ofi_ops, ops, sizeof hps_ofi_ops);
    loaded = 1;
    return 0;
}
