/* SPDX-License-Identifier: MIT
 *
 * vmp_gzsink.c - a ProtobufCBuffer that deflates what protobuf-c packs into
 * it, with a gzip header, straight to a stream (vmp_gzsink.h).
 */
#include <stdint.h>
#include <string.h>

#include "vmp_gzsink.h"

static void sink_write(gz_sink *g, const void *p, size_t n)
{
    if (g->failed || n == 0)
        return;
    if (fwrite(p, 1, n, g->f) != n)
        g->failed = 1;
    g->bytes += n;
}

static void deflate_some(gz_sink *g, const uint8_t *data, size_t len, int flush);

/* Deflate what sink_append() gathered. */
static void sink_drain(gz_sink *g, int flush)
{
    size_t n = g->n_in;
    g->n_in = 0;
    deflate_some(g, g->in, n, flush);
}

static void deflate_some(gz_sink *g, const uint8_t *data, size_t len, int flush)
{
    if (g->raw) {
        sink_write(g, data, len);
        return;
    }
    while (len > 0 || flush == Z_FINISH) {
        uInt chunk = len > (1u << 30) ? (1u << 30) : (uInt)len;
        int zr;
        g->z.next_in = (Bytef *)(uintptr_t)data;
        g->z.avail_in = chunk;
        do {
            g->z.next_out = g->buf;
            g->z.avail_out = sizeof g->buf;
            zr = deflate(&g->z, len - chunk == 0 ? flush : Z_NO_FLUSH);
            if (zr == Z_STREAM_ERROR) {
                g->failed = 1;
                return;
            }
            sink_write(g, g->buf, sizeof g->buf - g->z.avail_out);
        } while (g->z.avail_out == 0);
        len -= chunk;
        if (len == 0)
            break;
        data += chunk;
    }
}

void vmp_gz_sink__append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    gz_sink *g = (gz_sink *)b;
    if (g->n_in + len > sizeof g->in)
        sink_drain(g, Z_NO_FLUSH);
    if (len >= sizeof g->in) {
        deflate_some(g, data, len, Z_NO_FLUSH);
        return;
    }
    memcpy(g->in + g->n_in, data, len);
    g->n_in += len;
}

int vmp_gz_sink__init(gz_sink *g, FILE *f, int level)
{
    g->base.append = vmp_gz_sink__append;
    g->f = f;
    g->raw = level < 0;
    if (!g->raw && deflateInit2(&g->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    return 0;
}

void vmp_gz_sink__end(gz_sink *g)
{
    if (!g->raw)
        deflateEnd(&g->z);
}

void vmp_gz_sink__finish(gz_sink *g)
{
    sink_drain(g, Z_FINISH);
    vmp_gz_sink__end(g);
}
