/* SPDX-License-Identifier: MIT
 *
 * vmp_gzsink.h - gzip output through a ProtobufCBuffer: `vmp pprof` packs
 * its Profile message straight into a deflate stream.  Internal: not
 * installed.
 */
#ifndef VMP_GZSINK_H
#define VMP_GZSINK_H

#include <protobuf-c/protobuf-c.h>
#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

typedef struct gz_sink {
    ProtobufCBuffer base;
    z_stream z;
    FILE *f;
    int raw; /* no compression */
    int failed;
    uint64_t bytes;
    size_t n_in;
    unsigned char in[1 << 16]; /* appended, not yet deflated: protobuf-c appends
                                * a few bytes at a time, deflate() is for more */
    unsigned char buf[1 << 16];
} gz_sink;

/* Set up `g` (zeroed) to write to `f`: gzip at `level` (1..9), or the bytes
 * as they are when level < 0.  0, or -1 when zlib has no memory. */
int vmp_gz_sink__init(gz_sink *g, FILE *f, int level);
/* The ProtobufCBuffer append function (g->base.append). */
void vmp_gz_sink__append(ProtobufCBuffer *b, size_t len, const uint8_t *data);
/* Deflate what is left, end the gzip stream and release zlib's state;
 * g->failed says whether a write failed, g->bytes what was written. */
void vmp_gz_sink__finish(gz_sink *g);
/* Release zlib's state without finishing (after an error). */
void vmp_gz_sink__end(gz_sink *g);

#endif
