// SPDX-License-Identifier: MIT
/*
 * Library set-up and shut-down, and the queries about PEs and addresses.
 *
 * shmem_init wires a PE up in this order:
 *   1. join the job (runtime.h) and choose each peer's transport: shared
 *      memory for PEs on this node (unless HPSYNC_SHMEM_TRANSPORT=ofi),
 *      libfabric for the others;
 *   2. create the symmetric heap and find the data segment; when some peer
 *      will map them, both live in named shared-memory segments (the data
 *      segment is moved onto one at its own address);
 *   3. exchange the sizes, map the on-node peers' segments, and once every
 *      PE has done so, unlink this PE's names (nothing is left in /dev/shm
 *      from here on, whatever happens);
 *   4. bring libfabric up when some peer needs it (collective);
 *   5. open the fast path (npes != 0), set up the teams, synchronise.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "runtime/errline.h"
#include "runtime/runtime.h"
#include "../prim/cpus.h"
#include "envparse.h"
#include "settings.h"

hps_shmem_state_t hps_shmem_sh;

static hps_shmem_shm_seg_t g_heap_seg, g_data_seg;
static int g_ofi_mt;            /* the libfabric default context takes its lock */
static void *g_heap;
static size_t g_heap_size;

/* Peer segments of on-node PEs; self is in there too (its own base). */
static void map_peers(int n, const unsigned char *use_shm, size_t data_size)
{
    for (int pe = 0; pe < n; pe++) {
        if (!use_shm[pe])
            continue;
        char **heap = &hps_shmem_sh.peer[HPS_REG_HEAP][pe], **data = &hps_shmem_sh.peer[HPS_REG_DATA][pe];
        if (pe == hps_shmem_sh.me) {
            *heap = (char *)hps_shmem_sh.base[HPS_REG_HEAP];
            *data = (char *)hps_shmem_sh.base[HPS_REG_DATA];
            continue;
        }
        *heap = hps_shmem_shm_map_peer("heap", pe, g_heap_size);
        *data = data_size ? hps_shmem_shm_map_peer("data", pe, data_size) : NULL;
        if (!*heap || (data_size && !*data))
            hps_rt_abort(1);
    }
}

/* Every PE must run the same program with the same heap size: the offsets
 * that make memory symmetric depend on both. */
static void check_sizes(int n, size_t data_size)
{
    uint64_t mine[2] = { g_heap_size, data_size }, theirs[2];
    for (int pe = 0; pe < n; pe++) {
        if (hps_rt_get(pe, "hps.sizes", theirs, sizeof theirs) != 0)
            hps_rt_abort(1);
        if (theirs[0] != mine[0])
            hps_shmem_fatal("shmem_init", "PE %d has a %llu-byte symmetric heap, this PE %llu: "
                      "HPSYNC_SHMEM_HEAP_SIZE must be the same everywhere", pe,
                      (unsigned long long)theirs[0], (unsigned long long)mine[0]);
        if (theirs[1] != mine[1])
            hps_shmem_fatal("shmem_init", "PE %d's data segment is %llu bytes, this PE's %llu: "
                      "every PE must run the same program", pe,
                      (unsigned long long)theirs[1], (unsigned long long)mine[1]);
    }
}

static void print_info(int n, int nodes_ofi)
{
    printf("hpsync-shmem: OpenSHMEM %d.%d (%s), %d PEs, runtime %s, heap %zu bytes per PE, "
           "data segment %zu bytes, transport %s%s%s\n",
           SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION, SHMEM_VENDOR_STRING, n, hps_rt_name(),
           g_heap_size, hps_shmem_sh.size[HPS_REG_DATA],
           hps_shmem_sh.transport_ofi ? "ofi (forced)" : nodes_ofi ? "shm on-node, ofi off-node" : "shm",
           hps_shmem_sh.ofi ? ", provider " : "", hps_shmem_sh.ofi ? hps_ofi_provider() : "");
    fflush(stdout);
}

static void wire_up(int requested)
{
    const char *fn = "shmem_init";
    hps_shmem_settings_load();
    if (hps_rt_init() != 0) {
        hps_shmem_errline(fn, "cannot join the job");
        exit(1);
    }
    hps_shmem_sh.rt_up = 1;
    int me = hps_rt_rank(), n = hps_rt_size();
    hps_shmem_sh.me = me;
    const char *t = hps_shmem_set.transport;
    hps_shmem_sh.transport_ofi = !strcmp(t, "ofi");
    if (!hps_shmem_sh.transport_ofi && strcmp(t, "auto"))
        hps_env_bad_value("HPSYNC_SHMEM_TRANSPORT", t, "is not auto or ofi", "auto");

    unsigned char *use_shm = calloc((size_t)n, 1);
    for (int r = 0; r < HPS_NREG; r++)
        hps_shmem_sh.peer[r] = calloc((size_t)n, sizeof(char *));
    if (!use_shm || !hps_shmem_sh.peer[HPS_REG_HEAP] || !hps_shmem_sh.peer[HPS_REG_DATA])
        hps_shmem_fatal(fn, "out of memory");
    int shared = 0, off_node = 0, local = 0, mynode = hps_rt_node_of(me);
    for (int pe = 0; pe < n; pe++) {
        int on = hps_rt_node_of(pe) == mynode;
        local += on;
        off_node |= !on;
        use_shm[pe] = on && !hps_shmem_sh.transport_ofi;
        shared |= use_shm[pe] && pe != me;
    }
    int need_ofi = hps_shmem_sh.transport_ofi || off_node;
    hps_shmem_wait_configure(local, hps_shmem_set.spin_us, hps_shmem_set.poll_ms);

    g_heap_size = hps_shmem_heap_bytes();
    g_heap = hps_shmem_shm_heap_create(g_heap_size, shared, &g_heap_seg);
    uintptr_t dbase;
    size_t dsize;
    if (!g_heap || hps_shmem_shm_data_setup(shared, &dbase, &dsize, &g_data_seg) != 0) {
        hps_shmem_shm_unlink(&g_heap_seg);
        hps_rt_abort(1);
    }
    hps_shmem_sh.base[HPS_REG_HEAP] = (uintptr_t)g_heap;
    hps_shmem_sh.size[HPS_REG_HEAP] = g_heap_size;
    hps_shmem_sh.base[HPS_REG_DATA] = dbase;
    hps_shmem_sh.size[HPS_REG_DATA] = dsize;

    uint64_t sizes[2] = { g_heap_size, dsize };
    if (hps_rt_put("hps.sizes", sizes, sizeof sizes) != 0 || hps_rt_exchange() != 0)
        hps_rt_abort(1);
    check_sizes(n, dsize);
    map_peers(n, use_shm, dsize);
    free(use_shm);
    /* Every peer holds its mappings now: the names can go. */
    if (hps_rt_barrier() != 0)
        hps_rt_abort(1);
    hps_shmem_shm_unlink(&g_heap_seg);
    hps_shmem_shm_unlink(&g_data_seg);

    if (need_ofi) {
        /* Only now is libfabric loaded: an on-node job never maps it. */
        if (hps_ofi_load(fn, hps_shmem_sh.transport_ofi ? "HPSYNC_SHMEM_TRANSPORT=ofi"
                                                  : "a job with PEs on other nodes") != 0)
            hps_rt_abort(1);
        /* Threads may then share the default context at once: the
         * transport locks it, and shmem_TYPENAME_p goes through its put. */
        int mt = requested >= SHMEM_THREAD_MULTIPLE;
        hps_ofi_setup_t s = {
            .region = { { g_heap, g_heap_size }, { (void *)dbase, dsize } },
            .dflt = &hps_ofi_dflt,
            .thread_multiple = mt,
        };
        if (hps_ofi_init(&s) != 0)
            hps_rt_abort(1);
        hps_shmem_p_ofi_select(mt);
        g_ofi_mt = mt;
        hps_shmem_ctx_default.ofi = &hps_ofi_dflt;
        hps_shmem_sh.ofi = 1;
        for (int r = 0; r < HPS_NREG; r++)
            for (int pe = 0; pe < n; pe++)
                if (!hps_shmem_sh.peer[r][pe])
                    hps_shmem_sh.peer[r][pe] = (char *)&s.row[r][pe] + HPS_PEER_OFI;
    }
    hps_shmem_heap_init(g_heap_size, HPS_HEAP_RESERVED);
    hps_shmem_sh.state = HPS_ST_RUNNING;
    hps_shmem_sh.npes = (uint32_t)n;
    hps_shmem_teams_init();
    if (hps_shmem_set.info && me == 0)
        print_info(n, off_node);
    hps_shmem_barrier_all_internal(fn);
}

/* Programs written for OpenSHMEM 1.0-1.2 (start_pes) never call
 * shmem_finalize: a PE that leaves main normally finalizes on the way out,
 * so it waits for the others instead of ending the job under them.  A
 * non-zero exit status is an error ending: no collective call then, the
 * launcher takes the job down. */
static void finalize(void);

static void finalize_at_exit(int status, void *arg)
{
    (void)arg;
    if (status == 0 && hps_shmem_sh.state == HPS_ST_RUNNING)
        finalize();
}

/* shmem_init_thread, and the work of shmem_init and start_pes (each of
 * which a profiling tool sees as itself, not as this). */
static int init_thread(int requested, int *provided)
{
    if (hps_shmem_sh.state == HPS_ST_FINALIZED)
        hps_shmem_fatal("shmem_init", "called after shmem_finalize");
    if (hps_shmem_sh.state == HPS_ST_NEVER) {
        wire_up(requested);
        on_exit(finalize_at_exit, NULL);
    }
    /* On-node operations are loads, stores and atomics: any thread may
     * issue them.  Over libfabric the default context takes a lock when
     * the first shmem_init_thread asked for SHMEM_THREAD_MULTIPLE (and
     * only then: the others pay nothing for it); a later call cannot get
     * more than the first one asked for. */
    int supported = hps_shmem_sh.ofi && !g_ofi_mt ? SHMEM_THREAD_SERIALIZED : SHMEM_THREAD_MULTIPLE;
    hps_shmem_sh.thread_level = requested < supported ? requested : supported;
    if (hps_shmem_sh.thread_level < SHMEM_THREAD_SINGLE)
        hps_shmem_sh.thread_level = SHMEM_THREAD_SINGLE;
    if (provided)
        *provided = hps_shmem_sh.thread_level;
    return 0;
}

HPS_API int shmem_init_thread(int requested, int *provided)
{
    return init_thread(requested, provided);
}

HPS_API void shmem_init(void)
{
    init_thread(SHMEM_THREAD_SINGLE, NULL);
}

HPS_API void start_pes(int npes)
{
    (void)npes;
    init_thread(SHMEM_THREAD_SINGLE, NULL);
}

HPS_API void shmem_query_thread(int *provided)
{
    hps_check_running(__func__);
    *provided = hps_shmem_sh.thread_level;
}

static void finalize(void)
{
    if (hps_shmem_sh.state != HPS_ST_RUNNING)
        return;                        /* a second finalize is harmless */
    hps_shmem_barrier_all_internal("shmem_finalize");
    hps_shmem_teams_fini();
    if (hps_shmem_sh.ofi)
        hps_ofi_finalize();
    hps_shmem_sh.npes = 0;
    hps_shmem_sh.ofi = 0;
    hps_shmem_ctx_default.ofi = NULL;
    hps_shmem_sh.state = HPS_ST_FINALIZED;
    /* The peers' mappings and the heap go; the data segment stays, it
     * holds the program's globals (now private to this process again in
     * effect: its name is gone and the peers unmapped it). */
    int n = hps_rt_size();
    for (int pe = 0; pe < n; pe++)
        if (pe != hps_shmem_sh.me) {
            hps_shmem_shm_unmap(hps_peer_map(HPS_REG_HEAP, pe), g_heap_size);
            hps_shmem_shm_unmap(hps_peer_map(HPS_REG_DATA, pe), hps_shmem_sh.size[HPS_REG_DATA]);
        }
    for (int r = 0; r < HPS_NREG; r++) {
        free(hps_shmem_sh.peer[r]);
        hps_shmem_sh.peer[r] = NULL;
    }
    hps_shmem_shm_unmap(g_heap, g_heap_size);
    g_heap = NULL;
    hps_shmem_sh.rt_up = 0;
    hps_rt_finalize();
}

HPS_API void shmem_finalize(void)
{
    finalize();
}

HPS_API void shmem_global_exit(int status)
{
    fflush(stdout);
    fflush(stderr);
    if (hps_shmem_sh.rt_up)
        hps_rt_abort(status);
    exit(status);
}

/* For the 1.5 and the 1.2 names, each its own routine (in its errors, and
 * to a profiling tool). */
static int my_pe(const char *fn)
{
    hps_check_running(fn);
    return hps_shmem_sh.me;
}

static int n_pes(const char *fn)
{
    hps_check_running(fn);
    return (int)hps_shmem_sh.npes;
}

HPS_API int shmem_my_pe(void) { return my_pe(__func__); }
HPS_API int shmem_n_pes(void) { return n_pes(__func__); }
HPS_API int _my_pe(void) { return my_pe(__func__); }
HPS_API int _num_pes(void) { return n_pes(__func__); }

HPS_API int shmem_pe_accessible(int pe)
{
    hps_check_running(__func__);
    return (unsigned)pe < hps_shmem_sh.npes;
}

HPS_API int shmem_addr_accessible(const void *addr, int pe)
{
    size_t off;
    hps_check_running(__func__);
    return (unsigned)pe < hps_shmem_sh.npes && hps_region_of(addr, &off) >= 0;
}

void *hps_shmem_local_ptr(const void *dest, int pe)
{
    size_t off;
    int r = hps_region_of(dest, &off);
    if ((unsigned)pe >= hps_shmem_sh.npes || r < 0)
        return NULL;
    if (pe == hps_shmem_sh.me)
        return (void *)dest;            /* even when the transport is ofi */
    char *b = hps_peer_map(r, pe);
    return b ? b + off : NULL;
}

HPS_API void *shmem_ptr(const void *dest, int pe)
{
    hps_check_running(__func__);
    return hps_shmem_local_ptr(dest, pe);
}

HPS_API void shmem_info_get_version(int *major, int *minor)
{
    *major = SHMEM_MAJOR_VERSION;
    *minor = SHMEM_MINOR_VERSION;
}

HPS_API void shmem_info_get_name(char *name)
{
    strncpy(name, SHMEM_VENDOR_STRING, SHMEM_MAX_NAME_LEN - 1);
    name[SHMEM_MAX_NAME_LEN - 1] = 0;
}

/* Cache management: coherent memory everywhere, nothing to do. */
HPS_API void shmem_clear_cache_inv(void) {}
HPS_API void shmem_set_cache_inv(void) {}
HPS_API void shmem_clear_cache_line_inv(void *dest) { (void)dest; }
HPS_API void shmem_set_cache_line_inv(void *dest) { (void)dest; }
HPS_API void shmem_udcflush(void) {}
HPS_API void shmem_udcflush_line(void *dest) { (void)dest; }

/* Last: the profiling names (pshmem_X) of the routines defined above. */
#include "pshmem_alias.h"
