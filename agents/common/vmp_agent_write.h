/* SPDX-License-Identifier: MIT
 *
 * vmp_agent_write.h - what an agent does when the writer refuses a record:
 * say so once on stderr and let the program run on (the writer counts what
 * it drops; an agent never stops the program it profiles).
 *
 * Internal to the agents.  Not async-signal-safe (stdio): for the agents'
 * own threads and VM callbacks, never for a signal handler.
 */
#ifndef VMP_AGENT_WRITE_H
#define VMP_AGENT_WRITE_H

#include <stdio.h>

#include "vmp_writer.h"

/** After a write to the profile `path` returned `st`: on the first error
 *  that ends the output (the file closed, an I/O error) print one line to
 *  stderr and set `*warned`, which the caller keeps per recording. */
static inline void vmp_agent__check_write(vmp_status st, const char *path, int *warned)
{
    if ((st == VMP_ERR_CLOSED || st == VMP_ERR_IO) && !*warned) {
        *warned = 1;
        fprintf(stderr, "vmp: cannot write %s: %s; the program continues without profiling\n", path,
                vmp_status_str(st));
    }
}

#endif
