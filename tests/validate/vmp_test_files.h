/* SPDX-License-Identifier: MIT
 *
 * vmp_test_files.h - build vmp files byte by byte (zstd + libcbor), so that
 * tests can make the invalid files no conforming writer would produce
 * (spec.md §3 header frame, §4 chunks, §5 records).
 */
#ifndef VMP_TEST_FILES_H
#define VMP_TEST_FILES_H

#include <stddef.h>
#include <stdint.h>

typedef struct tf_buf {
    unsigned char *p;
    size_t n, cap;
} tf_buf;

/** A file being built: `out` holds the finished bytes, `chunk` the
 *  uncompressed records of the chunk being filled. */
typedef struct tf_file {
    tf_buf out, chunk;
} tf_file;

/** Start a file: writes the 24-byte file-header frame. */
void tf_begin(tf_file *f);
/** Compress the records written since the last call into one data frame
 *  (checksum and content size set, R-CHK-1). */
void tf_chunk_end(tf_file *f);
void tf_free(tf_file *f);

/* CBOR items appended to the current chunk. */
void tf_uint(tf_file *f, uint64_t v);
void tf_int(tf_file *f, int64_t v);
void tf_tstr(tf_file *f, const char *s);
void tf_array(tf_file *f, size_t n);
void tf_map(tf_file *f, size_t n);
/** Start a record: a map of `n_keys` keys besides the type key, then the type. */
void tf_rec(tf_file *f, uint64_t type, size_t n_keys);
/** A key and a uint value. */
void tf_ku(tf_file *f, uint64_t key, uint64_t v);

/* Whole records. */
void tf_header(tf_file *f);
void tf_end(tf_file *f, uint64_t samples, uint64_t failed, uint64_t chunks, uint64_t generation);
void tf_zone(tf_file *f, uint64_t id, uint64_t start, uint64_t end);
void tf_code(tf_file *f, uint64_t id, uint64_t zone, uint64_t start, uint64_t size,
             uint64_t generation);
void tf_free_code(tf_file *f, uint64_t generation, uint64_t id);
void tf_move(tf_file *f, uint64_t generation, uint64_t id, uint64_t new_start);
void tf_node_pc(tf_file *f, uint64_t id, uint64_t parent, uint64_t pc);
void tf_node_fn(tf_file *f, uint64_t id, uint64_t parent, uint64_t function, uint64_t bcpc);
void tf_sample(tf_file *f, uint64_t delta, uint64_t thread, uint64_t generation, uint64_t stack);
void tf_thread(tf_file *f, uint64_t id, const char *name);

#endif
