// SPDX-License-Identifier: MIT
/*
 * C++ allocation through whatever allocator is running: every replaceable
 * operator new/delete (plain, array, nothrow, sized, aligned with
 * std::align_val_t, over-aligned types from 64 to 4096 bytes), the
 * new_handler protocol on an impossible size (handler called, then
 * std::bad_alloc; nothrow forms return nullptr), and containers moving
 * blocks between threads.
 *
 * HPS_MALLOC_EXPECT_NEW names the object that must define the operators:
 * libhpsync-malloc.so exports its own; under RAND (or bare) libstdc++'s run,
 * on top of whichever malloc is in place.
 */
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>
#include "malloc_util.h"

namespace {

// Volatile: the compiler must not see these sizes as constants (it would
// warn about them, or fold the calls).
volatile std::size_t g_huge = SIZE_MAX / 2;

// Every replaceable global allocation function of C++17 (Itanium mangling).
const char *const kOperators[] = {
    "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
    "_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm", "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t",
    "_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t", "_ZdlPvmSt11align_val_t",
    "_ZdaPvmSt11align_val_t", "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    "_ZdaPvSt11align_val_tRKSt9nothrow_t",
};

void check_providers()
{
    const char *want = std::getenv("HPS_MALLOC_EXPECT_NEW");
    for (const char *sym : kOperators) {
        const char *have = hpm_provider(sym);
        if (want && *want && std::strcmp(have, want) != 0)
            hps_test_fail("%s comes from %s, expected %s", sym, have, want);
    }
    std::printf("malloc_cxx: operator new from %s\n", hpm_provider("_Znwm"));
}

void check_plain()
{
    std::vector<unsigned char *> blocks;
    for (std::size_t n = 1; n < (4u << 20); n = n * 3 / 2 + 1) {
        auto *p = new unsigned char[n];
        hpm_check_aligned(p, alignof(std::max_align_t), "new[]");
        hpm_fill(p, n, n);
        blocks.push_back(p);
        auto *q = static_cast<unsigned char *>(::operator new(n));
        hpm_fill(q, n, n + 1);
        hpm_verify(q, n, n + 1, "operator new");
        ::operator delete(q, n);                       // sized delete
        auto *r = static_cast<unsigned char *>(::operator new[](n, std::nothrow));
        if (!r)
            hps_test_fail("operator new[](%zu, nothrow) returned nullptr", n);
        ::operator delete[](r, std::nothrow);
        auto *s = static_cast<unsigned char *>(::operator new[](n));
        ::operator delete[](s, n);                     // sized array delete
    }
    std::size_t n = 1;
    for (auto *p : blocks) {
        hpm_verify(p, n, n, "new[]");
        delete[] p;
        n = n * 3 / 2 + 1;
    }
    auto *one = new long(42);
    hpm_escape(one);
    delete one;
    std::printf("plain, array, nothrow and sized new/delete: ok (%zu sizes)\n", blocks.size());
}

template <std::size_t A>
struct alignas(A) Over {
    unsigned char bytes[A];
};

template <std::size_t A>
void check_over_aligned()
{
    auto *one = new Over<A>;
    hpm_check_aligned(one, A, "new over-aligned type");
    std::memset(one->bytes, 0x3c, A);
    auto *arr = new Over<A>[5];
    hpm_check_aligned(arr, A, "new[] over-aligned type");
    std::memset(static_cast<void *>(arr), 0x3d, 5 * A);
    auto *nt = new (std::nothrow) Over<A>;
    if (!nt)
        hps_test_fail("nothrow new of an over-aligned type returned nullptr");
    hpm_check_aligned(nt, A, "nothrow new over-aligned type");
    delete one;
    delete[] arr;
    delete nt;

    const std::align_val_t al{A};
    for (std::size_t n : { std::size_t{1}, A, 3 * A + 1, std::size_t{100000} }) {
        void *p = ::operator new(n, al);
        hpm_check_aligned(p, A, "operator new(align_val_t)");
        hpm_fill(p, n, A);
        void *q = ::operator new[](n, al, std::nothrow);
        if (!q)
            hps_test_fail("operator new[](%zu, align %zu, nothrow) returned nullptr", n, A);
        hpm_check_aligned(q, A, "operator new[](align_val_t, nothrow)");
        hpm_verify(p, n, A, "operator new(align_val_t)");
        ::operator delete(p, n, al);
        ::operator delete[](q, al, std::nothrow);
    }
}

template <std::size_t... As>
void check_all_aligned()
{
    (check_over_aligned<As>(), ...);
    std::printf("aligned new/delete: ok (alignments 64..4096)\n");
}

std::atomic<int> g_handler_calls;
int g_nothrow_handler_calls;

void handler_gives_up()
{
    // The protocol: a handler that cannot free memory uninstalls itself, so
    // that operator new's next attempt throws std::bad_alloc.
    g_handler_calls++;
    std::set_new_handler(nullptr);
}

template <typename F>
void expect_bad_alloc(const char *what, F alloc)
{
    g_handler_calls = 0;
    std::set_new_handler(handler_gives_up);
    bool thrown = false;
    try {
        hpm_escape(alloc());
    } catch (const std::bad_alloc &) {
        thrown = true;
    }
    if (!thrown)
        hps_test_fail("%s of %zu bytes did not throw std::bad_alloc", what, (std::size_t)g_huge);
    if (g_handler_calls != 1)
        hps_test_fail("%s: new_handler called %d times, expected once", what, g_handler_calls.load());
}

template <typename F>
void expect_nullptr(const char *what, bool with_handler, F alloc)
{
    g_handler_calls = 0;
    std::set_new_handler(with_handler ? handler_gives_up : nullptr);
    void *p = alloc();
    if (p)
        hps_test_fail("%s of %zu bytes returned %p, expected nullptr", what, (std::size_t)g_huge, p);
    // libstdc++'s nothrow forms run the handler (the standard's default
    // behaviour: call the throwing form, catch bad_alloc); a replacement
    // may return nullptr at once.  More than one call would mean a handler
    // that gave up was called again.
    if (g_handler_calls > 1)
        hps_test_fail("%s: new_handler called %d times", what, g_handler_calls.load());
    g_nothrow_handler_calls += g_handler_calls;
    std::set_new_handler(nullptr);
}

void check_failure()
{
    const std::align_val_t al{64};
    expect_bad_alloc("operator new", [] { return ::operator new(g_huge); });
    expect_bad_alloc("operator new[]", [] { return ::operator new[](g_huge); });
    expect_bad_alloc("aligned operator new", [&] { return ::operator new(g_huge, al); });
    expect_bad_alloc("aligned operator new[]", [&] { return ::operator new[](g_huge, al); });
    for (bool h : { false, true }) {
        expect_nullptr("nothrow new", h, [] { return ::operator new(g_huge, std::nothrow); });
        expect_nullptr("nothrow new[]", h, [] { return ::operator new[](g_huge, std::nothrow); });
        expect_nullptr("nothrow aligned new", h,
                       [&] { return ::operator new(g_huge, al, std::nothrow); });
        expect_nullptr("nothrow new-expression", h,
                       [] { return static_cast<void *>(new (std::nothrow) char[g_huge]); });
    }
    std::printf("impossible sizes: ok (new_handler once, then bad_alloc; nothrow gives nullptr, "
                "%s the handler)\n", g_nothrow_handler_calls ? "after running" : "without running");
}

void check_containers()
{
    // Built in one thread, extended and destroyed in another: every block
    // is freed by a thread that did not allocate it.
    auto made = std::make_unique<std::map<int, std::string>>();
    auto table = std::make_shared<std::unordered_map<std::string, std::vector<int>>>();
    std::thread builder([&] {
        for (int i = 0; i < 20000; i++) {
            (*made)[i] = std::string(static_cast<std::size_t>(i % 200), static_cast<char>('a' + i % 26));
            (*table)[std::to_string(i)].assign(static_cast<std::size_t>(i % 50), i);
        }
    });
    builder.join();
    long sum = 0;
    std::thread consumer([&] {
        for (auto &kv : *made)
            sum += static_cast<long>(kv.second.size());
        for (auto &kv : *table)
            sum += static_cast<long>(kv.second.size());
        made.reset();
        table.reset();
    });
    consumer.join();
    long want = 0;
    for (int i = 0; i < 20000; i++)
        want += i % 200 + i % 50;
    if (sum != want)
        hps_test_fail("containers: sizes sum to %ld, expected %ld", sum, want);
    std::printf("containers across threads: ok\n");
}

}  // namespace

int main()
{
    hpm_init("malloc_cxx");
    hps_test_watchdog(60);
    check_providers();
    check_plain();
    check_all_aligned<64, 128, 256, 512, 1024, 2048, 4096>();
    check_failure();
    check_containers();
    return 0;
}
