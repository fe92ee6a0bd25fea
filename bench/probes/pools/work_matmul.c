// SPDX-License-Identifier: MIT
/* The recursive blocked matrix multiply (see work.h). */
#include <stdlib.h>
#include <string.h>
#include "hps_bench.h"
#include "work.h"

struct mm_task {
    hps_task_t t;                 /* first: the pool hands back &t */
    const double *a, *b;
    double *c;
    int n, ld, level;
};

struct mm_work {
    int n, max_levels;
    double *a, *b, *c, *ref;
    struct mm_task root;
};

/* c += a * b on n x n blocks of row stride ld; i-k-j keeps rows streaming. */
static void kernel(const double *a, const double *b, double *c, int n, int ld)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) {
            double aik = a[(size_t)i * ld + k];
            const double *brow = b + (size_t)k * ld;
            double *crow = c + (size_t)i * ld;
            for (int j = 0; j < n; j++)
                crow[j] += aik * brow[j];
        }
}

static void mm_run(hps_task_t *self);

static void mm_body(const struct mm_task *t)
{
    if (t->level == 0) {
        kernel(t->a, t->b, t->c, t->n, t->ld);
        return;
    }
    int h = t->n / 2, ld = t->ld;
    size_t down = (size_t)h * ld;
    const double *a[2][2] = { { t->a, t->a + h }, { t->a + down, t->a + down + h } };
    const double *b[2][2] = { { t->b, t->b + h }, { t->b + down, t->b + down + h } };
    double *c[2][2] = { { t->c, t->c + h }, { t->c + down, t->c + down + h } };
    /* Phase p adds A[i][p] * B[p][j] to C[i][j]: the four products of a
     * phase write different blocks, the two phases the same ones. */
    for (int p = 0; p < 2; p++) {
        struct mm_task sub[4];
        for (int q = 0; q < 4; q++) {
            int i = q >> 1, j = q & 1;
            sub[q] = (struct mm_task){ .a = a[i][p], .b = b[p][j], .c = c[i][j],
                                       .n = h, .ld = ld, .level = t->level - 1 };
            hps_task_init(&sub[q].t, mm_run);
        }
        for (int q = 1; q < 4; q++)
            hps_spawn(&sub[q].t);
        mm_body(&sub[0]);
        for (int q = 3; q >= 1; q--)
            hps_wait(&sub[q].t);
    }
}

static void mm_run(hps_task_t *self)
{
    mm_body((struct mm_task *)self);
}

void mm_free(struct mm_work *m) { free(m); }

struct mm_work *mm_new(int n, int max_levels)
{
    size_t nn = (size_t)n * (size_t)n;
    const size_t bytes[4] = { nn * sizeof(double), nn * sizeof(double), nn * sizeof(double),
                              nn * sizeof(double) };
    void *buf[4];
    struct mm_work *m = work_alloc(sizeof *m, 4, bytes, buf, "the matrices");
    if (!m)
        return NULL;
    m->a = buf[0];
    m->b = buf[1];
    m->c = buf[2];
    m->ref = buf[3];          /* zeroed: the reference product accumulates */
    m->n = n;
    m->max_levels = max_levels;
    uint64_t s = 0x13198A2E03707344ull;
    for (size_t i = 0; i < nn; i++) {
        m->a[i] = (double)((int)(hps_xorshift64(&s) % 9) - 4);
        m->b[i] = (double)((int)(hps_xorshift64(&s) % 9) - 4);
    }
    kernel(m->a, m->b, m->ref, n, n);
    return m;
}

hps_task_t *mm_root(struct mm_work *m, int levels)
{
    memset(m->c, 0, (size_t)m->n * (size_t)m->n * sizeof(double));
    m->root = (struct mm_task){ .a = m->a, .b = m->b, .c = m->c, .n = m->n, .ld = m->n,
                                .level = levels };
    hps_task_init(&m->root.t, mm_run);
    return &m->root.t;
}

int mm_check(const struct mm_work *m)
{
    size_t nn = (size_t)m->n * (size_t)m->n;
    for (size_t i = 0; i < nn; i++)
        if (m->c[i] != m->ref[i])
            return 0;
    return 1;
}
