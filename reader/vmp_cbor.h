/* SPDX-License-Identifier: MIT
 *
 * vmp_cbor.h - a small allocation-free CBOR pull parser over one decoded
 * chunk, built on libcbor's cbor_stream_decode() (spec.md §5, R-REC-1..3,
 * §8 limits).  Internal to the reader.
 *
 * The parser reads one item head per call.  Strings come whole (pointer into
 * the chunk, no copy).  Indefinite lengths are rejected (R-REC-3 lets a reader
 * reject them; writers never produce them).  Every length is checked against
 * the bytes left and against the items limit before the caller can act on it,
 * so no caller allocates for a length the input cannot back.
 *
 * Two ends bound a parse: `end` is where the current record must stop
 * (chunk end or record start + max_record_bytes) and `hard_end` is the end of
 * the chunk.  Needing bytes past `end` but within `hard_end` is a limit error
 * (the record is too big); past `hard_end` the record runs off the chunk,
 * which is corruption (R-CHK-2).
 */
#ifndef VMP_CBOR_H
#define VMP_CBOR_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_status.h"

typedef enum vmp_cbor_kind {
    VMP_CBOR_UINT,   /* u = value */
    VMP_CBOR_NEGINT, /* value = -1 - u */
    VMP_CBOR_BSTR,   /* u = length, ptr = bytes */
    VMP_CBOR_TSTR,   /* u = length, ptr = bytes */
    VMP_CBOR_ARRAY,  /* u = items */
    VMP_CBOR_MAP,    /* u = pairs */
    VMP_CBOR_TAG,    /* u = tag number; one item follows */
    VMP_CBOR_FLOAT,  /* half, single or double precision */
    VMP_CBOR_SIMPLE  /* false, true, null, undefined */
} vmp_cbor_kind;

typedef struct vmp_cbor_token {
    vmp_cbor_kind kind;
    uint64_t u;
    const uint8_t *ptr;
} vmp_cbor_token;

typedef struct vmp_cbor_parser {
    const uint8_t *base; /* chunk content */
    size_t pos;          /* next byte to parse */
    size_t end;          /* the current record must end by here */
    size_t hard_end;     /* end of the chunk */
    uint32_t max_nesting;
    uint64_t max_items;
    uint64_t *stack;  /* max_nesting entries, for vmp_cbor_skip() */
    size_t err_pos;   /* content offset of the failing item */
    char msg[192];    /* what went wrong, when a call failed */
    const char *rule; /* the spec rule it breaks ("R-REC-4"), or NULL */
} vmp_cbor_parser;

/** Prepare `p` to parse base[pos..end) within a chunk of hard_end bytes.
 *  `stack` (borrowed) must hold max_nesting entries. */
void vmp_cbor_init(vmp_cbor_parser *p, const uint8_t *base, size_t pos, size_t end, size_t hard_end,
                   uint32_t max_nesting, uint64_t max_items, uint64_t *stack);

/** Read one item head into *tok.
 * @return VMP_OK; VMP_ERR_CORRUPT (malformed, indefinite length, break, or
 *         runs past the chunk end); VMP_ERR_LIMIT (string or container past
 *         max_items, or the record past its byte limit).  p->msg says why. */
static inline vmp_status vmp_cbor_next(vmp_cbor_parser *p, vmp_cbor_token *tok);

/** vmp_cbor_next() for every item but the one-byte uints it decodes inline. */
vmp_status vmp_cbor_next_item(vmp_cbor_parser *p, vmp_cbor_token *tok);

static inline vmp_status vmp_cbor_next(vmp_cbor_parser *p, vmp_cbor_token *tok)
{
    /* a uint 0..23 is its own head byte (RFC 8949 §3.1): the commonest item
     * of a profile, keys included */
    if (p->pos < p->end && p->base[p->pos] < 24) {
        p->err_pos = p->pos;
        tok->kind = VMP_CBOR_UINT;
        tok->u = p->base[p->pos];
        tok->ptr = NULL;
        p->pos++;
        return VMP_OK;
    }
    return vmp_cbor_next_item(p, tok);
}

/** Skip the rest of the item whose head `tok` was just read.  `depth` is the
 *  number of containers that enclose that item (1 for a value of a record's
 *  map); containers nested deeper than max_nesting fail with VMP_ERR_LIMIT.
 *  Runs in time linear in the bytes skipped, with no recursion. */
vmp_status vmp_cbor_skip(vmp_cbor_parser *p, const vmp_cbor_token *tok, uint32_t depth);

/** Record an error at the current position; returns `st`. */
vmp_status vmp_cbor_fail(vmp_cbor_parser *p, vmp_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/** vmp_cbor_fail() for an error that breaks spec rule `rule` ("R-REC-4",
 *  static storage), which the reader passes on (vmp_reader_errrule()). */
vmp_status vmp_cbor_fail_rule(vmp_cbor_parser *p, const char *rule, vmp_status st, const char *fmt,
                              ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/** Name of a token kind for messages ("uint", "tstr", ...). */
const char *vmp_cbor_kind_name(vmp_cbor_kind k);

#endif
