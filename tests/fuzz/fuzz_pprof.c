/* SPDX-License-Identifier: MIT
 *
 * fuzz_pprof.c - libFuzzer target: arbitrary bytes as a pprof profile
 * (gzip'd or raw profile.proto) through vmp_pprof_import(), whose output is
 * then read back (spec.md §3-§5, checked by the validator).
 *
 * Invariants beyond "no crash": a failed import says why in one non-empty
 * line that starts with the input's name; a successful import writes a
 * complete, valid profile (vmp_validate() returns VMP_OK) whose sample
 * records and weights are those the import's statistics announce.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmp_analyze.h"
#include "vmp_convert.h"
#include "vmp_validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz-pprof", 0);
    if (fd < 0)
        abort();
    vmp_import_options opts = VMP_IMPORT_OPTIONS_INIT;
    opts.max_input_bytes = 16u << 20; /* a gzip bomb stops here */
    vmp_convert_stats stats;
    char err[256];
    err[0] = '\0';
    vmp_status st = vmp_pprof_import(data, size, "fuzz", fd, &opts, &stats, err, sizeof err);
    if (st < 0) {
        if (strncmp(err, "fuzz", 4) != 0 || strchr(err, '\n') != NULL)
            abort();
        if (st == VMP_OK || st == VMP_END)
            abort();
        close(fd);
        return 0;
    }
    if (st != VMP_OK)
        abort();

    /* Read back what the import wrote. */
    vmp_reader *r = NULL;
    if (lseek(fd, 0, SEEK_SET) != 0 || vmp_reader_open_fd(&r, fd, "imported", NULL) != VMP_OK)
        abort();
    vmp_validate_report rep;
    if (vmp_validate(&rep, r) != VMP_OK || rep.samples != stats.samples)
        abort();
    vmp_reader_close(r);

    if (lseek(fd, 0, SEEK_SET) != 0 || vmp_reader_open_fd(&r, fd, "imported", NULL) != VMP_OK)
        abort();
    vmp_profile *p = NULL;
    if (vmp_profile_create(&p, NULL) != VMP_OK || vmp_profile_read(p, r) != VMP_OK)
        abort();
    const vmp_profile_totals *tot = vmp_profile_get_totals(p);
    if (tot->samples != stats.weight || tot->failed != 0)
        abort();
    vmp_profile_free(p);
    vmp_reader_close(r);
    close(fd);
    return 0;
}
