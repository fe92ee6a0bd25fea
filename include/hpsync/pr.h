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

/* Initialise an atomic object no other thread can see yet (not atomic). */
#define hps_init(p, v)           atomic_init((p), (v))

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
#define hps_faa_acq_rel(p, v)    atomic_fetch_add_explicit((p), (v), memory_order_acq_rel)
#define hps_fas_relaxed(p, v)    atomic_fetch_sub_explicit((p), (v), memory_order_relaxed)
#define hps_fas_release(p, v)    atomic_fetch_sub_explicit((p), (v), memory_order_release)
#define hps_fence_acquire()      atomic_thread_fence(memory_order_acquire)
#define hps_fence_release()      atomic_thread_fence(memory_order_release)
#define hps_fence_seq_cst()      atomic_thread_fence(memory_order_seq_cst)
/* No instruction: only keeps the compiler from moving memory accesses
 * across it (the CPU's reordering is left to whoever needs to handle it). */
#define hps_compiler_fence()     atomic_signal_fence(memory_order_seq_cst)

/*
 * Sequentially consistent forms, for the Dekker-style hand-offs (store my
 * flag, then load yours: a waiter counting itself in before it re-checks
 * the lock, an unlocker storing the lock word before it reads the waiter
 * count).  Release/acquire does not order a store before a later load;
 * these do.  Each use says which pair of accesses it orders.
 */
#define hps_load_seq_cst(p)      atomic_load_explicit((p), memory_order_seq_cst)
#define hps_store_seq_cst(p, v)  atomic_store_explicit((p), (v), memory_order_seq_cst)
#define hps_xchg_seq_cst(p, v)   atomic_exchange_explicit((p), (v), memory_order_seq_cst)
#define hps_faa_seq_cst(p, v)    atomic_fetch_add_explicit((p), (v), memory_order_seq_cst)
#define hps_fas_seq_cst(p, v)    atomic_fetch_sub_explicit((p), (v), memory_order_seq_cst)
#define hps_fetch_or_seq_cst(p, v) atomic_fetch_or_explicit((p), (v), memory_order_seq_cst)
/* Setting or clearing bits that publish (release) what was written before. */
#define hps_fetch_or_release(p, v)  atomic_fetch_or_explicit((p), (v), memory_order_release)
#define hps_fetch_and_release(p, v) atomic_fetch_and_explicit((p), (v), memory_order_release)

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
#define hps_cas_seq_cst(p, expected, desired) \
    atomic_compare_exchange_strong_explicit((p), (expected), (desired), \
        memory_order_seq_cst, memory_order_seq_cst)
/* The weak forms may fail spuriously: only inside a retry loop. */
#define hps_cas_weak_relaxed(p, expected, desired) \
    atomic_compare_exchange_weak_explicit((p), (expected), (desired), \
        memory_order_relaxed, memory_order_relaxed)
#define hps_cas_weak_acquire(p, expected, desired) \
    atomic_compare_exchange_weak_explicit((p), (expected), (desired), \
        memory_order_acquire, memory_order_relaxed)
#define hps_cas_weak_release(p, expected, desired) \
    atomic_compare_exchange_weak_explicit((p), (expected), (desired), \
        memory_order_release, memory_order_relaxed)
#define hps_cas_weak_seq_cst(p, expected, desired) \
    atomic_compare_exchange_weak_explicit((p), (expected), (desired), \
        memory_order_seq_cst, memory_order_seq_cst)

/*
 * Atomics on plain (not _Atomic) objects: words whose type is fixed by
 * someone else (OpenSHMEM's symmetric variables, which the program
 * declares; fields of glibc-sized structures and flags read plainly on a
 * fast path).  Same names and orderings as above, with hps_plain_; U is any
 * 1-, 2-, 4- or 8-byte integer or pointer type.  The *_void forms are the
 * read-modify-writes whose old value is not wanted (one `lock add`/`and`/
 * `or`/`xor` on x86, where the fetching forms of and/or/xor need a loop).
 */
#define hps_plain_load_relaxed(p)      __atomic_load_n((p), __ATOMIC_RELAXED)
#define hps_plain_load_acquire(p)      __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define hps_plain_store_relaxed(p, v)  __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define hps_plain_store_release(p, v)  __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define hps_plain_xchg_acq_rel(p, v)   __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)
#define hps_plain_cas_acq_rel(p, expected, desired) \
    __atomic_compare_exchange_n((p), (expected), (desired), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
#define hps_plain_faa_acq_rel(p, v)    __atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#define hps_plain_fetch_and_acq_rel(p, v) __atomic_fetch_and((p), (v), __ATOMIC_ACQ_REL)
#define hps_plain_fetch_or_acq_rel(p, v)  __atomic_fetch_or((p), (v), __ATOMIC_ACQ_REL)
#define hps_plain_fetch_xor_acq_rel(p, v) __atomic_fetch_xor((p), (v), __ATOMIC_ACQ_REL)
#define hps_plain_add_acq_rel_void(p, v) ((void)__atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL))
#define hps_plain_and_acq_rel_void(p, v) ((void)__atomic_and_fetch((p), (v), __ATOMIC_ACQ_REL))
#define hps_plain_or_acq_rel_void(p, v)  ((void)__atomic_or_fetch((p), (v), __ATOMIC_ACQ_REL))
#define hps_plain_xor_acq_rel_void(p, v) ((void)__atomic_xor_fetch((p), (v), __ATOMIC_ACQ_REL))

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
    hps_compiler_fence();
#endif
}

#endif /* HPSYNC_PR_H */
