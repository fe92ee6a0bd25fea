// SPDX-License-Identifier: MIT
/*
 * The C++ operator new/delete family, by their Itanium-ABI names, so the
 * library needs no libstdc++ of its own.  Failure follows the standard:
 * call the new_handler until it gives up, then throw std::bad_alloc.  The
 * nothrow forms return NULL at once instead of running the handler (which
 * could throw through a caller that promised not to).  Both come from libstdc++ through weak
 * references: a program that calls operator new has libstdc++ loaded.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include "internal.h"

typedef void (*new_handler_t)(void);
extern new_handler_t _ZSt15get_new_handlerv(void) __attribute__((weak));
extern void _ZSt17__throw_bad_allocv(void) __attribute__((weak, noreturn));
void abort(void) __attribute__((noreturn));

static void *new_impl(size_t n, size_t align, int nothrow)
{
    for (;;) {
        void *p = hps_malloc_aligned(align, n);
        if (hps_likely(p != NULL) || nothrow)
            return p;
        /* The handler may free memory, throw, or end the program; the frame
         * has unwind tables (gcc's default on x86-64), so a throw passes. */
        new_handler_t h = _ZSt15get_new_handlerv ? _ZSt15get_new_handlerv() : NULL;
        if (!h) {
            if (_ZSt17__throw_bad_allocv)
                _ZSt17__throw_bad_allocv();
            abort();
        }
        h();
    }
}

#define API HPS_EXPORT
typedef struct nothrow_s nothrow_t;     /* std::nothrow_t, passed by reference */

API void *_Znwm(size_t n) { return new_impl(n, 0, 0); }
API void *_Znam(size_t n) { return new_impl(n, 0, 0); }
API void *_ZnwmRKSt9nothrow_t(size_t n, const nothrow_t *t) { (void)t; return new_impl(n, 0, 1); }
API void *_ZnamRKSt9nothrow_t(size_t n, const nothrow_t *t) { (void)t; return new_impl(n, 0, 1); }
API void *_ZnwmSt11align_val_t(size_t n, size_t a) { return new_impl(n, a, 0); }
API void *_ZnamSt11align_val_t(size_t n, size_t a) { return new_impl(n, a, 0); }
API void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, const nothrow_t *t) { (void)t; return new_impl(n, a, 1); }
API void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, const nothrow_t *t) { (void)t; return new_impl(n, a, 1); }

API void _ZdlPv(void *p) { hps_malloc_free(p); }
API void _ZdaPv(void *p) { hps_malloc_free(p); }
API void _ZdlPvm(void *p, size_t n) { (void)n; hps_malloc_free(p); }
API void _ZdaPvm(void *p, size_t n) { (void)n; hps_malloc_free(p); }
API void _ZdlPvRKSt9nothrow_t(void *p, const nothrow_t *t) { (void)t; hps_malloc_free(p); }
API void _ZdaPvRKSt9nothrow_t(void *p, const nothrow_t *t) { (void)t; hps_malloc_free(p); }
API void _ZdlPvSt11align_val_t(void *p, size_t a) { (void)a; hps_malloc_free(p); }
API void _ZdaPvSt11align_val_t(void *p, size_t a) { (void)a; hps_malloc_free(p); }
API void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t a) { (void)n, (void)a; hps_malloc_free(p); }
API void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t a) { (void)n, (void)a; hps_malloc_free(p); }
API void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const nothrow_t *t) { (void)a, (void)t; hps_malloc_free(p); }
API void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const nothrow_t *t) { (void)a, (void)t; hps_malloc_free(p); }
