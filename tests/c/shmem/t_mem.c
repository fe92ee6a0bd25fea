// SPDX-License-Identifier: MIT
/*
 * Set-up and memory: init_thread and query_thread, info, pe/addr
 * accessibility, shmem_ptr, the symmetric heap (malloc, calloc, align,
 * realloc keeping contents, free giving the space back, the same offsets
 * on every PE) and the data segment (initialised, zero-initialised and
 * function-static variables are all remotely accessible and keep their
 * values across shmem_init).
 */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "shtest.h"

/* Once shmem_init has returned, the library's segments of this job (heap,
 * data) must have no names left in /dev/shm: the peers hold mappings, and a
 * crash from here on cannot leave anything behind.  The launcher's own
 * rendezvous file ("-rt") is its business. */
static void no_segment_names(void)
{
    const char *job = getenv("HPSYNC_SHMEM_JOB");
    DIR *d = opendir("/dev/shm");
    if (!job || !d) {
        if (d)
            closedir(d);
        return;
    }
    char prefix[128];
    snprintf(prefix, sizeof prefix, "hpsync-shmem-%s-", job);
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix)))
            T_CHECK(!strcmp(e->d_name + strlen(prefix), "rt"), "/dev/shm/%s still has a name",
                    e->d_name);
    closedir(d);
}

int g_init[3] = { 11, 22, 33 };
static long g_zero[100];
static const char *g_ptr = "pointers in the data segment survive";

/* SHMEM_THREAD_MULTIPLE: threads of every PE add to PE 0 at once. */
static long g_mt_count;
static void *mt_adder(void *arg)
{
    int right = *(int *)arg;
    static long sink[4];
    for (int i = 0; i < 2000; i++) {
        shmem_long_atomic_inc(&g_mt_count, 0);
        shmem_long_p(&sink[i % 4], i, right);
    }
    shmem_quiet();
    return NULL;
}

static void threads(int provided)
{
    if (provided != SHMEM_THREAD_MULTIPLE)
        return;
    pthread_t t[3];
    int right = T_RIGHT;
    for (int i = 0; i < 3; i++)
        T_CHECK(pthread_create(&t[i], NULL, mt_adder, &right) == 0, "pthread_create");
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    shmem_barrier_all();
    T_CHECK(shmem_long_atomic_fetch(&g_mt_count, 0) == 3 * 2000L * T_N, "threads' adds: %ld",
            shmem_long_atomic_fetch(&g_mt_count, 0));
}

static int *counter(void)
{
    static int c = 5;
    return &c;
}

void t_mem(void)
{
    int provided = -1;
    T_CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0, "init_thread");
    /* MULTIPLE over both transports. */
    const char *tr = getenv("HPSYNC_SHMEM_TRANSPORT");
    int ofi = tr && !strcmp(tr, "ofi");
    T_CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided %d", provided);
    int q = -1;
    shmem_query_thread(&q);
    T_CHECK(q == provided, "query_thread");
    /* A second init is harmless. */
    shmem_init();
    no_segment_names();
    int me = T_ME, n = T_N, right = T_RIGHT, left = T_LEFT;
    int major, minor;
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_version(&major, &minor);
    shmem_info_get_name(name);
    T_CHECK(major == 1 && minor == 5 && !strcmp(name, SHMEM_VENDOR_STRING), "info");

    T_CHECK(g_init[1] == 22 && !strcmp(g_ptr, "pointers in the data segment survive") &&
            *counter() == 5, "data segment contents across init");
    shmem_barrier_all();
    T_CHECK(shmem_int_g(&g_init[2], right) == 33, "initialised global on PE %d", right);
    shmem_int_p(counter(), 100 + me, right);
    shmem_long_p(&g_zero[99], me + 1, right);
    shmem_barrier_all();
    T_CHECK(*counter() == 100 + left && g_zero[99] == left + 1, "static/bss written remotely");

    int local = 0;
    T_CHECK(shmem_pe_accessible(right) && !shmem_pe_accessible(n) && !shmem_pe_accessible(-1),
            "pe_accessible");
    T_CHECK(shmem_addr_accessible(g_init, right) && !shmem_addr_accessible(&local, right) &&
            !shmem_addr_accessible(g_init, n), "addr_accessible");
    T_CHECK(shmem_ptr(g_init, me) == g_init && shmem_ptr(&local, right) == NULL, "shmem_ptr");
    int *pr = shmem_ptr(&g_init[1], right);
    if (pr)
        T_CHECK(*pr == 22, "through shmem_ptr");

    /* The heap size the settings asked for (the library keeps a little). */
    const char *want = getenv("SHMEM_TEST_HEAP_BYTES");
    if (want)
        T_CHECK(shmemx_heap_size() <= strtoull(want, NULL, 10) &&
                shmemx_heap_size() + 65536 > strtoull(want, NULL, 10),
                "heap of %zu bytes, asked for %s", shmemx_heap_size(), want);

    /* The heap: symmetric offsets, alignment, zeroing, realloc, reuse. */
    size_t before = shmemx_heap_free();
    char *a = shmem_malloc(100), *b = shmem_align(4096, 10), *c = shmem_calloc(1000, 8);
    T_CHECK(a && b && c && ((uintptr_t)b & 4095) == 0, "malloc/align");
    for (int i = 0; i < 8000; i++)
        T_CHECK(c[i] == 0, "calloc not zero at %d", i);
    long offs[3] = { a - a, b - a, c - a }, theirs[3];
    static long sym_offs[3];
    memcpy(sym_offs, offs, sizeof offs);
    shmem_barrier_all();
    shmem_long_get(theirs, sym_offs, 3, right);
    T_CHECK(!memcmp(offs, theirs, sizeof offs), "heap offsets differ between PEs");
    memset(a, 'x', 100);
    a = shmem_realloc(a, 50000);
    T_CHECK(a && a[0] == 'x' && a[99] == 'x', "realloc lost the contents");
    shmem_putmem(a + 40000, "far", 4, right);
    shmem_barrier_all();
    T_CHECK(!strcmp(a + 40000, "far"), "put into the realloc'd block");
    T_CHECK(shmem_malloc(0) == NULL, "malloc(0)");
    shmem_free(NULL);
    shmem_free(c);
    shmem_free(b);
    shmem_free(a);
    T_CHECK(shmemx_heap_free() == before, "free gave back %zu of %zu bytes",
            shmemx_heap_free(), before);
    /* Fill most of the heap, free it, and do it again: nothing leaks. */
    size_t big = before / 4;
    for (int k = 0; k < 3; k++) {
        char *p[3];
        for (int i = 0; i < 3; i++)
            p[i] = shmem_malloc(big);
        for (int i = 2; i >= 0; i--)
            shmem_free(p[i]);
    }
    T_CHECK(shmemx_heap_free() == before, "heap after fill/free cycles");
    threads(provided);
    T_CHECK(!strcmp(shmemx_transport(me), ofi ? "ofi" : "shm"), "transport to self: %s",
            shmemx_transport(me));
}
