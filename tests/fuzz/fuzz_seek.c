/* SPDX-License-Identifier: MIT
 *
 * fuzz_seek.c - libFuzzer target: the seek table (spec.md §6, R-SEEK-1..3)
 * through vmp_seek.h, and through the streaming reader's check of it.
 *
 * An input that starts like a vmp file is a whole file: its seek table is
 * opened as `vmp filter` opens it, and the file is read by the streaming
 * reader, which checks the table against the chunks.  Any other input is the
 * content of a seek table: it is parsed alone, and also placed behind a
 * file header frame as the file's seek table frame.
 *
 * Invariants beyond "no crash": a table that opens has no more entries than
 * its bytes can hold (7 bytes an entry), entries in file order inside the
 * file and before the table, an entry with one sample has one time; lookups
 * stay in range; a failure leaves a one-line message naming the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_reader.h"
#include "vmp_seek.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t file_header[24] = {0x56, 0x2a, 0x4d, 0x18, 16, 0, 0, 0, 0x89, 'V', 'M', 'P',
                                        '\r', '\n', 0x1a, '\n', 1,  0, 0, 0, 0,    0,   0,   0};

static void check_table(const vmp_seek_table *t, size_t file_size, size_t table_bytes)
{
    size_t i, n = vmp_seek_table_count(t), idx = 0;
    uint64_t prev_end = 0, end_time = 0;
    if (n > table_bytes / 7)
        abort();
    for (i = 0; i < n; i++) {
        const vmp_seek_entry *e = vmp_seek_table_entry(t, i);
        if (!e || e->samples > e->content_size ||
            (e->samples == 1 && e->first_time_ns != e->last_time_ns))
            abort();
        if (file_size) {
            if (e->offset < prev_end || e->offset + e->compressed_size > vmp_seek_table_offset(t) ||
                vmp_seek_table_offset(t) > file_size)
                abort();
            prev_end = e->offset + e->compressed_size;
        }
    }
    if (vmp_seek_table_entry(t, n) != NULL || vmp_seek_table_find_time(t, 0) > n ||
        vmp_seek_table_find_time(t, UINT64_MAX) > n)
        abort();
    if (vmp_seek_table_end(t, &end_time, &idx) &&
        (idx >= n || vmp_seek_table_find_time(t, end_time) > idx))
        abort();
}

static void check_msg(vmp_status st, const char *err, const char *name)
{
    if (st == VMP_OK || st == VMP_END)
        return;
    if (strncmp(err, name, strlen(name)) != 0 || strchr(err, '\n') != NULL)
        abort();
}

static void open_whole(const uint8_t *file, size_t size)
{
    vmp_seek_table *t = NULL;
    char err[512] = "";
    vmp_status st = vmp_seek_table_open_memory(&t, file, size, "fuzz.vmp", err, sizeof err);
    check_msg(st, err, "fuzz.vmp");
    if (st == VMP_OK)
        check_table(t, size, size);
    else if (t != NULL)
        abort();
    vmp_seek_table_free(t);
}

static void read_stream(const uint8_t *file, size_t size)
{
    vmp_reader *r = NULL;
    vmp_record rec;
    int n = 0;
    if (vmp_reader_open_memory(&r, file, size, "fuzz.vmp", NULL) == VMP_OK)
        while (vmp_reader_next(r, &rec) == VMP_OK && n++ < 100000)
            ;
    if (r && vmp_reader_warning(r) && strncmp(vmp_reader_warning(r), "fuzz.vmp", 8) != 0)
        abort();
    vmp_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vmp_seek_table *t = NULL;
    char err[512] = "";
    vmp_status st;
    uint8_t *file;
    size_t n, frame;

    if (size >= 4 && memcmp(data, file_header, 4) == 0) {
        open_whole(data, size);
        read_stream(data, size);
        return 0;
    }
    st = vmp_seek_table_parse(&t, data, size, "fuzz.vmp", 24, err, sizeof err);
    check_msg(st, err, "fuzz.vmp");
    if (st == VMP_OK)
        check_table(t, 0, size);
    vmp_seek_table_free(t);

    /* the same bytes as the seek table frame of a file with no chunk */
    frame = 8 + size + 8;
    if (frame > UINT32_MAX)
        return 0;
    n = sizeof file_header + frame;
    file = malloc(n);
    if (!file)
        return 0;
    memcpy(file, file_header, sizeof file_header);
    file[24] = 0x57;
    file[25] = 0x2a;
    file[26] = 0x4d;
    file[27] = 0x18;
    file[28] = (uint8_t)(size + 8);
    file[29] = (uint8_t)((size + 8) >> 8);
    file[30] = (uint8_t)((size + 8) >> 16);
    file[31] = (uint8_t)((size + 8) >> 24);
    if (size)
        memcpy(file + 32, data, size);
    file[n - 8] = (uint8_t)frame;
    file[n - 7] = (uint8_t)(frame >> 8);
    file[n - 6] = (uint8_t)(frame >> 16);
    file[n - 5] = (uint8_t)(frame >> 24);
    memcpy(file + n - 4, "VMPS", 4);
    open_whole(file, n);
    read_stream(file, n);
    free(file);
    return 0;
}
