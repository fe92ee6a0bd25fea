/* SPDX-License-Identifier: MIT */
/*
 * hpsync/shmem/api.h - the OpenSHMEM 1.5 routines' prototypes (included by
 * <shmem.h>; do not include directly).
 *
 * Every routine that has a context form is declared twice by HPS_SHMEM_CTX2:
 * shmem_NAME(args) and shmem_ctx_NAME(shmem_ctx_t ctx, args).
 */
#ifndef HPSYNC_SHMEM_API_H
#define HPSYNC_SHMEM_API_H

#define HPS_SHMEM_CTX2(R, NAME, ...) \
    R shmem_##NAME(__VA_ARGS__); \
    R shmem_ctx_##NAME(shmem_ctx_t ctx, __VA_ARGS__);

/* ---- library setup, exit and query (9.1) --------------------------------- */
void shmem_init(void);
int shmem_init_thread(int requested, int *provided);
void shmem_query_thread(int *provided);
void shmem_finalize(void);
void shmem_global_exit(int status) __attribute__((noreturn));
int shmem_my_pe(void);
int shmem_n_pes(void);
int shmem_pe_accessible(int pe);
int shmem_addr_accessible(const void *addr, int pe);
void *shmem_ptr(const void *dest, int pe);
void shmem_info_get_version(int *major, int *minor);
void shmem_info_get_name(char *name);
/* The profiling interface's control routine (section 10): a no-op here. */
void shmem_pcontrol(const int level, ...);
/* OpenSHMEM 1.2 names. */
void start_pes(int npes);
int _my_pe(void);
int _num_pes(void);

/* ---- symmetric heap (9.3) ------------------------------------------------ */
void *shmem_malloc(size_t size);
void *shmem_malloc_with_hints(size_t size, long hints);
void *shmem_calloc(size_t count, size_t size);
void *shmem_align(size_t alignment, size_t size);
void *shmem_realloc(void *ptr, size_t size);
void shmem_free(void *ptr);
/* OpenSHMEM 1.2 names. */
void *shmalloc(size_t size);
void *shmemalign(size_t alignment, size_t size);
void *shrealloc(void *ptr, size_t size);
void shfree(void *ptr);

/* ---- teams (9.4) ----------------------------------------------------------- */
int shmem_team_my_pe(shmem_team_t team);
int shmem_team_n_pes(shmem_team_t team);
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask,
                             shmem_team_t *new_team);
int shmem_team_split_2d(shmem_team_t parent_team, int xrange,
                        const shmem_team_config_t *xaxis_config, long xaxis_mask,
                        shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team);
void shmem_team_destroy(shmem_team_t team);
/* dest on PE pe of team as this PE can load and store it, or NULL. */
void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe);

/* ---- contexts (9.5) -------------------------------------------------------- */
int shmem_ctx_create(long options, shmem_ctx_t *ctx);
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
void shmem_ctx_destroy(shmem_ctx_t ctx);
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);

/* ---- RMA (9.6) and put-with-signal (9.7) ------------------------------------- */
#define HPS_SHMEM_DECL_RMA(T, N, A) \
    HPS_SHMEM_CTX2(void, N##_put, T *dest, const T *source, size_t nelems, int pe) \
    HPS_SHMEM_CTX2(void, N##_get, T *dest, const T *source, size_t nelems, int pe) \
    HPS_SHMEM_CTX2(void, N##_put_nbi, T *dest, const T *source, size_t nelems, int pe) \
    HPS_SHMEM_CTX2(void, N##_get_nbi, T *dest, const T *source, size_t nelems, int pe) \
    HPS_SHMEM_CTX2(void, N##_p, T *dest, T value, int pe) \
    HPS_SHMEM_CTX2(T, N##_g, const T *source, int pe) \
    HPS_SHMEM_CTX2(void, N##_iput, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, \
                   size_t nelems, int pe) \
    HPS_SHMEM_CTX2(void, N##_iget, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, \
                   size_t nelems, int pe) \
    HPS_SHMEM_CTX2(void, N##_put_signal, T *dest, const T *source, size_t nelems, \
                   uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) \
    HPS_SHMEM_CTX2(void, N##_put_signal_nbi, T *dest, const T *source, size_t nelems, \
                   uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
HPS_SHMEM_RMA_TYPES(HPS_SHMEM_DECL_RMA, _)

#define HPS_SHMEM_DECL_SIZED(BITS, T, A) \
    HPS_SHMEM_CTX2(void, put##BITS, void *dest, const void *source, size_t nelems, int pe) \
    HPS_SHMEM_CTX2(void, get##BITS, void *dest, const void *source, size_t nelems, int pe) \
    HPS_SHMEM_CTX2(void, put##BITS##_nbi, void *dest, const void *source, size_t nelems, int pe) \
    HPS_SHMEM_CTX2(void, get##BITS##_nbi, void *dest, const void *source, size_t nelems, int pe) \
    HPS_SHMEM_CTX2(void, iput##BITS, void *dest, const void *source, ptrdiff_t dst, \
                   ptrdiff_t sst, size_t nelems, int pe) \
    HPS_SHMEM_CTX2(void, iget##BITS, void *dest, const void *source, ptrdiff_t dst, \
                   ptrdiff_t sst, size_t nelems, int pe) \
    HPS_SHMEM_CTX2(void, put##BITS##_signal, void *dest, const void *source, size_t nelems, \
                   uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) \
    HPS_SHMEM_CTX2(void, put##BITS##_signal_nbi, void *dest, const void *source, size_t nelems, \
                   uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
HPS_SHMEM_SIZES(HPS_SHMEM_DECL_SIZED, _)
HPS_SHMEM_CTX2(void, putmem, void *dest, const void *source, size_t nelems, int pe)
HPS_SHMEM_CTX2(void, getmem, void *dest, const void *source, size_t nelems, int pe)
HPS_SHMEM_CTX2(void, putmem_nbi, void *dest, const void *source, size_t nelems, int pe)
HPS_SHMEM_CTX2(void, getmem_nbi, void *dest, const void *source, size_t nelems, int pe)
HPS_SHMEM_CTX2(void, putmem_signal, void *dest, const void *source, size_t nelems,
               uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
HPS_SHMEM_CTX2(void, putmem_signal_nbi, void *dest, const void *source, size_t nelems,
               uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
uint64_t shmem_signal_fetch(const uint64_t *sig_addr);

/* ---- atomic memory operations (9.8) ------------------------------------------- */
#define HPS_SHMEM_DECL_AMO_EXT(T, N, A) \
    HPS_SHMEM_CTX2(T, N##_atomic_fetch, const T *source, int pe) \
    HPS_SHMEM_CTX2(void, N##_atomic_set, T *dest, T value, int pe) \
    HPS_SHMEM_CTX2(T, N##_atomic_swap, T *dest, T value, int pe) \
    HPS_SHMEM_CTX2(void, N##_atomic_fetch_nbi, T *fetch, const T *source, int pe) \
    HPS_SHMEM_CTX2(void, N##_atomic_swap_nbi, T *fetch, T *dest, T value, int pe)
#define HPS_SHMEM_DECL_AMO_STD(T, N, A) \
    HPS_SHMEM_CTX2(T, N##_atomic_compare_swap, T *dest, T cond, T value, int pe) \
    HPS_SHMEM_CTX2(T, N##_atomic_fetch_inc, T *dest, int pe) \
    HPS_SHMEM_CTX2(void, N##_atomic_inc, T *dest, int pe) \
    HPS_SHMEM_CTX2(T, N##_atomic_fetch_add, T *dest, T value, int pe) \
    HPS_SHMEM_CTX2(void, N##_atomic_add, T *dest, T value, int pe) \
    HPS_SHMEM_CTX2(void, N##_atomic_compare_swap_nbi, T *fetch, T *dest, T cond, T value, int pe) \
    HPS_SHMEM_CTX2(void, N##_atomic_fetch_inc_nbi, T *fetch, T *dest, int pe) \
    HPS_SHMEM_CTX2(void, N##_atomic_fetch_add_nbi, T *fetch, T *dest, T value, int pe)
#define HPS_SHMEM_DECL_AMO_BIT1(T, N, OP) \
    HPS_SHMEM_CTX2(T, N##_atomic_fetch_##OP, T *dest, T value, int pe) \
    HPS_SHMEM_CTX2(void, N##_atomic_##OP, T *dest, T value, int pe) \
    HPS_SHMEM_CTX2(void, N##_atomic_fetch_##OP##_nbi, T *fetch, T *dest, T value, int pe)
#define HPS_SHMEM_DECL_AMO_BIT(T, N, A) \
    HPS_SHMEM_DECL_AMO_BIT1(T, N, and) HPS_SHMEM_DECL_AMO_BIT1(T, N, or) \
    HPS_SHMEM_DECL_AMO_BIT1(T, N, xor)
HPS_SHMEM_AMO_EXT_TYPES(HPS_SHMEM_DECL_AMO_EXT, _)
HPS_SHMEM_AMO_STD_TYPES(HPS_SHMEM_DECL_AMO_STD, _)
HPS_SHMEM_AMO_BIT_TYPES(HPS_SHMEM_DECL_AMO_BIT, _)

/* Deprecated (1.3) AMO names. */
#define HPS_SHMEM_DECL_OLD_AMO(T, N, A) \
    T shmem_##N##_fadd(T *dest, T value, int pe); \
    T shmem_##N##_finc(T *dest, int pe); \
    void shmem_##N##_add(T *dest, T value, int pe); \
    void shmem_##N##_inc(T *dest, int pe); \
    T shmem_##N##_cswap(T *dest, T cond, T value, int pe);
#define HPS_SHMEM_DECL_OLD_AMO_EXT(T, N, A) \
    T shmem_##N##_swap(T *dest, T value, int pe); \
    T shmem_##N##_fetch(const T *source, int pe); \
    void shmem_##N##_set(T *dest, T value, int pe);
HPS_SHMEM_OLD_AMO_TYPES(HPS_SHMEM_DECL_OLD_AMO, _)
HPS_SHMEM_OLD_AMO_EXT_TYPES(HPS_SHMEM_DECL_OLD_AMO_EXT, _)

/* ---- memory ordering (9.11) ------------------------------------------------ */
void shmem_fence(void);
void shmem_quiet(void);
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_ctx_quiet(shmem_ctx_t ctx);

/* ---- point-to-point synchronisation (9.10) ---------------------------------- */
#define HPS_SHMEM_DECL_SYNC(T, N, A) \
    void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value); \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp, \
                                    T cmp_value); \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp, \
                                      T cmp_value); \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices, \
                                       const int *status, int cmp, T cmp_value); \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, \
                                           int cmp, T *cmp_values); \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, \
                                             int cmp, T *cmp_values); \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices, \
                                              const int *status, int cmp, T *cmp_values); \
    int shmem_##N##_test(T *ivar, int cmp, T cmp_value); \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value); \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp, \
                                T cmp_value); \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status, \
                                 int cmp, T cmp_value); \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp, \
                                    T *cmp_values); \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp, \
                                       T *cmp_values); \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices, \
                                        const int *status, int cmp, T *cmp_values); \
    void shmem_##N##_wait(T *ivar, T cmp_value);
HPS_SHMEM_SYNC_TYPES(HPS_SHMEM_DECL_SYNC, _)
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

/* ---- collectives (9.9) ---------------------------------------------------------- */
void shmem_barrier_all(void);
void shmem_sync_all(void);
int shmem_team_sync(shmem_team_t team);
#define HPS_SHMEM_DECL_COLL(T, N, A) \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems, \
                              int PE_root); \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems); \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems); \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems); \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst, \
                              ptrdiff_t sst, size_t nelems);
HPS_SHMEM_RMA_TYPES(HPS_SHMEM_DECL_COLL, _)
int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
                       int PE_root);
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems);

#define HPS_SHMEM_DECL_REDUCE1(T, N, OP) \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);
#define HPS_SHMEM_DECL_REDUCE_BIT(T, N, A) \
    HPS_SHMEM_DECL_REDUCE1(T, N, and) HPS_SHMEM_DECL_REDUCE1(T, N, or) \
    HPS_SHMEM_DECL_REDUCE1(T, N, xor)
#define HPS_SHMEM_DECL_REDUCE_ORD(T, N, A) \
    HPS_SHMEM_DECL_REDUCE1(T, N, min) HPS_SHMEM_DECL_REDUCE1(T, N, max)
#define HPS_SHMEM_DECL_REDUCE_ARITH(T, N, A) \
    HPS_SHMEM_DECL_REDUCE1(T, N, sum) HPS_SHMEM_DECL_REDUCE1(T, N, prod)
HPS_SHMEM_REDUCE_BIT_TYPES(HPS_SHMEM_DECL_REDUCE_BIT, _)
HPS_SHMEM_REDUCE_ORD_TYPES(HPS_SHMEM_DECL_REDUCE_ORD, _)
HPS_SHMEM_REDUCE_ORD_TYPES(HPS_SHMEM_DECL_REDUCE_ARITH, _)
HPS_SHMEM_REDUCE_CPLX_TYPES(HPS_SHMEM_DECL_REDUCE_ARITH, _)

/* Deprecated (1.3) active-set collectives: PE_start + i * 2^logPE_stride. */
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);
#define HPS_SHMEM_DECL_OLD_COLL(BITS) \
    void shmem_broadcast##BITS(void *dest, const void *source, size_t nelems, int PE_root, \
                               int PE_start, int logPE_stride, int PE_size, long *pSync); \
    void shmem_collect##BITS(void *dest, const void *source, size_t nelems, int PE_start, \
                             int logPE_stride, int PE_size, long *pSync); \
    void shmem_fcollect##BITS(void *dest, const void *source, size_t nelems, int PE_start, \
                              int logPE_stride, int PE_size, long *pSync); \
    void shmem_alltoall##BITS(void *dest, const void *source, size_t nelems, int PE_start, \
                              int logPE_stride, int PE_size, long *pSync); \
    void shmem_alltoalls##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                               size_t nelems, int PE_start, int logPE_stride, int PE_size, \
                               long *pSync);
HPS_SHMEM_DECL_OLD_COLL(32)
HPS_SHMEM_DECL_OLD_COLL(64)
#define HPS_SHMEM_DECL_TOALL1(T, N, OP) \
    void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start, \
                                   int logPE_stride, int PE_size, T *pWrk, long *pSync);
#define HPS_SHMEM_DECL_TOALL_BIT(T, N, A) \
    HPS_SHMEM_DECL_TOALL1(T, N, and) HPS_SHMEM_DECL_TOALL1(T, N, or) \
    HPS_SHMEM_DECL_TOALL1(T, N, xor)
#define HPS_SHMEM_DECL_TOALL_ORD(T, N, A) \
    HPS_SHMEM_DECL_TOALL1(T, N, min) HPS_SHMEM_DECL_TOALL1(T, N, max) \
    HPS_SHMEM_DECL_TOALL1(T, N, sum) HPS_SHMEM_DECL_TOALL1(T, N, prod)
#define HPS_SHMEM_DECL_TOALL_ARITH(T, N, A) \
    HPS_SHMEM_DECL_TOALL1(T, N, sum) HPS_SHMEM_DECL_TOALL1(T, N, prod)
HPS_SHMEM_TOALL_BIT_TYPES(HPS_SHMEM_DECL_TOALL_BIT, _)
HPS_SHMEM_TOALL_ORD_TYPES(HPS_SHMEM_DECL_TOALL_ORD, _)
HPS_SHMEM_REDUCE_CPLX_TYPES(HPS_SHMEM_DECL_TOALL_ARITH, _)

/* ---- distributed locks (9.12) ------------------------------------------------ */
void shmem_set_lock(long *lock);
void shmem_clear_lock(long *lock);
int shmem_test_lock(long *lock);

/* ---- cache management (deprecated; no-ops on coherent memory) ------------------ */
void shmem_clear_cache_inv(void);
void shmem_set_cache_inv(void);
void shmem_clear_cache_line_inv(void *dest);
void shmem_set_cache_line_inv(void *dest);
void shmem_udcflush(void);
void shmem_udcflush_line(void *dest);

#endif /* HPSYNC_SHMEM_API_H */
