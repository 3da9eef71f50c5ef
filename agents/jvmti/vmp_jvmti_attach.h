/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_attach.h - what the HotSpot agent's Agent_OnAttach returns, and
 * the option that stops a recording; shared by the agent and `vmp record
 * --pid`, which reads the value back from the JVM's attach reply ("return
 * code: N"), the names of a looping recording's files, and the sizes of
 * its options.  A JVM records
 * one recording at a time; after a stop, another attach starts a new one.
 */
#ifndef VMP_JVMTI_ATTACH_H
#define VMP_JVMTI_ATTACH_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/** The whole option string that asks a recording agent to stop. */
#define VMP_JVMTI_STOP_OPTION "stop"

/** Agent_OnAttach's return values. */
enum vmp_jvmti_attach_rc {
    VMP_JVMTI_ATTACH_OK = 0,        /* recording (or stopped, for "stop") */
    VMP_JVMTI_ATTACH_BUSY = 101,    /* a recording is already running in this JVM */
    VMP_JVMTI_ATTACH_IDLE = 102,    /* "stop": no recording is running */
    VMP_JVMTI_ATTACH_NO_FILE = 103, /* the output file could not be created */
    VMP_JVMTI_ATTACH_NO_JVMTI = 104 /* JVMTI, its events or SIGPROF are not available */
};

/** The name of file number `n` (1, 2, ...) of a recording with the loop
 *  option on `file`: "app.vmp" -> "app-000001.vmp"; a name that does not
 *  end in ".vmp" gets the counter appended ("app" -> "app-000001").  The
 *  agent writes these files; vmp record follows them.
 *  @return 0, or -1 when the name does not fit in `size` bytes. */
static inline int vmp_jvmti_loop_path(char *out, size_t size, const char *file, uint64_t n)
{
    size_t len = strlen(file);
    int vmp = len >= 4 && strcmp(file + len - 4, ".vmp") == 0;
    int stem = (int)(vmp ? len - 4 : len);
    int w =
        snprintf(out, size, "%.*s-%06llu%s", stem, file, (unsigned long long)n, vmp ? ".vmp" : "");
    return w < 0 || (size_t)w >= size ? -1 : 0;
}

/** A size of the agent's options (alloc=): "512k", "1m", "4096": bytes,
 *  with k, m or g for powers of 1024, into `*out`.  The agent parses it;
 *  vmp record checks it before.  @return 0, or -1 when it is not one. */
static inline int vmp_jvmti_parse_size(uint64_t *out, const char *val)
{
    uint64_t v = 0;
    size_t i;
    unsigned shift = 0;
    for (i = 0; val[i] >= '0' && val[i] <= '9'; i++) {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(val[i] - '0');
    }
    if (i == 0)
        return -1;
    if (val[i] == 'k' || val[i] == 'K')
        shift = 10;
    else if (val[i] == 'm' || val[i] == 'M')
        shift = 20;
    else if (val[i] == 'g' || val[i] == 'G')
        shift = 30;
    if (shift)
        i++;
    if (val[i] != '\0' || v > (UINT64_MAX >> shift))
        return -1;
    *out = v << shift;
    return 0;
}

#endif
