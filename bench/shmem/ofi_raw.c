/* SPDX-License-Identifier: MIT */
/*
 * ofi_raw.c - hps-bench-ofi-raw: what libfabric itself costs, with no
 * OpenSHMEM library in the way, between two processes on this machine: the
 * baselines the libfabric transport of libhpsync-shmem is measured against
 * (docs/shmem.md).
 *
 * The endpoint is configured as the transport configures its own (RDM,
 * FI_RMA|FI_ATOMIC, thread-safe domain, FI_DELIVERY_COMPLETE, manual
 * progress where the provider offers it, loopback-bound entry), so the two
 * are comparable.  The target process polls its counters meanwhile, and
 * every wait yields its CPU after 200 polls, as a PE waiting inside the
 * library does.  Operations ("op" in the rows):
 *
 *   inject        8-byte fi_inject_write, then poll the write counter
 *   inject_read   the same write followed by an 8-byte fi_read of the same
 *                 peer: what the library's quiet does so an injected write
 *                 is known to be processed at the target
 *   read          one 8-byte fi_read
 *   put           a delivered put of `bytes`: inject + read when it fits the
 *                 inject size, else fi_write + its counter (delivery
 *                 complete): the library's putmem + quiet
 *   get           fi_read of `bytes`
 *   put_bw        `window` puts of `bytes` back to back (64, fewer above 64 KiB
 *                 so a window holds at most 4 MiB) (inject or fi_write,
 *                 retried while the queue is full), then their completion (the
 *                 counter, and one read when some were injected): the
 *                 library's putmem_nbi loop + quiet; per put, and MB/s
 *   atomic        fi_inject_atomic (64-bit add), then poll the write counter
 *   atomic_read   the same add followed by an 8-byte atomic read (a delivered
 *                 add: the library's atomic_add + quiet)
 *   atomic_bw     `window` adds back to back, then one atomic read
 *   fetch_add     fi_fetch_atomic (64-bit add) and its counter
 *   barrier       both processes: add 1 to the other's flag (inject atomic),
 *                 then poll their own until it counts the round: a 2-PE
 *                 dissemination barrier, the library's shmem_barrier_all
 *
 *   hps-bench-ofi-raw [--provider NAME]... [--ops all|LIST] [--iters N] [--reps R]
 *   (default providers: shm, tcp;ofi_rxm, sockets; absent ones are listed
 *   with "available": false; default ops: inject,inject_read,read; LIST is
 *   comma-separated op names)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "hps_bench.h"

enum op {
    OP_INJECT, OP_INJECT_READ, OP_READ, OP_PUT, OP_GET, OP_PUT_BW, OP_ATOMIC, OP_ATOMIC_READ,
    OP_ATOMIC_BW, OP_FETCH_ADD, OP_BARRIER, NOPS
};
static const char *const op_names[NOPS] = {
    "inject", "inject_read", "read", "put", "get", "put_bw", "atomic", "atomic_read",
    "atomic_bw", "fetch_add", "barrier",
};

/* The rows: an op at a size (and window for the _bw ops). */
typedef struct row {
    enum op op;
    size_t bytes;
    int window;
} row_t;
#define MAX_ROWS 64
#define MAX_MSG (1u << 20)
#define WINDOW 64
#define WINDOW_BYTES (4u << 20)
/* Bytes moved per repetition at most, so a 1 MiB row takes as long as an
 * 8-byte one, within bounds on the number of operations. */
#define BYTES_PER_REP (32u << 20)

typedef struct fab {
    struct fi_info *list, *fi;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_cntr *wcntr, *rcntr, *remote;   /* remote: operations into us, or NULL */
    struct fid_ep *ep;
    struct fid_mr *mr;
    fi_addr_t peer;
    uint64_t peer_addr, peer_key, writes, reads;
} fab_t;

/* What one side tells the other over the socketpair. */
typedef struct card {
    char name[256];
    uint64_t addr, key;
} card_t;

/* Registered on both sides: flags and landing words, then the target area
 * of puts and the source of gets, then the local buffer. */
enum { FLAG = 0, LAND = 8, AREA = 4096 };
static unsigned char mem[AREA + 2 * MAX_MSG] __attribute__((aligned(4096)));
#define WORD(i) ((uint64_t *)mem + (i))

#define TRY(call)                                                                   \
    do {                                                                            \
        int rc_ = (int)(call);                                                      \
        if (rc_) {                                                                  \
            hps_bench_log("%s: %s", #call, fi_strerror(-rc_));                      \
            return -1;                                                              \
        }                                                                           \
    } while (0)

static int loopback(const struct fi_info *fi)
{
    if (fi->addr_format == FI_SOCKADDR_IN && fi->src_addr)
        return (ntohl(((const struct sockaddr_in *)fi->src_addr)->sin_addr.s_addr) >> 24) == 127;
    return fi->addr_format != FI_SOCKADDR_IN6;    /* shm and other node-local formats */
}

static int fab_info(fab_t *f, const char *prov)
{
    struct fi_info *h = fi_allocinfo();
    h->caps = FI_RMA | FI_ATOMIC;
    h->ep_attr->type = FI_EP_RDM;
    h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    h->domain_attr->threading = FI_THREAD_SAFE;
    h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    h->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    h->tx_attr->msg_order = FI_ORDER_RMA_RAW | FI_ORDER_ATOMIC_RAW;
    h->fabric_attr->prov_name = strdup(prov);
    int rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &f->list);
    fi_freeinfo(h);
    for (f->fi = rc ? NULL : f->list; f->fi && !loopback(f->fi); f->fi = f->fi->next)
        ;
    return f->fi ? 0 : -1;
}

static int fab_open(fab_t *f, int sock)
{
    struct fi_info *fi = f->fi;
    TRY(fi_fabric(fi->fabric_attr, &f->fabric, NULL));
    TRY(fi_domain(f->fabric, fi, &f->domain, NULL));
    struct fi_av_attr av = { .type = FI_AV_TABLE };
    TRY(fi_av_open(f->domain, &av, &f->av, NULL));
    struct fi_cq_attr cq = { .format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE };
    TRY(fi_cq_open(f->domain, &cq, &f->cq, NULL));
    struct fi_cntr_attr c = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE };
    TRY(fi_cntr_open(f->domain, &c, &f->wcntr, NULL));
    TRY(fi_cntr_open(f->domain, &c, &f->rcntr, NULL));
    TRY(fi_endpoint(f->domain, fi, &f->ep, NULL));
    TRY(fi_ep_bind(f->ep, &f->av->fid, 0));
    TRY(fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION));
    TRY(fi_ep_bind(f->ep, &f->wcntr->fid, FI_WRITE));
    TRY(fi_ep_bind(f->ep, &f->rcntr->fid, FI_READ));
    /* Where the provider progresses per counter (sockets with manual
     * progress), only a counter of operations into us drives the receiving
     * side: the transport binds one too. */
    if (fi->caps & FI_RMA_EVENT) {
        TRY(fi_cntr_open(f->domain, &c, &f->remote, NULL));
        TRY(fi_ep_bind(f->ep, &f->remote->fid, FI_REMOTE_WRITE | FI_REMOTE_READ));
    }
    TRY(fi_enable(f->ep));
    TRY(fi_mr_reg(f->domain, mem, sizeof mem, FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE,
                  0, 1, 0, &f->mr, NULL));
    if (fi->domain_attr->mr_mode & FI_MR_ENDPOINT) {
        TRY(fi_mr_bind(f->mr, &f->ep->fid, 0));
        TRY(fi_mr_enable(f->mr));
    }
    card_t mine = { .key = fi_mr_key(f->mr) }, theirs;
    mine.addr = fi->domain_attr->mr_mode & FI_MR_VIRT_ADDR ? (uint64_t)(uintptr_t)mem : 0;
    size_t len = sizeof mine.name;
    TRY(fi_getname(&f->ep->fid, mine.name, &len));
    if (write(sock, &mine, sizeof mine) != sizeof mine || read(sock, &theirs, sizeof theirs) != sizeof theirs) {
        hps_bench_log("exchange with the other process failed");
        return -1;
    }
    if (fi_av_insert(f->av, theirs.name, 1, &f->peer, 0, NULL) != 1) {
        hps_bench_log("fi_av_insert failed");
        return -1;
    }
    f->peer_addr = theirs.addr;
    f->peer_key = theirs.key;
    return 0;
}

static void fab_close(fab_t *f)
{
    struct fid *fids[] = { f->ep ? &f->ep->fid : NULL, f->mr ? &f->mr->fid : NULL,
                           f->av ? &f->av->fid : NULL, f->remote ? &f->remote->fid : NULL,
                           f->wcntr ? &f->wcntr->fid : NULL,
                           f->rcntr ? &f->rcntr->fid : NULL, f->cq ? &f->cq->fid : NULL,
                           f->domain ? &f->domain->fid : NULL, f->fabric ? &f->fabric->fid : NULL };
    for (size_t i = 0; i < sizeof fids / sizeof fids[0]; i++)
        if (fids[i])
            fi_close(fids[i]);
    if (f->list)
        fi_freeinfo(f->list);
}

/* Drive the receiving side too (see fab_open). */
static void progress_remote(fab_t *f)
{
    if (f->remote)
        fi_cntr_read(f->remote);
}

/* Between polls: spin a little, then hand the CPU to any other runnable
 * thread, as a PE waiting inside the library does.  Polling without ever
 * yielding made this baseline up to 10x slower than the library whenever
 * other processes kept the 2 CPUs busy (a waiter holds the CPU its peer
 * needs until the scheduler preempts it). */
static void poll_pause(unsigned *n)
{
    if (++*n > 200)
        sched_yield();
}

/* Poll until the counter reaches n (polling is what progresses
 * manual-progress providers). */
static int wait_count(fab_t *f, struct fid_cntr *c, uint64_t n)
{
    for (unsigned k = 0; fi_cntr_read(c) < n; poll_pause(&k)) {
        if (fi_cntr_readerr(c))
            return -1;
        progress_remote(f);
    }
    return 0;
}

/* Issue, retrying while the provider's queue is full: polling the counters
 * is what drains it. */
#define ISSUE(f, call) \
    do { \
        ssize_t rc_; \
        for (unsigned k_ = 0; (rc_ = (call)) == -FI_EAGAIN; poll_pause(&k_)) { \
            fi_cntr_read((f)->wcntr); \
            fi_cntr_read((f)->rcntr); \
            progress_remote(f); \
        } \
        if (rc_) \
            return -1; \
    } while (0)

static uint64_t g_one = 1;

static int put_one(fab_t *f, size_t bytes, size_t off, int *injected)
{
    unsigned char *src = mem + AREA + MAX_MSG;
    uint64_t raddr = f->peer_addr + AREA + off;
    if (bytes <= f->fi->tx_attr->inject_size) {
        ISSUE(f, fi_inject_write(f->ep, src, bytes, f->peer, raddr, f->peer_key));
        *injected = 1;
    } else {
        ISSUE(f, fi_write(f->ep, src, bytes, NULL, f->peer, raddr, f->peer_key, NULL));
    }
    f->writes++;
    return 0;
}

static int read_one(fab_t *f, void *dst, size_t bytes, size_t off)
{
    ISSUE(f, fi_read(f->ep, dst, bytes, NULL, f->peer, f->peer_addr + off, f->peer_key, NULL));
    f->reads++;
    return 0;
}

static int add_one(fab_t *f, size_t word)
{
    ISSUE(f, fi_inject_atomic(f->ep, &g_one, 1, f->peer, f->peer_addr + word * 8, f->peer_key,
                              FI_INT64, FI_SUM));
    f->writes++;
    return 0;
}

static int atomic_read_one(fab_t *f)
{
    ISSUE(f, fi_fetch_atomic(f->ep, WORD(LAND), 1, NULL, WORD(LAND + 1), NULL, f->peer,
                             f->peer_addr + 8 * (LAND + 2), f->peer_key, FI_UINT64,
                             FI_ATOMIC_READ, NULL));
    f->reads++;
    return 0;
}

static int complete(fab_t *f)
{
    return wait_count(f, f->wcntr, f->writes) || wait_count(f, f->rcntr, f->reads);
}

/* One measured unit of r: an operation, or a window of them. */
static int one(fab_t *f, const row_t *r, uint64_t *round)
{
    int injected = 0;
    switch (r->op) {
    case OP_INJECT:
        return put_one(f, 8, 0, &injected) || complete(f);
    case OP_INJECT_READ:
        return put_one(f, 8, 0, &injected) || read_one(f, WORD(LAND), 8, 0) || complete(f);
    case OP_READ:
        return read_one(f, WORD(LAND), 8, 0) || complete(f);
    case OP_PUT:
        if (put_one(f, r->bytes, 0, &injected))
            return -1;
        return (injected && read_one(f, WORD(LAND), 8, 0)) || complete(f);
    case OP_GET:
        return read_one(f, mem + AREA + MAX_MSG, r->bytes, AREA) || complete(f);
    case OP_PUT_BW:
        for (int i = 0; i < r->window; i++)
            if (put_one(f, r->bytes, (i * r->bytes) % MAX_MSG, &injected))
                return -1;
        return (injected && read_one(f, WORD(LAND), 8, 0)) || complete(f);
    case OP_ATOMIC:
        return add_one(f, LAND + 2) || complete(f);
    case OP_ATOMIC_READ:
        return add_one(f, LAND + 2) || atomic_read_one(f) || complete(f);
    case OP_ATOMIC_BW:
        for (int i = 0; i < r->window; i++)
            if (add_one(f, LAND + 2))
                return -1;
        return atomic_read_one(f) || complete(f);
    case OP_FETCH_ADD:
        ISSUE(f, fi_fetch_atomic(f->ep, &g_one, 1, NULL, WORD(LAND), NULL, f->peer,
                                 f->peer_addr + 8 * (LAND + 2), f->peer_key, FI_INT64, FI_SUM,
                                 NULL));
        f->reads++;
        return complete(f);
    case OP_BARRIER:
        if (add_one(f, FLAG))
            return -1;
        ++*round;
        for (unsigned k = 0; *(volatile uint64_t *)WORD(FLAG) < *round; poll_pause(&k)) {
            fi_cntr_read(f->wcntr);
            fi_cntr_read(f->rcntr);
            progress_remote(f);
        }
        return complete(f);
    default:
        return -1;
    }
}

/* Units per repetition: the iterations asked for, fewer for large
 * transfers (BYTES_PER_REP), at least 8. */
static long units(const row_t *r, long iters)
{
    size_t per = r->bytes * (size_t)(r->window ? r->window : 1);
    long n = (long)(BYTES_PER_REP / (per ? per : 1));
    n = n < iters ? n : iters;
    return n < 8 ? 8 : n;
}

/* Both processes of a barrier row run this loop; the initiator times it. */
static int run_row(fab_t *f, const row_t *r, long iters, int reps, double *out, uint64_t *round)
{
    long n = units(r, iters);
    for (long i = 0; i < n / 10 + 4; i++)        /* connect, warm up */
        if (one(f, r, round))
            return -1;
    for (int k = 0; k < reps; k++) {
        uint64_t t0 = hps_bench_now_ns();
        for (long i = 0; i < n; i++)
            if (one(f, r, round))
                return -1;
        if (out)
            out[k] = (double)(hps_bench_now_ns() - t0) / (double)n;
    }
    return 0;
}

/* The target: drive progress until told what to do next: 'x' ends, 'b'
 * joins a barrier row (its index follows) and answers 'd' when its side
 * of the row is complete. */
static int serve(fab_t *f, int sock, const row_t *rows, long iters, int reps)
{
    uint64_t round = 0, seen = 0;
    unsigned k = 0;
    fcntl(sock, F_SETFL, O_NONBLOCK);
    for (;;) {
        for (int i = 0; i < 256; i++, poll_pause(&k)) {
            uint64_t t = fi_cntr_read(f->wcntr) + fi_cntr_read(f->rcntr) +
                         (f->remote ? fi_cntr_read(f->remote) : 0);
            /* Traffic keeps it polling without yielding, as in the library. */
            if (t != seen) {
                seen = t;
                k = 0;
            }
        }
        unsigned char cmd[2];
        ssize_t n = read(sock, cmd, 2);
        if (n == 2 && cmd[0] == 'b') {
            if (run_row(f, &rows[cmd[1]], iters, reps, NULL, &round) || write(sock, "d", 1) != 1)
                return -1;
        } else if (n >= 1 || (errno != EAGAIN && errno != EINTR)) {
            return 0;
        }
    }
}

/* After a barrier row: the target's last add completes only when this
 * side's provider acknowledges it, which a manual-progress provider
 * (tcp;ofi_rxm) does only while this side polls, so poll until the target
 * says its side is done.  Stopping at once left the target waiting for
 * ever. */
static int await_peer(fab_t *f, int sock)
{
    for (unsigned k = 0;; poll_pause(&k)) {
        fi_cntr_read(f->wcntr);
        fi_cntr_read(f->rcntr);
        progress_remote(f);
        char c;
        ssize_t n = recv(sock, &c, 1, MSG_DONTWAIT);
        if (n == 1)
            return c == 'd' ? 0 : -1;
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            return -1;
    }
}

static int run_provider(const char *prov, const row_t *rows, int nrows, long iters, int reps,
                        double out[][HPS_BENCH_MAX_REPS])
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    int me = pid == 0, sock = sv[me];
    close(sv[!me]);
    fab_t f = { 0 };
    int rc = fab_info(&f, prov) || fab_open(&f, sock);
    if (me) {
        if (!rc)
            rc = serve(&f, sock, rows, iters, reps);
        fab_close(&f);
        _exit(rc ? 1 : 0);
    }
    uint64_t round = 0;
    for (int i = 0; !rc && i < nrows; i++) {
        if (rows[i].op == OP_BARRIER) {
            unsigned char cmd[2] = { 'b', (unsigned char)i };
            if (write(sock, cmd, 2) != 2)
                rc = -1;
        }
        if (!rc && run_row(&f, &rows[i], iters, reps, out[i], &round)) {
            hps_bench_log("%s: %s of %zu bytes failed", prov, op_names[rows[i].op], rows[i].bytes);
            rc = -1;
        }
        if (!rc && rows[i].op == OP_BARRIER)
            rc = await_peer(&f, sock);
    }
    if (write(sock, "x", 1) != 1)
        rc = -1;
    int status;
    waitpid(pid, &status, 0);
    fab_close(&f);
    close(sock);
    return rc || !WIFEXITED(status) || WEXITSTATUS(status) ? -1 : 0;
}

static int provider_present(const char *prov)
{
    fab_t f = { 0 };
    int ok = fab_info(&f, prov) == 0;
    fab_close(&f);
    return ok;
}

/* The rows of one op name ("all": every op), for the sized ones the sizes
 * hps-bench-shmem measures (1 B..1 MiB in powers of 4, and 8 B), so every
 * library row has its bare twin. */
static int add_rows(const char *name, row_t *rows, int n)
{
    static const size_t sizes[] = { 1, 4, 8, 16, 64, 256, 1024, 4096, 16384, 65536, 262144,
                                    1048576 };
    for (int op = 0; op < NOPS; op++) {
        if (strcmp(name, "all") && strcmp(name, op_names[op]))
            continue;
        int sized = op == OP_PUT || op == OP_GET || op == OP_PUT_BW;
        for (size_t s = 0; s < (sized ? sizeof sizes / sizeof sizes[0] : 1); s++) {
            size_t bytes = sized ? sizes[s] : 8;
            /* WINDOW operations, or as many as make WINDOW_BYTES. */
            int window = op == OP_PUT_BW || op == OP_ATOMIC_BW ? WINDOW : 0;
            if (window && bytes * WINDOW > WINDOW_BYTES)
                window = (int)(WINDOW_BYTES / bytes);
            if (n == MAX_ROWS)
                return n;
            rows[n++] = (row_t){ (enum op)op, bytes, window };
        }
        if (strcmp(name, "all"))
            return n;
    }
    if (strcmp(name, "all")) {
        hps_bench_log("unknown op %s", name);
        exit(2);
    }
    return n;
}

int main(int argc, char **argv)
{
    hps_bench_args_t o = HPS_BENCH_ARGS_INIT;
    o.iters = 2000;
    const char *provs[16];
    int nprov = 0, nrows = 0;
    static row_t rows[MAX_ROWS];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--provider") && v && nprov < 16) {
            provs[nprov++] = v;
        } else if (!strcmp(a, "--ops") && v) {
            char list[256];
            snprintf(list, sizeof list, "%s", v);
            for (char *save, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
                nrows = add_rows(t, rows, nrows);
        } else if (!hps_bench_parse_common(&o, a, v)) {
            hps_bench_log("usage: %s [--provider NAME]... [--ops all|LIST] [--iters N] [--reps R]",
                          argv[0]);
            return 2;
        }
        i++;
    }
    if (!nprov) {
        provs[nprov++] = "shm";
        provs[nprov++] = "tcp;ofi_rxm";
        provs[nprov++] = "sockets";
    }
    if (!nrows)
        for (const char *d[] = { "inject", "inject_read", "read" }, **p = d; p < d + 3; p++)
            nrows = add_rows(*p, rows, nrows);
    /* As the transport does (ofi_setup.c): sockets' progress threads must
     * not spin 10 ms after each event on a machine with few cores. */
    setenv("FI_SOCKETS_PE_WAITTIME", "0", 0);
    static double res[16][MAX_ROWS][HPS_BENCH_MAX_REPS];
    int state[16];                                  /* 1 measured, 0 absent, -1 failed */
    for (int p = 0; p < nprov; p++) {
        state[p] = provider_present(provs[p]);
        if (state[p] && run_provider(provs[p], rows, nrows, o.iters, (int)o.reps, res[p])) {
            hps_bench_log("%s: measurement failed", provs[p]);
            state[p] = -1;
        }
    }
    hps_json_begin_object(NULL);
    hps_json_str("program", "hps-bench-ofi-raw");
    hps_bench_context();
    hps_json_int("iters", o.iters);
    hps_json_int("reps", o.reps);
    hps_json_begin_array("rows");
    for (int p = 0; p < nprov; p++) {
        for (int i = 0; i < nrows; i++) {
            const row_t *r = &rows[i];
            hps_json_begin_object(NULL);
            hps_json_str("provider", provs[p]);
            hps_json_str("op", op_names[r->op]);
            hps_json_int("bytes", (int64_t)r->bytes);
            if (r->window)
                hps_json_int("window", r->window);
            hps_json_bool("available", state[p] != 0);
            if (state[p] == 1) {
                double us[HPS_BENCH_MAX_REPS];
                for (int k = 0; k < o.reps; k++)
                    us[k] = res[p][i][k] / 1e3 / (r->window ? r->window : 1);
                hps_json_num_array("reps_us", us, (int)o.reps);
                double med = hps_bench_median(us, (size_t)o.reps);
                hps_json_num("median_us", med);
                if (r->window)
                    hps_json_num("mb_s", (double)r->bytes / med);
            } else {
                hps_json_null("median_us");
            }
            hps_json_end_object();
        }
    }
    hps_json_end_array();
    hps_json_end_object();
    int failed = 0;
    for (int p = 0; p < nprov; p++)
        failed |= state[p] < 0;
    return hps_json_finish() || failed;
}
