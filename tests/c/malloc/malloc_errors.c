// SPDX-License-Identifier: MIT
/*
 * Misuse reports of libhpsync-malloc.
 *   malloc_errors <case>
 *
 * Each case frees something it must not (a block twice, a pointer the
 * allocator never handed out) in a child process whose stderr goes to a
 * pipe.  The promise checked: exactly one line on stderr, starting with
 * "hpsync-malloc:" and naming the problem ("double free" or "invalid
 * free"), and the program carries on unharmed: the child then allocates
 * many blocks of the victim's size (a block freed twice must not come back
 * twice), checks their patterns and exits 0.
 *
 * glibc (and so RAND) abort on these by design, so CTest runs this only
 * against the CIA allocator.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "malloc_util.h"

static long a_global[64];

/* The victim's size: the carry-on check allocates this size again. */
static size_t victim_size;

static void double_free(size_t size)
{
    victim_size = size;
    void *p = malloc(size);
    HPS_CHECK(p, "malloc(%zu) returned NULL", size);
    free(p);
    free(p);
}

static void *free_in_thread(void *p)
{
    free(p);
    return NULL;
}

static void *alloc_in_thread(void *size)
{
    return malloc((size_t)(uintptr_t)size);
}

static void case_double_small(void) { double_free(48); }
static void case_double_medium(void) { double_free(20000); }
static void case_double_large(void) { double_free(8u << 20); }

/* Allocated by one thread, freed by another, freed again by a third: the
 * second free meets the block in a remote-free list or already reused. */
static void case_double_remote(void)
{
    victim_size = 96;
    pthread_t t;
    void *p = NULL;
    if (pthread_create(&t, NULL, alloc_in_thread, (void *)(uintptr_t)victim_size) || pthread_join(t, &p))
        hps_test_fail("thread failed");
    HPS_CHECK(p, "malloc in a thread returned NULL");
    if (pthread_create(&t, NULL, free_in_thread, p) || pthread_join(t, NULL))
        hps_test_fail("thread failed");
    free(p);
}

static void case_invalid_stack(void)
{
    char local[64];
    hpm_escape(local);
    free(local);
}

static void case_invalid_global(void)
{
    free(&a_global[8]);
}

/* An interior pointer of a live block: reported, and the block stays
 * valid (freed properly afterwards). */
static void interior(size_t size, size_t offset)
{
    victim_size = size;
    unsigned char *p = malloc(size);
    HPS_CHECK(p, "malloc(%zu) returned NULL", size);
    hpm_fill(p, size, 4242);
    free(p + offset);
    hpm_verify(p, size, 4242, "block whose interior pointer was freed");
    free(p);
}

static void case_invalid_interior(void) { interior(256, 16); }
static void case_invalid_interior_large(void) { interior(4u << 20, 8192); }

static void case_invalid_mmap(void)
{
    void *m = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    HPS_CHECK(m != MAP_FAILED, "mmap failed");
    free(m);
    munmap(m, 1 << 16);
}

/* A misuse and what the one line about it must say. */
struct misuse {
    void (*run)(void);
    const char *word;      /* what the line must say */
    const char *or_word;   /* or this (NULL: nothing else) */
};
static int run_case(const hps_test_case_t *c, int argc, char **argv);
#define MISUSE(name, fn, word, or_word) \
    { name, .run_args = run_case, .data = &(const struct misuse){ fn, word, or_word } }
static const hps_test_case_t cases[] = {
    MISUSE("double_small", case_double_small, "double free", NULL),
    MISUSE("double_medium", case_double_medium, "double free", NULL),
    /* A large block goes back to the kernel on its first free; the second
     * then meets memory the allocator no longer knows, which it may only
     * be able to call an invalid free. */
    MISUSE("double_large", case_double_large, "double free", "invalid free"),
    MISUSE("double_remote", case_double_remote, "double free", NULL),
    MISUSE("invalid_stack", case_invalid_stack, "invalid free", NULL),
    MISUSE("invalid_global", case_invalid_global, "invalid free", NULL),
    MISUSE("invalid_interior", case_invalid_interior, "invalid free", NULL),
    MISUSE("invalid_interior_large", case_invalid_interior_large, "invalid free", NULL),
    MISUSE("invalid_mmap", case_invalid_mmap, "invalid free", NULL),
};

/* After the misuse: the heap must still hand out distinct, whole blocks. */
static void carry_on(void)
{
    enum { N = 64 };
    static const size_t other[] = { 16, 100, 1000, 5000, 70000, 1u << 20 };
    uint64_t tag = 1;
    for (int s = -1; s < (int)(sizeof other / sizeof other[0]); s++) {
        size_t size = s < 0 ? (victim_size ? victim_size : 48) : other[s];
        unsigned char *v[N];
        for (int i = 0; i < N; i++) {
            v[i] = malloc(size);
            HPS_CHECK(v[i], "malloc(%zu) after the misuse returned NULL", size);
            hpm_fill(v[i], size, tag + (uint64_t)i);
        }
        for (int i = 0; i < N; i++) {
            hpm_verify(v[i], size, tag + (uint64_t)i, "block allocated after the misuse");
            free(v[i]);
        }
        tag += N;
    }
}

static int run_case(const hps_test_case_t *c, int argc, char **argv)
{
    const struct misuse *m = c->data;
    int fds[2];
    HPS_CHECK(pipe(fds) == 0, "pipe failed");
    fflush(stdout);
    pid_t pid = fork();
    HPS_CHECK(pid >= 0, "fork failed");
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        hps_test_watchdog(20);
        m->run();
        carry_on();
        _exit(0);
    }
    close(fds[1]);
    int st = hpm_wait_child(pid, 30, c->name);
    char err[4096];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof err - 1 && (r = read(fds[0], err + n, sizeof err - 1 - n)) > 0)
        n += (size_t)r;
    close(fds[0]);
    err[n] = 0;
    /* For messages: the whole of stderr on one line. */
    char flat[sizeof err];
    for (size_t i = 0; i <= n; i++)
        flat[i] = err[i] == '\n' && i + 1 < n ? '|' : err[i] == '\n' ? 0 : err[i];
    /* The child's own FAIL lines went to the pipe: show them as they are. */
    if (strstr(err, ": FAIL "))
        hps_test_fail("%s: the program did not carry on: %s", c->name, flat);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        hps_test_fail("%s: the program %s %d after the misuse (stderr: %s)", c->name,
                      WIFEXITED(st) ? "exited with" : "was killed by signal",
                      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), n ? flat : "empty");
    char *nl = strchr(err, '\n');
    if (n == 0 || !nl || nl[1] != 0)
        hps_test_fail("%s: expected exactly one line on stderr, got %zu bytes: %s", c->name,
                      n, flat);
    *nl = 0;
    if (strncmp(err, "hpsync-malloc:", 14) != 0)
        hps_test_fail("%s: the line does not start with \"hpsync-malloc:\": %s", c->name, err);
    if (!strstr(err, m->word) && !(m->or_word && strstr(err, m->or_word)))
        hps_test_fail("%s: the line does not say \"%s\": %s", c->name, m->word, err);
    printf("%s: ok: \"%s\", then carried on\n", c->name, err);
    return 0;
}

static const hps_test_suite_t suite = HPS_TEST_SUITE("malloc_errors", cases, 60, 0);

int main(int argc, char **argv)
{
    hpm_init("malloc_errors");
    return hps_test_main(&suite, argc, argv);
}
