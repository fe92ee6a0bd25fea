/* SPDX-License-Identifier: MIT */
/*
 * ofi_raw.c - hps-bench-ofi-raw: what libfabric itself costs, with no
 * OpenSHMEM library in the way, between two processes on this machine.
 *
 * The baseline the target compares shmem put + quiet with: an
 * 8-byte fi_inject_write followed by polling the write counter until it
 * counts it ("inject"); plus the same write followed by an 8-byte fi_read
 * of the same peer ("inject_read": what hpsync's quiet does so the write is
 * known to be processed at the target, see docs/shmem.md) and a lone
 * 8-byte fi_read ("read").  The endpoint is configured as the transport
 * configures its own (RDM, FI_RMA|FI_ATOMIC, thread-safe domain,
 * FI_DELIVERY_COMPLETE, loopback-bound entry), so the two are comparable.
 * The target process polls its counter meanwhile, as a PE waiting inside
 * the library does.
 *
 *   hps-bench-ofi-raw [--provider NAME]... [--iters N] [--reps R]
 *   (default providers: shm, tcp;ofi_rxm, sockets; absent ones are listed
 *   with "available": false)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "hps_bench.h"

enum { OP_INJECT, OP_INJECT_READ, OP_READ, NOPS };
static const char *const op_names[NOPS] = { "inject", "inject_read", "read" };

typedef struct fab {
    struct fi_info *list, *fi;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_cntr *wcntr, *rcntr;
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

static uint64_t word[64] __attribute__((aligned(4096)));

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
    TRY(fi_enable(f->ep));
    TRY(fi_mr_reg(f->domain, word, sizeof word, FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE,
                  0, 1, 0, &f->mr, NULL));
    if (fi->domain_attr->mr_mode & FI_MR_ENDPOINT) {
        TRY(fi_mr_bind(f->mr, &f->ep->fid, 0));
        TRY(fi_mr_enable(f->mr));
    }
    card_t mine = { .key = fi_mr_key(f->mr) }, theirs;
    mine.addr = fi->domain_attr->mr_mode & FI_MR_VIRT_ADDR ? (uint64_t)(uintptr_t)word : 0;
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
                           f->av ? &f->av->fid : NULL, f->wcntr ? &f->wcntr->fid : NULL,
                           f->rcntr ? &f->rcntr->fid : NULL, f->cq ? &f->cq->fid : NULL,
                           f->domain ? &f->domain->fid : NULL, f->fabric ? &f->fabric->fid : NULL };
    for (size_t i = 0; i < sizeof fids / sizeof fids[0]; i++)
        if (fids[i])
            fi_close(fids[i]);
    if (f->list)
        fi_freeinfo(f->list);
}

/* Issue, retrying while the provider is busy (polling the counter is what
 * progresses manual-progress providers), then poll until counted. */
static int wait_count(struct fid_cntr *c, uint64_t n)
{
    while (fi_cntr_read(c) < n)
        if (fi_cntr_readerr(c))
            return -1;
    return 0;
}

static int one_op(fab_t *f, int op)
{
    static uint64_t v = 8;
    ssize_t rc;
    if (op != OP_READ) {
        while ((rc = fi_inject_write(f->ep, &v, 8, f->peer, f->peer_addr, f->peer_key)) == -FI_EAGAIN)
            fi_cntr_read(f->wcntr);
        if (rc)
            return -1;
        f->writes++;
    }
    if (op != OP_INJECT) {
        while ((rc = fi_read(f->ep, &word[8], 8, NULL, f->peer, f->peer_addr, f->peer_key, NULL)) == -FI_EAGAIN)
            fi_cntr_read(f->rcntr);
        if (rc)
            return -1;
        f->reads++;
    }
    return wait_count(f->wcntr, f->writes) || wait_count(f->rcntr, f->reads);
}

/* The initiator: reps x iters of each operation, mean per op in ns. */
static int measure(fab_t *f, long iters, int reps, double out[NOPS][HPS_BENCH_MAX_REPS])
{
    for (int op = 0; op < NOPS; op++) {
        for (long i = 0; i < iters / 10 + 10; i++)        /* connect, warm up */
            if (one_op(f, op))
                return -1;
        for (int r = 0; r < reps; r++) {
            uint64_t t0 = hps_bench_now_ns();
            for (long i = 0; i < iters; i++)
                if (one_op(f, op))
                    return -1;
            out[op][r] = (double)(hps_bench_now_ns() - t0) / (double)iters;
        }
    }
    return 0;
}

/* The target: drive progress until the initiator says it is done. */
static void serve(fab_t *f, int sock)
{
    char c;
    fcntl(sock, F_SETFL, O_NONBLOCK);
    for (;;) {
        for (int i = 0; i < 256; i++)
            fi_cntr_read(f->wcntr);
        if (read(sock, &c, 1) == 1 || (errno != EAGAIN && errno != EINTR))
            return;
    }
}

static int run_provider(const char *prov, long iters, int reps, double out[NOPS][HPS_BENCH_MAX_REPS])
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
            serve(&f, sock);
        fab_close(&f);
        _exit(rc ? 1 : 0);
    }
    if (!rc)
        rc = measure(&f, iters, reps, out);
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

int main(int argc, char **argv)
{
    hps_bench_args_t o = HPS_BENCH_ARGS_INIT;
    o.iters = 2000;
    const char *provs[16];
    int nprov = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--provider") && v && nprov < 16)
            provs[nprov++] = v;
        else if (!hps_bench_parse_common(&o, a, v)) {
            hps_bench_log("usage: %s [--provider NAME]... [--iters N] [--reps R]", argv[0]);
            return 2;
        }
        i++;
    }
    if (!nprov) {
        provs[nprov++] = "shm";
        provs[nprov++] = "tcp;ofi_rxm";
        provs[nprov++] = "sockets";
    }
    /* As the transport does (ofi_setup.c): sockets' progress threads must
     * not spin 10 ms after each event on a machine with few cores. */
    setenv("FI_SOCKETS_PE_WAITTIME", "0", 0);
    static double res[16][NOPS][HPS_BENCH_MAX_REPS];
    int state[16];                                  /* 1 measured, 0 absent, -1 failed */
    for (int p = 0; p < nprov; p++) {
        state[p] = provider_present(provs[p]);
        if (state[p] && run_provider(provs[p], o.iters, (int)o.reps, res[p])) {
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
        for (int op = 0; op < NOPS; op++) {
            hps_json_begin_object(NULL);
            hps_json_str("provider", provs[p]);
            hps_json_str("op", op_names[op]);
            hps_json_int("bytes", 8);
            hps_json_bool("available", state[p] != 0);
            if (state[p] == 1) {
                double us[HPS_BENCH_MAX_REPS];
                for (int r = 0; r < o.reps; r++)
                    us[r] = res[p][op][r] / 1e3;
                hps_json_num_array("reps_us", us, (int)o.reps);
                hps_json_num("median_us", hps_bench_median(us, (size_t)o.reps));
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
