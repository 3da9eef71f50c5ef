/* SPDX-License-Identifier: MIT
 *
 * reader_fixture.h - build vmp files by hand for the reader tests (spec.md
 * §3, §4, §5, §6), with zstd and libcbor directly, independent of the writer.
 */
#ifndef READER_FIXTURE_H
#define READER_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_reader.h"

/** A growable byte buffer; aborts on allocation failure (tests only). */
typedef struct tbuf {
    uint8_t *p;
    size_t len, cap;
} tbuf;

void tb_put(tbuf *b, const void *data, size_t n);
void tb_free(tbuf *b);

/* CBOR items appended to b. */
void c_uint(tbuf *b, uint64_t v);
void c_negint(tbuf *b, uint64_t n); /* encodes -1 - n */
void c_int(tbuf *b, int64_t v);
void c_str(tbuf *b, const char *s);
void c_bstr(tbuf *b, const void *data, size_t n);
void c_array(tbuf *b, size_t n);
void c_map(tbuf *b, size_t n);
void c_tag(tbuf *b, uint64_t tag);
void c_double(tbuf *b, double v);
void c_null(tbuf *b);
void c_bool(tbuf *b, int v);
/* key/value pairs of a record map */
void kv_uint(tbuf *b, uint64_t key, uint64_t v);
void kv_int(tbuf *b, uint64_t key, int64_t v);
void kv_str(tbuf *b, uint64_t key, const char *s);
/* map head with n pairs (including the type) and the type pair */
void rec_start(tbuf *b, size_t pairs, uint64_t type);

/* Frames appended to a file. */
void f_header(tbuf *file, unsigned major, unsigned minor);
/* A data frame holding `content`; checksum and content size as told. */
void f_chunk_ex(tbuf *file, const void *content, size_t n, int checksum, int content_size);
void f_chunk(tbuf *file, const tbuf *content);
void f_skippable(tbuf *file, uint32_t magic, const void *data, size_t n);

/* One record of every type with every key of format 1.0: 19 records
 * (two STACK_NODEs, two SAMPLEs), HEADER first and END last. */
void build_all_types(tbuf *c);

/* Read every record; returns the final status, counts records in *n. */
vmp_status read_all(vmp_reader *r, uint64_t *n);

#endif
