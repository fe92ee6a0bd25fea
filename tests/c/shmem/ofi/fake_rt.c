/* SPDX-License-Identifier: MIT */
/* fake_rt.c - see fake_rt.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../../../src/common/futex.h"
#include "fake_rt.h"
#include "hpsync/pr.h"

#define MAX_KEYS 16

typedef struct kv {
    char key[32];
    size_t len;
    unsigned char val[HPS_RT_MAX_VALUE];
} kv_t;

typedef struct shared {
    int npes;
    hps_au32 arrived, generation;          /* the barrier */
    int nkeys[FAKE_RT_MAX_PES];
    kv_t kv[FAKE_RT_MAX_PES][MAX_KEYS];    /* each PE writes only its row */
    unsigned char scratch[FAKE_RT_SHARED_BYTES];
} shared_t;

static shared_t *sh;
static int my_rank = -1;

void *fake_rt_shared(void) { return sh->scratch; }

int hps_rt_init(void) { return 0; }
const char *hps_rt_name(void) { return "fake"; }
int hps_rt_rank(void) { return my_rank; }
int hps_rt_size(void) { return sh->npes; }
int hps_rt_node_of(int pe) { return 0; }
void hps_rt_finalize(void) {}

const char *hps_rt_job_id(void)
{
    static char id[32];
    snprintf(id, sizeof id, "fake-%d", (int)getppid());
    return id;
}

int hps_rt_put(const char *key, const void *val, size_t len)
{
    int n = sh->nkeys[my_rank];
    if (strlen(key) >= sizeof sh->kv[0][0].key || len > HPS_RT_MAX_VALUE || n == MAX_KEYS) {
        fprintf(stderr, "hpsync-shmem: hps_rt_put: key \"%s\" (%zu bytes) does not fit\n", key, len);
        return -1;
    }
    kv_t *e = &sh->kv[my_rank][n];
    strcpy(e->key, key);
    e->len = len;
    memcpy(e->val, val, len);
    sh->nkeys[my_rank] = n + 1;
    return 0;
}

int hps_rt_get(int pe, const char *key, void *val, size_t len)
{
    for (int i = 0; pe >= 0 && pe < sh->npes && i < sh->nkeys[pe]; i++) {
        const kv_t *e = &sh->kv[pe][i];
        if (strcmp(e->key, key) == 0 && e->len == len) {
            memcpy(val, e->val, len);
            return 0;
        }
    }
    fprintf(stderr, "hpsync-shmem: hps_rt_get: PE %d published no \"%s\" of %zu bytes\n", pe, key, len);
    return -1;
}

/* Sense by generation: the last to arrive bumps it and wakes the rest.
 * Release/acquire so what a PE wrote before the barrier (its keys) is seen
 * by every PE after it. */
int hps_rt_barrier(void)
{
    uint32_t gen = hps_load_acquire(&sh->generation);
    if (atomic_fetch_add_explicit(&sh->arrived, 1, memory_order_acq_rel) + 1 == (uint32_t)sh->npes) {
        hps_store_relaxed(&sh->arrived, 0);
        hps_store_release(&sh->generation, gen + 1);
        hps_futex_wake(&sh->generation, FAKE_RT_MAX_PES, 1);
        return 0;
    }
    while (hps_load_acquire(&sh->generation) == gen)
        hps_futex_wait(&sh->generation, gen, CLOCK_MONOTONIC, NULL, 1);
    return 0;
}

int hps_rt_exchange(void) { return hps_rt_barrier(); }

void hps_rt_abort(int status) { _exit(status ? status : 1); }

/* SIGTERM first: libfabric's shm provider removes its /dev/shm region on
 * it (a SIGKILL leaves 16 MiB behind per PE); SIGKILL for what remains. */
static void kill_all(const pid_t *pid, int n)
{
    for (int i = 0; i < n; i++)
        if (pid[i] > 0)
            kill(pid[i], SIGTERM);
    usleep(200000);
    for (int i = 0; i < n; i++)
        if (pid[i] > 0)
            kill(pid[i], SIGKILL);
}

int fake_rt_run(int npes, int (*pe_main)(void *arg), void *arg, unsigned timeout_s)
{
    if (npes < 1 || npes > FAKE_RT_MAX_PES) {
        fprintf(stderr, "fake_rt_run: %d PEs is outside 1..%d\n", npes, FAKE_RT_MAX_PES);
        return 1;
    }
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("fake_rt_run: mmap");
        return 1;
    }
    sh->npes = npes;
    pid_t pid[FAKE_RT_MAX_PES] = { 0 }, launcher = getpid();
    fflush(NULL);
    for (int r = 0; r < npes; r++) {
        pid[r] = fork();
        if (pid[r] < 0) {
            perror("fake_rt_run: fork");
            kill_all(pid, r);
            return 1;
        }
        if (pid[r] == 0) {
            /* A PE outlives no launcher (killed, or its stderr pipe gone). */
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (getppid() != launcher)
                _exit(1);
            my_rank = r;
            int rc = pe_main(arg);
            fflush(NULL);
            _exit(rc);
        }
    }
    /* Reap; the first bad exit or the deadline ends the job. */
    uint64_t deadline = (uint64_t)time(NULL) + timeout_s;
    int left = npes, failed = 0;
    while (left) {
        int status;
        pid_t p = waitpid(-1, &status, WNOHANG);
        if (p == 0) {
            if ((uint64_t)time(NULL) > deadline) {
                fprintf(stderr, "fake_rt_run: PEs still running after %u s: killed\n", timeout_s);
                kill_all(pid, npes);
                failed = 1;
                deadline = UINT64_MAX;
            }
            usleep(2000);
            continue;
        }
        if (p < 0)
            break;
        int r = 0;
        while (r < npes && pid[r] != p)
            r++;
        left--;
        if (r < npes)
            pid[r] = 0;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            continue;
        if (!failed) {
            if (WIFSIGNALED(status))
                fprintf(stderr, "fake_rt_run: PE %d killed by signal %d\n", r, WTERMSIG(status));
            else
                fprintf(stderr, "fake_rt_run: PE %d exited with status %d\n", r, WEXITSTATUS(status));
        }
        failed = 1;
        kill_all(pid, npes);
    }
    munmap(sh, sizeof *sh);
    return failed;
}
