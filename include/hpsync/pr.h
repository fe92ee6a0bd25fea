/* SPDX-License-Identifier: MIT */
/*
 * hpsync/pr.h - the only place where hpsync spells out atomic operations.
 *
 * Everything is C11 <stdatomic.h> (std::atomic in C++) with an explicit
 * memory order, so a reader can audit every ordering decision by grepping
 * for this header's names.
 * Callers that use anything stronger than relaxed say why in a comment.
 */
#ifndef HPSYNC_PR_H
#define HPSYNC_PR_H

#include <stdbool.h>
#include <stdint.h>

/*
 * C++ (C++11 and later): the atomic types are std::atomic<T> and the
 * operations the std::atomic_*_explicit functions, so the public headers
 * compile as C++.  GCC and Clang give std::atomic<T> of an integer or a
 * pointer the size, alignment and representation of C's _Atomic T (both
 * are the plain T aligned to its size, and lock-free), so an object that
 * C++ code declares can be handed to the C library and the other way
 * round; the static_asserts below hold the compiler to that.  <atomic> is C++ whatever linkage block
 * the includer is in.
 */
#ifdef __cplusplus
extern "C++" {
#include <atomic>
}
#define HPS_ATOMIC(T)   std::atomic<T>
/* One atomic's value in a *_INITIALIZER: C++11 needs the braces (a
 * std::atomic cannot be copy-initialized from a plain value before C++17),
 * C warns about braces around a scalar. */
#define HPS_ATOMIC_INIT(v) { v }
#define HPS_EXTERN_C_BEGIN extern "C" {
#define HPS_EXTERN_C_END   }
#define HPS_ATOMIC_FN(f) std::f
#define HPS_MO(o)       std::memory_order_##o
static_assert(sizeof(std::atomic<uint16_t>) == sizeof(uint16_t) &&
              alignof(std::atomic<uint16_t>) == sizeof(uint16_t) &&
              ATOMIC_SHORT_LOCK_FREE == 2, "std::atomic<uint16_t> is not C's _Atomic uint16_t");
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
              alignof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
              ATOMIC_INT_LOCK_FREE == 2, "std::atomic<uint32_t> is not C's _Atomic uint32_t");
static_assert(sizeof(std::atomic<uint64_t>) == sizeof(uint64_t) &&
              alignof(std::atomic<uint64_t>) == sizeof(uint64_t) &&
              ATOMIC_LLONG_LOCK_FREE == 2, "std::atomic<uint64_t> is not C's _Atomic uint64_t");
static_assert(sizeof(std::atomic<void *>) == sizeof(void *) &&
              alignof(std::atomic<void *>) == sizeof(void *) &&
              ATOMIC_POINTER_LOCK_FREE == 2, "std::atomic<void *> is not C's _Atomic(void *)");
/* Setting up an object no other thread sees: a relaxed store does it (the
 * std::atomic_init function is deprecated in C++20). */
#define hps_init(p, v)  std::atomic_store_explicit((p), (v), std::memory_order_relaxed)
#else
#include <stdatomic.h>
#define HPS_ATOMIC(T)   _Atomic(T)
#define HPS_ATOMIC_INIT(v) v
#define HPS_EXTERN_C_BEGIN
#define HPS_EXTERN_C_END
#define HPS_ATOMIC_FN(f) f
#define HPS_MO(o)       memory_order_##o
/* Initialise an atomic object no other thread can see yet (not atomic). */
#define hps_init(p, v)  atomic_init((p), (v))
#endif

#define hps_likely(x)   __builtin_expect(!!(x), 1)
#define hps_unlikely(x) __builtin_expect(!!(x), 0)
#define HPS_NOINLINE    __attribute__((noinline))
#define HPS_INLINE      static inline __attribute__((always_inline))
#define HPS_EXPORT      __attribute__((visibility("default")))
#define HPS_CACHELINE   64
/* A word that many threads write gets a 128-byte-aligned pair of lines to
 * itself: x86's adjacent-line prefetchers fetch the pair, so writes to the
 * other line of the pair still pull the word's line away (hpsync's sgl ran
 * hash sets 9 % slower at 8 threads when a note written at ticks moved
 * into the lock's pair). */
#define HPS_LINEPAIR    128

typedef HPS_ATOMIC(uint16_t) hps_au16;
typedef HPS_ATOMIC(uint32_t) hps_au32;
typedef HPS_ATOMIC(uint64_t) hps_au64;
typedef HPS_ATOMIC(void *)   hps_aptr;

#define HPS_LOAD_(p, o)        HPS_ATOMIC_FN(atomic_load_explicit)((p), HPS_MO(o))
#define HPS_STORE_(p, v, o)    HPS_ATOMIC_FN(atomic_store_explicit)((p), (v), HPS_MO(o))
#define HPS_XCHG_(p, v, o)     HPS_ATOMIC_FN(atomic_exchange_explicit)((p), (v), HPS_MO(o))
#define HPS_FAA_(p, v, o)      HPS_ATOMIC_FN(atomic_fetch_add_explicit)((p), (v), HPS_MO(o))
#define HPS_FAS_(p, v, o)      HPS_ATOMIC_FN(atomic_fetch_sub_explicit)((p), (v), HPS_MO(o))
#define HPS_FENCE_(o)          HPS_ATOMIC_FN(atomic_thread_fence)(HPS_MO(o))
#define HPS_CAS_(p, e, d, s, f) \
    HPS_ATOMIC_FN(atomic_compare_exchange_strong_explicit)((p), (e), (d), HPS_MO(s), HPS_MO(f))
#define HPS_CAS_WEAK_(p, e, d, s, f) \
    HPS_ATOMIC_FN(atomic_compare_exchange_weak_explicit)((p), (e), (d), HPS_MO(s), HPS_MO(f))

#define hps_load_relaxed(p)      HPS_LOAD_(p, relaxed)
#define hps_load_acquire(p)      HPS_LOAD_(p, acquire)
#define hps_store_relaxed(p, v)  HPS_STORE_(p, v, relaxed)
#define hps_store_release(p, v)  HPS_STORE_(p, v, release)
#define hps_xchg_acquire(p, v)   HPS_XCHG_(p, v, acquire)
#define hps_xchg_release(p, v)   HPS_XCHG_(p, v, release)
#define hps_xchg_acq_rel(p, v)   HPS_XCHG_(p, v, acq_rel)
#define hps_faa_relaxed(p, v)    HPS_FAA_(p, v, relaxed)
#define hps_faa_acquire(p, v)    HPS_FAA_(p, v, acquire)
#define hps_faa_release(p, v)    HPS_FAA_(p, v, release)
#define hps_faa_acq_rel(p, v)    HPS_FAA_(p, v, acq_rel)
#define hps_fas_relaxed(p, v)    HPS_FAS_(p, v, relaxed)
#define hps_fas_release(p, v)    HPS_FAS_(p, v, release)
#define hps_fence_acquire()      HPS_FENCE_(acquire)
#define hps_fence_release()      HPS_FENCE_(release)
#define hps_fence_seq_cst()      HPS_FENCE_(seq_cst)
/* No instruction: only keeps the compiler from moving memory accesses
 * across it (the CPU's reordering is left to whoever needs to handle it). */
#define hps_compiler_fence()     HPS_ATOMIC_FN(atomic_signal_fence)(HPS_MO(seq_cst))

/*
 * Sequentially consistent forms, for the Dekker-style hand-offs (store my
 * flag, then load yours: a waiter counting itself in before it re-checks
 * the lock, an unlocker storing the lock word before it reads the waiter
 * count).  Release/acquire does not order a store before a later load;
 * these do.  Each use says which pair of accesses it orders.
 */
#define hps_load_seq_cst(p)      HPS_LOAD_(p, seq_cst)
#define hps_store_seq_cst(p, v)  HPS_STORE_(p, v, seq_cst)
#define hps_xchg_seq_cst(p, v)   HPS_XCHG_(p, v, seq_cst)
#define hps_faa_seq_cst(p, v)    HPS_FAA_(p, v, seq_cst)
#define hps_fas_seq_cst(p, v)    HPS_FAS_(p, v, seq_cst)
#define hps_fetch_or_seq_cst(p, v) \
    HPS_ATOMIC_FN(atomic_fetch_or_explicit)((p), (v), HPS_MO(seq_cst))
/* Setting or clearing bits that publish (release) what was written before. */
#define hps_fetch_or_release(p, v) \
    HPS_ATOMIC_FN(atomic_fetch_or_explicit)((p), (v), HPS_MO(release))
#define hps_fetch_and_release(p, v) \
    HPS_ATOMIC_FN(atomic_fetch_and_explicit)((p), (v), HPS_MO(release))

/* Compare-and-swap; on failure *expected receives the current value. */
#define hps_cas_acquire(p, expected, desired) HPS_CAS_(p, expected, desired, acquire, relaxed)
#define hps_cas_release(p, expected, desired) HPS_CAS_(p, expected, desired, release, relaxed)
#define hps_cas_acq_rel(p, expected, desired) HPS_CAS_(p, expected, desired, acq_rel, acquire)
#define hps_cas_seq_cst(p, expected, desired) HPS_CAS_(p, expected, desired, seq_cst, seq_cst)
/* The weak forms may fail spuriously: only inside a retry loop. */
#define hps_cas_weak_relaxed(p, expected, desired) \
    HPS_CAS_WEAK_(p, expected, desired, relaxed, relaxed)
#define hps_cas_weak_acquire(p, expected, desired) \
    HPS_CAS_WEAK_(p, expected, desired, acquire, relaxed)
#define hps_cas_weak_release(p, expected, desired) \
    HPS_CAS_WEAK_(p, expected, desired, release, relaxed)
#define hps_cas_weak_seq_cst(p, expected, desired) \
    HPS_CAS_WEAK_(p, expected, desired, seq_cst, seq_cst)

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
