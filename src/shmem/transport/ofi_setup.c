/* SPDX-License-Identifier: MIT */
/*
 * ofi_setup.c - bringing the libfabric transport up and down: which
 * provider, the fabric objects, memory registration, and the exchange of
 * endpoint names, keys and base addresses through the runtime.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

#include "../runtime/errline.h"
#include "../runtime/runtime.h"
#include "ofi_internal.h"

hps_ofi_state_t hps_ofi;
static int force_mr_local;

/* The registration modes this code knows how to follow; the provider
 * answers with the subset it requires (FI_MR_RAW, device memory and MMU
 * notification are left out: a provider needing them is not offered). */
#define HPS_OFI_MR_MODES \
    (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT)

/* Keys we ask for when the provider lets us choose (no FI_MR_PROV_KEY):
 * 1 and 2 for the regions, then one per local registration, which must be
 * unique in the domain too. */
#define HPS_OFI_KEY_LOCAL 100
static hps_au64 next_key = HPS_OFI_KEY_LOCAL;

int hps_ofi_fail(const char *call, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hps_shmem_verrline(call, fmt, ap);
    va_end(ap);
    return -1;
}

int hps_ofi_fail_rc(const char *call, const char *what, ssize_t rc)
{
    return hps_ofi_fail(call, "%s failed: %s", what, fi_strerror((int)-rc));
}

void hps_ofi_test_force_mr_local(int on) { force_mr_local = on; }

const char *hps_ofi_provider(void) { return hps_ofi.provider; }

const hps_ofi_target_t *hps_ofi_row(int region, int pe) { return &hps_ofi.row[region][pe]; }

/* ---- choosing a provider ------------------------------------------------ */

static int src_is_loopback(const struct fi_info *fi)
{
    if (!fi->src_addr)
        return 0;
    if (fi->addr_format == FI_SOCKADDR_IN) {
        const struct sockaddr_in *a = fi->src_addr;
        return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    }
    if (fi->addr_format == FI_SOCKADDR_IN6) {
        const struct sockaddr_in6 *a = fi->src_addr;
        return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
    }
    return 0;
}

/* The shm provider, whatever utility provider sits on it, only reaches
 * this machine. */
static int node_local_provider(const struct fi_info *fi)
{
    const char *p = fi->fabric_attr->prov_name;
    return strcmp(p, "shm") == 0 || strncmp(p, "shm;", 4) == 0;
}

static int job_on_one_node(void)
{
    for (int pe = 1; pe < hps_rt_size(); pe++)
        if (hps_rt_node_of(pe) != hps_rt_node_of(0))
            return 0;
    return 1;
}

/*
 * The first entry (in libfabric's order of preference) that can reach every
 * PE of this job: on one machine, one bound to the loopback interface or a
 * node-local provider, so traffic never leaves the machine; across
 * machines, anything but those.
 */
static struct fi_info *pick(struct fi_info *list)
{
    int one_node = job_on_one_node();
    for (struct fi_info *fi = list; fi; fi = fi->next) {
        int local = src_is_loopback(fi) || node_local_provider(fi);
        if (local == one_node)
            return fi;
    }
    return one_node ? list : NULL;
}

static struct fi_info *hints_new(const char *prov)
{
    struct fi_info *h = fi_allocinfo();
    if (!h)
        return NULL;
    h->caps = FI_RMA | FI_ATOMIC;
    h->mode = 0;                                    /* we take no mode bits */
    h->ep_attr->type = FI_EP_RDM;
    h->domain_attr->mr_mode = HPS_OFI_MR_MODES;
    /* A progress thread may call in while the application does. */
    h->domain_attr->threading = FI_THREAD_SAFE;
    /* We drive progress (our waits, and a progress thread that naps):
     * where a provider offers both, its own threads would only compete
     * for the CPUs.  The sockets provider's spin up to 1 ms after every
     * event (its FI_SOCKETS_PE_WAITTIME is in whole milliseconds and
     * compared with '>'), so with 4 PEs on 2 cores each PE's thread took
     * 40-50 % of a CPU and the PEs crawled: the shmem coll test took 49 s
     * at 4 PEs (0.8 s with manual progress), and a benchmark's 4-PE
     * collectives did not finish in 150 s. */
    h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    /* Counters count an operation once the target has processed it, which
     * is what shmem_quiet promises (see hps_ofi_quiet for injects). */
    h->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    /* Quiet's flush read must be processed after the writes before it. */
    h->tx_attr->msg_order = FI_ORDER_RMA_RAW | FI_ORDER_ATOMIC_RAW;
    if (prov && !(h->fabric_attr->prov_name = strdup(prov))) {
        fi_freeinfo(h);
        return NULL;
    }
    return h;
}

static int choose_provider(void)
{
    const char *call = "hps_ofi_init";
    const char *want = secure_getenv("HPSYNC_SHMEM_PROVIDER");
    if (want && !*want)
        want = NULL;
    struct fi_info *hints = hints_new(want), *list = NULL;
    if (!hints)
        return hps_ofi_fail(call, "out of memory");
    int rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &list);
    fi_freeinfo(hints);
    struct fi_info *fi = rc ? NULL : pick(list);
    if (!fi) {
        int found = list != NULL;       /* but none for this job */
        const char *why = found ? "cannot reach PEs on other nodes"
                                : "is not available here with reliable RMA and atomics, "
                                  "delivery-complete counters and read-after-write order";
        if (list)
            fi_freeinfo(list);
        if (want)
            return hps_ofi_fail(call, "libfabric provider \"%s\" (HPSYNC_SHMEM_PROVIDER) %s "
                                "(fi_info -l lists providers)", want, why);
        return hps_ofi_fail(call, "no libfabric provider %s%s", found ? "that " : "",
                            found ? why : "offers reliable RMA and atomics (fi_info -c "
                                          "'FI_RMA|FI_ATOMIC' -t FI_EP_RDM)");
    }
    hps_ofi.info = fi_dupinfo(fi);
    fi_freeinfo(list);
    if (!hps_ofi.info)
        return hps_ofi_fail(call, "out of memory");
    snprintf(hps_ofi.provider, sizeof hps_ofi.provider, "%s", hps_ofi.info->fabric_attr->prov_name);
    return 0;
}

/* ---- fabric objects ------------------------------------------------------ */

static int open_objects(void)
{
    const char *call = "hps_ofi_init";
    struct fi_info *fi = hps_ofi.info;
    int rc;
    if ((rc = fi_fabric(fi->fabric_attr, &hps_ofi.fabric, NULL)))
        return hps_ofi_fail_rc(call, "fi_fabric", rc);
    if ((rc = fi_domain(hps_ofi.fabric, fi, &hps_ofi.domain, NULL)))
        return hps_ofi_fail_rc(call, "fi_domain", rc);
    struct fi_av_attr av_attr = {
        .type = fi->domain_attr->av_type == FI_AV_MAP ? FI_AV_MAP : FI_AV_TABLE,
        .count = (size_t)hps_ofi.npes,
    };
    if ((rc = fi_av_open(hps_ofi.domain, &av_attr, &hps_ofi.av, NULL)))
        return hps_ofi_fail_rc(call, "fi_av_open", rc);
    if ((rc = fi_endpoint(hps_ofi.domain, fi, &hps_ofi.ep, NULL)))
        return hps_ofi_fail_rc(call, "fi_endpoint", rc);
    if ((rc = fi_ep_bind(hps_ofi.ep, &hps_ofi.av->fid, 0)))
        return hps_ofi_fail_rc(call, "fi_ep_bind", rc);
    if (hps_ofi_ctx_bind(&hps_ofi.dflt, hps_ofi.ep, 1))
        return -1;
    if ((rc = fi_enable(hps_ofi.ep)))
        return hps_ofi_fail_rc(call, "fi_enable", rc);
    return 0;
}

/* ---- memory registration ------------------------------------------------- */

static int reg(const char *what, void *base, size_t size, uint64_t access, uint64_t key,
               struct fid_mr **mr, void **desc)
{
    const char *call = "hps_ofi_init";
    uint64_t mode = hps_ofi.info->domain_attr->mr_mode;
    int rc;
    /* FI_MR_ALLOCATED: pages must exist at registration time; the heap may
     * still be untouched, so populate it (without changing its contents,
     * and at the cost of making all of it resident). */
    if (mode & FI_MR_ALLOCATED) {
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo = (uintptr_t)base & ~(page - 1);
        uintptr_t hi = ((uintptr_t)base + size + page - 1) & ~(page - 1);
        if (madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) != 0)
            return hps_ofi_fail(call, "%s: the provider needs populated memory (FI_MR_ALLOCATED) "
                                "and madvise(MADV_POPULATE_WRITE) failed: %s", what, strerror(errno));
    }
    if ((rc = fi_mr_reg(hps_ofi.domain, base, size, access, 0, key, 0, mr, NULL)))
        return hps_ofi_fail_rc(call, what, rc);
    if (mode & FI_MR_ENDPOINT) {
        if ((rc = fi_mr_bind(*mr, &hps_ofi.ep->fid, 0)) || (rc = fi_mr_enable(*mr)))
            return hps_ofi_fail_rc(call, what, rc);
    }
    *desc = fi_mr_desc(*mr);
    return 0;
}

static int register_memory(const hps_ofi_region_t regions[HPS_OFI_REGIONS])
{
    uint64_t access = FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE;
    hps_ofi.flush_region = -1;
    for (int r = 0; r < HPS_OFI_REGIONS; r++) {
        hps_ofi.region[r] = regions[r];
        if (!regions[r].size)
            continue;
        if (reg(r ? "fi_mr_reg (data segment)" : "fi_mr_reg (symmetric heap)", regions[r].base,
                regions[r].size, access, (uint64_t)r + 1, &hps_ofi.mr[r], &hps_ofi.desc[r]))
            return -1;
        /* Same layout on every PE (one binary, one heap size), so the
         * aligned word's offset is the same everywhere. */
        size_t align = (size_t)(-(uintptr_t)regions[r].base & 7);
        if (hps_ofi.flush_region < 0 && regions[r].size >= align + sizeof(uint64_t)) {
            hps_ofi.flush_region = r;
            hps_ofi.flush_off = align;
        }
    }
    return 0;
}

int hps_ofi_reg_local(const char *call, const char *what, struct fid_ep *ep, void *buf,
                      size_t len, uint64_t access, struct fid_mr **mr, void **desc)
{
    uint64_t key = hps_faa_relaxed(&next_key, 1);
    int rc = fi_mr_reg(hps_ofi.domain, buf, len, access, 0, key, 0, mr, NULL);
    if (rc)
        return hps_ofi_fail_rc(call, what, rc);
    if (hps_ofi.info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
        if ((rc = fi_mr_bind(*mr, &ep->fid, 0)) || (rc = fi_mr_enable(*mr))) {
            fi_close(&(*mr)->fid);
            *mr = NULL;
            return hps_ofi_fail_rc(call, what, rc);
        }
    }
    *desc = fi_mr_desc(*mr);
    return 0;
}

int hps_ofi_local_desc(const char *call, hps_ofi_cstate_t *st, const void *buf, size_t len,
                       uint64_t access, void **desc, struct fid_mr **tmp)
{
    *desc = NULL;
    *tmp = NULL;
    if (!hps_ofi.mr_local)
        return 0;
    const char *p = buf;
    for (int r = 0; r < HPS_OFI_REGIONS; r++) {
        const char *b = hps_ofi.region[r].base;
        if (hps_ofi.mr[r] && p >= b && p + len <= b + hps_ofi.region[r].size) {
            *desc = hps_ofi.desc[r];
            return 0;
        }
    }
    const char *s = (const char *)st->scratch;
    if (p >= s && p + len <= s + sizeof *st->scratch) {
        *desc = st->scratch_desc;
        return 0;
    }
    /* Neither symmetric nor ours: register it for this one operation. */
    return hps_ofi_reg_local(call, "fi_mr_reg (local buffer)", st->ep, (void *)buf, len, access, tmp,
                             desc);
}

void hps_ofi_local_done(struct fid_mr *tmp)
{
    if (tmp)
        fi_close(&tmp->fid);
}

/* ---- addresses ------------------------------------------------------------- */

/* What each PE publishes besides its endpoint name.  The provider name lets
 * every PE check that all of them chose the same one. */
typedef struct hps_ofi_card {
    uint64_t base[HPS_OFI_REGIONS];
    uint64_t key[HPS_OFI_REGIONS];
    char provider[64];
} hps_ofi_card_t;

static int publish(void)
{
    const char *call = "hps_ofi_init";
    char name[HPS_RT_MAX_VALUE] = { 0 };
    size_t len = sizeof name;
    int rc = fi_getname(&hps_ofi.ep->fid, name, &len);
    if (rc == -FI_ETOOSMALL)
        return hps_ofi_fail(call, "endpoint name of %zu bytes exceeds the runtime's %d", len,
                            HPS_RT_MAX_VALUE);
    if (rc)
        return hps_ofi_fail_rc(call, "fi_getname", rc);
    hps_ofi_card_t card = { 0 };
    int virt = !!(hps_ofi.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR);
    for (int r = 0; r < HPS_OFI_REGIONS; r++) {
        if (!hps_ofi.mr[r])
            continue;
        card.base[r] = virt ? (uint64_t)(uintptr_t)hps_ofi.region[r].base : 0;
        card.key[r] = fi_mr_key(hps_ofi.mr[r]);
        if (card.key[r] == FI_KEY_NOTAVAIL)
            return hps_ofi_fail(call, "the provider's memory keys are not 64-bit (FI_MR_RAW)");
    }
    memcpy(card.provider, hps_ofi.provider, sizeof card.provider);
    /* Fixed-size values: hps_rt_get wants the length that was put. */
    if (hps_rt_put("hps-ofi-name", name, sizeof name) ||
        hps_rt_put("hps-ofi-card", &card, sizeof card))
        return -1;
    return hps_rt_exchange();
}

static int insert_peers(void)
{
    const char *call = "hps_ofi_init";
    for (int r = 0; r < HPS_OFI_REGIONS; r++) {
        hps_ofi.row[r] = calloc((size_t)hps_ofi.npes, sizeof(hps_ofi_target_t));
        if (!hps_ofi.row[r])
            return hps_ofi_fail(call, "out of memory");
    }
    for (int pe = 0; pe < hps_ofi.npes; pe++) {
        char name[HPS_RT_MAX_VALUE];
        hps_ofi_card_t card;
        if (hps_rt_get(pe, "hps-ofi-name", name, sizeof name) ||
            hps_rt_get(pe, "hps-ofi-card", &card, sizeof card))
            return -1;
        card.provider[sizeof card.provider - 1] = 0;
        if (strcmp(card.provider, hps_ofi.provider) != 0)
            return hps_ofi_fail(call, "PE %d uses libfabric provider \"%s\", this PE (%d) \"%s\"",
                                pe, card.provider, hps_ofi.me, hps_ofi.provider);
        /* One at a time, so the table index is the PE even for AV_MAP. */
        fi_addr_t addr;
        int n = fi_av_insert(hps_ofi.av, name, 1, &addr, 0, NULL);
        if (n != 1)
            return hps_ofi_fail(call, "fi_av_insert of PE %d failed%s%s", pe, n < 0 ? ": " : "",
                                n < 0 ? fi_strerror(-n) : "");
        for (int r = 0; r < HPS_OFI_REGIONS; r++)
            hps_ofi.row[r][pe] = (hps_ofi_target_t){ card.base[r], card.key[r], addr, r, pe };
    }
    return 0;
}

/* ---- init / finalize ------------------------------------------------------- */

static void close_fid(void *fid_ptr)
{
    struct fid **f = fid_ptr;
    if (*f) {
        fi_close(*f);
        *f = NULL;
    }
}

/* Close whatever exists, in dependency order (also after a failed init). */
static void teardown(void)
{
    hps_ofi_progress_stop();
    hps_ofi_ctx_fini_all();
    close_fid(&hps_ofi.ep);
    for (int r = 0; r < HPS_OFI_REGIONS; r++)
        close_fid(&hps_ofi.mr[r]);
    hps_ofi_ctx_fini_default();
    close_fid(&hps_ofi.av);
    close_fid(&hps_ofi.remote_cntr);
    close_fid(&hps_ofi.domain);
    close_fid(&hps_ofi.fabric);
    if (hps_ofi.info)
        fi_freeinfo(hps_ofi.info);
    for (int r = 0; r < HPS_OFI_REGIONS; r++)
        free(hps_ofi.row[r]);
    pthread_mutex_destroy(&hps_ofi.ctx_lock);
    memset(&hps_ofi, 0, sizeof hps_ofi);
}

int hps_ofi_init(hps_ofi_setup_t *setup)
{
    memset(&hps_ofi, 0, sizeof hps_ofi);
    pthread_mutex_init(&hps_ofi.ctx_lock, NULL);
    hps_ofi.me = hps_rt_rank();
    hps_ofi.npes = hps_rt_size();
    if (choose_provider() || open_objects())
        goto fail;
    struct fi_info *fi = hps_ofi.info;
    hps_ofi.mr_local = force_mr_local || !!(fi->domain_attr->mr_mode & FI_MR_LOCAL);
    /* sockets progresses per counter: a read of the write or read counter
     * drives the transmit side only, the receiving side needs a counter of
     * operations into us (sock_cntr_progress walks the counter's tx and rx
     * lists).  shm and tcp;ofi_rxm progress the whole endpoint on any
     * counter, so there one read is enough. */
    hps_ofi.progress_rx = hps_ofi.remote_cntr && fi->domain_attr->data_progress == FI_PROGRESS_MANUAL &&
                          !strcmp(hps_ofi.provider, "sockets");
    hps_ofi.max_msg = fi->ep_attr->max_msg_size;
    /* Writes placed in order for any size we may send: a fence need not
     * wait (hps_ofi_fence). */
    hps_ofi.fence_is_free = (fi->tx_attr->msg_order & FI_ORDER_WAW) == FI_ORDER_WAW &&
                            fi->ep_attr->max_order_waw_size >= fi->ep_attr->max_msg_size;
    /* shmem_TYPENAME_p injects without comparing sizes (internal.h). */
    if (fi->tx_attr->inject_size < sizeof(uint64_t)) {
        hps_ofi_fail("hps_ofi_init", "provider %s injects only %zu bytes; 8 are needed",
                     hps_ofi.provider, fi->tx_attr->inject_size);
        goto fail;
    }
    if (register_memory(setup->region) || publish() || insert_peers() ||
        hps_ofi_atomic_setup() || hps_ofi_ctx_init_default(setup->dflt, setup->thread_multiple))
        goto fail;
    if (hps_ofi_progress_start())
        goto fail;
    for (int r = 0; r < HPS_OFI_REGIONS; r++)
        setup->row[r] = hps_ofi.row[r];
    return 0;
fail:
    teardown();
    return -1;
}

int hps_ofi_finalize(void)
{
    if (!hps_ofi.ep)
        return 0;
    hps_ofi_quiet(hps_ofi.dflt.c);
    /* Others may still be reading from us (their quiet's flush): leave only
     * when everyone is done. */
    hps_rt_barrier();
    teardown();
    return 0;
}
