// SPDX-License-Identifier: MIT
/*
 * The on-node transport's set-up: this PE's symmetric heap and data segment
 * as named shared-memory segments, and the mappings of its peers' ones.
 *
 * Segments are named "/hpsync-shmem-<job>-<what>-<pe>" (/dev/shm on Linux):
 * the launcher removes "hpsync-shmem-<job>-*" when a job ends, however it
 * ends, and the library unlinks its own as soon as every peer has mapped
 * them (shmem_init), so a normal run leaves nothing behind either way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "runtime/errline.h"
#include "runtime/runtime.h"
#include "../../prim/map.h"

#define PAGE_FLOOR(x) ((uintptr_t)(x) & ~(uintptr_t)(hps_page - 1))
#define PAGE_CEIL(x) PAGE_FLOOR((uintptr_t)(x) + hps_page - 1)
static uintptr_t hps_page = 4096;

static void seg_name(char *buf, size_t n, const char *what, int pe)
{
    snprintf(buf, n, "/hpsync-shmem-%s-%s-%d", hps_rt_job_id(), what, pe);
}

/* Set-up failures of shmem_init: "<what> <segment name>: <errno's reason>". */
static void errline(const char *what, const char *name)
{
    hps_shmem_errline("shmem_init", "%s %s: %s", what, name, strerror(errno));
}

/* A new named segment of size bytes; a stale one of the same name (a job id
 * reused after a crash the launcher could not clean) is replaced. */
static int seg_create(hps_shmem_shm_seg_t *seg, const char *what, size_t size)
{
    seg_name(seg->name, sizeof seg->name, what, hps_rt_rank());
    int fd = shm_open(seg->name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) {
        shm_unlink(seg->name);
        fd = shm_open(seg->name, O_RDWR | O_CREAT | O_EXCL, 0600);
    }
    if (fd < 0) {
        errline("cannot create", seg->name);
        seg->name[0] = 0;
        return -1;
    }
    if (ftruncate(fd, (off_t)size) != 0) {
        errline("cannot size", seg->name);
        close(fd);
        hps_shmem_shm_unlink(seg);
        return -1;
    }
    return fd;
}

/*
 * A heap mapping (this PE's or a peer's) at an address p with p + lead
 * aligned as heap.c asks (hps_shmem_heap_map_align: to the heap size rounded up
 * to a power of two), so that shmem_align's alignment holds for the address
 * every PE sees, not only for the offset.  prim/map.h places it.
 */
static void *map_heap_aligned(size_t size, int flags, int fd)
{
    size_t lead, align = hps_shmem_heap_map_align(size, (size_t)sysconf(_SC_PAGESIZE), &lead);
    void *p = hps_map_aligned(size, align, lead, flags, fd);
    return p ? p : MAP_FAILED;
}

void *hps_shmem_shm_heap_create(size_t size, int shared, hps_shmem_shm_seg_t *seg)
{
    seg->name[0] = 0;
    void *p;
    if (!shared) {
        p = map_heap_aligned(size, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1);
    } else {
        int fd = seg_create(seg, "heap", size);
        if (fd < 0)
            return NULL;
        p = map_heap_aligned(size, MAP_SHARED | MAP_NORESERVE, fd);
        close(fd);
    }
    if (p == MAP_FAILED) {
        errline("cannot map the symmetric heap", seg->name[0] ? seg->name : "(anonymous)");
        hps_shmem_shm_unlink(seg);
        return NULL;
    }
    return p;
}

/* ---- the data segment ------------------------------------------------------- */

typedef struct data_span {
    uintptr_t start, file_end, end;    /* writable part; file-backed up to file_end */
} data_span_t;

/* The executable is the first object dl_iterate_phdr reports.  Its writable
 * PT_LOAD holds .data and .bss (and before them the RELRO part, which the
 * loader made read-only: it is not ours to share).  With several writable
 * loads the last one, which holds .bss, is taken. */
static int find_exe_data(struct dl_phdr_info *info, size_t n, void *arg)
{
    data_span_t *d = arg;
    uintptr_t relro_end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_RELRO)
            relro_end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
            continue;
        uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
        /* The loader protects RELRO rounded down at both ends, so the page
         * holding its end stays writable: start there. */
        if (relro_end > s && relro_end <= e)
            s = relro_end;
        d->start = PAGE_FLOOR(s);
        d->file_end = PAGE_CEIL(info->dlpi_addr + ph->p_vaddr + ph->p_filesz);
        d->end = PAGE_CEIL(e);
    }
    (void)n;
    return 1;                           /* only the first object */
}

/* Copy [from, to) of the live data into the segment: all of the file-backed
 * part, and of .bss only the pages ever touched (the rest is zero in both). */
static void copy_data(char *dst, const data_span_t *d)
{
    size_t file_len = d->file_end > d->start ? d->file_end - d->start : 0;
    if (file_len > d->end - d->start)
        file_len = d->end - d->start;
    memcpy(dst, (void *)d->start, file_len);
    size_t bss = d->end - d->start - file_len, pages = bss / hps_page;
    if (!pages)
        return;
    unsigned char *vec = malloc(pages);
    char *src = (char *)d->start + file_len;
    if (!vec || mincore(src, bss, vec) != 0) {
        memcpy(dst + file_len, src, bss);
    } else {
        for (size_t i = 0; i < pages; i++)
            if (vec[i] & 1)
                memcpy(dst + file_len + i * hps_page, src + i * hps_page, hps_page);
    }
    free(vec);
}

int hps_shmem_shm_data_setup(int shared, uintptr_t *base, size_t *size, hps_shmem_shm_seg_t *seg)
{
    hps_page = (uintptr_t)sysconf(_SC_PAGESIZE);
    seg->name[0] = 0;
    data_span_t d = { 0, 0, 0 };
    dl_iterate_phdr(find_exe_data, &d);
    *base = d.start;
    *size = d.end - d.start;
    if (!shared || !*size)
        return 0;
    /* Build the copy in the segment, then swap it in at the same address with
     * one mmap(MAP_FIXED): the program's pointers to its globals stay valid.
     * Nothing runs on other threads of this process yet but the runtime's,
     * which do not write the executable's variables. */
    int fd = seg_create(seg, "data", *size);
    if (fd < 0)
        return -1;
    void *tmp = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (tmp == MAP_FAILED) {
        errline("cannot map", seg->name);
        goto fail;
    }
    copy_data(tmp, &d);
    munmap(tmp, *size);
    if (mmap((void *)d.start, *size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0)
        == MAP_FAILED) {
        errline("cannot move the data segment onto", seg->name);
        goto fail;
    }
    close(fd);
    return 0;
fail:
    close(fd);
    hps_shmem_shm_unlink(seg);
    return -1;
}

void *hps_shmem_shm_map_peer(const char *what, int pe, size_t size)
{
    char name[96];
    seg_name(name, sizeof name, what, pe);
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0) {
        errline("cannot open a peer's segment", name);
        return NULL;
    }
    struct stat st;
    void *p = MAP_FAILED;
    /* A peer's heap is aligned like this PE's, so shmem_ptr to an object
     * keeps the object's alignment. */
    if (fstat(fd, &st) == 0 && (size_t)st.st_size == size)
        p = !strcmp(what, "heap") ? map_heap_aligned(size, MAP_SHARED | MAP_NORESERVE, fd)
                                  : mmap(NULL, size, PROT_READ | PROT_WRITE,
                                         MAP_SHARED | MAP_NORESERVE, fd, 0);
    else
        errno = EINVAL;                /* another program, or other settings */
    close(fd);
    if (p == MAP_FAILED) {
        errline("cannot map a peer's segment (different program or heap size?)", name);
        return NULL;
    }
    return p;
}

void hps_shmem_shm_unlink(hps_shmem_shm_seg_t *seg)
{
    if (seg->name[0])
        shm_unlink(seg->name);
    seg->name[0] = 0;
}

void hps_shmem_shm_unmap(void *base, size_t size)
{
    if (base)
        munmap(base, size);
}
