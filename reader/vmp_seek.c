/* SPDX-License-Identifier: MIT
 *
 * vmp_seek.c - the seek table (spec.md §6, R-SEEK-1..3): decoded with the
 * reader's bounded CBOR parser (vmp_cbor.h), checked against the file.
 */
#include "vmp_seek.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "vmp_cbor.h"
#include "vmp_format.h"
#include "vmp_seek_int.h"

struct vmp_seek_table {
    vmp_seek_entry *e;
    size_t n;
    uint64_t offset;
    uint64_t header_end; /* end of the file header frame; 0: parsed without its file */
};

/* The smallest encoded entry: an array head and six one-byte uints. */
#define MIN_ENTRY_BYTES 7u
/* Items an entry may have (6 today; later versions may append fields). */
#define MAX_ENTRY_ITEMS 64u
/* Bytes of a zstd frame header that hold its content size (at most 18). */
#define ZSTD_HEAD_BYTES 18u

static void set_msg(char *err, size_t err_size, const char *name, uint64_t off, const char *fmt,
                    ...) __attribute__((format(printf, 5, 6)));

static void set_msg(char *err, size_t err_size, const char *name, uint64_t off, const char *fmt,
                    ...)
{
    va_list ap;
    int n;
    if (!err || err_size == 0)
        return;
    n = snprintf(err, err_size, "%s: offset %" PRIu64 ": seek table: ", name ? name : "-", off);
    if (n < 0 || (size_t)n >= err_size)
        return;
    va_start(ap, fmt);
    vsnprintf(err + n, err_size - (size_t)n, fmt, ap);
    va_end(ap);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void vmp_seek_table_free(vmp_seek_table *t)
{
    if (!t)
        return;
    free(t->e);
    free(t);
}

vmp_status vmp_seek__walk(const void *content, size_t size, const char *name, uint64_t table_offset,
                          char *err, size_t err_size,
                          vmp_status (*each)(void *ctx, size_t count, size_t i,
                                             const vmp_seek_entry *e),
                          void *ctx)
{
    uint64_t stack[4];
    vmp_cbor_parser p;
    vmp_cbor_token t;
    vmp_status st;
    size_t i, n;

    vmp_cbor_init(&p, content, 0, size, size, 4, size, stack);
    st = vmp_cbor_next(&p, &t);
    if (st < 0) {
        set_msg(err, err_size, name, table_offset, "%s", p.msg);
        return VMP_ERR_CORRUPT;
    }
    if (t.kind != VMP_CBOR_ARRAY) {
        set_msg(err, err_size, name, table_offset, "a %s, not an array of entries",
                vmp_cbor_kind_name(t.kind));
        return VMP_ERR_CORRUPT;
    }
    /* before anyone allocates: every entry takes at least MIN_ENTRY_BYTES */
    if (t.u > (size - p.pos) / MIN_ENTRY_BYTES) {
        set_msg(err, err_size, name, table_offset, "%" PRIu64 " entries claimed in %zu bytes", t.u,
                size);
        return VMP_ERR_CORRUPT;
    }
    n = (size_t)t.u;
    for (i = 0; i < n; i++) {
        vmp_seek_entry e;
        uint64_t v[6] = {0}, k, items;
        st = vmp_cbor_next(&p, &t);
        if (st < 0 || t.kind != VMP_CBOR_ARRAY || t.u < 6 || t.u > MAX_ENTRY_ITEMS) {
            set_msg(err, err_size, name, table_offset, "entry %zu is not an array of 6 uints", i);
            return VMP_ERR_CORRUPT;
        }
        items = t.u;
        for (k = 0; k < items; k++) {
            st = vmp_cbor_next(&p, &t);
            if (st < 0 || t.kind != VMP_CBOR_UINT) {
                set_msg(err, err_size, name, table_offset,
                        "entry %zu: item %" PRIu64 " is not a uint", i, k);
                return VMP_ERR_CORRUPT;
            }
            if (k < 6)
                v[k] = t.u;
        }
        e.offset = v[0];
        e.compressed_size = v[1];
        e.content_size = v[2];
        e.first_time_ns = v[3];
        e.last_time_ns = v[4];
        e.samples = v[5];
        /* spec R-SEEK-3: what an entry says of itself */
        if (e.samples > e.content_size) {
            set_msg(err, err_size, name, table_offset,
                    "entry %zu: %" PRIu64 " samples in %" PRIu64 " bytes of content", i, e.samples,
                    e.content_size);
            return VMP_ERR_CORRUPT;
        }
        if (e.samples == 1 && e.first_time_ns != e.last_time_ns) {
            set_msg(err, err_size, name, table_offset,
                    "entry %zu: one sample with two times (%" PRIu64 ", %" PRIu64 ")", i,
                    e.first_time_ns, e.last_time_ns);
            return VMP_ERR_CORRUPT;
        }
        st = each(ctx, n, i, &e);
        if (st < 0)
            return st;
    }
    if (p.pos != size) {
        set_msg(err, err_size, name, table_offset, "%zu bytes after the entries", size - p.pos);
        return VMP_ERR_CORRUPT;
    }
    return VMP_OK;
}

/* vmp_seek__walk() callback of vmp_seek_table_parse(): allocate at the first
 * entry (the count is bounded by the bytes by then), then copy. */
static vmp_status keep_entry(void *ctx, size_t count, size_t i, const vmp_seek_entry *e)
{
    vmp_seek_table *t = ctx;
    if (i == 0) {
        t->e = calloc(count, sizeof *t->e);
        if (!t->e)
            return VMP_ERR_NOMEM;
        t->n = count;
    }
    t->e[i] = *e;
    return VMP_OK;
}

vmp_status vmp_seek_table_parse(vmp_seek_table **out, const void *content, size_t size,
                                const char *name, uint64_t table_offset, char *err, size_t err_size)
{
    vmp_seek_table *tab;
    vmp_status st;

    if (!out || (!content && size))
        return VMP_ERR_INVALID_ARG;
    *out = NULL;
    tab = calloc(1, sizeof *tab);
    if (!tab)
        return VMP_ERR_NOMEM;
    tab->offset = table_offset;
    st = vmp_seek__walk(content, size, name, table_offset, err, err_size, keep_entry, tab);
    if (st < 0) {
        if (st == VMP_ERR_NOMEM && err && err_size)
            snprintf(err, err_size, "%s: offset %" PRIu64 ": seek table: out of memory",
                     name ? name : "-", table_offset);
        vmp_seek_table_free(tab);
        return st;
    }
    *out = tab;
    return VMP_OK;
}

/* ---- the table at the end of a file ------------------------------------------ */

typedef struct source {
    int fd;             /* -1: memory */
    const uint8_t *mem; /* whole file when fd < 0 */
    uint64_t size;
    const char *name;
} source;

/* Read n bytes at off (off + n <= size); 0 on success, -1 on an I/O error. */
static int src_read(const source *s, uint64_t off, void *buf, size_t n)
{
    uint8_t *p = buf;
    if (s->fd < 0) {
        memcpy(buf, s->mem + off, n);
        return 0;
    }
    while (n) {
        ssize_t got = pread(s->fd, p, n, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        p += got;
        off += (uint64_t)got;
        n -= (size_t)got;
    }
    return 0;
}

/* spec R-SEEK-3: every entry's chunk lies after the file header frame, in
 * order, before the table, and starts with a zstd frame header declaring
 * the entry's content size. */
static vmp_status check_entries(const source *s, const vmp_seek_table *t, uint64_t header_end,
                                char *err, size_t err_size)
{
    uint64_t prev_end = header_end;
    size_t i;
    for (i = 0; i < t->n; i++) {
        const vmp_seek_entry *e = &t->e[i];
        uint8_t head[ZSTD_HEAD_BYTES];
        size_t n;
        unsigned long long fcs;
        if (e->offset < prev_end || e->compressed_size < 4 ||
            e->compressed_size > t->offset - e->offset || e->offset > t->offset) {
            set_msg(err, err_size, s->name, t->offset,
                    "entry %zu: chunk at offset %" PRIu64 " of %" PRIu64
                    " bytes is not between the previous chunk (ends at %" PRIu64 ") and the table",
                    i, e->offset, e->compressed_size, prev_end);
            return VMP_ERR_CORRUPT;
        }
        if (e->content_size > VMP_SEEK_TABLE_MAX_BYTES) {
            set_msg(err, err_size, s->name, t->offset,
                    "entry %zu: content of %" PRIu64 " bytes is past the chunk limit", i,
                    e->content_size);
            return VMP_ERR_CORRUPT;
        }
        n = e->compressed_size < ZSTD_HEAD_BYTES ? (size_t)e->compressed_size : ZSTD_HEAD_BYTES;
        if (src_read(s, e->offset, head, n) != 0) {
            set_msg(err, err_size, s->name, t->offset, "cannot read the chunk at offset %" PRIu64,
                    e->offset);
            return VMP_ERR_IO;
        }
        fcs = ZSTD_getFrameContentSize(head, n);
        if (le32(head) != VMP_ZSTD_MAGIC || fcs == ZSTD_CONTENTSIZE_ERROR ||
            (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != e->content_size)) {
            set_msg(err, err_size, s->name, t->offset,
                    "entry %zu: no chunk of %" PRIu64 " content bytes at offset %" PRIu64, i,
                    e->content_size, e->offset);
            return VMP_ERR_CORRUPT;
        }
        prev_end = e->offset + e->compressed_size;
    }
    return VMP_OK;
}

static vmp_status open_source(vmp_seek_table **out, const source *s, char *err, size_t err_size)
{
    uint8_t foot[VMP_SEEK_FOOTER_SIZE], head[VMP_SKIPPABLE_HEADER_SIZE];
    uint8_t *content = NULL;
    uint64_t total, table_off, header_end;
    vmp_status st;

    *out = NULL;
    if (s->size < 2 * VMP_SKIPPABLE_HEADER_SIZE + VMP_FILE_HEADER_SIZE + VMP_SEEK_FOOTER_SIZE)
        return VMP_END;
    if (src_read(s, s->size - VMP_SEEK_FOOTER_SIZE, foot, sizeof foot) != 0) {
        set_msg(err, err_size, s->name, s->size - VMP_SEEK_FOOTER_SIZE, "cannot read the footer");
        return VMP_ERR_IO;
    }
    if (memcmp(foot + 4, VMP_SEEK_FOOTER_MAGIC, 4) != 0)
        return VMP_END;
    total = le32(foot);
    if (total < VMP_SKIPPABLE_HEADER_SIZE + VMP_SEEK_FOOTER_SIZE || total > s->size) {
        set_msg(err, err_size, s->name, s->size - VMP_SEEK_FOOTER_SIZE,
                "the footer gives a frame of %" PRIu64 " bytes in a file of %" PRIu64, total,
                s->size);
        return VMP_ERR_CORRUPT;
    }
    table_off = s->size - total;
    if (total > VMP_SEEK_TABLE_MAX_BYTES) {
        set_msg(err, err_size, s->name, table_off,
                "%" PRIu64 " bytes, more than the limit of %" PRIu64, total,
                VMP_SEEK_TABLE_MAX_BYTES);
        return VMP_ERR_LIMIT;
    }
    if (src_read(s, table_off, head, sizeof head) != 0) {
        set_msg(err, err_size, s->name, table_off, "cannot read the frame header");
        return VMP_ERR_IO;
    }
    if (le32(head) != VMP_SEEK_FRAME_MAGIC ||
        (uint64_t)le32(head + 4) + VMP_SKIPPABLE_HEADER_SIZE != total) {
        set_msg(err, err_size, s->name, table_off,
                "the frame's magic or size does not match the footer");
        return VMP_ERR_CORRUPT;
    }
    if (src_read(s, 0, head, sizeof head) != 0) {
        set_msg(err, err_size, s->name, 0, "cannot read the file header");
        return VMP_ERR_IO;
    }
    header_end = VMP_SKIPPABLE_HEADER_SIZE + (uint64_t)le32(head + 4);
    if (le32(head) != VMP_FILE_FRAME_MAGIC || header_end > table_off) {
        set_msg(err, err_size, s->name, 0, "the file does not start with a vmp file header");
        return VMP_ERR_CORRUPT;
    }
    content = malloc((size_t)(total - VMP_SKIPPABLE_HEADER_SIZE - VMP_SEEK_FOOTER_SIZE) + 1);
    if (!content)
        return VMP_ERR_NOMEM;
    if (src_read(s, table_off + VMP_SKIPPABLE_HEADER_SIZE, content,
                 (size_t)(total - VMP_SKIPPABLE_HEADER_SIZE - VMP_SEEK_FOOTER_SIZE)) != 0) {
        free(content);
        set_msg(err, err_size, s->name, table_off, "cannot read the table");
        return VMP_ERR_IO;
    }
    st = vmp_seek_table_parse(out, content,
                              (size_t)(total - VMP_SKIPPABLE_HEADER_SIZE - VMP_SEEK_FOOTER_SIZE),
                              s->name, table_off, err, err_size);
    free(content);
    if (st == VMP_OK) {
        st = check_entries(s, *out, header_end, err, err_size);
        (*out)->header_end = header_end;
        if (st != VMP_OK) {
            vmp_seek_table_free(*out);
            *out = NULL;
        }
    }
    return st;
}

vmp_status vmp_seek_table_open_file(vmp_seek_table **out, const char *path, char *err,
                                    size_t err_size)
{
    struct stat sb;
    source s;
    vmp_status st;
    if (!out || !path)
        return VMP_ERR_INVALID_ARG;
    *out = NULL;
    if (strcmp(path, "-") == 0)
        return VMP_END;
    s.fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s.fd < 0) {
        if (err && err_size)
            snprintf(err, err_size, "%s: %s", path, strerror(errno));
        return VMP_ERR_IO;
    }
    if (fstat(s.fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(s.fd);
        return VMP_END;
    }
    s.mem = NULL;
    s.size = (uint64_t)sb.st_size;
    s.name = path;
    st = open_source(out, &s, err, err_size);
    close(s.fd);
    return st;
}

vmp_status vmp_seek_table_open_memory(vmp_seek_table **out, const void *data, size_t size,
                                      const char *name, char *err, size_t err_size)
{
    source s;
    if (!out || (!data && size))
        return VMP_ERR_INVALID_ARG;
    s.fd = -1;
    s.mem = data;
    s.size = size;
    s.name = name ? name : "-";
    return open_source(out, &s, err, err_size);
}

vmp_status vmp_seek_table_read_chunk(const vmp_seek_table *t, const char *path, size_t i,
                                     void **out, size_t *size)
{
    const vmp_seek_entry *e = vmp_seek_table_entry(t, i);
    source s;
    uint8_t *buf;
    vmp_status st = VMP_OK;

    if (!out || !size || !path || !e || t->header_end == 0 ||
        t->header_end > VMP_SEEK_MAX_HEADER_FRAME || e->compressed_size > VMP_SEEK_MAX_CHUNK_FRAME)
        return VMP_ERR_INVALID_ARG;
    *out = NULL;
    *size = 0;
    s.fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s.fd < 0)
        return VMP_ERR_IO;
    s.mem = NULL;
    s.size = 0; /* (read by offset, unchecked: the table's entries were checked) */
    s.name = path;
    buf = malloc((size_t)(t->header_end + e->compressed_size));
    if (!buf)
        st = VMP_ERR_NOMEM;
    else if (src_read(&s, 0, buf, (size_t)t->header_end) != 0 ||
             src_read(&s, e->offset, buf + t->header_end, (size_t)e->compressed_size) != 0)
        st = VMP_ERR_IO;
    close(s.fd);
    if (st != VMP_OK) {
        free(buf);
        return st;
    }
    *out = buf;
    *size = (size_t)(t->header_end + e->compressed_size);
    return VMP_OK;
}

/* ---- lookups ---------------------------------------------------------------------- */

size_t vmp_seek_table_count(const vmp_seek_table *t)
{
    return t ? t->n : 0;
}

const vmp_seek_entry *vmp_seek_table_entry(const vmp_seek_table *t, size_t i)
{
    return t && i < t->n ? &t->e[i] : NULL;
}

uint64_t vmp_seek_table_offset(const vmp_seek_table *t)
{
    return t ? t->offset : 0;
}

size_t vmp_seek_table_find_time(const vmp_seek_table *t, uint64_t time_ns)
{
    size_t i;
    if (!t)
        return 0;
    for (i = 0; i < t->n; i++)
        if (t->e[i].samples &&
            (t->e[i].first_time_ns >= time_ns || t->e[i].last_time_ns >= time_ns))
            return i;
    return t->n;
}

int vmp_seek_table_end(const vmp_seek_table *t, uint64_t *time_ns, size_t *index)
{
    size_t i;
    int found = 0;
    uint64_t best = 0;
    if (!t)
        return 0;
    for (i = 0; i < t->n; i++) {
        const vmp_seek_entry *e = &t->e[i];
        uint64_t m = e->first_time_ns > e->last_time_ns ? e->first_time_ns : e->last_time_ns;
        if (!e->samples || (found && m <= best))
            continue;
        best = m;
        found = 1;
        if (index)
            *index = i;
    }
    if (found && time_ns)
        *time_ns = best;
    return found;
}
