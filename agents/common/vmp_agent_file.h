/* SPDX-License-Identifier: MIT
 *
 * vmp_agent_file.h - the agents' output files: the filemode= option, and
 * why a file could not be opened in words a user acts on (vmp_writer_open()
 * refuses a symlink, another user's file and a FIFO at the path).
 *
 * Internal to the agents (a static library each links): nothing here is
 * exported from their shared objects.  Reentrant; not async-signal-safe.
 */
#ifndef VMP_AGENT_FILE_H
#define VMP_AGENT_FILE_H

#include <stddef.h>

/** Parse the `len` bytes at `text` (need not be NUL-terminated) as a file
 *  mode: 1 to 4 octal digits, at most 0777 ("600", "0640").
 *  @param[out] out receives the mode on success.
 *  @return 0 on success, -1 if the text is not such a mode. */
int vmp_agent__parse_file_mode(unsigned int *out, const char *text, size_t len);

/** Why vmp_writer_open() failed, from the errno it left: the refusals it
 *  documents in words ("it is a symbolic link, which vmp does not
 *  follow"), strerror() for the rest.  @return a static string. */
const char *vmp_agent__open_why(int err);

#endif
