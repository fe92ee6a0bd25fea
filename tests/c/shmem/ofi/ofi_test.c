/* SPDX-License-Identifier: MIT */
/*
 * ofi_test.c - the libfabric transport (src/shmem/transport/ofi*.c) on its
 * own, with fake_rt standing in for the runtime.
 *
 *   shmem_ofi_test <provider> <npes> [--mr-local] [--quick] [--lat|--icount]
 *       every case at npes PEs over HPSYNC_SHMEM_PROVIDER=<provider>
 *       (--lat: only print PE 0's latencies to PE 1, --icount: only the
 *       loop callgrind counts, see ot_case_icount; figures for the docs);
 *       exits 77 (skipped) when fi_getinfo does not offer the provider
 *   (a comma in <provider> stands for a semicolon: tcp,ofi_rxm)
 *   shmem_ofi_test <provider> badprov
 *       init with that (bogus) provider must fail with exactly one line
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ofi_test.h"

ot_ctx_t ot;
static hps_ofi_ctx_t dflt_ctx;
static char data_segment[OT_DATA_SIZE] __attribute__((aligned(4096)));
static int mr_local;
static void (*only_case)(void);   /* --lat, --icount */

void ot_fill(void *buf, size_t len, uint64_t seed)
{
    unsigned char *b = buf;
    for (size_t i = 0; i < len; i++)
        b[i] = ot_pattern(seed, i);
}

void ot_expect(const void *buf, size_t len, uint64_t seed, const char *what)
{
    const unsigned char *b = buf;
    for (size_t i = 0; i < len; i++)
        if (b[i] != ot_pattern(seed, i))
            OT_FAIL("PE %d: %s: byte %zu of %zu is 0x%02x, expected 0x%02x", ot.me, what, i, len,
                    b[i], ot_pattern(seed, i));
}

void ot_wait_word(const volatile uint64_t *p, uint64_t want, const char *what)
{
    uint64_t t0 = hps_test_now_ns();
    /* Poll about a millisecond before yielding: long enough that a
     * round trip measured against this PE (--lat) is not a scheduler's. */
    for (unsigned i = 0; *p != want; i++) {
        hps_ofi_progress();
        if (i > 10000)
            sched_yield();
        if (hps_test_now_ns() - t0 > 10000000000ull)
            OT_FAIL("PE %d: %s: still %llu after 10 s, waiting for %llu", ot.me, what,
                    (unsigned long long)*p, (unsigned long long)want);
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

void ot_barrier(void)
{
    if (hps_rt_barrier())
        OT_FAIL("PE %d: barrier failed", ot.me);
}

static int pe_main(void *arg)
{
    ot.me = hps_rt_rank();
    ot.n = hps_rt_size();
    char name[64];
    snprintf(name, sizeof name, "shmem_ofi.PE%d", ot.me);
    hps_test_set_name(name);
    ot.misc = OT_HEAP_RMA(ot.n);
    ot.heap_size = ot.misc + OT_MISC_SIZE;
    ot.heap = mmap(NULL, ot.heap_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ot.heap == MAP_FAILED)
        OT_FAIL("PE %d: mmap of the heap failed", ot.me);
    ot.data = data_segment;
    hps_ofi_test_force_mr_local(mr_local);
    hps_ofi_setup_t setup = { .region = { { ot.heap, ot.heap_size }, { ot.data, OT_DATA_SIZE } },
                              .dflt = &dflt_ctx };
    ot.c = &dflt_ctx;
    uint64_t t0 = hps_test_now_ns();
    OT_OK(hps_ofi_init(&setup));
    if (ot.me == 0)
        fprintf(stderr, "shmem_ofi: %d PEs on %s (init %.1f ms, inject <= %zu B, progress "
                "thread %s, fence %s%s)\n", ot.n, hps_ofi_provider(), (hps_test_now_ns() - t0) / 1e6,
                ot.c->inject_max, hps_ofi.progress_running ? "on" : "off",
                hps_ofi.fence_is_free ? "free" : "= quiet", mr_local ? ", FI_MR_LOCAL forced" : "");
    static const struct { const char *name; void (*fn)(void); } cases[] = {
        { "rma", ot_case_rma }, { "nbi", ot_case_nbi }, { "data", ot_case_data },
        { "atomics", ot_case_atomics }, { "lock", ot_case_lock }, { "fence", ot_case_fence },
        { "compute", ot_case_compute }, { "window", ot_case_window }, { "blind", ot_case_blind },
        { "ctx_private", ot_case_ctx_private },
        { "ctx_indep", ot_case_ctx_independent },
    };
    if (only_case)
        only_case();
    for (size_t c = 0; !only_case && c < sizeof cases / sizeof cases[0]; c++) {
        snprintf(name, sizeof name, "shmem_ofi.%s.PE%d", cases[c].name, ot.me);
        hps_test_set_name(name);
        uint64_t t = hps_test_now_ns();
        cases[c].fn();
        OT_OK(ot_quiet());
        ot_barrier();
        if (ot.me == 0)
            fprintf(stderr, "shmem_ofi: %-8s ok (%.0f ms)\n", cases[c].name, (hps_test_now_ns() - t) / 1e6);
    }
    hps_ofi_finalize();
    return 0;
}

/* Init with a provider that does not exist fails, with one line. */
static int badprov_main(void *arg)
{
    char path[] = "/tmp/hps-ofi-badprov-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        OT_FAIL("mkstemp failed");
    unlink(path);
    int saved = dup(2);
    dup2(fd, 2);
    static char heap[4096], data[4096];
    hps_ofi_setup_t setup = { .region = { { heap, sizeof heap }, { data, sizeof data } },
                              .dflt = &dflt_ctx };
    int rc = hps_ofi_init(&setup);
    dup2(saved, 2);
    char out[2048] = { 0 };
    pread(fd, out, sizeof out - 1, 0);
    const char *prov = getenv("HPSYNC_SHMEM_PROVIDER");
    if (rc != -1)
        OT_FAIL("hps_ofi_init with provider \"%s\" returned %d, expected -1", prov, rc);
    size_t len = strlen(out);
    char *nl = strchr(out, '\n');
    if (!nl || nl != out + len - 1 || strncmp(out, "hpsync-shmem: hps_ofi_init: ", 28) != 0 ||
        !strstr(out, prov))
        OT_FAIL("expected one line \"hpsync-shmem: hps_ofi_init: ...%s...\", got: %s", prov, out);
    fprintf(stderr, "shmem_ofi: badprov ok: %s", out);
    return 0;
}

/* Does libfabric offer this provider here at all? */
static int provider_present(const char *prov)
{
    struct fi_info *hints = fi_allocinfo(), *list = NULL;
    hints->caps = FI_RMA | FI_ATOMIC;
    hints->ep_attr->type = FI_EP_RDM;
    hints->fabric_attr->prov_name = strdup(prov);
    int rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &list);
    fi_freeinfo(hints);
    if (list)
        fi_freeinfo(list);
    return rc == 0;
}

int main(int argc, char **argv)
{
    hps_test_set_name("shmem_ofi");
    if (argc < 3)
        OT_FAIL("usage: %s <provider> <npes>|badprov [--mr-local] [--quick] [--lat|--icount]", argv[0]);
    /* "tcp,ofi_rxm" for "tcp;ofi_rxm": CTest cannot pass a semicolon. */
    char prov[128];
    snprintf(prov, sizeof prov, "%s", argv[1]);
    for (char *c = prov; *c; c++)
        if (*c == ',')
            *c = ';';
    setenv("HPSYNC_SHMEM_PROVIDER", prov, 1);
    if (strcmp(argv[2], "badprov") == 0)
        return fake_rt_run(1, badprov_main, NULL, 30);
    if (!provider_present(prov)) {
        fprintf(stderr, "shmem_ofi: provider %s is not available here: skipped\n", prov);
        return 77;
    }
    int npes = (int)hps_test_ulong(argv[2], "PE count");
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--mr-local") == 0)
            mr_local = 1;
        else if (strcmp(argv[i], "--quick") == 0)
            ot.quick = 1;
        else if (strcmp(argv[i], "--lat") == 0)
            only_case = ot_case_latency;
        else if (strcmp(argv[i], "--icount") == 0)
            only_case = ot_case_icount;
        else
            OT_FAIL("unknown option %s", argv[i]);
    }
    return fake_rt_run(npes, pe_main, NULL, 100);
}
