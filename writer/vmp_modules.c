/* SPDX-License-Identifier: MIT
 *
 * vmp_modules.c - MODULE and MODULE_SYMBOLS records from ELF files and the
 * process's loaded objects (spec.md §5.3).
 *
 * Symbols come from .symtab when the file has one; else, as perf, gdb and
 * async-profiler look for them, from the .symtab of the separate debug file
 * the system has for it (by build id under /usr/lib/debug/.build-id/, else
 * by its .gnu_debuglink name next to it, in its .debug directory or under
 * /usr/lib/debug with its directory), when that file's build id matches;
 * else from .dynsym.  Only defined functions and objects with a non-zero
 * value are kept.  Functions
 * that no symbol names (the static functions of a stripped library) are
 * added as symbols with an empty name and size 0 at their starts, taken from
 * the binary's unwind table (.eh_frame_hdr), so that their samples group by
 * function (spec.md [R-RES-2]).  The build id is the GNU build-id note.
 * Symbols are split into MODULE_SYMBOLS records of at most a quarter of the
 * chunk size each, so a batch never dominates a chunk.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmp_eh_frame_hdr.h"
#include "vmp_format.h"
#include "vmp_grow.h"
#include "vmp_writer_int.h"

#define NT_GNU_BUILD_ID_TYPE 3
#define MAX_BUILD_ID         64

typedef struct elf_info {
    vmp_symbol_desc *syms;
    size_t n_syms;
    char *names; /* storage of the symbol names */
    uint8_t build_id[MAX_BUILD_ID];
    size_t build_id_size;
} elf_info;

static void info_free(elf_info *in)
{
    free(in->syms);
    free(in->names);
    memset(in, 0, sizeof *in);
}

static void read_build_id(Elf *e, elf_info *in)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t off = 0, name_off, desc_off;
        GElf_Nhdr nh;
        while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID_TYPE && nh.n_namesz == 4 &&
                memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz > 0 &&
                nh.n_descsz <= MAX_BUILD_ID) {
                memcpy(in->build_id, (const char *)d->d_buf + desc_off, nh.n_descsz);
                in->build_id_size = nh.n_descsz;
                return;
            }
        }
    }
}

static int add_unwind_bounds(Elf *e, elf_info *in);

/* The symbol table of `e`: its .symtab, else (unless `symtab_only`) its
 * .dynsym; NULL when it has none. */
static Elf_Scn *symbol_section(Elf *e, int symtab_only)
{
    Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(e, scn)) != NULL) {
        if (!gelf_getshdr(scn, &sh))
            continue;
        if (sh.sh_type == SHT_SYMTAB)
            symtab = scn;
        else if (sh.sh_type == SHT_DYNSYM)
            dynsym = scn;
    }
    return symtab ? symtab : symtab_only ? NULL : dynsym;
}

/* The defined functions and objects of symbol section `scn` of `e` into
 * in->syms.  0 on success, -2 on allocation failure. */
static int read_symbols(Elf *e, Elf_Scn *scn, elf_info *in)
{
    GElf_Shdr sh;
    if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_entsize == 0)
        return 0;
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d)
        return 0;
    size_t n = sh.sh_size / sh.sh_entsize;
    size_t names_size = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t k = 0, at = 0;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym s;
            if (!gelf_getsym(d, (int)i, &s))
                continue;
            int type = GELF_ST_TYPE(s.st_info);
            if (s.st_shndx == SHN_UNDEF || s.st_value == 0 ||
                (type != STT_FUNC && type != STT_OBJECT && type != STT_GNU_IFUNC))
                continue;
            const char *name = elf_strptr(e, sh.sh_link, s.st_name);
            if (!name || !*name)
                continue;
            size_t len = strlen(name) + 1;
            if (pass == 1) {
                memcpy(in->names + at, name, len);
                in->syms[k].value = s.st_value;
                in->syms[k].size = s.st_size;
                in->syms[k].name = NULL; /* set below: names may not move yet */
            }
            at += len;
            k++;
        }
        if (pass == 0) {
            names_size = at;
            in->n_syms = k;
            in->syms = calloc(k ? k : 1, sizeof *in->syms);
            in->names = malloc(names_size ? names_size : 1);
            if (!in->syms || !in->names)
                return -2;
        }
    }
    const char *p = in->names;
    for (size_t i = 0; i < in->n_syms; i++) {
        in->syms[i].name = p;
        p += strlen(p) + 1;
    }
    return 0;
}

/* The .gnu_debuglink file name of `e`, or NULL (borrowed from libelf). */
static const char *debuglink(Elf *e)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;
    if (elf_getshdrstrndx(e, &shstrndx) != 0)
        return NULL;
    while ((scn = elf_nextscn(e, scn)) != NULL) {
        GElf_Shdr sh;
        const char *name;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
            continue;
        name = elf_strptr(e, shstrndx, sh.sh_name);
        if (name && strcmp(name, ".gnu_debuglink") == 0) {
            Elf_Data *d = elf_getdata(scn, NULL);
            if (d && d->d_size > 1 && memchr(d->d_buf, '\0', d->d_size))
                return d->d_buf;
        }
    }
    return NULL;
}

/* The symbols of the separate debug file of the object at `path` (build id
 * `in->build_id`, `link` its .gnu_debuglink name or NULL) into `in`.
 * 1 when read, 0 when there is none (or it does not match), -2 on
 * allocation failure. */
static int read_debug_file(const char *path, const char *link, elf_info *in)
{
    char cand[4][4096];
    size_t n = 0, i;
    const char *slash = path ? strrchr(path, '/') : NULL;
    int dir = slash ? (int)(slash - path) : 0;
    if (in->build_id_size >= 2) {
        char hex[2 * MAX_BUILD_ID + 1];
        for (i = 0; i < in->build_id_size; i++)
            snprintf(hex + 2 * i, 3, "%02x", in->build_id[i]);
        snprintf(cand[n++], sizeof cand[0], "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
    }
    if (link && slash && !strchr(link, '/')) {
        snprintf(cand[n++], sizeof cand[0], "%.*s/%s", dir, path, link);
        snprintf(cand[n++], sizeof cand[0], "%.*s/.debug/%s", dir, path, link);
        snprintf(cand[n++], sizeof cand[0], "/usr/lib/debug%.*s/%s", dir, path, link);
    }
    for (i = 0; i < n; i++) {
        int fd = open(cand[i], O_RDONLY | O_CLOEXEC), rc = 0;
        Elf *e;
        elf_info d = {0};
        if (fd < 0)
            continue;
        e = elf_begin(fd, ELF_C_READ, NULL);
        if (e && elf_kind(e) == ELF_K_ELF) {
            read_build_id(e, &d);
            /* the debug file of this very build, else none */
            if (d.build_id_size == in->build_id_size &&
                memcmp(d.build_id, in->build_id, d.build_id_size) == 0) {
                Elf_Scn *scn = symbol_section(e, 1);
                rc = scn ? read_symbols(e, scn, in) : 0;
                if (rc == 0 && in->n_syms > 0)
                    rc = 1;
            }
        }
        if (e)
            elf_end(e);
        close(fd);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Read symbols and build id of an ELF image (of the file at `path`, NULL
 * for an image in memory: no debug file then).  0 on success (possibly
 * with no symbols), -1 when `e` is not a readable ELF file, -2 on
 * allocation failure. */
static int read_elf(Elf *e, const char *path, elf_info *in)
{
    Elf_Scn *scn;
    int rc = 0;
    if (elf_kind(e) != ELF_K_ELF)
        return -1;
    read_build_id(e, in);
    scn = symbol_section(e, 1);
    if (!scn && path) /* stripped: its debug file names what .dynsym does not */
        rc = read_debug_file(path, debuglink(e), in);
    if (rc == 0)
        rc = read_symbols(e, scn ? scn : symbol_section(e, 0), in);
    if (rc < 0)
        return rc;
    return add_unwind_bounds(e, in);
}

typedef struct sym_span {
    uint64_t start, end;
} sym_span;

static int cmp_span(const void *x, const void *y)
{
    const sym_span *a = x, *b = y;
    return a->start < b->start ? -1 : a->start > b->start;
}

static int32_t get_s32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return (int32_t)v;
}

/* Add an unnamed size-0 symbol at the start of every function of the
 * unwind table that no symbol covers.  0, or -2 on allocation failure; a
 * missing or unusual table adds nothing. */
static int add_unwind_bounds(Elf *e, elf_info *in)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    const unsigned char *h = NULL;
    uint64_t hdr_addr = 0;
    uint32_t count;
    size_t hdr_size = 0;

    if (elf_getshdrstrndx(e, &shstrndx) != 0)
        return 0;
    while ((scn = elf_nextscn(e, scn)) != NULL) {
        const char *name;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
            continue;
        name = elf_strptr(e, shstrndx, sh.sh_name);
        if (name && strcmp(name, ".eh_frame_hdr") == 0) {
            Elf_Data *d = elf_getdata(scn, NULL);
            if (d && d->d_buf) {
                h = d->d_buf;
                hdr_size = d->d_size;
                hdr_addr = sh.sh_addr;
            }
            break;
        }
    }
    count = h ? vmp_eh_frame_hdr_count(h, hdr_size) : 0;
    if (count == 0)
        return 0;
    sym_span *named = malloc((in->n_syms ? in->n_syms : 1) * sizeof *named);
    if (!named)
        return -2;
    for (size_t i = 0; i < in->n_syms; i++) {
        named[i].start = in->syms[i].value;
        named[i].end = in->syms[i].value + in->syms[i].size;
    }
    qsort(named, in->n_syms, sizeof *named, cmp_span);
    for (size_t i = 1; i < in->n_syms; i++) /* end: the furthest end so far */
        if (named[i].end < named[i - 1].end)
            named[i].end = named[i - 1].end;
    size_t extra = 0, cap = in->n_syms;
    uint64_t prev = 0;
    int rc = 0;
    for (uint64_t k = 0; k < count; k++) {
        uint64_t start = hdr_addr + (uint64_t)(int64_t)get_s32(h + VMP_EH_FRAME_HDR_TABLE +
                                                               VMP_EH_FRAME_HDR_ENTRY * k);
        size_t lo = 0, hi = in->n_syms;
        if (start == 0 || (k > 0 && start <= prev))
            continue; /* not sorted, or a repeat: skip it */
        prev = start;
        while (lo < hi) { /* the symbols starting at or before `start` */
            size_t mid = lo + (hi - lo) / 2;
            if (named[mid].start <= start)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > 0 && (named[lo - 1].end > start || named[lo - 1].start == start))
            continue; /* named already */
        if (in->n_syms + extra == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            vmp_symbol_desc *v = realloc(in->syms, ncap * sizeof *v);
            if (!v) {
                rc = -2;
                break;
            }
            in->syms = v;
            cap = ncap;
        }
        in->syms[in->n_syms + extra].value = start;
        in->syms[in->n_syms + extra].size = 0;
        in->syms[in->n_syms + extra].name = "";
        extra++;
    }
    in->n_syms += extra;
    free(named);
    return rc;
}

static int read_elf_file(const char *path, elf_info *in)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    int rc = e ? read_elf(e, path, in) : -1;
    if (e)
        elf_end(e);
    close(fd);
    return rc;
}

/* Approximate encoded size of one symbol triple. */
static size_t sym_bytes(const vmp_symbol_desc *s)
{
    return 2 * 9 + 9 + strlen(s->name);
}

/* MODULE and its MODULE_SYMBOLS batches, queued as one unit. */
vmp_status vmp_writer_add_module_symbols(vmp_writer *w, uint64_t *id_out, const char *path,
                                         const void *build_id, size_t build_id_size, uint64_t bias,
                                         uint64_t start, uint64_t end, const vmp_symbol_desc *syms,
                                         size_t n_syms)
{
    if (!w || (n_syms && !syms) || (build_id_size && !build_id))
        return VMP_ERR_INVALID_ARG;
    for (size_t i = 0; i < n_syms; i++)
        if (!syms[i].name)
            return VMP_ERR_INVALID_ARG;
    uint64_t stamp;
    size_t mark;
    vmp_status st = vmp_writer__meta_lock(w, &stamp, &mark);
    if (st < 0)
        return st;
    uint64_t id = w->next_module_id;
    vmp_record rec = {.type = VMP_REC_MODULE};
    rec.u.module =
        (vmp_rec_module){id, bias, start, end, vmp_writer__str(path), build_id, build_id_size};
    vmp_writer__queue_record(w, stamp, &rec);
    if (w->lazy_symbols && n_syms > 0 && !w->queue.failed) {
        /* kept back: the drain writes what samples need (vmp_symtab.h) */
        vmp_symtab *t = vmp_symtab__build(id, bias, start, end, syms, n_syms);
        if (!t)
            return vmp_writer__meta_unlock(w, mark, VMP_ERR_NOMEM);
        t->stamp = stamp;
        t->next = w->symtabs;
        w->symtabs = t;
        w->next_module_id++;
        if (id_out)
            *id_out = id;
        return vmp_writer__meta_unlock(w, mark, VMP_OK);
    }

    size_t budget = w->chunk_bytes / 4;
    for (size_t i = 0; i < n_syms && !w->queue.failed;) {
        size_t k = i, bytes = 0;
        while (k < n_syms && (k == i || bytes + sym_bytes(&syms[k]) <= budget))
            bytes += sym_bytes(&syms[k++]);
        size_t at = vmp_writer__entry_begin(w, stamp);
        vmp_rec r;
        vmp_rec__begin(&r, &w->queue, VMP_REC_MODULE_SYMBOLS);
        vmp_rec__uint(&r, VMP_SYMS_MODULE, id);
        vmp_rec__key(&r, VMP_SYMS_LIST);
        vmp_enc__array(&w->queue, 3 * (k - i));
        for (; i < k; i++) {
            vmp_enc__uint(&w->queue, syms[i].value);
            vmp_enc__uint(&w->queue, syms[i].size);
            vmp_enc__tstr(&w->queue, syms[i].name);
        }
        vmp_rec__end(&r);
        vmp_writer__entry_end(w, at);
    }
    if (!w->queue.failed) {
        w->next_module_id++;
        if (id_out)
            *id_out = id;
    }
    return vmp_writer__meta_unlock(w, mark, VMP_OK);
}

vmp_status vmp_writer_add_module(vmp_writer *w, uint64_t *id_out, const char *path, uint64_t bias,
                                 uint64_t start, uint64_t end)
{
    if (!w || !path)
        return VMP_ERR_INVALID_ARG;
    if (elf_version(EV_CURRENT) == EV_NONE)
        return VMP_ERR_IO;
    elf_info in = {0};
    int rc = read_elf_file(path, &in);
    vmp_status st;
    if (rc == -2)
        st = VMP_ERR_NOMEM;
    else if (rc < 0)
        st = VMP_ERR_IO;
    else
        st = vmp_writer_add_module_symbols(w, id_out, path, in.build_id, in.build_id_size, bias,
                                           start, end, in.syms, in.n_syms);
    info_free(&in);
    return st;
}

/* ---- loaded objects ---------------------------------------------------- */

typedef struct loaded {
    char *path; /* NULL for an object without a file name */
    uint64_t bias, start, end;
    const void *image; /* the mapped first segment, for objects without a file */
    size_t image_size;
    int is_main;
} loaded;

typedef struct loaded_list {
    loaded *v;
    size_t n, cap;
    int nomem;
} loaded_list;

static int collect(struct dl_phdr_info *info, size_t size, void *payload)
{
    (void)size;
    loaded_list *l = payload;
    uint64_t lo = UINT64_MAX, hi = 0, img_lo = UINT64_MAX, img_hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
        if (ph->p_offset == 0 && a < img_lo) {
            img_lo = a;
            img_hi = a + ph->p_filesz;
        }
    }
    if (lo == UINT64_MAX)
        return 0;
    if (l->n == l->cap && vmp_grow(&l->v, &l->cap, sizeof *l->v, 32) != 0) {
        l->nomem = 1;
        return 1;
    }
    loaded *o = &l->v[l->n];
    memset(o, 0, sizeof *o);
    o->is_main = l->n == 0 && (!info->dlpi_name || !*info->dlpi_name);
    if (info->dlpi_name && *info->dlpi_name) {
        o->path = strdup(info->dlpi_name);
        if (!o->path) {
            l->nomem = 1;
            return 1;
        }
    }
    o->bias = info->dlpi_addr;
    o->start = lo;
    o->end = hi;
    if (img_lo != UINT64_MAX) {
        o->image = (const void *)(uintptr_t)img_lo;
        o->image_size = (size_t)(img_hi - img_lo);
    }
    l->n++;
    return 0;
}

static char *self_exe(void)
{
    size_t cap = 256;
    for (;;) {
        char *p = malloc(cap);
        if (!p)
            return NULL;
        ssize_t n = readlink("/proc/self/exe", p, cap);
        if (n < 0) {
            free(p);
            return NULL;
        }
        if ((size_t)n < cap) {
            p[n] = '\0';
            return p;
        }
        free(p);
        cap *= 2;
    }
}

/* An object without a file (the vDSO): read the ELF image from memory.  The
 * copy keeps libelf away from pages that may be execute-only. */
static int read_elf_memory(const loaded *o, elf_info *in)
{
    if (!o->image || o->image_size < sizeof(ElfW(Ehdr)))
        return -1;
    /* The vDSO's section headers lie past its segment's file size but on its
     * last mapped page: extend the copy to them when they are that close. */
    size_t size = o->image_size;
    ElfW(Ehdr) eh;
    memcpy(&eh, o->image, sizeof eh);
    long page = sysconf(_SC_PAGESIZE);
    uint64_t sh_end = (uint64_t)eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize;
    if (page > 0 && sh_end > size) {
        uint64_t mapped = ((uint64_t)size + (uint64_t)page - 1) & ~((uint64_t)page - 1);
        if (sh_end <= mapped)
            size = (size_t)sh_end;
    }
    char *copy = malloc(size);
    if (!copy)
        return -2;
    memcpy(copy, o->image, size);
    Elf *e = elf_memory(copy, size);
    int rc = e ? read_elf(e, NULL, in) : -1;
    if (e)
        elf_end(e);
    free(copy);
    return rc;
}

/* Whether w recorded object o in an earlier call (under loaded_mu). */
static int loaded_before(const vmp_writer *w, const loaded *o)
{
    for (size_t i = 0; i < w->n_loaded; i++) {
        const uint64_t *k = &w->loaded_keys[3 * i];
        if (k[0] == o->bias && k[1] == o->start && k[2] == o->end)
            return 1;
    }
    return 0;
}

static vmp_status remember_loaded(vmp_writer *w, const loaded *o)
{
    if (w->n_loaded == w->cap_loaded) {
        size_t cap = w->cap_loaded ? w->cap_loaded * 2 : 64;
        uint64_t *k = realloc(w->loaded_keys, cap * 3 * sizeof *k);
        if (!k)
            return VMP_ERR_NOMEM;
        w->loaded_keys = k;
        w->cap_loaded = cap;
    }
    uint64_t *k = &w->loaded_keys[3 * w->n_loaded++];
    k[0] = o->bias;
    k[1] = o->start;
    k[2] = o->end;
    return VMP_OK;
}

vmp_status vmp_writer_add_loaded_modules(vmp_writer *w)
{
    if (!w)
        return VMP_ERR_INVALID_ARG;
    if (elf_version(EV_CURRENT) == EV_NONE)
        return VMP_ERR_IO;
    loaded_list l = {0};
    dl_iterate_phdr(collect, &l);
    vmp_status st = l.nomem ? VMP_ERR_NOMEM : VMP_OK;
    pthread_mutex_lock(&w->loaded_mu);
    for (size_t i = 0; i < l.n && st >= 0; i++) {
        loaded *o = &l.v[i];
        if (loaded_before(w, o))
            continue;
        if (o->is_main && !o->path)
            o->path = self_exe();
        elf_info in = {0};
        int rc = o->path && o->path[0] == '/' ? read_elf_file(o->path, &in) : -1;
        if (rc == -1) {
            info_free(&in);
            rc = read_elf_memory(o, &in);
        }
        if (rc == -2)
            st = VMP_ERR_NOMEM;
        else if (rc == 0)
            st = vmp_writer_add_module_symbols(w, NULL, o->path, in.build_id, in.build_id_size,
                                               o->bias, o->start, o->end, in.syms, in.n_syms);
        info_free(&in);
        /* recorded, or without symbols to read: not tried again */
        if (st >= 0)
            st = remember_loaded(w, o);
    }
    pthread_mutex_unlock(&w->loaded_mu);
    for (size_t i = 0; i < l.n; i++)
        free(l.v[i].path);
    free(l.v);
    return st;
}
