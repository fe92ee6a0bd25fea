// SPDX-License-Identifier: MIT
/*
 * Placement policies of libhpsync-malloc that a program can observe.
 *   malloc_policy <case>
 *
 *   reuse  A block freed by its owner is the next one malloc hands out for
 *          its size, even when another page of the class has room: the
 *          block the program just touched is still in cache (LIFO across
 *          pages, as a thread cache gives).
 *   hover  A class whose live blocks move up and down across a page's
 *          capacity does not make (and fault in) a new page at every
 *          crossing: the emptied page stays as the class's spare.
 *   trim   malloc_trim(0) hands the spare back: the retired-page count moves.
 *
 * Page counts come from malloc_stats() (stderr redirected to a file), so
 * CTest runs this only against the CIA allocator.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "malloc_util.h"

struct counts {
    unsigned long long made, retired;
};

/* Pages made and retired so far, from malloc_stats()'s report. */
static struct counts page_counts(void)
{
    char path[] = "/tmp/hpm-policy-XXXXXX";
    int fd = mkstemp(path);
    HPS_CHECK(fd >= 0, "mkstemp failed");
    unlink(path);
    fflush(stderr);
    int saved = dup(2);
    HPS_CHECK(saved >= 0 && dup2(fd, 2) == 2, "dup2 failed");
    malloc_stats();
    dup2(saved, 2);
    close(saved);
    char buf[2048];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    HPS_CHECK(n > 0, "malloc_stats printed nothing");
    buf[n] = 0;
    struct counts c;
    const char *line = strstr(buf, "pages ");
    HPS_CHECK(line && sscanf(line, "pages %llu made, %llu retired", &c.made, &c.retired) == 2,
              "no page counts in malloc_stats output: %s", buf);
    return c;
}

static void case_reuse(void)
{
    /* Enough 100-byte blocks for several pages (64 KiB holds ~340). */
    enum { N = 3000 };
    static void *b[N];
    for (int i = 0; i < N; i++) {
        b[i] = malloc(100);
        HPS_CHECK(b[i], "malloc(100) returned NULL");
    }
    void *early = b[5], *late = b[N - 500];
    HPS_CHECK((uintptr_t)late - (uintptr_t)early >= 65536,
              "blocks %p and %p should lie on different pages", early, late);
    free(early);
    free(late);
    void *p = malloc(100);
    HPS_CHECK(p == late, "malloc after free(%p) returned %p, not the block just freed", late, p);
    free(p);
    void *q = malloc(100);
    HPS_CHECK(q == p, "free + malloc of the same size moved from %p to %p", p, q);
    b[5] = malloc(100);
    HPS_CHECK(b[5], "malloc(100) returned NULL");
    b[N - 500] = q;
    for (int i = 0; i < N; i++)
        free(b[i]);
}

/* A window of W slots of SIZE-byte blocks, random malloc/free: the live
 * count hovers around W/2. */
static int W = 16, SIZE = 30000;     /* pages of 9 blocks: ~1 page live */
enum { OPS = 20000 };
static void *win[256];

static void hover(unsigned long ops)
{
    uint64_t rng = 0x5eed;
    for (unsigned long k = 0; k < ops; k++) {
        int i = (int)(hps_xorshift64(&rng) % W);
        if (win[i]) {
            free(win[i]);
            win[i] = NULL;
        } else {
            win[i] = malloc((size_t)SIZE);
            HPS_CHECK(win[i], "malloc(%d) returned NULL", SIZE);
        }
    }
}

static void case_hover(void)
{
    hover(2000);                                /* settle: pages for the peak */
    struct counts before = page_counts();
    hover(OPS);
    struct counts after = page_counts();
    unsigned long long made = after.made - before.made;
    printf("hover: %llu pages made in %d operations\n", made, OPS);
    /* Retiring each page as it empties made 237 pages here; with a spare
     * per class, 1.  (Other window/size pairs: malloc_policy hover W SIZE.) */
    HPS_CHECK(made <= 20, "%llu pages made in %d operations around a page boundary", made, OPS);
}

static void case_trim(void)
{
    hover(2000);
    for (int i = 0; i < W; i++) {
        free(win[i]);
        win[i] = NULL;
    }
    struct counts before = page_counts();
    HPS_CHECK(malloc_trim(0) == 1, "malloc_trim(0) released nothing after freeing everything");
    struct counts after = page_counts();
    HPS_CHECK(after.retired > before.retired, "malloc_trim retired no page (spare kept)");
}

int main(int argc, char **argv)
{
    hpm_init("malloc_policy");
    const char *c = argc > 1 ? argv[1] : "";
    if (argc > 3) {
        W = atoi(argv[2]);
        SIZE = atoi(argv[3]);
    }
    if (!strcmp(c, "reuse"))
        case_reuse();
    else if (!strcmp(c, "hover"))
        case_hover();
    else if (!strcmp(c, "trim"))
        case_trim();
    else
        hps_test_fail("usage: malloc_policy reuse|hover|trim");
    printf("malloc_policy %s: ok\n", c);
    return 0;
}
