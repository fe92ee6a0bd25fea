/* SPDX-License-Identifier: MIT */
/*
 * shmem.h - OpenSHMEM 1.5 for C (hpsync-shmem).
 *
 * The typed routine families are declared by macros over the type tables of
 * the OpenSHMEM 1.5 specification (section 9), so the list of types lives in
 * one place: HPS_SHMEM_*_TYPES(X, A) call X(TYPE, TYPENAME, A) once per row (A
 * is passed through, for the _Generic lists' routine suffix).  The library
 * defines the routines with the same tables, so a type cannot be declared
 * here and missing there.  Names starting with HPS_SHMEM_/hps_shmem_
 * are this header's plumbing, not API.
 *
 * Build: build/bin/oshcc prog.c, or cc prog.c $(pkg-config --cflags --libs
 * hpsync-shmem).  Run: build/bin/oshrun -np 4 ./prog.
 */
#ifndef HPSYNC_SHMEM_H
#define HPSYNC_SHMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- library constants ------------------------------------------------------ */

#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define SHMEM_MAX_NAME_LEN 256
#define SHMEM_VENDOR_STRING "hpsync-shmem"

#define SHMEM_THREAD_SINGLE 0
#define SHMEM_THREAD_FUNNELED 1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE 3

#define SHMEM_CTX_SERIALIZED (1L << 0)
#define SHMEM_CTX_PRIVATE (1L << 1)
#define SHMEM_CTX_NOSTORE (1L << 2)

#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0)

#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

#define SHMEM_CMP_EQ 0
#define SHMEM_CMP_NE 1
#define SHMEM_CMP_GT 2
#define SHMEM_CMP_GE 3
#define SHMEM_CMP_LT 4
#define SHMEM_CMP_LE 5

#define SHMEM_MALLOC_ATOMICS_REMOTE (1L << 0)
#define SHMEM_MALLOC_SIGNAL_REMOTE (1L << 1)

/* The deprecated active-set routines synchronise through pSync[0] only and
 * leave it at SHMEM_SYNC_VALUE; the sizes keep room for what programs
 * written for other implementations expect to pass. */
#define SHMEM_SYNC_VALUE 0L
#define SHMEM_SYNC_SIZE 8
#define SHMEM_BCAST_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_BARRIER_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_REDUCE_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_COLLECT_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_ALLTOALL_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1

/* OpenSHMEM 1.3 spellings, still used by existing programs. */
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_LE SHMEM_CMP_LE

/* ---- handles ------------------------------------------------------------------ */

typedef struct hps_shmem_ctx *shmem_ctx_t;
typedef struct hps_shmem_team *shmem_team_t;
typedef struct {
    int num_contexts;
} shmem_team_config_t;

/* Predefined handles: addresses of library objects, so they are constant
 * expressions usable in static initialisers. */
extern struct hps_shmem_ctx hps_shmem_ctx_default;
extern struct hps_shmem_team hps_shmem_team_world, hps_shmem_team_shared;
#define SHMEM_CTX_DEFAULT (&hps_shmem_ctx_default)
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)
#define SHMEM_TEAM_WORLD (&hps_shmem_team_world)
#define SHMEM_TEAM_SHARED (&hps_shmem_team_shared)
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)

/* ---- type tables (OpenSHMEM 1.5, section 9) ------------------------------------ */

/*
 * Each table is two lists: _C, the rows whose C types are distinct from one
 * another (int, unsigned long ...), and _FIX, the fixed-width rows (int32_t,
 * size_t ...), which alias some C type or other depending on the platform.
 * _TYPES is both, for declaring and defining the typed routines.  The C11
 * generics (hpsync/shmem/generic.h) keep the two apart: a _Generic list
 * may not name one type twice, so the _FIX rows are chained one per nested
 * selection after the _C list, where an alias of a listed type is never
 * reached and a row that aliases nothing listed (int32_t in the bitwise
 * AMO table, which lists no int) still is.
 */

/* Table 5: standard RMA types (RMA and collective data movement). */
#define HPS_SHMEM_RMA_C(X, A) \
    X(float, float, A) X(double, double, A) X(long double, longdouble, A) X(char, char, A) \
    X(signed char, schar, A) X(short, short, A) X(int, int, A) X(long, long, A) X(long long, longlong, A) \
    X(unsigned char, uchar, A) X(unsigned short, ushort, A) X(unsigned int, uint, A) \
    X(unsigned long, ulong, A) X(unsigned long long, ulonglong, A)
#define HPS_SHMEM_RMA_FIX(X, A) \
    X(int8_t, int8, A) X(int16_t, int16, A) X(int32_t, int32, A) X(int64_t, int64, A) \
    X(uint8_t, uint8, A) X(uint16_t, uint16, A) X(uint32_t, uint32, A) X(uint64_t, uint64, A) \
    X(size_t, size, A) X(ptrdiff_t, ptrdiff, A)
#define HPS_SHMEM_RMA_TYPES(X, A) HPS_SHMEM_RMA_C(X, A) HPS_SHMEM_RMA_FIX(X, A)
#define HPS_SHMEM_STD_TYPES HPS_SHMEM_RMA_C
#define HPS_SHMEM_FIXED_TYPES HPS_SHMEM_RMA_FIX
/* Sized RMA: SIZE in bits, the C type that carries one element. */
#define HPS_SHMEM_SIZES(X, A) X(8, uint8_t, A) X(16, uint16_t, A) X(32, uint32_t, A) \
    X(64, uint64_t, A) X(128, hps_shmem_u128_t, A)
typedef struct { uint64_t w[2]; } hps_shmem_u128_t;

/* Table 6: standard AMO types (compare_swap, fetch_inc, inc, fetch_add, add). */
#define HPS_SHMEM_AMO_STD_C(X, A) \
    X(int, int, A) X(long, long, A) X(long long, longlong, A) \
    X(unsigned int, uint, A) X(unsigned long, ulong, A) X(unsigned long long, ulonglong, A)
#define HPS_SHMEM_AMO_STD_FIX(X, A) \
    X(int32_t, int32, A) X(int64_t, int64, A) X(uint32_t, uint32, A) X(uint64_t, uint64, A) \
    X(size_t, size, A) X(ptrdiff_t, ptrdiff, A)
#define HPS_SHMEM_AMO_STD_TYPES(X, A) HPS_SHMEM_AMO_STD_C(X, A) HPS_SHMEM_AMO_STD_FIX(X, A)
/* Table 7: extended AMO types (fetch, set, swap) add the floating types. */
#define HPS_SHMEM_AMO_EXT_C(X, A) HPS_SHMEM_AMO_STD_C(X, A) X(float, float, A) X(double, double, A)
#define HPS_SHMEM_AMO_EXT_FIX HPS_SHMEM_AMO_STD_FIX
#define HPS_SHMEM_AMO_EXT_TYPES(X, A) HPS_SHMEM_AMO_STD_TYPES(X, A) X(float, float, A) X(double, double, A)
/* Table 8: bitwise AMO types (and, or, xor and their fetching forms). */
#define HPS_SHMEM_AMO_BIT_C(X, A) X(unsigned int, uint, A) X(unsigned long, ulong, A) X(unsigned long long, ulonglong, A)
#define HPS_SHMEM_AMO_BIT_FIX(X, A) \
    X(int32_t, int32, A) X(int64_t, int64, A) X(uint32_t, uint32, A) X(uint64_t, uint64, A)
#define HPS_SHMEM_AMO_BIT_TYPES(X, A) HPS_SHMEM_AMO_BIT_C(X, A) HPS_SHMEM_AMO_BIT_FIX(X, A)

/* Table 10: point-to-point synchronisation (wait_until, test). */
#define HPS_SHMEM_SYNC_C(X, A) \
    X(short, short, A) X(int, int, A) X(long, long, A) X(long long, longlong, A) \
    X(unsigned short, ushort, A) X(unsigned int, uint, A) X(unsigned long, ulong, A) \
    X(unsigned long long, ulonglong, A)
#define HPS_SHMEM_SYNC_FIX HPS_SHMEM_AMO_STD_FIX
#define HPS_SHMEM_SYNC_TYPES(X, A) HPS_SHMEM_SYNC_C(X, A) HPS_SHMEM_SYNC_FIX(X, A)

/* Table 11: reductions.  Bitwise (and, or, xor), ordered (min, max) and
 * arithmetic (sum, prod: the ordered types plus the complex ones). */
#define HPS_SHMEM_REDUCE_BIT_C(X, A) \
    X(unsigned char, uchar, A) X(unsigned short, ushort, A) X(unsigned int, uint, A) \
    X(unsigned long, ulong, A) X(unsigned long long, ulonglong, A)
#define HPS_SHMEM_REDUCE_BIT_FIX(X, A) \
    X(int8_t, int8, A) X(int16_t, int16, A) X(int32_t, int32, A) X(int64_t, int64, A) \
    X(uint8_t, uint8, A) X(uint16_t, uint16, A) X(uint32_t, uint32, A) X(uint64_t, uint64, A) X(size_t, size, A)
#define HPS_SHMEM_REDUCE_BIT_TYPES(X, A) HPS_SHMEM_REDUCE_BIT_C(X, A) HPS_SHMEM_REDUCE_BIT_FIX(X, A)
#define HPS_SHMEM_REDUCE_ORD_C(X, A) \
    X(char, char, A) X(signed char, schar, A) X(short, short, A) X(int, int, A) X(long, long, A) \
    X(long long, longlong, A) HPS_SHMEM_REDUCE_BIT_C(X, A) \
    X(float, float, A) X(double, double, A) X(long double, longdouble, A)
#define HPS_SHMEM_REDUCE_ORD_FIX(X, A) X(ptrdiff_t, ptrdiff, A) HPS_SHMEM_REDUCE_BIT_FIX(X, A)
#define HPS_SHMEM_REDUCE_ORD_TYPES(X, A) HPS_SHMEM_REDUCE_ORD_C(X, A) HPS_SHMEM_REDUCE_ORD_FIX(X, A)
#define HPS_SHMEM_REDUCE_CPLX_TYPES(X, A) X(double _Complex, complexd, A) X(float _Complex, complexf, A)
#define HPS_SHMEM_REDUCE_ARITH_C(X, A) HPS_SHMEM_REDUCE_ORD_C(X, A) HPS_SHMEM_REDUCE_CPLX_TYPES(X, A)
#define HPS_SHMEM_REDUCE_ARITH_FIX HPS_SHMEM_REDUCE_ORD_FIX

/* The deprecated (1.3) *_to_all reductions' tables. */
#define HPS_SHMEM_TOALL_BIT_TYPES(X, A) X(short, short, A) X(int, int, A) X(long, long, A) X(long long, longlong, A)
#define HPS_SHMEM_TOALL_ORD_TYPES(X, A) HPS_SHMEM_TOALL_BIT_TYPES(X, A) \
    X(float, float, A) X(double, double, A) X(long double, longdouble, A)
/* The deprecated AMO names: fadd, finc, add, inc, cswap on the first table,
 * swap, fetch, set also on the floating types. */
#define HPS_SHMEM_OLD_AMO_TYPES(X, A) X(int, int, A) X(long, long, A) X(long long, longlong, A)
#define HPS_SHMEM_OLD_AMO_EXT_TYPES(X, A) HPS_SHMEM_OLD_AMO_TYPES(X, A) X(float, float, A) X(double, double, A)
#define HPS_SHMEM_OLD_AMO_C HPS_SHMEM_OLD_AMO_TYPES
#define HPS_SHMEM_OLD_AMO_EXT_C HPS_SHMEM_OLD_AMO_EXT_TYPES
#define HPS_SHMEM_OLD_AMO_FIX(X, A)
#define HPS_SHMEM_OLD_AMO_EXT_FIX(X, A)

/* Operation lists: X(OP, A) per reduction operator. */
#define HPS_SHMEM_REDUCE_BIT_OPS(X, A) X(and, A) X(or, A) X(xor, A)
#define HPS_SHMEM_REDUCE_ORD_OPS(X, A) X(min, A) X(max, A)
#define HPS_SHMEM_REDUCE_ARITH_OPS(X, A) X(sum, A) X(prod, A)

#include "hpsync/shmem/api.h"
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus)
#include "hpsync/shmem/generic.h"
#endif

#ifdef __cplusplus
}
#endif
#endif /* HPSYNC_SHMEM_H */
