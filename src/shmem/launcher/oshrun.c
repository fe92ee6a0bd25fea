/* SPDX-License-Identifier: MIT */
/*
 * oshrun.c - build/bin/oshrun: start N PEs of a program on this machine,
 * wire them up, and see the job through to one exit status.
 *
 *   oshrun [-np N | -n N] [--] program [args...]
 *
 * Before starting any PE it creates the rendezvous file the PEs' runtime
 * joins (src/shmem/runtime/rendezvous.h) and passes its job id, the rank
 * and the size in HPSYNC_SHMEM_JOB, HPSYNC_SHMEM_RANK and HPSYNC_SHMEM_SIZE.
 * PEs inherit stdout and stderr; PE 0 also inherits stdin, the others read
 * /dev/null (one reader, as with mpirun).
 *
 * Ending: the job's status is 0 when every PE exits 0; otherwise the first
 * failing PE's status (128+signal if killed), or the status a PE gave
 * shmem_global_exit (recorded in the rendezvous).  As soon as the job has
 * failed, every PE still running gets SIGTERM, then SIGKILL after a grace
 * period, so a dead PE never leaves the others waiting for it.  SIGINT,
 * SIGTERM and SIGHUP are passed on to the PEs the same way; a second one
 * kills them at once.  PEs die with oshrun (PR_SET_PDEATHSIG) should it be
 * killed itself.  Last, every /dev/shm entry named hpsync-shmem-<job>-... is
 * removed (the rendezvous and the library's heap and data-segment files),
 * and so is every "<pid>:..." entry of one of the job's PEs (libfabric's shm
 * provider's files, which a PE killed with SIGKILL leaves behind).
 *
 * Binding (--bind-to core, the default when the PEs fit): PE r runs on the
 * r-th core of oshrun's CPU set (all hardware threads of that core).  The
 * PEs of a job wait for each other, and an unbound pair that another
 * program crowds off a CPU ends up sharing the other, where every wait is
 * a context switch: 2 PEs on 2 CPUs while other programs ran, barrier
 * 2.6-4.4 us unbound against 0.19-1.3 us bound.  With more PEs
 * than cores nothing is bound (nor with --bind-to none): the scheduler
 * shares the CPUs out.
 *
 * The launcher waits for signals only (sigwaitinfo with everything it
 * handles blocked), so there are no handlers, no races with SIGCHLD and no
 * polling: a 2-PE launch costs the forks and execs and nothing else.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rendezvous.h"

/* SIGTERM to SIGKILL: time for a PE to flush and go, short enough that a
 * wedged job ends promptly. */
#define GRACE_NS 1000000000LL

static const char usage_text[] =
    "usage: oshrun [-np N] [--bind-to core|none] [--] program [args...]\n"
    "Starts N processing elements (PEs) of an OpenSHMEM program on this machine.\n"
    "  -np N, -n N          number of PEs, 1 to %d (default 1)\n"
    "  --bind-to core|none  core (default): PE r runs on the r-th core oshrun may\n"
    "                       use, when there are at least N of them; none: unbound\n"
    "  -h, --help           show this text\n"
    "PE 0 reads stdin; every PE writes to oshrun's stdout and stderr.  The exit\n"
    "status is 0 when every PE exits 0, else the first failing PE's status\n"
    "(128+signal when killed) or the status given to shmem_global_exit; the\n"
    "other PEs are then ended.  Programs run without oshrun are a single PE;\n"
    "under mpirun or srun --mpi=pmix they join through PMIx.\n";

struct job {
    int np;
    int bind;                   /* --bind-to core */
    cpu_set_t *core;            /* per rank when binding: its core's CPUs */
    char id[32];
    hps_rdv_hdr_t *rdv;
    size_t bytes;
    pid_t *pid;                 /* per rank; 0 once reaped */
    pid_t *started;             /* per rank, kept after reaping (for the clean-up) */
    int live;
    int status;                 /* the job's exit status once decided, else -1 */
    int ending;                 /* PEs were told to stop */
    int killed;                 /* ... and then killed */
    struct timespec kill_at;
    int interrupted;            /* the first signal oshrun received, or 0 */
};

static void die(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
static void die(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("oshrun: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(status);
}

/* ---- command line ----------------------------------------------------------- */

static int parse_np(const char *opt, const char *v)
{
    char *end;
    errno = 0;
    long n = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || errno || n < 1 || n > HPS_RDV_MAX_PES)
        die(2, "%s: '%s' is not a number of PEs from 1 to %d (oshrun --help for usage)",
            opt, v ? v : "", HPS_RDV_MAX_PES);
    return (int)n;
}

static int parse_bind(const char *v)
{
    if (v && strcmp(v, "core") == 0)
        return 1;
    if (v && strcmp(v, "none") == 0)
        return 0;
    die(2, "--bind-to: '%s' is not core or none (oshrun --help for usage)", v ? v : "");
}

/* The index of the program in argv; sets *np and *bind. */
static int parse_args(int argc, char **argv, int *np, int *bind)
{
    static const char *const np_opts[] = {"-np", "-n", "--np", "--n"};
    *np = 1;
    *bind = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            if (i + 1 == argc)
                break;
            return i + 1;
        }
        if (a[0] != '-' || a[1] == '\0')
            return i;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            printf(usage_text, HPS_RDV_MAX_PES);
            exit(0);
        }
        int known = 0;
        if (strcmp(a, "--bind-to") == 0) {
            *bind = parse_bind(i + 1 < argc ? argv[++i] : NULL);
            continue;
        }
        if (strncmp(a, "--bind-to=", 10) == 0) {
            *bind = parse_bind(a + 10);
            continue;
        }
        for (size_t k = 0; k < sizeof np_opts / sizeof np_opts[0] && !known; k++) {
            size_t len = strlen(np_opts[k]);
            if (strcmp(a, np_opts[k]) == 0) {
                if (i + 1 == argc)
                    die(2, "%s needs a number of PEs (oshrun --help for usage)", a);
                *np = parse_np(a, argv[++i]);
                known = 1;
            } else if (strncmp(a, np_opts[k], len) == 0 && a[len] == '=') {
                *np = parse_np(np_opts[k], a + len + 1);
                known = 1;
            }
        }
        if (!known)
            die(2, "unknown option '%s' (oshrun --help for usage)", a);
    }
    die(2, "no program to run (usage: oshrun -np N program [args...])");
}

/* 0 if path names an executable regular file, else the exit status a shell
 * would give it (127 missing, 126 not executable). */
static int executable(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 127;
    return S_ISREG(st.st_mode) && access(path, X_OK) == 0 ? 0 : 126;
}

/* Find prog as execvp would, so a missing program is one message and 127
 * before any PE starts rather than N messages from N children. */
static void find_program(const char *prog, char *out, size_t cap)
{
    if (strchr(prog, '/')) {
        int rc = executable(prog);
        if (rc)
            die(rc, "%s: %s", prog, rc == 127 ? "no such file" : "not an executable file");
        snprintf(out, cap, "%s", prog);
        return;
    }
    const char *path = getenv("PATH");
    int best = 127;
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;; p++) {
        const char *colon = strchrnul(p, ':');
        int dlen = (int)(colon - p);
        /* An empty PATH entry means the current directory. */
        if (snprintf(out, cap, "%.*s%s%s", dlen, p, dlen ? "/" : "./", prog) < (int)cap) {
            int rc = executable(out);
            if (rc == 0)
                return;
            if (rc < best)
                best = rc;
        }
        if (!*colon)
            break;
        p = colon;
    }
    die(best, "%s: %s", prog, best == 127 ? "command not found" : "not an executable file");
}

/* ---- the job ------------------------------------------------------------- */

/* Does a /dev/shm name belong to one of the job's PEs?  libfabric's shm
 * provider names its files "<pid>:<endpoint>"; a PE killed with SIGKILL
 * cannot remove its own. */
static int pe_file(const struct job *j, const char *name)
{
    if (!j->started)
        return 0;
    char *end;
    long pid = strtol(name, &end, 10);
    if (end == name || *end != ':')
        return 0;
    for (int r = 0; r < j->np; r++)
        if (j->started[r] > 0 && j->started[r] == pid)
            return 1;
    return 0;
}

static void remove_segments(const struct job *j)
{
    char prefix[64];
    int n = snprintf(prefix, sizeof prefix, "hpsync-shmem-%s-", j->id);
    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));)
        if (strncmp(e->d_name, prefix, (size_t)n) == 0 || pe_file(j, e->d_name))
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

static void make_rendezvous(struct job *j)
{
    j->bytes = hps_rdv_bytes((uint32_t)j->np);
    /* The pid keeps ids of live jobs apart; the random part keeps a new job
     * off the leftovers of a killed oshrun whose pid was reused. */
    for (int attempt = 0; attempt < 16; attempt++) {
        uint32_t r;
        if (getrandom(&r, sizeof r, GRND_NONBLOCK) != sizeof r)
            r = (uint32_t)clock() ^ (uint32_t)time(NULL) * 2654435761u ^ (uint32_t)attempt;
        snprintf(j->id, sizeof j->id, "o%ldx%08x", (long)getpid(), r);
        char name[96];
        hps_rdv_name(name, sizeof name, j->id);
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0)
            die(1, "cannot create /dev/shm%s: %s", name, strerror(errno));
        void *p = MAP_FAILED;
        if (ftruncate(fd, (off_t)j->bytes) == 0)
            p = mmap(NULL, j->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        int err = errno;
        close(fd);
        if (p == MAP_FAILED) {
            shm_unlink(name);
            die(1, "cannot size /dev/shm%s for %d PEs: %s", name, j->np, strerror(err));
        }
        /* A new tmpfs file reads as zeros: counters, states and exit word
         * start right; the PEs are forked after this, which orders it. */
        j->rdv = p;
        j->rdv->magic = HPS_RDV_MAGIC;
        j->rdv->version = HPS_RDV_VERSION;
        j->rdv->size = (uint32_t)j->np;
        return;
    }
    die(1, "cannot find a free job id in /dev/shm");
}

/* ---- binding --------------------------------------------------------------- */

/* The hardware threads of cpu's core (itself when sysfs does not say). */
static void core_of(int cpu, cpu_set_t *set)
{
    char path[96], buf[256];
    CPU_ZERO(set);
    CPU_SET(cpu, set);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
             cpu);
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    char *line = fgets(buf, sizeof buf, f);
    fclose(f);
    /* "0-1", "0,64", "3" */
    for (char *p = line; p && *p && *p != '\n';) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            break;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        for (long c = a; c <= b && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, set);
        p = *end == ',' ? end + 1 : end;
        if (*end != ',')
            break;
    }
}

/* When binding and the PEs fit: each rank's core, in CPU order of the
 * cores' first threads, within oshrun's own CPU set. */
static void plan_binding(struct job *j)
{
    cpu_set_t mine;
    if (!j->bind || j->np < 2 || sched_getaffinity(0, sizeof mine, &mine) != 0)
        return;
    cpu_set_t *core = calloc((size_t)CPU_COUNT(&mine) + 1, sizeof *core);
    int ncores = 0;
    if (!core)
        return;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &mine))
            continue;
        int seen = 0;
        for (int k = 0; k < ncores && !seen; k++)
            seen = CPU_ISSET(c, &core[k]);
        if (seen)
            continue;
        core_of(c, &core[ncores]);
        CPU_AND(&core[ncores], &core[ncores], &mine);
        ncores++;
    }
    if (ncores < j->np) {
        free(core);                 /* crowded: the scheduler shares the CPUs */
        return;
    }
    j->core = core;
}

static void set_env_int(const char *name, int v)
{
    char buf[16];
    snprintf(buf, sizeof buf, "%d", v);
    setenv(name, buf, 1);
}

/* In the child: everything a PE needs, then the program. */
static void exec_pe(const struct job *j, int rank, pid_t parent, const char *path,
                    char **argv, const sigset_t *mask)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(1);           /* oshrun is already gone: nobody would collect this PE */
    if (rank > 0) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd > 0) {
            dup2(fd, 0);
            close(fd);
        }
    }
    /* A failure to bind leaves the PE unbound, which is only slower. */
    if (j->core)
        (void)sched_setaffinity(0, sizeof j->core[rank], &j->core[rank]);
    setenv(HPS_RDV_ENV_JOB, j->id, 1);
    set_env_int(HPS_RDV_ENV_RANK, rank);
    set_env_int(HPS_RDV_ENV_SIZE, j->np);
    sigprocmask(SIG_SETMASK, mask, NULL);
    execv(path, argv);
    int e = errno;
    fprintf(stderr, "oshrun: %s: %s\n", argv[0], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
}

static void signal_all(struct job *j, int sig)
{
    for (int r = 0; r < j->np; r++)
        if (j->pid[r] > 0)
            kill(j->pid[r], sig);
}

/* Tell every running PE to stop with sig; SIGKILL follows after the grace
 * period, or at once if the job is already being ended. */
static void end_job(struct job *j, int sig)
{
    if (j->ending) {
        if (!j->killed)
            signal_all(j, SIGKILL);
        j->killed = 1;
        return;
    }
    j->ending = 1;
    signal_all(j, sig);
    clock_gettime(CLOCK_MONOTONIC, &j->kill_at);
    long long ns = j->kill_at.tv_nsec + GRACE_NS;
    j->kill_at.tv_sec += ns / 1000000000LL;
    j->kill_at.tv_nsec = ns % 1000000000LL;
}

static void pe_exited(struct job *j, int r, pid_t pid, int ws)
{
    int st = WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 1;
    j->pid[r] = 0;
    j->live--;
    if (j->status >= 0)
        return;                 /* already failing: this is the teardown */
    /* Acquire pairs with the PE's release when it wrote them. */
    uint32_t exit_word = hps_load_acquire(&j->rdv->exit_word);
    uint32_t state = hps_load_acquire(&j->rdv->pe[r].state);
    if (exit_word & HPS_RDV_EXIT_SET) {
        j->status = (int)(exit_word & 0xff);
    } else if (st != 0) {
        if (WIFSIGNALED(ws) && !j->ending)
            fprintf(stderr, "oshrun: PE %d (pid %ld) was killed by signal %d (%s)%s\n", r,
                    (long)pid, WTERMSIG(ws), strsignal(WTERMSIG(ws)),
                    j->live ? "; ending the job" : "");
        j->status = st;
    } else if (state == HPS_RDV_JOINED && j->live > 0 && !j->ending) {
        /* Its peers will wait for it in their next collective forever. */
        fprintf(stderr, "oshrun: PE %d exited without shmem_finalize before the others; "
                "ending the job\n", r);
        j->status = 1;
    } else {
        return;
    }
    /* Already ending (oshrun was interrupted): the grace period runs on. */
    if (j->live > 0 && !j->ending)
        end_job(j, SIGTERM);
}

static void reap(struct job *j)
{
    int ws;
    pid_t pid;
    while ((pid = waitpid(-1, &ws, WNOHANG)) > 0)
        for (int r = 0; r < j->np; r++)
            if (j->pid[r] == pid) {
                pe_exited(j, r, pid, ws);
                break;
            }
}

/* Until every PE is gone: signals are the only events. */
static void wait_job(struct job *j, const sigset_t *events)
{
    while (j->live > 0) {
        siginfo_t si;
        int sig;
        if (j->ending && !j->killed) {
            struct timespec now, left;
            clock_gettime(CLOCK_MONOTONIC, &now);
            long long ns = (j->kill_at.tv_sec - now.tv_sec) * 1000000000LL +
                           (j->kill_at.tv_nsec - now.tv_nsec);
            if (ns <= 0) {
                signal_all(j, SIGKILL);
                j->killed = 1;
                continue;
            }
            left.tv_sec = ns / 1000000000LL;
            left.tv_nsec = ns % 1000000000LL;
            sig = sigtimedwait(events, &si, &left);
        } else {
            sig = sigwaitinfo(events, &si);
        }
        if (sig == SIGCHLD) {
            reap(j);
        } else if (sig > 0) {
            if (!j->interrupted)
                j->interrupted = sig;
            end_job(j, sig);
        }
    }
}

int main(int argc, char **argv)
{
    struct job j;
    memset(&j, 0, sizeof j);
    j.status = -1;
    int first = parse_args(argc, argv, &j.np, &j.bind);
    char path[4096];
    find_program(argv[first], path, sizeof path);
    plan_binding(&j);

    /* SIGCHLD must not be SIG_IGN (children would reap themselves); the
     * events are blocked and taken by sigwaitinfo, never delivered. */
    signal(SIGCHLD, SIG_DFL);
    sigset_t events, old;
    sigemptyset(&events);
    sigaddset(&events, SIGCHLD);
    /* A signal oshrun was started ignoring (nohup, `&` in a script) stays
     * ignored, by oshrun and by the PEs, which inherit that. */
    static const int passed_on[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof passed_on / sizeof passed_on[0]; i++) {
        struct sigaction sa;
        if (sigaction(passed_on[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
            sigaddset(&events, passed_on[i]);
    }
    sigprocmask(SIG_BLOCK, &events, &old);

    make_rendezvous(&j);
    j.pid = calloc((size_t)j.np, sizeof *j.pid);
    j.started = calloc((size_t)j.np, sizeof *j.started);
    if (!j.pid || !j.started) {
        remove_segments(&j);
        die(1, "out of memory for %d PEs", j.np);
    }
    pid_t self = getpid();
    fflush(NULL);               /* nothing buffered may be written twice by the children */
    for (int r = 0; r < j.np; r++) {
        pid_t pid = fork();
        if (pid == 0)
            exec_pe(&j, r, self, path, argv + first, &old);
        if (pid < 0) {
            fprintf(stderr, "oshrun: cannot start PE %d: %s\n", r, strerror(errno));
            j.status = 1;
            end_job(&j, SIGTERM);
            break;
        }
        j.pid[r] = pid;
        j.started[r] = pid;
        j.live++;
    }
    wait_job(&j, &events);

    uint32_t exit_word = hps_load_acquire(&j.rdv->exit_word);
    if (exit_word & HPS_RDV_EXIT_SET)
        j.status = (int)(exit_word & 0xff);
    else if (j.status < 0)
        j.status = j.interrupted ? 128 + j.interrupted : 0;
    munmap(j.rdv, j.bytes);
    remove_segments(&j);
    free(j.core);
    return j.status;
}
