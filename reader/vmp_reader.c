/* SPDX-License-Identifier: MIT
 *
 * vmp_reader.c - the reader's public API (vmp_reader.h): opening inputs,
 * iterating records chunk by chunk (spec.md §4 R-CHK-3) or whole chunks,
 * errors, memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmp_reader_int.h"

/* ---- memory -------------------------------------------------------------- */

void *vmp_rd_alloc(vmp_reader *r, size_t size)
{
    if (size == 0)
        size = 1;
    if (r->use_default_alloc)
        return malloc(size);
    return r->al.alloc(r->al.ud, size);
}

void vmp_rd_free(vmp_reader *r, void *p, size_t size)
{
    if (p == NULL)
        return;
    if (size == 0)
        size = 1;
    if (r->use_default_alloc)
        free(p);
    else
        r->al.free(r->al.ud, p, size);
}

#define ARENA_FIRST_BLOCK ((size_t)16 << 10)
#define ARENA_ALIGN       8u

void *vmp_rd_arena_alloc(vmp_reader *r, size_t size)
{
    vmp_rd_block *b = r->arena;
    size_t hdr = (sizeof(vmp_rd_block) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    size_t bsize;
    uint8_t *p;

    if (size > SIZE_MAX - hdr - ARENA_ALIGN)
        return NULL;
    size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (b == NULL || b->size - b->used < size) {
        bsize = size > ARENA_FIRST_BLOCK ? size : ARENA_FIRST_BLOCK;
        b = vmp_rd_alloc(r, hdr + bsize);
        if (b == NULL)
            return NULL;
        b->size = bsize;
        b->used = 0;
        /* The newest block is searched first; a full-sized block stays behind it. */
        b->next = r->arena;
        r->arena = b;
    }
    p = (uint8_t *)b + hdr + b->used;
    b->used += size;
    return p;
}

void vmp_rd_arena_reset(vmp_reader *r)
{
    vmp_rd_block *keep = NULL;
    size_t hdr = (sizeof(vmp_rd_block) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);

    /* the usual case: one default-sized block, already the one to keep */
    if (r->arena == NULL || (r->arena->next == NULL && r->arena->size == ARENA_FIRST_BLOCK)) {
        if (r->arena != NULL)
            r->arena->used = 0;
        return;
    }
    /* Keep one default-sized block; larger ones were for one big record. */
    while (r->arena != NULL) {
        vmp_rd_block *b = r->arena;
        r->arena = b->next;
        if (keep == NULL && b->size == ARENA_FIRST_BLOCK) {
            keep = b;
        } else {
            vmp_rd_free(r, b, hdr + b->size);
        }
    }
    if (keep != NULL) {
        keep->used = 0;
        keep->next = NULL;
    }
    r->arena = keep;
}

void vmp_rd_arena_free(vmp_reader *r)
{
    vmp_rd_arena_reset(r);
    if (r->arena != NULL) {
        size_t hdr = (sizeof(vmp_rd_block) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
        vmp_rd_free(r, r->arena, hdr + r->arena->size);
        r->arena = NULL;
    }
}

/* ---- errors -------------------------------------------------------------- */

static vmp_status vfail(vmp_reader *r, const char *rule, vmp_status st, uint64_t off,
                        const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

static vmp_status vfail(vmp_reader *r, const char *rule, vmp_status st, uint64_t off,
                        const char *fmt, va_list ap)
{
    int n;

    if (r->err != VMP_OK)
        return r->err;
    r->err = st;
    r->err_off = off;
    r->err_rule = rule;
    n = snprintf(r->errmsg, sizeof r->errmsg, "%s: offset %" PRIu64 ": ", r->name, off);
    if (n < 0)
        n = 0;
    if ((size_t)n < sizeof r->errmsg)
        vsnprintf(r->errmsg + n, sizeof r->errmsg - (size_t)n, fmt, ap);
    return st;
}

vmp_status vmp_rd_fail(vmp_reader *r, vmp_status st, uint64_t off, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    st = vfail(r, NULL, st, off, fmt, ap);
    va_end(ap);
    return st;
}

vmp_status vmp_rd_fail_rule(vmp_reader *r, const char *rule, vmp_status st, uint64_t off,
                            const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    st = vfail(r, rule, st, off, fmt, ap);
    va_end(ap);
    return st;
}

/* ---- open ---------------------------------------------------------------- */

static vmp_status reader_new(vmp_reader **out, const char *name, const vmp_reader_options *opts)
{
    vmp_reader *r;
    vmp_allocator al = {NULL, NULL, NULL};
    int use_default = 1;
    size_t name_len;

    *out = NULL;
    if (opts != NULL && opts->version != VMP_READER_OPTIONS_VERSION)
        return VMP_ERR_INVALID_ARG;
    if (opts != NULL && opts->alloc != NULL) {
        if (opts->alloc->alloc == NULL || opts->alloc->free == NULL)
            return VMP_ERR_INVALID_ARG;
        al = *opts->alloc;
        use_default = 0;
    }
    if (opts != NULL && opts->max_nesting > VMP_RD_MAX_NESTING)
        return VMP_ERR_INVALID_ARG;
    r = use_default ? malloc(sizeof *r) : al.alloc(al.ud, sizeof *r);
    if (r == NULL)
        return VMP_ERR_NOMEM;
    memset(r, 0, sizeof *r);
    r->al = al;
    r->use_default_alloc = use_default;
    r->fd = -1;
    r->name = (char *)"<reader>";
    r->max_chunk = opts && opts->max_chunk_bytes ? opts->max_chunk_bytes : VMP_RD_DEFAULT_CHUNK;
    r->max_record = opts && opts->max_record_bytes ? opts->max_record_bytes : VMP_RD_DEFAULT_RECORD;
    r->max_nesting = opts && opts->max_nesting ? opts->max_nesting : VMP_RD_DEFAULT_NESTING;
    r->max_items = opts && opts->max_array_items ? opts->max_array_items : VMP_RD_DEFAULT_ITEMS;
    r->max_contexts = opts && opts->max_contexts ? opts->max_contexts : VMP_RD_DEFAULT_CONTEXTS;
    r->time_unit = opts ? opts->sample_time_unit_ns : 0;
    *out = r;

    name_len = strlen(name);
    r->name_size = name_len + 1;
    {
        char *copy = vmp_rd_alloc(r, r->name_size);
        if (copy == NULL) {
            r->name_size = 0;
            return vmp_rd_fail(r, VMP_ERR_NOMEM, 0, "out of memory");
        }
        memcpy(copy, name, r->name_size);
        r->name = copy;
    }
    r->skip_stack = vmp_rd_alloc(r, (size_t)r->max_nesting * sizeof(uint64_t));
    if (r->skip_stack == NULL)
        return vmp_rd_fail(r, VMP_ERR_NOMEM, 0, "out of memory");
    return vmp_rd_zstd_init(r);
}

static vmp_status open_fd(vmp_reader **out, int fd, const char *name,
                          const vmp_reader_options *opts)
{
    vmp_reader *r;
    vmp_status st = reader_new(out, name, opts);

    r = *out;
    if (st < 0)
        return st;
    r->inbuf = vmp_rd_alloc(r, VMP_RD_INBUF_SIZE);
    if (r->inbuf == NULL)
        return vmp_rd_fail(r, VMP_ERR_NOMEM, 0, "out of memory");
    r->inbuf_size = VMP_RD_INBUF_SIZE;
    r->fd = fd;
    r->data = r->inbuf;
    return vmp_rd_read_file_header(r);
}

vmp_status vmp_reader_open_fd(vmp_reader **out, int fd, const char *name,
                              const vmp_reader_options *opts)
{
    if (out == NULL)
        return VMP_ERR_INVALID_ARG;
    *out = NULL;
    if (fd < 0)
        return VMP_ERR_INVALID_ARG;
    return open_fd(out, fd, name != NULL ? name : "<fd>", opts);
}

vmp_status vmp_reader_open_file(vmp_reader **out, const char *path, const vmp_reader_options *opts)
{
    vmp_status st;
    int fd;

    if (out == NULL)
        return VMP_ERR_INVALID_ARG;
    *out = NULL;
    if (path == NULL)
        return VMP_ERR_INVALID_ARG;
    if (strcmp(path, "-") == 0)
        return open_fd(out, STDIN_FILENO, "<stdin>", opts);
    do {
        fd = open(path, O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        int e = errno;
        st = reader_new(out, path, opts);
        if (st < 0)
            return st;
        return vmp_rd_fail(*out, VMP_ERR_IO, 0, "cannot open: %s", strerror(e));
    }
    st = open_fd(out, fd, path, opts);
    if (*out != NULL) {
        (*out)->fd = fd;
        (*out)->owns_fd = 1; /* closed by vmp_reader_close() */
    } else {
        close(fd);
    }
    return st;
}

vmp_status vmp_reader_open_memory(vmp_reader **out, const void *data, size_t size, const char *name,
                                  const vmp_reader_options *opts)
{
    vmp_reader *r;
    vmp_status st;

    if (out == NULL)
        return VMP_ERR_INVALID_ARG;
    *out = NULL;
    if (data == NULL && size > 0)
        return VMP_ERR_INVALID_ARG;
    st = reader_new(out, name != NULL ? name : "<memory>", opts);
    r = *out;
    if (st < 0)
        return st;
    r->data = data != NULL ? data : (const uint8_t *)"";
    r->data_end = size;
    r->eof = 1;
    return vmp_rd_read_file_header(r);
}

/* ---- iteration ----------------------------------------------------------- */

/* ---- sample blocks (format 2.0, spec §5.14) ------------------------------- */

/* Item i of a column (R-BLK-1: one item for every sample, or one each). */
static uint64_t column(const uint64_t *v, size_t n, size_t i, uint64_t dflt)
{
    return n == 0 ? dflt : v[n == 1 ? 0 : i];
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static vmp_status
block_fail(vmp_reader *r, const char *rule, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return vmp_rd_fail_rule(r, rule, VMP_ERR_CORRUPT, r->chunk_offset,
                            "chunk %" PRIu64 ", record at content offset %zu: SAMPLE_BLOCK: %s",
                            r->chunk_index, r->blk_start, msg);
}

/* Allocate the context pages that hold ids `first` to `last` (1-based,
 * within the limit): the page table grows to the next power of 2 pages.
 * Returns 0, or -1 when out of memory. */
static int grow_context_pages(vmp_reader *r, uint64_t first, uint64_t last)
{
    size_t need = (size_t)((last - 1) >> VMP_RD_CTX_PAGE_SHIFT) + 1, p;
    if (need > r->n_ctx_pages) {
        size_t n = r->n_ctx_pages ? r->n_ctx_pages : 1;
        vmp_rd_context **grown;
        while (n < need)
            n *= 2;
        grown = vmp_rd_alloc(r, n * sizeof *grown);
        if (grown == NULL)
            return -1;
        if (r->n_ctx_pages > 0)
            memcpy(grown, r->ctx_pages, r->n_ctx_pages * sizeof *grown);
        memset(grown + r->n_ctx_pages, 0, (n - r->n_ctx_pages) * sizeof *grown);
        vmp_rd_free(r, r->ctx_pages, r->n_ctx_pages * sizeof *r->ctx_pages);
        r->ctx_pages = grown;
        r->n_ctx_pages = n;
    }
    for (p = (size_t)((first - 1) >> VMP_RD_CTX_PAGE_SHIFT); p < need; p++)
        if (r->ctx_pages[p] == NULL &&
            (r->ctx_pages[p] = vmp_rd_alloc(r, VMP_RD_CTX_PAGE * sizeof **r->ctx_pages)) == NULL)
            return -1;
    return 0;
}

/* Define the sample contexts of block `b` (spec R-BLK-5): ids from its
 * context_base up, above every id defined before, within the limit. */
static vmp_status define_contexts(vmp_reader *r, const vmp_rec_sample_block *b)
{
    uint64_t base = b->context_base, k = b->n_contexts / 3, i, last;

    if (b->n_contexts % 3 != 0)
        return block_fail(r, "R-BLK-5", "contexts has %zu items: not (stack, state, pc) triples",
                          b->n_contexts);
    if (k == 0)
        return VMP_OK;
    if (base == 0 || base <= r->ctx_last)
        return block_fail(r, "R-BLK-5",
                          "context_base %" PRIu64 " is not above the contexts defined before it"
                          " (%" PRIu64 ")",
                          base, r->ctx_last);
    if (base - 1 > r->max_contexts || k > r->max_contexts - (base - 1))
        return vmp_rd_fail_rule(r, "R-LIM-1", VMP_ERR_LIMIT, r->chunk_offset,
                                "chunk %" PRIu64 ", record at content offset %zu: SAMPLE_BLOCK:"
                                " context %" PRIu64 " is past the contexts limit %" PRIu64,
                                r->chunk_index, r->blk_start, base - 1 + k, r->max_contexts);
    last = base - 1 + k;
    if (grow_context_pages(r, base, last) < 0)
        return vmp_rd_fail(r, VMP_ERR_NOMEM, r->chunk_offset, "out of memory");
    /* the ids skipped before base (R-BLK-5 allows gaps) read as undefined */
    for (i = r->ctx_last; i < base - 1; i = (i | (VMP_RD_CTX_PAGE - 1)) + 1) {
        vmp_rd_context *page = r->ctx_pages[i >> VMP_RD_CTX_PAGE_SHIFT];
        uint64_t end = (i | (VMP_RD_CTX_PAGE - 1)) + 1;
        if (end > base - 1)
            end = base - 1;
        if (page != NULL)
            memset(page + (i & (VMP_RD_CTX_PAGE - 1)), 0, (size_t)(end - i) * sizeof *page);
    }
    for (i = 0; i < k; i++) {
        uint64_t id = base - 1 + i;
        vmp_rd_context *c = &r->ctx_pages[id >> VMP_RD_CTX_PAGE_SHIFT][id & (VMP_RD_CTX_PAGE - 1)];
        c->stack = b->contexts[3 * i];
        c->state = b->contexts[3 * i + 1];
        c->pc = b->contexts[3 * i + 2];
        c->defined = 1;
    }
    r->ctx_last = last;
    return VMP_OK;
}

/* Context `id` (1 to ctx_last), or NULL when it was skipped. */
static inline const vmp_rd_context *context_at(const vmp_reader *r, uint64_t id)
{
    const vmp_rd_context *page = r->ctx_pages[(id - 1) >> VMP_RD_CTX_PAGE_SHIFT];
    page = page ? page + ((id - 1) & (VMP_RD_CTX_PAGE - 1)) : NULL;
    return page && page->defined ? page : NULL;
}

/* Check the block just decoded into rec (spec R-BLK-2) and make it the
 * reader's current block. */
static vmp_status take_block(vmp_reader *r, const vmp_record *rec)
{
    const vmp_rec_sample_block *b = &rec->u.sample_block;

    const struct {
        const char *name;
        const uint64_t *v;
        size_t n, table;
    } cols[] = {{"thread", b->thread, b->n_thread, b->n_threads},
                {"stack", b->stack, b->n_stack, b->n_stacks},
                {"state", b->state, b->n_state, 0},
                {"generation", b->generation, b->n_generation, 0},
                {"weight", b->weight, b->n_weight, 0},
                {"blame", b->blame, b->n_blame, 0},
                {"context", b->context, b->n_context, 0}};

    size_t n = b->n_times, i, k;
    vmp_status st;

    r->blk_start = r->rec_start;
    if (n == 0)
        return block_fail(r, "R-BLK-2", "times has no item");
    for (k = 0; k < sizeof cols / sizeof cols[0]; k++) {
        if (cols[k].n > 1 && cols[k].n != n)
            return block_fail(r, "R-BLK-2", "column %s has %zu items for %zu samples", cols[k].name,
                              cols[k].n, n);
        for (i = 0; cols[k].table > 0 && i < (cols[k].n ? cols[k].n : 1); i++) {
            uint64_t v = cols[k].n ? cols[k].v[i] : 0;
            if (v >= cols[k].table)
                return block_fail(r, "R-BLK-2", "%s index %" PRIu64 " is past its table of %zu",
                                  cols[k].name, v, cols[k].table);
        }
    }
    for (k = 0; k < 2; k++) {
        const uint64_t *pairs = k ? b->failed : b->pcs;
        size_t n_pairs = k ? b->n_failed : b->n_pcs;
        for (i = 0; i < n_pairs; i++) {
            uint64_t at = pairs[2 * i];
            if (at >= n || (i > 0 && at <= pairs[2 * i - 2]))
                return block_fail(r, "R-BLK-2",
                                  "%s pair %zu names sample %" PRIu64
                                  ": indexes must increase and be below %zu",
                                  k ? "failed" : "pcs", i, at, n);
        }
    }
    st = define_contexts(r, b);
    if (st < 0)
        return st;
    r->blk = *b;
    r->blk_next = r->blk_pc = r->blk_failed = 0;
    return VMP_OK;
}

/* The next sample of the current block, as a SAMPLE record (R-BLK-1). */
static vmp_status block_sample(vmp_reader *r, vmp_record *rec)
{
    const vmp_rec_sample_block *b = &r->blk;
    size_t i = r->blk_next++;
    int64_t d;
    uint64_t mag, time;
    uint64_t unit = r->time_unit ? r->time_unit : 1, v;
    vmp_rec_sample *s = &rec->u.sample;
    const vmp_rd_context *c;
    int step, undefined = 0;

    d = b->times[i];
    if ((d > 0 && b->time_base > INT64_MAX - d) || (d < 0 && b->time_base < INT64_MIN - d))
        return block_fail(r, "R-BLK-2", "time_base plus the time of sample %zu overflows", i);
    d += b->time_base;
    mag = d < 0 ? (uint64_t)(-(d + 1)) + 1 : (uint64_t)d;
    /* spec R-SMP-1, in the header's unit */
    if (mag > UINT64_MAX / unit)
        return block_fail(r, "R-SMP-1", "time delta of sample %zu overflows", i);
    step = vmp_rd_time_step(r->sample_time, d < 0, mag * unit, &time);
    if (step != 0)
        return block_fail(r, "R-SMP-1",
                          step < 0 ? "sample %zu: time is negative" : "sample %zu: time overflows",
                          i);
    memset(rec, 0, offsetof(vmp_record, u));
    memset(s, 0, sizeof *s);
    rec->type = VMP_REC_SAMPLE;
    rec->raw_type = VMP_REC_SAMPLE_BLOCK;
    rec->chunk_index = r->chunk_index;
    rec->chunk_offset = r->chunk_offset;
    rec->record_offset = r->blk_start;
    s->time_ns = time;
    v = column(b->thread, b->n_thread, i, 0);
    s->thread = b->n_threads ? b->threads[v] : v;
    v = column(b->context, b->n_context, i, 0);
#if defined(__GNUC__)
    /* the contexts of later samples: random reads into a table larger than
     * the caches, started early */
    if (i + 8 < b->n_context && b->context[i + 8] - 1 < r->ctx_last) {
        const vmp_rd_context *page = r->ctx_pages[(b->context[i + 8] - 1) >> VMP_RD_CTX_PAGE_SHIFT];
        if (page)
            __builtin_prefetch(page + ((b->context[i + 8] - 1) & (VMP_RD_CTX_PAGE - 1)));
    }
#endif
    if (v != 0 && v <= r->ctx_last && (c = context_at(r, v)) != NULL) { /* R-BLK-5 */
        s->stack = c->stack;
        s->state = c->state;
        s->pc = c->pc;
        s->has_pc = s->pc != 0;
        s->context = v;
    } else if (v != 0) { /* not defined: no stack, no pc (R-ID-6) */
        r->info.undefined_contexts++;
        undefined = 1;
    } else {
        v = column(b->stack, b->n_stack, i, 0);
        s->stack = b->n_stacks ? b->stacks[v] : v;
        s->state = column(b->state, b->n_state, i, 0);
    }
    s->generation = column(b->generation, b->n_generation, i, 0);
    s->weight = column(b->weight, b->n_weight, i, 1);
    s->blame = column(b->blame, b->n_blame, i, 0);
    if (r->blk_failed < b->n_failed && b->failed[2 * r->blk_failed] == i) { /* R-BLK-1 */
        rec->type = VMP_REC_FAILED_SAMPLE;
        s->reason = b->failed[2 * r->blk_failed + 1];
        s->stack = s->blame = s->context = 0;
        r->blk_failed++;
    }
    if (r->blk_pc < b->n_pcs && b->pcs[2 * r->blk_pc] == i) { /* R-BLK-3 */
        s->pc = b->pcs[2 * r->blk_pc + 1];
        s->has_pc = 1;
        s->context = 0; /* not the context's pc */
        r->blk_pc++;
    } else if (rec->type == VMP_REC_SAMPLE && !s->has_pc && !undefined) {
        s->pc_is_leaf = 1;
    }
    vmp_rd_took_sample(r, time);
    if (r->blk_next == b->n_times)
        r->blk.n_times = r->blk_next = 0;
    return VMP_OK;
}

/* Decode the record at r->content_pos of the current chunk into *rec and
 * count it; it becomes the record vmp_reader_record_bytes() gives. */
static vmp_status decode_next_record(vmp_reader *r, vmp_record *rec)
{
    size_t start = r->content_pos;
    vmp_status st = vmp_rd_decode_record(r, rec);

    if (st < 0)
        return st;
    r->rec_start = start;
    r->rec_size = r->content_pos - start;
    r->info.records++;
    if (rec->type == VMP_REC_UNKNOWN)
        r->info.unknown_records++;
    if (rec->type == VMP_REC_END)
        r->info.seen_end = 1;
    if (rec->type == VMP_REC_HEADER)
        r->time_unit = rec->u.header.sample_time_unit_ns; /* spec §5.1: 0 is read as 1 */
    if (rec->type == VMP_REC_SAMPLE_BLOCK) {
        /* delivered as its samples, which have no bytes of their own */
        st = take_block(r, rec);
        r->rec_size = 0;
        if (st < 0)
            return st;
        return block_sample(r, rec);
    }
    return VMP_OK;
}

/* Leave the current chunk and decompress the next data chunk (spec.md §4);
 * VMP_END at a clean end of input. */
static vmp_status advance_chunk(vmp_reader *r)
{
    vmp_status st;

    r->in_chunk = 0;
    st = vmp_rd_next_chunk(r);
    if (st == VMP_END)
        r->at_end = 1;
    return st;
}

vmp_status vmp_reader_next(vmp_reader *r, vmp_record *rec)
{
    vmp_status st;

    if (r == NULL || rec == NULL)
        return VMP_ERR_INVALID_ARG;
    r->rec_size = 0;
    if (r->err != VMP_OK)
        return r->err;
    if (r->at_end)
        return VMP_END;
    for (;;) {
        if (r->blk.n_times > 0) /* the rest of a block (R-BLK-1) */
            return block_sample(r, rec);
        if (r->in_chunk && r->content_pos < r->content_size)
            return decode_next_record(r, rec);
        st = advance_chunk(r);
        if (st < 0 || st == VMP_END)
            return st;
    }
}

vmp_status vmp_reader_next_chunk(vmp_reader *r, vmp_reader_chunk *out)
{
    vmp_record rec;
    vmp_status st;

    if (r == NULL || out == NULL)
        return VMP_ERR_INVALID_ARG;
    if (r->err != VMP_OK)
        return r->err;
    if ((r->in_chunk && r->content_pos < r->content_size) || r->blk.n_times > 0)
        return VMP_ERR_INVALID_ARG; /* records of this chunk are still to come */
    r->rec_size = 0;
    if (r->at_end)
        return VMP_END;
    st = advance_chunk(r);
    if (st < 0 || st == VMP_END)
        return st;
    memset(out, 0, sizeof *out);
    /* spec R-CHK-2: every record whole, checked as vmp_reader_next() does */
    while (r->content_pos < r->content_size) {
        st = decode_next_record(r, &rec);
        while (st >= 0 && r->blk.n_times > 0) /* a block's samples count (R-BLK-1) */
            st = block_sample(r, &rec);
        if (st < 0)
            return st;
        out->records++;
        if (rec.type == VMP_REC_END)
            out->has_end = 1;
    }
    r->rec_size = 0; /* no record was delivered */
    out->index = r->chunk_index;
    out->offset = r->chunk_offset;
    out->compressed_size = r->chunk_bytes;
    out->content = r->content_size > 0 ? r->content : (const uint8_t *)"";
    out->content_size = r->content_size;
    out->samples = r->chunk_samples;
    out->first_time_ns = r->chunk_first_time;
    out->last_time_ns = r->chunk_last_time;
    return VMP_OK;
}

vmp_status vmp_reader_file_header(const vmp_reader *r, const uint8_t **data, size_t *size)
{
    if (r == NULL || data == NULL || size == NULL || r->info.format_major == 0)
        return VMP_ERR_INVALID_ARG;
    if (r->file_header_size == 0)
        return VMP_ERR_LIMIT;
    *data = r->file_header;
    *size = r->file_header_size;
    return VMP_OK;
}

void vmp_reader_get_info(const vmp_reader *r, vmp_reader_info *out)
{
    if (out == NULL)
        return;
    if (r == NULL) {
        memset(out, 0, sizeof *out);
        return;
    }
    *out = r->info;
}

const char *vmp_reader_errmsg(const vmp_reader *r)
{
    if (r == NULL)
        return "";
    return r->errmsg;
}

vmp_status vmp_reader_record_bytes(const vmp_reader *r, const uint8_t **data, size_t *size)
{
    if (r == NULL || data == NULL || size == NULL || r->rec_size == 0 || r->err != VMP_OK)
        return VMP_ERR_INVALID_ARG;
    *data = r->content + r->rec_start;
    *size = r->rec_size;
    return VMP_OK;
}

const char *vmp_reader_errrule(const vmp_reader *r)
{
    if (r == NULL || r->err == VMP_OK)
        return "";
    switch (r->err) { /* statuses that are one rule wherever they arise */
    case VMP_ERR_NOT_VMP:
        return "R-HDR-1";
    case VMP_ERR_VERSION:
        return "R-HDR-3";
    case VMP_ERR_TRUNCATED:
        return "R-CHK-3";
    case VMP_ERR_LIMIT:
        return "R-LIM-1";
    default:
        return r->err_rule != NULL ? r->err_rule : "";
    }
}

vmp_status vmp_reader_fail(vmp_reader *r, vmp_status st, const char *msg)
{
    if (r == NULL || st >= 0)
        return VMP_ERR_INVALID_ARG;
    return vmp_rd_fail(r, st, r->chunk_offset, "%s", msg ? msg : vmp_status_str(st));
}

const char *vmp_reader_warning(const vmp_reader *r)
{
    return r != NULL && r->warning[0] ? r->warning : NULL;
}

uint64_t vmp_reader_offset(const vmp_reader *r)
{
    if (r == NULL)
        return 0;
    if (r->err != VMP_OK)
        return r->err_off;
    return r->in_chunk ? r->chunk_offset : r->data_off + r->data_pos;
}

void vmp_reader_close(vmp_reader *r)
{
    if (r == NULL)
        return;
    vmp_rd_zstd_free(r);
    vmp_rd_arena_free(r);
    vmp_rd_free(r, r->content, r->content_cap);
    for (size_t p = 0; p < r->n_ctx_pages; p++)
        vmp_rd_free(r, r->ctx_pages[p], VMP_RD_CTX_PAGE * sizeof **r->ctx_pages);
    vmp_rd_free(r, r->ctx_pages, r->n_ctx_pages * sizeof *r->ctx_pages);
    vmp_rd_free(r, r->inbuf, r->inbuf_size);
    vmp_rd_free(r, r->skip_stack, (size_t)r->max_nesting * sizeof(uint64_t));
    if (r->name_size > 0)
        vmp_rd_free(r, r->name, r->name_size);
    if (r->owns_fd)
        close(r->fd);
    if (r->use_default_alloc) {
        free(r);
    } else {
        vmp_allocator al = r->al;
        al.free(al.ud, r, sizeof *r);
    }
}
