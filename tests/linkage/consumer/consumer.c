/* SPDX-License-Identifier: MIT
 *
 * consumer.c - a program built against the installed vmp package: writes a
 * profile with libvmp-writer and reads it back with libvmp.
 */
#include <stdio.h>

#include <vmp_reader.h>
#include <vmp_writer.h>

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "consumer.vmp";
    vmp_writer *w;
    if (vmp_writer_open(&w, path, NULL, NULL) != VMP_OK) {
        fprintf(stderr, "consumer: cannot open %s\n", path);
        return 1;
    }
    vmp_frame frame = {0x1000, VMP_BCPC_NONE, VMP_FRAME_PC};
    vmp_sample s = {1, 0x1000, VMP_GENERATION_CURRENT, 0, 0, 1, &frame, 1};
    for (int i = 0; i < 3; i++)
        vmp_writer_sample(w, &s);
    vmp_writer_totals totals;
    if (vmp_writer_close(w, &totals) != VMP_OK || totals.samples_written != 3) {
        fprintf(stderr, "consumer: writer failed\n");
        return 1;
    }

    vmp_reader *r;
    if (vmp_reader_open_file(&r, path, NULL) != VMP_OK) {
        fprintf(stderr, "consumer: %s\n", vmp_reader_errmsg(r));
        vmp_reader_close(r);
        return 1;
    }
    vmp_record rec;
    vmp_status st;
    int samples = 0;
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK)
        samples += rec.type == VMP_REC_SAMPLE;
    if (st != VMP_END || samples != 3) {
        fprintf(stderr, "consumer: read %d samples (%s)\n", samples, vmp_reader_errmsg(r));
        vmp_reader_close(r);
        return 1;
    }
    vmp_reader_close(r);
    printf("consumer: %s %s: 3 samples written and read\n", vmp_status_str(VMP_OK), path);
    return 0;
}
