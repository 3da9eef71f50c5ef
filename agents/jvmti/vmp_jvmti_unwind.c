/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_unwind.c - native stacks for samples (vmp_jvmti_unwind.h).
 *
 * The walk makes no system call.  Each module's .eh_frame is turned into
 * compact rows (vmp_jvmti_cfi.h) when the module table is built, outside the
 * handler; the handler binary-searches them and reads the stack only within
 * the interrupted thread's own stack, [sp, top), whose top the agent learns
 * from /proc/self/maps outside the handler.  Where a row cannot say (a PLT
 * entry, a signal frame, a function that realigns its stack) the rest of the
 * walk is libunwind's, as below; a read outside the known stack and every
 * module (top not yet known) goes through process_vm_readv.
 *
 * Why not libunwind's local unwinder: to find a pc's CFI it calls
 * dl_iterate_phdr, which takes glibc's loader lock; a signal that lands while
 * the thread itself is inside the loader (dlopen, thread creation) could then
 * deadlock or see the module list half-updated.  Instead this file reads the
 * module list (segments and .eh_frame_hdr search tables) with dl_iterate_phdr
 * outside the handler, at start and again whenever the loader's load/unload
 * counters change, and publishes it as an immutable table behind an atomic
 * pointer.  In the handler, libunwind runs through its remote interface with
 * our accessors: find_proc_info looks the pc up in that table and hands the
 * module's .eh_frame_hdr table to libunwind's dwarf_search_unwind_table;
 * access_mem reads module memory only inside mapped segments and any other
 * address (the stack) through process_vm_readv, which fails with EFAULT
 * instead of faulting, once per page.  libunwind keeps its global cache of
 * parsed CFI (UNW_CACHE_GLOBAL: a walk of 30 frames costs about 40 us of CPU
 * with it, 230 us without, tests/jvmti/test_jvmti_unwind.c); that cache and
 * libunwind's memory pools are guarded by locks that libunwind holds with
 * every signal blocked, so a handler never waits for a lock that its own
 * thread holds.  The cache is flushed when the module table changes.  Old
 * tables are freed only at shutdown.
 */
#include "vmp_jvmti_unwind.h"

#include "vmp_eh_frame_hdr.h"
#include "vmp_jvmti_cfi.h"

#include "vmp_grow.h"
#include "vmp_search.h"
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(VMP_HAVE_LIBUNWIND) && defined(__x86_64__)
#    define VMP_UNWIND_ON 1
#else
#    define VMP_UNWIND_ON 0
#endif

/* ---- The loader's counters (with or without native stacks) --------------- */

/* dlpi_adds and dlpi_subs when the module list was last read; the service
 * thread's (and init's) alone. */
static unsigned long long loader_seen[2];

static int counters_of(struct dl_phdr_info *info, size_t size, void *arg)
{
    unsigned long long *c = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c[0] = info->dlpi_adds;
        c[1] = info->dlpi_subs;
    }
    return 1; /* the first object carries them */
}

static void read_loader_counters(unsigned long long c[2])
{
    c[0] = c[1] = 0;
    dl_iterate_phdr(counters_of, c);
}

static int rebuild_table(void);

int vmp_jvmti__unwind_refresh(void)
{
    unsigned long long c[2];
    read_loader_counters(c);
    if (c[0] == loader_seen[0] && c[1] == loader_seen[1])
        return 0;
    if (rebuild_table() != 0)
        return 0; /* tried again on the next call */
    loader_seen[0] = c[0];
    loader_seen[1] = c[1];
    return 1;
}

#if VMP_UNWIND_ON
#    include <elf.h>
#    include <libunwind.h>
#    include <sys/uio.h>
#    include <ucontext.h>

/* Exported by libunwind for its ptrace and coredump back ends (1.6 and
 * later); declared by no public header. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
                                              unw_dyn_info_t *di, unw_proc_info_t *pi,
                                              int need_unwind_info, void *arg);

/* One mapped PT_LOAD segment of a module. */
typedef struct useg {
    uint64_t lo, hi; /* runtime addresses, [lo, hi) */
    uint32_t module; /* index into utable.mods */
    uint32_t exec;   /* PF_X */
} useg;

/* A module's unwind table (its .eh_frame_hdr binary-search table). */
typedef struct umod {
    uint64_t text_lo, text_hi; /* lowest and highest executable address */
    uint64_t hdr;              /* .eh_frame_hdr address; 0: no usable table */
    uint64_t table;            /* the search table */
    uint64_t table_len;        /* in unw_word_t units */
    uint64_t gp;               /* DT_PLTGOT, as libunwind's own lookup */
    uint64_t bias;             /* dlpi_addr */
    const vmp_cfi_table *cfi;  /* its rows, or NULL */
} umod;

typedef struct utable {
    struct utable *retired; /* older tables, freed at shutdown */
    size_t n_segs, n_mods;
    useg *segs; /* sorted by lo */
    umod *mods;
} utable;

#    define PAGE_CACHE 8

/* Per-walk state: the interrupted registers and the stack pages known readable. */
typedef struct uctx {
    const utable *t;
    uint64_t stack_lo, stack_hi; /* readable without a check; hi 0: unknown */
    unw_word_t regs[17];         /* libunwind's x86-64 numbering: RAX..R15, RIP */
    uint64_t pages[PAGE_CACHE];
    unsigned n_pages, next_page;
} uctx;

static _Atomic(utable *) cur_table;
static unw_addr_space_t addr_space;
static pid_t self_pid;
static int enabled;
static atomic_int use_rows = 1;
static atomic_ulong n_handovers, n_checked_reads;

/* ---- Frame rows, built once per module ------------------------------------ */

/* Every module's rows built so far, kept until shutdown (a handler may read
 * a retired table).  A module loaded again at the same address with the same
 * .eh_frame_hdr reuses its rows. */
typedef struct cfi_entry {
    struct cfi_entry *next;
    uint64_t hdr, count, text_lo, text_hi;
    vmp_cfi_table table;
} cfi_entry;

static cfi_entry *cfi_cache;

static const vmp_cfi_table *cfi_of(uint64_t hdr, uint64_t bias, uint64_t seg_lo, uint64_t seg_hi,
                                   uint64_t text_lo, uint64_t text_hi)
{
    uint64_t count = vmp_eh_frame_hdr_count((const unsigned char *)(uintptr_t)hdr, seg_hi - hdr);
    cfi_entry *e;

    for (e = cfi_cache; e != NULL; e = e->next)
        if (e->hdr == hdr && e->count == count && e->text_lo == text_lo && e->text_hi == text_hi)
            return &e->table;
    e = calloc(1, sizeof *e);
    if (e == NULL)
        return NULL;
    if (vmp_jvmti__cfi_build(hdr, bias, seg_lo, seg_hi, &e->table) != 0) {
        free(e);
        return NULL;
    }
    e->hdr = hdr;
    e->count = count;
    e->text_lo = text_lo;
    e->text_hi = text_hi;
    e->next = cfi_cache;
    cfi_cache = e;
    return &e->table;
}

static void cfi_cache_free(void)
{
    while (cfi_cache != NULL) {
        cfi_entry *next = cfi_cache->next;
        vmp_jvmti__cfi_free(&cfi_cache->table);
        free(cfi_cache);
        cfi_cache = next;
    }
}

/* ---- The module table (outside the handler) ------------------------------ */

typedef struct build {
    utable *t;
    size_t cap_segs, cap_mods;
    int failed;
} build;

/* Parse a module's .eh_frame_hdr (in mapped memory: we are in
 * dl_iterate_phdr's callback).  Only the encodings every Linux toolchain
 * emits are accepted: a 4-byte eh_frame pointer and FDE count and a
 * datarel|sdata4 search table. */
static void parse_hdr(umod *m, uint64_t hdr)
{
    uint32_t count = vmp_eh_frame_hdr_count((const unsigned char *)(uintptr_t)hdr, SIZE_MAX);

    if (count == 0)
        return;
    m->hdr = hdr;
    m->table = hdr + VMP_EH_FRAME_HDR_TABLE;
    m->table_len = (uint64_t)count * 8u / sizeof(unw_word_t);
}

static int on_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    build *b = arg;
    utable *t = b->t;
    umod m;
    size_t i, first_seg;
    const ElfW(Phdr) *dyn = NULL, *ehf = NULL;

    (void)size;
    memset(&m, 0, sizeof m);
    m.text_lo = UINT64_MAX;
    first_seg = t->n_segs;
    for (i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_DYNAMIC)
            dyn = p;
        else if (p->p_type == PT_GNU_EH_FRAME)
            ehf = p;
        else if (p->p_type == PT_LOAD && (p->p_flags & PF_R) && p->p_memsz > 0) {
            useg s;
            if (t->n_segs == b->cap_segs &&
                vmp_grow(&t->segs, &b->cap_segs, sizeof *t->segs, 256)) {
                b->failed = 1;
                return 1;
            }
            s.lo = (uint64_t)info->dlpi_addr + p->p_vaddr;
            s.hi = s.lo + p->p_memsz;
            s.module = (uint32_t)t->n_mods;
            s.exec = (p->p_flags & PF_X) != 0;
            if (s.exec) {
                m.text_lo = s.lo < m.text_lo ? s.lo : m.text_lo;
                m.text_hi = s.hi > m.text_hi ? s.hi : m.text_hi;
            }
            t->segs[t->n_segs++] = s;
        }
    }
    if (t->n_segs == first_seg)
        return 0;
    m.bias = (uint64_t)info->dlpi_addr;
    if (ehf != NULL && m.text_hi > 0) {
        uint64_t hdr = (uint64_t)info->dlpi_addr + ehf->p_vaddr;
        parse_hdr(&m, hdr);
        /* the rows, from the segment that holds .eh_frame_hdr (and, as
         * every linker places it, .eh_frame) */
        for (i = first_seg; m.hdr != 0 && i < t->n_segs; i++) {
            if (hdr >= t->segs[i].lo && hdr < t->segs[i].hi) {
                m.cfi = cfi_of(hdr, m.bias, t->segs[i].lo, t->segs[i].hi, m.text_lo, m.text_hi);
                break;
            }
        }
    }
    if (dyn != NULL) {
        const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + dyn->p_vaddr);
        for (; d->d_tag != DT_NULL; d++) {
            if (d->d_tag == DT_PLTGOT) {
                m.gp = (uint64_t)d->d_un.d_ptr; /* glibc has relocated it */
                break;
            }
        }
    }
    if (t->n_mods == b->cap_mods && vmp_grow(&t->mods, &b->cap_mods, sizeof *t->mods, 64)) {
        b->failed = 1;
        return 1;
    }
    t->mods[t->n_mods++] = m;
    return 0;
}

static int seg_cmp(const void *a, const void *b)
{
    const useg *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void free_table(utable *t)
{
    if (t != NULL) {
        free(t->segs);
        free(t->mods);
        free(t);
    }
}

static utable *build_table(void)
{
    build b;

    memset(&b, 0, sizeof b);
    b.t = calloc(1, sizeof *b.t);
    if (b.t == NULL)
        return NULL;
    dl_iterate_phdr(on_module, &b);
    if (b.failed) {
        free_table(b.t);
        return NULL;
    }
    if (b.t->n_segs > 1)
        qsort(b.t->segs, b.t->n_segs, sizeof *b.t->segs, seg_cmp);
    return b.t;
}

/* ---- Lookups (signal-safe) ------------------------------------------------- */

/* The segment holding [addr, addr + len), or NULL. */
static const useg *seg_of(const utable *t, uint64_t addr, uint64_t len)
{
    size_t lo = vmp_upper_bound(t->segs, t->n_segs, sizeof *t->segs, offsetof(useg, lo), addr);
    if (lo == 0)
        return NULL;
    {
        const useg *s = &t->segs[lo - 1];
        return addr + len >= addr && addr + len <= s->hi ? s : NULL;
    }
}

static int in_code(const utable *t, uint64_t pc)
{
    const useg *s = seg_of(t, pc, 1);
    return s != NULL && s->exec;
}

/* ---- libunwind accessors (signal-safe) -------------------------------------- */

static int page_known(const uctx *c, uint64_t page)
{
    unsigned i;
    for (i = 0; i < c->n_pages; i++)
        if (c->pages[i] == page)
            return 1;
    return 0;
}

static void page_add(uctx *c, uint64_t page)
{
    if (page_known(c, page))
        return;
    if (c->n_pages < PAGE_CACHE)
        c->pages[c->n_pages++] = page;
    else {
        c->pages[c->next_page] = page;
        c->next_page = (c->next_page + 1) % PAGE_CACHE;
    }
}

/* A plain load of 8 bytes that the caller knows readable.  Not instrumented:
 * a sanitizer must not judge reads of other frames' stack slots. */
typedef uint64_t __attribute__((may_alias, aligned(1))) unaligned_u64;

__attribute__((no_sanitize("address", "thread"))) static uint64_t load_word(uint64_t addr)
{
    return *(const volatile unaligned_u64 *)(uintptr_t)addr;
}

/* Read the 8 bytes at `addr`: directly within the thread's stack above the
 * interrupted sp and within the modules' segments, else through
 * process_vm_readv (once per page).  @return 1, or 0 if unreadable. */
static int read_word(uctx *c, uint64_t addr, uint64_t *val)
{
    uint64_t p0 = addr & ~(uint64_t)4095, p1 = (addr + sizeof *val - 1) & ~(uint64_t)4095;
    struct iovec local, remote;

    if (addr + sizeof *val < addr)
        return 0;
    if ((addr >= c->stack_lo && addr + sizeof *val <= c->stack_hi) ||
        seg_of(c->t, addr, sizeof *val) != NULL || (page_known(c, p0) && page_known(c, p1))) {
        *val = load_word(addr);
        return 1;
    }
    atomic_fetch_add_explicit(&n_checked_reads, 1, memory_order_relaxed);
    local.iov_base = val;
    local.iov_len = sizeof *val;
    remote.iov_base = (void *)(uintptr_t)addr;
    remote.iov_len = sizeof *val;
    if (process_vm_readv(self_pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof *val)
        return 0;
    page_add(c, p0);
    page_add(c, p1);
    return 1;
}

static int acc_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
    uint64_t v;
    (void)as;
    if (write || !read_word(arg, addr, &v))
        return -UNW_EINVAL;
    *val = v;
    return 0;
}

static int acc_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
    uctx *c = arg;

    (void)as;
    if (reg < 0 || reg > UNW_X86_64_RIP)
        return -UNW_EBADREG;
    if (write)
        c->regs[reg] = *val;
    else
        *val = c->regs[reg];
    return 0;
}

static int acc_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
    (void)as;
    (void)reg;
    (void)val;
    (void)write;
    (void)arg;
    return -UNW_EBADREG;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
                          int need_unwind_info, void *arg)
{
    uctx *c = arg;
    const useg *s = seg_of(c->t, ip, 1);
    const umod *m;
    unw_dyn_info_t di;

    if (s == NULL || !s->exec)
        return -UNW_ENOINFO;
    m = &c->t->mods[s->module];
    if (m->hdr == 0)
        return -UNW_ENOINFO;
    memset(&di, 0, sizeof di);
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.start_ip = m->text_lo;
    di.end_ip = m->text_hi;
    di.gp = m->gp;
    di.u.rti.name_ptr = 0;
    di.u.rti.segbase = m->hdr;
    di.u.rti.table_len = m->table_len;
    di.u.rti.table_data = m->table;
    return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
    /* dwarf_search_unwind_table's info is freed by libunwind itself. */
    (void)as;
    (void)pi;
    (void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
    (void)as;
    (void)addr;
    (void)arg;
    return -UNW_ENOINFO; /* no dynamically registered unwind info */
}

static int acc_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
    (void)as;
    (void)c;
    (void)arg;
    return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
                         unw_word_t *off, void *arg)
{
    (void)as;
    (void)addr;
    (void)buf;
    (void)len;
    (void)off;
    (void)arg;
    return -UNW_ENOINFO;
}

static unw_accessors_t accessors = {
    .find_proc_info = find_proc_info,
    .put_unwind_info = put_unwind_info,
    .get_dyn_info_list_addr = get_dyn_info_list_addr,
    .access_mem = acc_mem,
    .access_reg = acc_reg,
    .access_fpreg = acc_fpreg,
    .resume = acc_resume,
    .get_proc_name = get_proc_name,
};

/* libunwind's x86-64 register numbers, in order, from the ucontext. */
static const int greg_of[17] = {REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI,
                                REG_RBP, REG_RSP, REG_R8,  REG_R9,  REG_R10, REG_R11,
                                REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP};

static void put_pc(vmp_frame *out, uint32_t *n, uint64_t pc)
{
    out[*n].value = pc;
    out[*n].bcpc = VMP_BCPC_NONE;
    out[*n].kind = VMP_FRAME_PC;
    (*n)++;
}

/* libunwind from the frame in c->regs, whose pc is out[n - 1]. */
static uint32_t walk_libunwind(uctx *c, vmp_frame *out, uint32_t n, uint32_t max)
{
    unw_cursor_t cur;
    unw_word_t ip, sp, last_sp = c->regs[UNW_X86_64_RSP];

    if (unw_init_remote(&cur, addr_space, c) < 0)
        return n;
    while (n < max && unw_step(&cur) > 0) {
        if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || unw_get_reg(&cur, UNW_REG_SP, &sp) < 0)
            break;
        /* A caller's frame lies above its callee's: anything else is a
         * broken walk.  Stop at the first pc outside every module. */
        if (sp <= last_sp || !in_code(c->t, ip))
            break;
        last_sp = sp;
        put_pc(out, &n, ip);
    }
    return n;
}

static uint32_t walk(const utable *t, void *uc, uint64_t stack_hi, vmp_frame *out, uint32_t max)
{
    const ucontext_t *u = uc;
    uctx c;
    uint64_t ip, sp, fp;
    uint32_t n = 0;
    int i;

    c.t = t;
    c.n_pages = c.next_page = 0;
    for (i = 0; i < 17; i++)
        c.regs[i] = (unw_word_t)u->uc_mcontext.gregs[greg_of[i]];
    ip = c.regs[UNW_X86_64_RIP];
    sp = c.regs[UNW_X86_64_RSP];
    fp = c.regs[UNW_X86_64_RBP];
    c.stack_lo = sp;
    c.stack_hi = stack_hi > sp ? stack_hi : 0;
    if (max == 0 || !in_code(t, ip))
        return 0;
    put_pc(out, &n, ip);
    while (n < max && atomic_load_explicit(&use_rows, memory_order_relaxed)) {
        const uint64_t at = n == 1 ? ip : ip - 1; /* a return address: its call */
        const useg *s = seg_of(t, at, 1);
        const umod *m = s != NULL ? &t->mods[s->module] : NULL;
        const vmp_cfi_row *row;
        uint64_t cfa, ra;

        row = m != NULL && m->cfi != NULL ? vmp_jvmti__cfi_find(m->cfi, at - m->bias) : NULL;
        if (row == NULL || row->kind == VMP_CFI_NONE) {
            /* what the rows cannot say: libunwind from this frame on */
            atomic_fetch_add_explicit(&n_handovers, 1, memory_order_relaxed);
            c.regs[UNW_X86_64_RIP] = ip;
            c.regs[UNW_X86_64_RSP] = sp;
            c.regs[UNW_X86_64_RBP] = fp;
            return walk_libunwind(&c, out, n, max);
        }
        if (row->kind == VMP_CFI_END)
            return n;
        cfa = (row->kind == VMP_CFI_SP ? sp : fp) + (uint64_t)(int64_t)row->cfa_off;
        /* a caller's frame lies above its callee's */
        if (cfa <= sp || !read_word(&c, cfa - 8, &ra))
            return n;
        if (row->fp_off != VMP_CFI_FP_SAME &&
            !read_word(&c, cfa + (uint64_t)(int64_t)row->fp_off, &fp))
            return n;
        sp = cfa;
        ip = ra;
        /* stop at the first pc outside every module */
        if (!in_code(t, ip))
            return n;
        put_pc(out, &n, ip);
    }
    return n < max ? walk_libunwind(&c, out, n, max) : n;
}

/* ---- The interface ---------------------------------------------------------- */

int vmp_jvmti__unwind_init(void)
{
    utable *t;
    uint64_t probe = 0x766d70, got = 0;
    struct iovec local = {&got, sizeof got}, remote = {&probe, sizeof probe};
    ucontext_t uc;
    vmp_frame f[4];

    if (enabled)
        return 1;
    self_pid = getpid();
    if (process_vm_readv(self_pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof got || got != probe)
        return 0;
    if (addr_space == NULL) /* kept from an earlier recording */
        addr_space = unw_create_addr_space(&accessors, 0);
    if (addr_space == NULL)
        return 0;
    unw_set_caching_policy(addr_space, UNW_CACHE_GLOBAL);
    unw_flush_cache(addr_space, 0, 0);
    t = build_table();
    if (t == NULL) {
        unw_destroy_addr_space(addr_space);
        addr_space = NULL;
        return 0;
    }
    atomic_store(&cur_table, t);
    read_loader_counters(loader_seen);
    /* One walk here, outside any handler, runs libunwind's one-time
     * initialisation (it takes a lock). */
    if (getcontext(&uc) == 0)
        (void)walk(t, &uc, 0, f, 4);
    enabled = 1;
    return 1;
}

/* Replace the module table after the loader's list changed.  0, or -1
 * when out of memory (the old table stays). */
static int rebuild_table(void)
{
    utable *old = atomic_load(&cur_table), *t;

    if (!enabled || old == NULL)
        return 0;
    t = build_table();
    if (t == NULL)
        return -1;
    t->retired = old; /* a handler may still read it */
    atomic_store(&cur_table, t);
    unw_flush_cache(addr_space, 0, 0);
    return 0;
}

void vmp_jvmti__unwind_shutdown(void)
{
    utable *t = atomic_exchange(&cur_table, NULL);
    enabled = 0;
    while (t != NULL) {
        utable *next = t->retired;
        free_table(t);
        t = next;
    }
    cfi_cache_free();
}

int vmp_jvmti__unwind_in_module(uint64_t pc)
{
    const utable *t = atomic_load(&cur_table);
    return t != NULL && in_code(t, pc);
}

int vmp_jvmti__unwind_read(uint64_t sp, uint64_t stack_hi, uint64_t addr, uint64_t *val)
{
    uctx c;

    c.t = atomic_load(&cur_table);
    if (!enabled || c.t == NULL)
        return 0;
    c.n_pages = c.next_page = 0;
    c.stack_lo = sp;
    c.stack_hi = stack_hi > sp ? stack_hi : 0;
    return read_word(&c, addr, val);
}

uint32_t vmp_jvmti__unwind(void *uc, uint64_t stack_hi, vmp_frame *out, uint32_t max)
{
    const utable *t = atomic_load(&cur_table);
    if (t == NULL || uc == NULL || out == NULL)
        return 0;
    return walk(t, uc, stack_hi, out, max);
}

void vmp_jvmti__unwind_use_rows(int on)
{
    atomic_store(&use_rows, on);
}

void vmp_jvmti__unwind_counts(uint64_t *handovers, uint64_t *checked_reads)
{
    *handovers = atomic_load(&n_handovers);
    *checked_reads = atomic_load(&n_checked_reads);
}

#else /* no libunwind, or an architecture this file does not map */

int vmp_jvmti__unwind_init(void)
{
    return 0;
}

static int rebuild_table(void)
{
    return 0;
}

void vmp_jvmti__unwind_shutdown(void)
{}

int vmp_jvmti__unwind_in_module(uint64_t pc)
{
    (void)pc;
    return 0;
}

int vmp_jvmti__unwind_read(uint64_t sp, uint64_t stack_hi, uint64_t addr, uint64_t *val)
{
    (void)sp;
    (void)stack_hi;
    (void)addr;
    (void)val;
    return 0;
}

uint32_t vmp_jvmti__unwind(void *uc, uint64_t stack_hi, vmp_frame *out, uint32_t max)
{
    (void)uc;
    (void)stack_hi;
    (void)out;
    (void)max;
    return 0;
}

void vmp_jvmti__unwind_use_rows(int on)
{
    (void)on;
}

void vmp_jvmti__unwind_counts(uint64_t *handovers, uint64_t *checked_reads)
{
    *handovers = *checked_reads = 0;
}

#endif
