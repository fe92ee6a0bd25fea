// SPDX-License-Identifier: MIT
/*
 * C++ threads under the interposer: std::thread with std::mutex,
 * std::recursive_mutex, std::timed_mutex, std::shared_mutex and
 * std::condition_variable (whose wait_for uses pthread_cond_clockwait on
 * CLOCK_MONOTONIC with this libstdc++).  Exits non-zero with one line on
 * failure.
 */
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

[[noreturn]] static void fail(const char *what)
{
    std::fprintf(stderr, "cxx_threads: FAIL %s\n", what);
    std::_Exit(1);
}

int main()
{
    using namespace std::chrono_literals;
    constexpr int kThreads = 4, kIters = 50000, kItems = 20000;

    // Counter under std::mutex and std::recursive_mutex.
    std::mutex m;
    std::recursive_mutex rm;
    long counter = 0, rcounter = 0;
    {
        std::vector<std::thread> ts;
        for (int t = 0; t < kThreads; t++)
            ts.emplace_back([&] {
                for (int i = 0; i < kIters; i++) {
                    { std::lock_guard<std::mutex> g(m); counter++; }
                    std::lock_guard<std::recursive_mutex> g1(rm);
                    std::lock_guard<std::recursive_mutex> g2(rm);
                    rcounter++;
                }
            });
        for (auto &t : ts)
            t.join();
    }
    if (counter != long(kThreads) * kIters || rcounter != long(kThreads) * kIters)
        fail("lost updates under std::mutex / std::recursive_mutex");

    // Producer/consumer with std::condition_variable, wait_for with a predicate.
    std::deque<int> q;
    std::condition_variable cv;
    bool done = false;
    long sum = 0;
    std::thread consumer([&] {
        std::unique_lock<std::mutex> lk(m);
        for (;;) {
            if (!cv.wait_for(lk, 10s, [&] { return !q.empty() || done; }))
                fail("condition_variable::wait_for timed out (lost notify?)");
            while (!q.empty()) {
                sum += q.front();
                q.pop_front();
            }
            if (done)
                break;
        }
    });
    for (int i = 1; i <= kItems; i++) {
        std::lock_guard<std::mutex> g(m);
        q.push_back(i);
        cv.notify_one();
    }
    {
        std::lock_guard<std::mutex> g(m);
        done = true;
    }
    cv.notify_all();
    consumer.join();
    if (sum != long(kItems) * (kItems + 1) / 2)
        fail("items lost through std::condition_variable");

    // wait_for that times out: false, after the timeout, with the lock held.
    {
        std::unique_lock<std::mutex> lk(m);
        auto t0 = std::chrono::steady_clock::now();
        bool got = cv.wait_for(lk, 30ms, [] { return false; });
        if (got || std::chrono::steady_clock::now() - t0 < 30ms || !lk.owns_lock())
            fail("condition_variable::wait_for did not time out properly");
    }

    // std::timed_mutex: try_lock_for from another thread fails while held.
    std::timed_mutex tm;
    tm.lock();
    bool other_got = true;
    std::thread([&] { other_got = tm.try_lock_for(20ms); }).join();
    tm.unlock();
    if (other_got)
        fail("timed_mutex::try_lock_for succeeded on a held mutex");

    // std::shared_mutex: two readers at once, a writer excluded.
    std::shared_mutex sm;
    long shared_val = 0;
    {
        std::vector<std::thread> ts;
        for (int t = 0; t < kThreads; t++)
            ts.emplace_back([&, t] {
                for (int i = 0; i < kIters / 10; i++) {
                    if ((i + t) % 4 == 0) {
                        std::unique_lock<std::shared_mutex> w(sm);
                        shared_val++;
                    } else {
                        std::shared_lock<std::shared_mutex> r(sm);
                        (void)shared_val;
                    }
                }
            });
        for (auto &t : ts)
            t.join();
    }
    if (shared_val != long(kThreads) * (kIters / 10) / 4)
        fail("lost updates under std::shared_mutex");
    std::printf("cxx_threads: ok\n");
    return 0;
}
