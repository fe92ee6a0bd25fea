// SPDX-License-Identifier: MIT
/* The FFT task tree (see work.h). */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include "hps_bench.h"
#include "work.h"

struct fft_task {
    hps_task_t t;                 /* first: the pool hands back &t */
    const double complex *in;
    size_t stride, n;
    double complex *out;
    const struct fft_work *f;
};

struct fft_work {
    size_t n, cutoff;
    double complex *x, *out;
    double complex *w;            /* w[j] = exp(-2 pi i j / n), j < n */
    struct fft_task root;
};

/* out[0..n) holds the DFTs of the even and odd halves; make it the DFT of n. */
static void combine(double complex *out, size_t n, const struct fft_work *f)
{
    size_t h = n / 2, step = f->n / n;
    for (size_t k = 0; k < h; k++) {
        double complex e = out[k], o = out[k + h] * f->w[k * step];
        out[k] = e + o;
        out[k + h] = e - o;
    }
}

static void fft_serial(const double complex *in, size_t stride, double complex *out, size_t n,
                       const struct fft_work *f)
{
    if (n == 1) {
        out[0] = in[0];
        return;
    }
    fft_serial(in, 2 * stride, out, n / 2, f);
    fft_serial(in + stride, 2 * stride, out + n / 2, n / 2, f);
    combine(out, n, f);
}

static void fft_run(hps_task_t *self);

static void fft_body(const double complex *in, size_t stride, double complex *out, size_t n,
                     const struct fft_work *f)
{
    if (n <= f->cutoff) {
        fft_serial(in, stride, out, n, f);
        return;
    }
    struct fft_task even = { .in = in, .stride = 2 * stride, .n = n / 2, .out = out, .f = f };
    hps_task_init(&even.t, fft_run);
    hps_spawn(&even.t);
    fft_body(in + stride, 2 * stride, out + n / 2, n / 2, f);
    hps_wait(&even.t);
    combine(out, n, f);
}

static void fft_run(hps_task_t *self)
{
    struct fft_task *t = (struct fft_task *)self;
    fft_body(t->in, t->stride, t->out, t->n, t->f);
}

struct fft_work *fft_new(size_t n, size_t cutoff)
{
    const size_t bytes[3] = { n * sizeof(double complex), n * sizeof(double complex),
                              n * sizeof(double complex) };
    void *buf[3];
    struct fft_work *f = work_alloc(sizeof *f, 3, bytes, buf, "an FFT");
    if (!f)
        return NULL;
    f->x = buf[0];
    f->out = buf[1];
    f->w = buf[2];
    f->n = n;
    f->cutoff = cutoff;
    uint64_t s = 0x243F6A8885A308D3ull;
    for (size_t j = 0; j < n; j++) {
        double re = (double)(hps_xorshift64(&s) >> 11) / 9007199254740992.0 * 2 - 1;
        double im = (double)(hps_xorshift64(&s) >> 11) / 9007199254740992.0 * 2 - 1;
        f->x[j] = CMPLX(re, im);
        double a = -2.0 * M_PI * (double)j / (double)n;
        f->w[j] = CMPLX(cos(a), sin(a));
    }
    return f;
}

hps_task_t *fft_root(struct fft_work *f)
{
    for (size_t k = 0; k < f->n; k++)
        f->out[k] = NAN;          /* a bin the run forgot fails the check */
    f->root = (struct fft_task){ .in = f->x, .stride = 1, .n = f->n, .out = f->out, .f = f };
    hps_task_init(&f->root.t, fft_run);
    return &f->root.t;
}

/* Bin k of the DFT by its definition; the twiddle index j*k is reduced mod n
 * so the table gives every factor as accurately as cos/sin would. */
static double complex dft_bin(const struct fft_work *f, size_t k)
{
    double complex s = 0;
    for (size_t j = 0, idx = 0; j < f->n; j++) {
        s += f->x[j] * f->w[idx];
        idx += k;                 /* idx = j * k mod n, without a division */
        if (idx >= f->n)
            idx -= f->n;
    }
    return s;
}

int fft_check(const struct fft_work *f)
{
    size_t n = f->n;
    double ex = 0, eX = 0;
    for (size_t j = 0; j < n; j++) {
        ex += creal(f->x[j] * conj(f->x[j]));
        eX += creal(f->out[j] * conj(f->out[j]));
    }
    /* Rounding grows like log n; inputs are O(1), outputs O(sqrt n). */
    double tol = 1e-9 * sqrt((double)n) * (1 + log2((double)n));
    if (!(fabs(eX - (double)n * ex) <= 1e-9 * (double)n * ex))
        return 0;
    size_t bins = n <= 1024 ? n : 32;
    for (size_t i = 0; i < bins; i++) {
        size_t k = bins == n ? i : (i * (n / bins) + i * 7) % n;
        if (!(cabs(f->out[k] - dft_bin(f, k)) <= tol))
            return 0;
    }
    return 1;
}

void fft_free(struct fft_work *f) { free(f); }
