/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_crash.c - whether the JVM is reporting a fatal error
 * (vmp_jvmti_crash.h).
 */
#include "vmp_jvmti_crash.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* VMError's first_error_tid: its name since JDK 12, and before. */
static const char *const first_error_tid_names[] = {"_ZN7VMError16_first_error_tidE",
                                                    "_ZN7VMError15first_error_tidE"};

static const volatile intptr_t *first_error_tid;

/* The value of the symbol `names` (any of `n`) of 8 bytes in the ELF
 * file `path`, or 0. */
static uint64_t symbol_value(const char *path, const char *const *names, size_t n)
{
    uint64_t value = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    Elf *elf;
    Elf_Scn *scn = NULL;

    if (fd < 0)
        return 0;
    elf_version(EV_CURRENT);
    elf = elf_begin(fd, ELF_C_READ, NULL);
    while (elf != NULL && value == 0 && (scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        Elf_Data *data;
        if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_SYMTAB || sh.sh_entsize == 0)
            continue;
        data = elf_getdata(scn, NULL);
        for (size_t i = 0; data != NULL && i < sh.sh_size / sh.sh_entsize && value == 0; i++) {
            GElf_Sym sym;
            const char *name;
            if (gelf_getsym(data, (int)i, &sym) == NULL || sym.st_size != sizeof(intptr_t) ||
                GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
                continue;
            name = elf_strptr(elf, sh.sh_link, sym.st_name);
            for (size_t k = 0; name != NULL && k < n; k++)
                if (strcmp(name, names[k]) == 0)
                    value = sym.st_value;
        }
    }
    if (elf != NULL)
        elf_end(elf);
    close(fd);
    return value;
}

int vmp_jvmti__crash_watch_init(const void *agct)
{
    Dl_info info;
    uint64_t value;

    if (first_error_tid != NULL)
        return 1;
    if (agct == NULL || dladdr(agct, &info) == 0 || info.dli_fname == NULL)
        return 0;
    value = symbol_value(info.dli_fname, first_error_tid_names,
                         sizeof first_error_tid_names / sizeof first_error_tid_names[0]);
    if (value == 0)
        return 0;
    first_error_tid = (const volatile intptr_t *)((uintptr_t)info.dli_fbase + value);
    if (*first_error_tid != -1) { /* not what it should read before an error */
        first_error_tid = NULL;
        return 0;
    }
    return 1;
}

int vmp_jvmti__vm_crashing(void)
{
    return first_error_tid != NULL && *first_error_tid != -1;
}
