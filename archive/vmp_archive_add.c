/* SPDX-License-Identifier: MIT
 *
 * vmp_archive_add.c - one profile file into the archive
 * (vmp_archive_add_file(), vmp_archive.h): read once in memory, named by
 * the SHA-256 of its bytes, its weights per function as `vmp diff` and
 * `vmp report` count them, for the CPU samples and every other kind.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "vmp_archive.h"
#include "vmp_convert.h"

static void hex_sha256(const void *data, size_t size, char hex[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0, i;
    EVP_Digest(data, size, md, &len, EVP_sha256(), NULL);
    for (i = 0; i < len && i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    hex[64] = '\0';
}

/* Read the profile in memory into `*p` (through `*r`, left open for its
 * info; the caller frees both), and what `vmp report` counts per function
 * into `ex`: the weight of the samples whose pc was executing in it (failed
 * samples too; names borrowed from `*p`).  0, or -1 with the reader's
 * message in `msg`, or -2 when out of memory. */
static int read_executing(const void *data, size_t size, const char *path, const char *kind,
                          vmp_reader **rp, vmp_profile **p, vmp_archive_executing *ex,
                          const char **msg)
{
    vmp_analysis_options ao = VMP_ANALYSIS_OPTIONS_INIT;
    vmp_reader *r;
    vmp_analysis *an;
    const uint64_t *fw;
    const char **names;
    size_t n, i;
    vmp_status st;

    ao.kind = kind; /* NULL: the CPU samples */
    st = vmp_profile_create(p, &ao);

    if (st == VMP_OK)
        st = vmp_reader_open_memory(rp, data, size, path, NULL);
    r = *rp;
    if (st == VMP_OK)
        st = vmp_profile_read(*p, r);
    if (st < 0) {
        static char why[VMP_ARCHIVE_ERR_SIZE];
        snprintf(why, sizeof why, "%s", r && *vmp_reader_errmsg(r) ? vmp_reader_errmsg(r) : "");
        if (st == VMP_ERR_NOMEM || !why[0])
            return -2;
        *msg = why;
        return -1;
    }
    an = vmp_profile_analysis(*p);
    fw = vmp_profile_function_weights(*p, &n);
    names = malloc((n ? n : 1) * sizeof *names);
    if (!names)
        return -2;
    for (i = 0; i < n; i++) {
        const vmp_afunction *fn = vmp_analysis_function(an, (uint32_t)i);
        names[i] = fn ? fn->name : "";
    }
    ex->names = names;
    ex->weights = fw;
    ex->n = fw ? n : 0;
    return 0;
}

/* The file's kinds other than CPU time (spec.md §5.15), each read again. */
#define ARCHIVE_MAX_KINDS 16

typedef struct kind_read {
    vmp_reader *r;
    vmp_profile *p;
    vmp_run_weights w;
    vmp_archive_executing ex;
} kind_read;

/* Read the kinds with samples of the profile `cpu` (read from `data`)
 * into kr[] and kinds[], `*n_out` of them (to free, whatever the result).
 * Returns 0, -1 with the reader's message in `*msg`, or -2 when out of
 * memory (as read_executing()). */
static int read_kinds(const void *data, size_t size, const char *path, const vmp_profile *cpu,
                      const vmp_flame_options *fo, kind_read *kr, vmp_archive_kind *kinds,
                      int *n_out, const char **msg)
{
    size_t nk = 0, k;
    const vmp_akind *ak = vmp_analysis_kinds(vmp_profile_analysis(cpu), &nk);
    int st = 0;
    *n_out = 0;
    for (k = 1; k < nk && *n_out < ARCHIVE_MAX_KINDS && st == 0; k++) {
        kind_read *r = &kr[*n_out];
        if (ak[k].records == 0)
            continue;
        memset(r, 0, sizeof *r);
        st = read_executing(data, size, path, ak[k].name, &r->r, &r->p, &r->ex, msg);
        if (st == 0 && vmp_run_weights_of_profile(&r->w, r->p, fo) != VMP_OK)
            st = -2;
        kinds[*n_out].name = ak[k].name; /* the CPU profile's analysis keeps them */
        kinds[*n_out].unit = ak[k].unit;
        kinds[*n_out].samples = ak[k].records;
        kinds[*n_out].w = &r->w;
        kinds[*n_out].ex = &r->ex;
        (*n_out)++;
    }
    return st;
}

static void free_kinds(kind_read *kr, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        free(kr[i].ex.names);
        vmp_profile_free(kr[i].p);
        vmp_run_weights_free(&kr[i].w);
        vmp_reader_close(kr[i].r);
    }
}

int vmp_archive_add_file(vmp_archive *a, const char *path, int ranges, int *outcome, char *err)
{
    vmp_flame_options fo_ranges = VMP_FLAME_OPTIONS_INIT;
    const vmp_flame_options *fo = &fo_ranges;
    char sha[65], why[VMP_ARCHIVE_ERR_SIZE];
    vmp_reader *wr = NULL;
    const vmp_rec_header *hdr;
    vmp_run_weights w;
    vmp_reader_info info;
    vmp_archive_run run;
    vmp_archive_executing ex = {NULL, NULL, 0};
    vmp_profile *prof = NULL;
    kind_read kr[ARCHIVE_MAX_KINDS];
    vmp_archive_kind kinds[ARCHIVE_MAX_KINDS];
    int n_kinds = 0;
    const char *msg = NULL;
    struct stat sb;
    void *data = MAP_FAILED;
    int64_t run_id;
    int fd, rc = 0, known;
    vmp_status st;

    if (ranges)
        fo_ranges.flags |= VMP_FLAME_RANGES;
    *outcome = VMP_ARCHIVE_DAMAGED;
    memset(&w, 0, sizeof w);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &sb) != 0)
        msg = strerror(errno);
    else if (!S_ISREG(sb.st_mode))
        msg = "not a regular file";
    if (msg) {
        snprintf(err, VMP_ARCHIVE_ERR_SIZE, "%s: %s", path, msg);
        if (fd >= 0)
            close(fd);
        return 0;
    }
    if (sb.st_size > 0)
        data = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (data == MAP_FAILED) {
        snprintf(err, VMP_ARCHIVE_ERR_SIZE, "%s: %s", path,
                 sb.st_size ? strerror(errno) : "offset 0: empty file");
        return 0;
    }
    hex_sha256(data, (size_t)sb.st_size, sha);
    known = vmp_archive_find(a, sha, &run_id, err);
    if (known < 0) {
        rc = -1;
        goto failed;
    }
    if (known) {
        *outcome = VMP_ARCHIVE_KNOWN;
        goto out;
    }
    /* one reading: the profile, and the flame graph's names from it */
    st = read_executing(data, (size_t)sb.st_size, path, NULL, &wr, &prof, &ex, &msg);
    if (st == -1)
        goto damaged;
    if (st == 0) /* spec.md §5.15: every kind apart */
        st = read_kinds(data, (size_t)sb.st_size, path, prof, fo, kr, kinds, &n_kinds, &msg);
    if (st == -1)
        goto damaged;
    if (st == -2 || vmp_run_weights_of_profile(&w, prof, fo) != VMP_OK) {
        snprintf(err, VMP_ARCHIVE_ERR_SIZE, "%s: out of memory", path);
        rc = -1;
        goto out;
    }
    /* the header as the profile's analysis read it */
    hdr = vmp_analysis_header(vmp_profile_analysis(prof));
    if (!hdr) {
        snprintf(why, sizeof why, "%s: offset 0: no HEADER record", path);
        msg = why;
        goto damaged;
    }
    vmp_reader_get_info(wr, &info);
    run.path = path;
    run.sha256 = sha;
    run.file_bytes = (uint64_t)sb.st_size;
    run.hdr = hdr;
    run.format_minor = info.format_minor;
    run.complete = info.seen_end;
    run.ranges = (fo->flags & VMP_FLAME_RANGES) != 0;
    rc = vmp_archive_add(a, &run, &w, &ex, kinds, (size_t)n_kinds, &run_id, err);
    if (rc >= 0) {
        *outcome = rc == 0 ? VMP_ARCHIVE_ADDED : VMP_ARCHIVE_KNOWN;
        rc = 0;
        goto out;
    }
failed : /* the archive's message, after the file's name (cut to fit) */
{
    size_t lp = strnlen(path, VMP_ARCHIVE_ERR_SIZE / 2), lw;
    memcpy(why, err, sizeof why);
    memcpy(err, path, lp);
    memcpy(err + lp, ": ", 2);
    lw = strnlen(why, VMP_ARCHIVE_ERR_SIZE - lp - 3);
    memcpy(err + lp + 2, why, lw);
    err[lp + 2 + lw] = '\0';
}
    goto out;
damaged:
    snprintf(err, VMP_ARCHIVE_ERR_SIZE, "%s", msg);
out:
    free_kinds(kr, n_kinds);
    free(ex.names);
    vmp_profile_free(prof);
    vmp_run_weights_free(&w);
    vmp_reader_close(wr);
    munmap(data, (size_t)sb.st_size);
    return rc;
}
