// SPDX-License-Identifier: MIT
/*
 * Name the variable at an address, for the statistics report.
 *
 * dladdr() sees only dynamic symbols, and an ordinary executable exports
 * none of its globals, so a mutex like `static pthread_mutex_t big_lock`
 * would go unnamed.  This reads the object's full symbol table (.symtab)
 * from its file instead.  Only used at exit, never on a lock path.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "preload.h"

struct find {
    uintptr_t addr;
    uintptr_t bias;
    const char *path;
    int found;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct find *f = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && f->addr >= lo && f->addr < lo + ph->p_memsz) {
            f->bias = info->dlpi_addr;
            f->path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
            f->found = 1;
            return 1;
        }
    }
    return 0;
}

/* Look `addr` up in its object's .symtab; writes "name" or "name+off". */
int hps_preload_symtab_name(const void *addr, char *buf, size_t n)
{
    struct find f = { (uintptr_t)addr, 0, NULL, 0 };
    dl_iterate_phdr(find_object, &f);
    if (!f.found)
        return -1;
    int fd = open(f.path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    int rc = -1;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(ElfW(Ehdr))) {
        const unsigned char *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            const ElfW(Ehdr) *eh = (const void *)m;
            size_t size = (size_t)st.st_size;
            if (!memcmp(eh->e_ident, ELFMAG, SELFMAG) && eh->e_shoff &&
                eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) <= size) {
                const ElfW(Shdr) *sh = (const void *)(m + eh->e_shoff);
                for (int i = 0; i < eh->e_shnum && rc != 0; i++) {
                    if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
                        continue;
                    const ElfW(Shdr) *strs = &sh[sh[i].sh_link];
                    if (sh[i].sh_offset + sh[i].sh_size > size || strs->sh_offset + strs->sh_size > size)
                        continue;
                    const ElfW(Sym) *sym = (const void *)(m + sh[i].sh_offset);
                    size_t count = sh[i].sh_size / sizeof *sym;
                    uintptr_t a = f.addr - f.bias;
                    for (size_t k = 0; k < count; k++) {
                        int type = ELF64_ST_TYPE(sym[k].st_info);
                        if (type != STT_OBJECT || sym[k].st_name >= strs->sh_size)
                            continue;
                        if (a >= sym[k].st_value && a < sym[k].st_value + (sym[k].st_size ? sym[k].st_size : 1)) {
                            const char *name = (const char *)(m + strs->sh_offset + sym[k].st_name);
                            size_t off = a - sym[k].st_value;
                            const char *obj = strrchr(f.path, '/');
                            obj = !strcmp(f.path, "/proc/self/exe") ? program_invocation_short_name
                                : obj ? obj + 1 : f.path;
                            if (off)
                                snprintf(buf, n, "%s+%zu (%s)", name, off, obj);
                            else
                                snprintf(buf, n, "%s (%s)", name, obj);
                            rc = 0;
                            break;
                        }
                    }
                }
            }
            munmap((void *)m, size);
        }
    }
    close(fd);
    return rc;
}
