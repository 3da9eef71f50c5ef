/* SPDX-License-Identifier: MIT
 *
 * vmp_reader_int.h - the reader's private state, shared by its translation
 * units: buffered input and frames (vmp_input.c, spec.md §3, §4), record
 * decoding (vmp_records.c, spec.md §5) and the public API (vmp_reader.c).
 *
 * Invariants that span files:
 * - Every allocation goes through vmp_rd_alloc()/vmp_rd_free() with the size
 *   it was allocated with, so the caller's allocator sees matched pairs.
 * - The first error wins: vmp_rd_fail() formats the message once; later
 *   failures are ignored and the reader keeps returning the first status.
 * - Memory is bounded: one input buffer, one chunk's content (at most
 *   max_chunk_bytes), the zstd context, the per-record arena, whose size
 *   is bounded by the record's encoded size (max_record_bytes), and the
 *   file's sample contexts (at most max_contexts).
 */
#ifndef VMP_READER_INT_H
#define VMP_READER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_cbor.h"
#include "vmp_reader.h"

struct ZSTD_DCtx_s;

/* Default limits (spec.md §8). */
#define VMP_RD_DEFAULT_CHUNK    ((uint64_t)64 << 20)
#define VMP_RD_DEFAULT_RECORD   ((uint64_t)16 << 20)
#define VMP_RD_DEFAULT_NESTING  16u
#define VMP_RD_DEFAULT_ITEMS    ((uint64_t)4 << 20)
#define VMP_RD_DEFAULT_CONTEXTS ((uint64_t)4 << 20)
/* Hard ceiling on max_nesting: the skip stack is allocated at open. */
#define VMP_RD_MAX_NESTING 65536u

/* Size of the input buffer for descriptors (one compressed block and then some). */
#define VMP_RD_INBUF_SIZE ((size_t)128 << 10)

/* A block of the per-record arena; blocks never move, so pointers into them
 * stay valid until the arena is reset. */
/* A sample context (spec R-BLK-5); `defined` is 0 for an id no block defined. */
typedef struct vmp_rd_context {
    uint64_t stack, state, pc, defined;
} vmp_rd_context;

#define VMP_RD_CTX_PAGE_SHIFT 12
#define VMP_RD_CTX_PAGE       ((uint64_t)1 << VMP_RD_CTX_PAGE_SHIFT) /* contexts a page */

typedef struct vmp_rd_block {
    struct vmp_rd_block *next;
    size_t size; /* usable bytes after the header */
    size_t used;
} vmp_rd_block;

struct vmp_reader {
    vmp_allocator al;
    int use_default_alloc;
    char *name; /* NUL-terminated copy, allocated */
    size_t name_size;

    /* limits */
    uint64_t max_chunk;
    uint64_t max_record;
    uint32_t max_nesting;
    uint64_t max_items;
    uint64_t max_contexts;

    /* input: a descriptor through a fixed buffer, or borrowed memory */
    int fd;              /* -1 for memory */
    int owns_fd;         /* opened by vmp_reader_open_file() */
    uint8_t *inbuf;      /* owned buffer (descriptor input only) */
    size_t inbuf_size;   /* allocated size of inbuf */
    const uint8_t *data; /* current window: inbuf or the caller's memory */
    size_t data_pos;     /* next unread byte of data */
    size_t data_end;     /* bytes valid in data */
    uint64_t data_off;   /* file offset of data[0] */
    int eof;             /* the descriptor reported end of file */

    /* zstd */
    struct ZSTD_DCtx_s *dctx;

    /* current chunk */
    uint8_t *content;       /* decompressed content of the current chunk */
    size_t content_cap;     /* allocated size of content */
    size_t content_size;    /* valid bytes */
    size_t content_pos;     /* next record starts here */
    size_t rec_start;       /* the record returned last: its offset */
    size_t rec_size;        /* and its bytes (0: none) */
    int in_chunk;           /* records of a chunk are being delivered */
    uint64_t chunk_index;   /* index of the current chunk (valid when in_chunk) */
    uint64_t chunk_offset;  /* file offset of the current chunk's frame */
    uint64_t chunk_bytes;   /* bytes of the current chunk's frame */
    uint64_t sample_time;   /* running sum of time deltas in this chunk */
    uint64_t chunks_seen;   /* data frames decoded so far */
    uint64_t chunk_digest;  /* of (offset, size, content size, samples, times) of every
                               chunk, to check a seek table (R-SEEK-1) */
    uint64_t chunk_samples; /* SAMPLE and FAILED_SAMPLE records of the current chunk */
    uint64_t chunk_first_time, chunk_last_time; /* their first and last times */
    int chunk_pending; /* the current chunk is not folded into chunk_digest yet */

    /* a SAMPLE_BLOCK whose samples are being delivered (spec R-BLK-1): its
     * arrays live in the arena until the next record is decoded */
    vmp_rec_sample_block blk;
    size_t blk_next, blk_pc, blk_failed; /* next sample; next pair of blk.pcs, blk.failed */
    size_t blk_start;                    /* the block's offset in the chunk's content */
    uint64_t time_unit;                  /* the HEADER's sample_time_unit (0 read as 1) */
    /* the file's sample contexts (R-BLK-5), in pages of VMP_RD_CTX_PAGE: id c
     * at ctx_pages[(c - 1) / VMP_RD_CTX_PAGE][(c - 1) % VMP_RD_CTX_PAGE];
     * ids up to ctx_last defined or skipped (a skipped id's page is NULL or
     * says it undefined); the entries past ctx_last are not initialized.
     * Pages, not one array that grows, so that no context is copied or
     * cleared twice. */
    vmp_rd_context **ctx_pages;
    size_t n_ctx_pages;
    uint64_t ctx_last;
    char warning[512]; /* vmp_reader_warning(): "" when none */

    /* the file header frame as the file holds it (vmp_reader_file_header()):
     * file_header_size bytes; 0 when the frame is longer than the buffer */
    uint8_t file_header[VMP_READER_FILE_HEADER_MAX];
    size_t file_header_size;

    /* per-record decoding */
    vmp_rd_block *arena;
    uint64_t *skip_stack; /* max_nesting entries */
    vmp_cbor_parser cbor;

    /* status */
    vmp_status err; /* first error, or VMP_OK */
    int at_end;     /* VMP_END was reached */
    uint64_t err_off;
    char errmsg[512];
    const char *err_rule; /* the spec rule of the first error, or NULL */

    vmp_reader_info info;
};

/* spec R-SMP-1: the time `mag` ns after `time` (before it when `neg`) into
 * *out; 0, or -1 when it would be negative, 1 when it passes 2^64 - 1. */
static inline int vmp_rd_time_step(uint64_t time, int neg, uint64_t mag, uint64_t *out)
{
    if (neg && mag > time)
        return -1;
    if (!neg && mag > UINT64_MAX - time)
        return 1;
    *out = neg ? time - mag : time + mag;
    return 0;
}

/* A sample at `time` was read: the base of the next delta (R-SMP-1) and the
 * chunk's first and last times for the seek table's check (R-SEEK-1). */
static inline void vmp_rd_took_sample(vmp_reader *r, uint64_t time)
{
    r->sample_time = time;
    if (r->chunk_samples++ == 0)
        r->chunk_first_time = time;
    r->chunk_last_time = time;
}

/* ---- memory (vmp_reader.c) ---------------------------------------------- */

void *vmp_rd_alloc(vmp_reader *r, size_t size);
void vmp_rd_free(vmp_reader *r, void *p, size_t size);

/* Allocate `size` bytes aligned to 8 from the per-record arena; NULL on
 * failure (the caller reports VMP_ERR_NOMEM). */
void *vmp_rd_arena_alloc(vmp_reader *r, size_t size);
/* Release what the previous record used; keeps the first block. */
void vmp_rd_arena_reset(vmp_reader *r);
void vmp_rd_arena_free(vmp_reader *r);

/* ---- errors (vmp_reader.c) ---------------------------------------------- */

/* Record the first error: "<name>: offset <off>: <fmt...>".  Returns `st`. */
vmp_status vmp_rd_fail(vmp_reader *r, vmp_status st, uint64_t off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* vmp_rd_fail() for an error that breaks spec rule `rule` (static storage). */
vmp_status vmp_rd_fail_rule(vmp_reader *r, const char *rule, vmp_status st, uint64_t off,
                            const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* ---- input and frames (vmp_input.c) ------------------------------------- */

/* Read and check the file header frame (spec.md §3). */
vmp_status vmp_rd_read_file_header(vmp_reader *r);

/* Advance to the next data frame and decompress it into r->content, skipping
 * skippable frames.  Returns VMP_OK with r->in_chunk set, VMP_END at a clean
 * end of input, or an error. */
vmp_status vmp_rd_next_chunk(vmp_reader *r);

/* Create the zstd context with the reader's allocator and limits. */
vmp_status vmp_rd_zstd_init(vmp_reader *r);
void vmp_rd_zstd_free(vmp_reader *r);

/* ---- records (vmp_records.c) -------------------------------------------- */

/* Decode the record at r->content_pos into *rec and advance past it. */
vmp_status vmp_rd_decode_record(vmp_reader *r, vmp_record *rec);

#endif
