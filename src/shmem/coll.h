/* SPDX-License-Identifier: MIT */
/*
 * coll.h - the collective algorithms (coll.c), shared by the 1.5 team
 * routines and the 1.3 active-set ones.  Lengths are in bytes unless named
 * nelems/n.  Each call is complete on return: dest holds the result and the
 * sources may be reused.  A dest is written only by its owner, during its
 * own call (so a member may fill or read its dest up to the call).
 */
#ifndef HPS_SHMEM_COLL_H
#define HPS_SHMEM_COLL_H

#include "team.h"

/* acc[i] = acc[i] OP in[i] for n elements of one type. */
typedef void (*hps_reduce_fn)(void *acc, const void *in, size_t n);

/* root_copies: 1.5 semantics (the root's dest gets the data too), 0: 1.3. */
void hps_shmem_coll_broadcast(const char *fn, const hps_shmem_group_t *g, void *dest, const void *src,
                        size_t len, int root, int root_copies);
void hps_shmem_coll_collect(const char *fn, const hps_shmem_group_t *g, void *dest, const void *src,
                      size_t len);
void hps_shmem_coll_fcollect(const char *fn, const hps_shmem_group_t *g, void *dest, const void *src,
                       size_t len);
void hps_shmem_coll_alltoall(const char *fn, const hps_shmem_group_t *g, void *dest, const void *src,
                       size_t len);
void hps_shmem_coll_alltoalls(const char *fn, const hps_shmem_group_t *g, void *dest, const void *src,
                        ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t es);
void hps_shmem_coll_reduce(const char *fn, const hps_shmem_group_t *g, void *dest, const void *src,
                     size_t n, size_t es, hps_reduce_fn op);

/* The same on the on-node path (coll_node.c); coll.c chooses. */
void hps_shmem_node_broadcast(const char *fn, const hps_ngrp_t *g, void *dest, const void *src,
                        size_t len, int root, int root_copies);
void hps_shmem_node_collect(const char *fn, const hps_ngrp_t *g, void *dest, const void *src,
                      size_t len);
void hps_shmem_node_fcollect(const char *fn, const hps_ngrp_t *g, void *dest, const void *src,
                       size_t len);
void hps_shmem_node_alltoall(const char *fn, const hps_ngrp_t *g, void *dest, const void *src,
                       size_t len);
void hps_shmem_node_alltoalls(const char *fn, const hps_ngrp_t *g, void *dest, const void *src,
                        ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t es);
void hps_shmem_node_reduce(const char *fn, const hps_ngrp_t *g, void *dest, const void *src,
                     size_t n, size_t es, hps_reduce_fn op);

#endif
