// SPDX-License-Identifier: MIT
/* The allocator tests' shared helpers (see malloc_util.h). */
#define _GNU_SOURCE
#include "malloc_util.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- which allocator is running -------------------------------------------- */

const char *hpm_provider(const char *symbol)
{
    /* RTLD_DEFAULT searches in the order the program's own references bind,
     * so this is the definition the program's calls actually reach. */
    void *f = dlsym(RTLD_DEFAULT, symbol);
    Dl_info info;
    if (!f || !dladdr(f, &info) || !info.dli_fname)
        return "?";
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}

int hpm_replaced(void)
{
    return strcmp(hpm_provider("malloc"), "libc.so.6") != 0;
}

void hpm_init(const char *name)
{
    hps_test_set_name(name);
    /* Line by line: a failure exits at once (_exit), and the lines of the
     * checks that passed before it must not be lost in a buffer. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *have = hpm_provider("malloc");
    const char *want = getenv("HPS_MALLOC_EXPECT");
    if (want && *want && strcmp(have, want) != 0)
        hps_test_fail("malloc comes from %s, expected %s (LD_PRELOAD=%s)", have, want,
                      getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "");
    printf("%s: malloc from %s\n", name, have);
    fflush(stdout);
}

void *hpm_glibc(const char *symbol)
{
    /* A handle's lookup scope is libc.so.6 and its dependencies only, so
     * this finds glibc's definition even when ours comes first globally. */
    static void *libc;
    if (!libc)
        libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    void *f = libc ? dlsym(libc, symbol) : NULL;
    if (!f)
        hps_test_fail("cannot find glibc's %s: %s", symbol, dlerror());
    return f;
}

/* ---- sizes ------------------------------------------------------------------ */

size_t hpm_size(uint64_t *rng, size_t max)
{
    uint64_t r = hps_xorshift64(rng);
    if ((r & 63) == 0)
        return 0;
    /* Choose the power of two first (88 % up to 2 KiB, 10 % up to 128 KiB,
     * 2 % beyond), then a size uniformly inside it: log-distributed. */
    unsigned pick = (unsigned)((r >> 8) % 100), lo, hi;
    if (pick < 88)
        lo = 0, hi = 11;
    else if (pick < 98)
        lo = 11, hi = 17;
    else
        lo = 17, hi = 26;
    unsigned bits = lo + (unsigned)((r >> 16) % (hi - lo + 1));
    size_t base = (size_t)1 << bits;
    size_t size = base + (size_t)((r >> 32) % base);
    return size < max ? size : max;
}

/* ---- fill patterns ------------------------------------------------------------ */

enum {
    HEAD = 4096,               /* filled densely */
    STRIPE = 64,               /* then one stripe of this many bytes ... */
    NEAR_STRIDE = 4096,        /* ... per page up to NEAR_END, */
    NEAR_END = 1 << 20,
    FAR_STRIDE = 65536,        /* then per 64 KiB */
};

/*
 * The checked bytes of a block of `size` bytes, clipped to `limit`.
 * Stripes sit at offsets that do not depend on the size, so a block's
 * checked bytes below n are also checked bytes of any longer block: that is
 * what lets realloc's preserved prefix be verified.  The tail is the block's
 * own last STRIPE bytes.  `fn` returns nonzero to stop (a mismatch).
 */
typedef long (*seg_fn)(unsigned char *p, size_t off, size_t len, uint64_t tag);

static long walk(void *p, size_t size, size_t limit, uint64_t tag, seg_fn fn)
{
    unsigned char *b = p;
    long bad;
    size_t end = size < limit ? size : limit;
    if ((bad = fn(b, 0, end < HEAD ? end : HEAD, tag)) >= 0)
        return bad;
    for (size_t off = HEAD; off < end; off += off < NEAR_END ? NEAR_STRIDE : FAR_STRIDE)
        if ((bad = fn(b, off, end - off < STRIPE ? end - off : STRIPE, tag)) >= 0)
            return bad;
    if (size > HEAD) {
        size_t t = size - STRIPE;
        if (t < end && (bad = fn(b, t, end - t < STRIPE ? end - t : STRIPE, tag)) >= 0)
            return bad;
    }
    return -1;
}

static inline unsigned char pattern(uint64_t tag, size_t off)
{
    uint64_t w = (tag + (off >> 3)) * 0x9E3779B97F4A7C15ull;
    return (unsigned char)(w >> (8 * (off & 7)));
}

static long seg_fill(unsigned char *p, size_t off, size_t len, uint64_t tag)
{
    for (size_t i = off; i < off + len; i++)
        p[i] = pattern(tag, i);
    return -1;
}

static long seg_check(unsigned char *p, size_t off, size_t len, uint64_t tag)
{
    for (size_t i = off; i < off + len; i++)
        if (p[i] != pattern(tag, i))
            return (long)i;
    return -1;
}

static long seg_zero(unsigned char *p, size_t off, size_t len, uint64_t tag)
{
    (void)tag;
    for (size_t i = off; i < off + len; i++)
        if (p[i] != 0)
            return (long)i;
    return -1;
}

void hpm_fill(void *p, size_t size, uint64_t tag)
{
    walk(p, size, size, tag, seg_fill);
}

void hpm_verify(const void *p, size_t size, uint64_t tag, const char *what)
{
    long bad = walk((void *)p, size, size, tag, seg_check);
    if (bad >= 0)
        hps_test_fail("%s: block %p of %zu bytes corrupted at offset %ld (0x%02x, expected 0x%02x)",
                      what, p, size, bad, ((const unsigned char *)p)[bad], pattern(tag, (size_t)bad));
}

void hpm_verify_prefix(const void *p, size_t filled, size_t n, uint64_t tag, const char *what)
{
    long bad = walk((void *)p, filled, n, tag, seg_check);
    if (bad >= 0)
        hps_test_fail("%s: first %zu bytes not preserved: offset %ld of %p is 0x%02x, expected 0x%02x",
                      what, n, bad, p, ((const unsigned char *)p)[bad], pattern(tag, (size_t)bad));
}

void hpm_verify_zero(const void *p, size_t size, const char *what)
{
    long bad = walk((void *)p, size, size, 0, seg_zero);
    if (bad >= 0)
        hps_test_fail("%s: block %p of %zu bytes not zeroed at offset %ld (0x%02x)", what, p, size,
                      bad, ((const unsigned char *)p)[bad]);
}

void hpm_check_aligned(const void *p, size_t align, const char *what)
{
    if ((uintptr_t)p & (align - 1))
        hps_test_fail("%s: %p is not aligned to %zu", what, p, align);
}

/* ---- children ------------------------------------------------------------------ */

int hpm_wait_child(pid_t pid, unsigned timeout_s, const char *what)
{
    uint64_t deadline = hps_test_now_ns() + (uint64_t)timeout_s * 1000000000u;
    for (;;) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0 && errno != EINTR)
            hps_test_fail("%s: waitpid: %s", what, strerror(errno));
        if (hps_test_now_ns() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            hps_test_fail("%s: child %d still running after %u s (hung in the allocator?)",
                          what, (int)pid, timeout_s);
        }
        struct timespec ts = { 0, 5 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

void hpm_rerun_with(char **argv, const char *name, const char *value)
{
    const char *have = getenv(name);
    if (have && !strcmp(have, value))
        return;
    setenv(name, value, 1);
    fflush(stdout);
    execv("/proc/self/exe", argv);
    hps_test_fail("cannot run myself again: %s", strerror(errno));
}
