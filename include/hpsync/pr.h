/* SPDX-License-Identifier: MIT */
/*
 * hpsync/pr.h - the only place where hpsync spells out atomic operations.
 *
 * Everything is C11 <stdatomic.h> with an explicit memory order, so a reader
 * can audit every ordering decision by grepping for this header's names.
 * Callers that use anything stronger than relaxed say why in a comment.
 */
#ifndef HPSYNC_PR_H
#define HPSYNC_PR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define hps_likely(x)   __builtin_expect(!!(x), 1)
#define hps_unlikely(x) __builtin_expect(!!(x), 0)
#define HPS_NOINLINE    __attribute__((noinline))
#define HPS_INLINE      static inline __attribute__((always_inline))
#define HPS_EXPORT      __attribute__((visibility("default")))
#define HPS_CACHELINE   64

typedef _Atomic uint32_t hps_au32;
typedef _Atomic uint64_t hps_au64;
typedef _Atomic(void *)  hps_aptr;

#define hps_load_relaxed(p)      atomic_load_explicit((p), memory_order_relaxed)
#define hps_load_acquire(p)      atomic_load_explicit((p), memory_order_acquire)
#define hps_store_relaxed(p, v)  atomic_store_explicit((p), (v), memory_order_relaxed)
#define hps_store_release(p, v)  atomic_store_explicit((p), (v), memory_order_release)
#define hps_xchg_acquire(p, v)   atomic_exchange_explicit((p), (v), memory_order_acquire)
#define hps_xchg_release(p, v)   atomic_exchange_explicit((p), (v), memory_order_release)
#define hps_xchg_acq_rel(p, v)   atomic_exchange_explicit((p), (v), memory_order_acq_rel)
#define hps_faa_relaxed(p, v)    atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#define hps_faa_acquire(p, v)    atomic_fetch_add_explicit((p), (v), memory_order_acquire)
#define hps_faa_release(p, v)    atomic_fetch_add_explicit((p), (v), memory_order_release)
#define hps_fas_release(p, v)    atomic_fetch_sub_explicit((p), (v), memory_order_release)
#define hps_fence_seq_cst()      atomic_thread_fence(memory_order_seq_cst)

/* Compare-and-swap; on failure *expected receives the current value. */
#define hps_cas_acquire(p, expected, desired) \
    atomic_compare_exchange_strong_explicit((p), (expected), (desired), \
        memory_order_acquire, memory_order_relaxed)
#define hps_cas_release(p, expected, desired) \
    atomic_compare_exchange_strong_explicit((p), (expected), (desired), \
        memory_order_release, memory_order_relaxed)
#define hps_cas_acq_rel(p, expected, desired) \
    atomic_compare_exchange_strong_explicit((p), (expected), (desired), \
        memory_order_acq_rel, memory_order_acquire)

/* Add v to a counter that only the calling thread writes (others may read
 * it with hps_load_relaxed): no other increment can interleave, so no
 * locked read-modify-write is needed.  On x86-64 one unlocked `add` to
 * memory (an aligned 8-byte store is single-copy atomic, so a reader sees
 * the old or the new value; a locked add costs ~20 cycles more); a relaxed
 * load and store elsewhere. */
HPS_INLINE void hps_add_owned(hps_au64 *p, uint64_t v)
{
#if defined(__x86_64__)
    __asm__("addq %1, %0" : "+m"(*(uint64_t *)p) : "er"(v));
#else
    hps_store_relaxed(p, hps_load_relaxed(p) + v);
#endif
}

/* A spin-wait hint: PAUSE on x86, YIELD on Arm, nothing elsewhere. */
HPS_INLINE void hps_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

#endif /* HPSYNC_PR_H */
