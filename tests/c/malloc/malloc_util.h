/* SPDX-License-Identifier: MIT */
/*
 * malloc_util.h - what the allocator tests share.
 *
 * The tests are plain programs over the standard malloc API.  CTest runs
 * each one bare (glibc), under LD_PRELOAD of every hpsync allocator and
 * linked with -lhpsync-malloc; HPS_MALLOC_EXPECT names the shared object
 * that must be supplying malloc, so a preload that silently did not take
 * fails instead of testing glibc twice.
 *
 * Blocks carry a fill pattern derived from a per-block tag and the offset:
 * a block that overlaps another live block, or that an allocator scribbled
 * on (free-list links, headers), fails the check when it is freed.  Large
 * blocks are filled sparsely (a dense head, one stripe per 64 KiB and the
 * tail) so that 64 MiB requests stay cheap and light on resident memory.
 */
#ifndef HPS_MALLOC_UTIL_H
#define HPS_MALLOC_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include "hps_rand.h"
#include <sys/types.h>
#include "harness.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The basename of the object that provides `symbol` to this program (the
 * first definition in global lookup order), or "?" if none. */
const char *hpm_provider(const char *symbol);

/*
 * Set the test name, then check that malloc comes from $HPS_MALLOC_EXPECT
 * (a basename such as libc.so.6 or libhpsync-malloc-rand.so) when it is set.
 * Prints "<name>: malloc from <object>" on stdout.
 */
void hpm_init(const char *name);

/* Nonzero when malloc is not glibc's (a preloaded or linked allocator). */
int hpm_replaced(void);

/* glibc's own definition of `symbol`, found in libc.so.6 itself whatever
 * is interposed; the reference the API semantics are compared with. */
void *hpm_glibc(const char *symbol);

/* Make p escape: the compiler must assume it is used, so an allocation
 * (a C++ new-expression in particular) cannot be elided. */
static inline void hpm_escape(const void *p)
{
    __asm__ __volatile__("" : : "r"(p) : "memory");
}


/*
 * A request size up to `max`: mostly small and log-distributed (every
 * size class gets traffic), now and then 0, rarely large.
 */
size_t hpm_size(uint64_t *rng, size_t max);

/* Write the pattern of `tag` over the checked bytes of a block. */
void hpm_fill(void *p, size_t size, uint64_t tag);
/* Fail with "<what>: ..." unless the first `size` checked bytes carry
 * `tag`'s pattern. */
void hpm_verify(const void *p, size_t size, uint64_t tag, const char *what);
/* Fail unless the bytes a fill of `filled` bytes wrote below `n` still
 * carry the pattern (realloc's preserved prefix, n = min(old, new)). */
void hpm_verify_prefix(const void *p, size_t filled, size_t n, uint64_t tag, const char *what);
/* Fail unless the checked bytes of the block are all zero. */
void hpm_verify_zero(const void *p, size_t size, const char *what);

/* Run this program again (argv) with name=value in the environment, unless
 * that is already so: the allocator reads its settings at start-up. */
void hpm_rerun_with(char **argv, const char *name, const char *value);

/* Fail unless p is aligned to `align` (a power of two). */
void hpm_check_aligned(const void *p, size_t align, const char *what);

/*
 * Wait for a child for at most `timeout_s` seconds; kill it with SIGKILL
 * after that and fail, naming `what`.  Returns the wait status.
 */
int hpm_wait_child(pid_t pid, unsigned timeout_s, const char *what);

#ifdef __cplusplus
}
#endif
#endif
