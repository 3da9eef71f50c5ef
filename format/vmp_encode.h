/* SPDX-License-Identifier: MIT
 *
 * vmp_encode.h - growable byte buffers, the CBOR primitives records are built
 * from (spec.md §1, §5 R-REC-1, R-REC-3), and the generic record encoder
 * driven by the record registry (vmp_record.h), shared by the in-VM writer
 * and the tools' record writer.  Not used by the sample path.  Internal to
 * the libraries; not installed.
 */
#ifndef VMP_ENCODE_H
#define VMP_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_format.h"
#include "vmp_record.h"

/* A growable byte buffer.  After an allocation failure `failed` is set, later
 * appends are no-ops, and the owner reports VMP_ERR_NOMEM. */
typedef struct vmp_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
    int failed;
} vmp_buf;

/* Make room for `extra` more bytes; 0 on success, -1 (and `failed`) if not. */
int vmp_buf__reserve(vmp_buf *b, size_t extra);
void vmp_buf__append(vmp_buf *b, const void *data, size_t size);
void vmp_buf__free(vmp_buf *b);

/* CBOR items, definite lengths, shortest encodings (spec R-REC-3). */
void vmp_enc__uint(vmp_buf *b, uint64_t v);
void vmp_enc__int(vmp_buf *b, int64_t v);
void vmp_enc__array(vmp_buf *b, size_t n);
void vmp_enc__map(vmp_buf *b, size_t n);
void vmp_enc__tstr(vmp_buf *b, const char *s);            /* NULL == "" */
void vmp_enc__tstrn(vmp_buf *b, const char *s, size_t n); /* n bytes; NULL == "" */
void vmp_enc__bstr(vmp_buf *b, const void *data, size_t size);
/* The n values `v` as a packed column (spec.md §5.14): a byte string of the
 * width w, the least that holds every value, then n x w bytes in byte
 * planes (byte k of value i at 1 + k x n + i). */
void vmp_enc__packed(vmp_buf *b, const uint64_t *v, size_t n);
/* The bytes of the CBOR head that encodes `v` (a uint, or a length). */
size_t vmp_enc__head_size(uint64_t v);
/* The bytes vmp_enc__packed() appends for n values of width w. */
size_t vmp_enc__packed_size(size_t n, unsigned w);
/* The width in bytes, 1 to 8, that holds `v`. */
unsigned vmp_enc__width(uint64_t v);

/* A record under construction: a map whose entries are counted as they are
 * added, so the map header is written last.  Records have fewer than 24 keys,
 * so the header is one byte and can be patched in place. */
typedef struct vmp_rec {
    vmp_buf *b;
    size_t start;
    unsigned n;
} vmp_rec;

/* Start a record of `type` (key 0 first, spec R-REC-1). */
void vmp_rec__begin(vmp_rec *r, vmp_buf *b, unsigned type);
/* Write the key of the next entry; the caller then writes its value. */
void vmp_rec__key(vmp_rec *r, unsigned key);
void vmp_rec__uint(vmp_rec *r, unsigned key, uint64_t v);
/* As vmp_rec__uint() but omitted when `v` is 0 (the key's default). */
void vmp_rec__uint_nz(vmp_rec *r, unsigned key, uint64_t v);
/* A text string, omitted when NULL or empty (the default ""). */
void vmp_rec__tstr_ne(vmp_rec *r, unsigned key, const char *s);
void vmp_rec__end(vmp_rec *r);

/* One seek-table entry (spec.md §6). */
typedef struct vmp_seek_entry {
    uint64_t offset, compressed_size, content_size, first_time, last_time, samples;
} vmp_seek_entry;

/* Bytes of the file header frame (spec.md §3). */
#define VMP_FILE_FRAME_BYTES (VMP_SKIPPABLE_HEADER_SIZE + VMP_FILE_HEADER_SIZE)

/* The file header frame of format 1.`minor` (R-HDR-1..4: no flags) into `out`. */
void vmp_enc__file_frame(uint8_t out[VMP_FILE_FRAME_BYTES], unsigned major, unsigned minor);

/* Append the seek-table frame (spec.md §6) of the n entries `v` to `b`.
 * Returns 0, or -1 when `b` failed or the frame would pass 4 GiB. */
int vmp_enc__seek_frame(vmp_buf *b, const vmp_seek_entry *v, size_t n);

/* Append record `rec` (a type of the registry) to `b` as spec.md §5 and the
 * registry say: key 0 and the type first, then the keys in key order, each
 * left out when it has its default (required keys always; a key with a
 * presence flag exactly when the flag says so; empty strings and arrays
 * never).  A SAMPLE's or FAILED_SAMPLE's time is written as the delta from
 * `prev_time`, the previous sample of the chunk (R-SMP-1; 0 for the first).
 * Returns 0, or -1 for a type the registry does not know (nothing appended).
 * Allocation failures set b->failed.  Any thread, on its own buffer. */
int vmp_record_encode(vmp_buf *b, const vmp_record *rec, uint64_t prev_time);

#endif
