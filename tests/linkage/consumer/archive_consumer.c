/* SPDX-License-Identifier: MIT
 *
 * archive_consumer.c - a program built against the installed vmp package
 * that uses libvmp-archive: indexes the profile the other consumer wrote
 * (argv[1]) into a new archive (argv[2]) and lists it.
 */
#include <stdio.h>

#include <vmp_archive.h>

int main(int argc, char **argv)
{
    char err[VMP_ARCHIVE_ERR_SIZE];
    vmp_archive *a;
    vmp_archive_row *rows = NULL;
    size_t n = 0;
    int outcome = -1;
    if (argc < 3)
        return 2;
    if (vmp_archive_open(&a, argv[2], 1, err) != 0 ||
        vmp_archive_add_file(a, argv[1], 0, &outcome, err) != 0 ||
        vmp_archive_select(a, NULL, NULL, &rows, &n, err) != 0) {
        fprintf(stderr, "archive_consumer: %s\n", err);
        return 1;
    }
    if (outcome != VMP_ARCHIVE_ADDED || n != 1 || rows[0].total_weight != 3) {
        fprintf(stderr, "archive_consumer: outcome %d, %zu runs\n", outcome, n);
        return 1;
    }
    printf("archive_consumer: ok %s: 1 run of 3 samples\n", argv[2]);
    vmp_archive_rows_free(rows, n);
    vmp_archive_close(a);
    return 0;
}
