/* SPDX-License-Identifier: MIT
 *
 * vmp_convmeta.h - internal to convert/: what the pprof and speedscope
 * exporters keep of a profile's metadata records beside the analysis
 * (FUNCTION §5.5 files, signatures and first lines, MODULE §5.3, CODE_ZONE
 * §5.6) and an interning string table.  The line of a bytecode is the
 * analysis's (vmp_analysis_lines(), spec R-RES-11), not kept here.
 */
#ifndef VMP_CONVMETA_H
#define VMP_CONVMETA_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_analyze.h"
#include "vmp_analyze_int.h"
#include "vmp_reader.h"

/* Strings interned to dense ids 0.. (id 0 is always ""). */
typedef struct vmp_strtab {
    char **s;
    size_t *len;
    size_t n, cap;
    uint32_t *slot; /* open addressing: id + 1, 0 == empty */
    size_t nslot;
} vmp_strtab;

/* Returns the id of s[0..len), or -1 when out of memory. */
int64_t vmp_strtab__intern(vmp_strtab *t, const char *s, size_t len);
void vmp_strtab__free(vmp_strtab *t);

/* A converter's first step: clear err; when `args_ok` is 0 say "invalid
 * argument" there and return VMP_ERR_INVALID_ARG, else VMP_OK. */
vmp_status vmp_conv__begin(int args_ok, char *err, size_t size);

typedef struct vmp_cm_function {
    uint64_t id;
    uint32_t file, signature; /* string ids */
    uint64_t first_line;
} vmp_cm_function;

typedef struct vmp_cm_range {
    uint64_t id, start, end;
    uint32_t name;     /* string id: path or zone name */
    uint32_t build_id; /* string id: lower-case hex, 0 == none */
} vmp_cm_range;

typedef struct vmp_convmeta {
    vmp_strtab str;
    vmp_cm_function *fns;
    size_t n_fns, cap_fns;
    vmp_hmap fn_by_id; /* FUNCTION id -> index + 1 */
    vmp_cm_range *modules, *zones;
    size_t n_modules, cap_modules, n_zones, cap_zones;
    uint64_t last_time_ns;
} vmp_convmeta;

/* Take in one record (before or after the analysis sees it).  Returns 0, or
 * -1 when out of memory. */
int vmp_convmeta__feed(vmp_convmeta *m, const vmp_record *rec);

/* A converter's pass over `r` that sums samples: every record into `m` and
 * profile `p` (vmp_profile_keys() then holds the samples).  Returns as
 * vmp_conv__read_all() does, but never VMP_OK. */
vmp_status vmp_conv__read_profile(vmp_reader *r, vmp_convmeta *m, vmp_profile *p);

/* A converter's pass over `r`: every record into `m` and analysis `a`, and
 * every sample to take(arg, sample), which returns 0 or its own non-zero
 * code (left in *take_rc; the pass stops).  Returns VMP_END after the last
 * record, VMP_ERR_NOMEM when `m` ran out of memory, the status the reader
 * or the analysis failed with (an analysis limit is recorded as the
 * reader's error), or VMP_OK when take() stopped it. */
vmp_status vmp_conv__read_all(vmp_reader *r, vmp_convmeta *m, vmp_analysis *a,
                              int (*take)(void *arg, const vmp_asample *s), void *arg,
                              int *take_rc);
void vmp_convmeta__free(vmp_convmeta *m);

/* The FUNCTION record of `id` (its first definition, spec R-ID-5), or NULL. */
const vmp_cm_function *vmp_convmeta__function(const vmp_convmeta *m, uint64_t id);

uint64_t vmp_convmeta__hash(const char *s, size_t len);

#endif
