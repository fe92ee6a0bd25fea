// SPDX-License-Identifier: MIT
/*
 * itm_cxx - GCC TM in C++ (g++ -fgnu-tm), run like itm_test (itm_same.sh).
 *
 * newdel   a shared stack whose nodes come from new and go to delete inside
 *          sections (the transactional clones of the operators), new[] and
 *          delete[], and a cancel after new (8 threads);
 * classes  transaction_safe member functions, constructors and copies of
 *          objects with floating-point and 128-bit members (8 threads).
 */
#include <cstdio>
#include "itm_test.h"

#define ITERS 3000

namespace {

struct Node {
    long key;
    double w[3];
    Node *next;
};

Node *g_top;
long g_pushed, g_popped, g_cancelled;
long g_ncancels[ITM_THREADS];

void *newdel_thread(void *arg)
{
    long id = (long)(uintptr_t)arg;
    for (int k = 0; k < ITERS; k++) {
        if (k % 3 != 2) {
            __transaction_atomic {
                Node *n = new Node;
                n->key = id * ITERS + k;
                n->w[0] = n->w[1] = n->w[2] = 0.5 * k;
                n->next = g_top;
                g_top = n;
                g_pushed++;
            }
        } else {
            __transaction_atomic {
                Node *n = g_top;
                if (n) {
                    g_top = n->next;
                    delete n;
                    g_popped++;
                }
            }
        }
        if (k % 50 == 0) {
            __transaction_atomic {
                long *arr = new long[8];
                arr[3] = k;
                Node *n = new Node;
                n->key = arr[3];
                delete n;
                delete[] arr;
            }
            __transaction_atomic {
                Node *n = new Node;
                n->next = nullptr;
                /* Plain writes: libitm (gcc 12) keeps a cancelled section's
                 * read-modify-write (its "write after write" barrier logs
                 * no old value), so the comparison avoids them. */
                g_cancelled = 1;
                g_ncancels[id] = k;
                if (n)
                    __transaction_cancel;       /* the new is undone with the rest */
            }
        }
    }
    return nullptr;
}

void case_newdel()
{
    itm_run_threads(ITM_THREADS, newdel_thread);
    long count = 0;
    for (Node *n = g_top; n; n = n->next)
        count++;
    HPS_CHECK(count == g_pushed - g_popped, "stack holds %ld, pushed %ld popped %ld", count, g_pushed, g_popped);
    for (long c : g_ncancels)
        HPS_CHECK(c == 0, "a cancelled section's write stayed (%ld)", c);
    HPS_CHECK(g_cancelled == 0, "a cancelled section's write stayed (%ld)", g_cancelled);
    HPS_CHECK(g_pushed == (long)ITM_THREADS * (ITERS - ITERS / 3), "pushed %ld", g_pushed);
    std::printf("newdel: pushed %ld, stack %ld, cancelled %ld\n", g_pushed, count, g_cancelled);
}

class Account {
public:
    Account() : cents_(0), rate_(1.0), big_(0) {}
    __attribute__((transaction_safe)) void deposit(long c)
    {
        cents_ += c;
        rate_ *= 1.0;
        big_ += (__int128)c << 64;
    }
    __attribute__((transaction_safe)) long cents() const { return cents_; }
    __attribute__((transaction_safe)) __int128 big() const { return big_; }

private:
    long cents_;
    double rate_;
    __int128 big_;
};

Account g_acct[4];
Account g_snap;

void *classes_thread(void *arg)
{
    for (int k = 0; k < ITERS; k++) {
        __transaction_atomic {
            g_acct[k & 3].deposit(1);
            if (k % 100 == 0)
                g_snap = g_acct[0];              /* an object copy */
        }
    }
    return nullptr;
}

void case_classes()
{
    itm_run_threads(ITM_THREADS, classes_thread);
    long total = 0;
    __int128 big = 0;
    for (auto &a : g_acct) {
        total += a.cents();
        big += a.big();
    }
    const long n = (long)ITM_THREADS * ITERS;
    HPS_CHECK(total == n && big == (__int128)n << 64, "accounts %ld, expected %ld", total, n);
    HPS_CHECK(g_snap.big() == (__int128)g_snap.cents() << 64, "a copy mixed two states");
    std::printf("classes: total %ld\n", total);
}

const hps_test_case_t cases[] = {
    { "newdel", case_newdel, nullptr, nullptr, 0, 0, nullptr },
    { "classes", case_classes, nullptr, nullptr, 0, 0, nullptr },
};
const hps_test_suite_t suite = HPS_TEST_SUITE("itm_cxx", cases, 100, 0);

} // namespace

int main(int argc, char **argv)
{
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    return hps_test_main(&suite, argc, argv);
}
