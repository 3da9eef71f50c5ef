/* SPDX-License-Identifier: MIT
 *
 * vmp_agent_file.h - the agents' output files: the filemode= option, why a
 * file could not be opened in words a user acts on (vmp_writer_open()
 * refuses a symlink, another user's file and a FIFO at the path), and
 * whether the file being written is still the one at its path.
 *
 * Internal to the agents (a static library each links): nothing here is
 * exported from their shared objects.  Reentrant; not async-signal-safe.
 */
#ifndef VMP_AGENT_FILE_H
#define VMP_AGENT_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* flush=: the age that closes a chunk of the file (vmp_writer_options'
 * chunk_age_ms): what a crash of the VM can lose at most (spec.md §2, "a
 * crash loses at most the chunk being filled"). */
#define VMP_AGENT_DEFAULT_FLUSH_NS 1000000000u
#define VMP_AGENT_MIN_FLUSH_NS     10000000u
#define VMP_AGENT_MAX_FLUSH_NS     60000000000u

/** Parse the `len` bytes at `text` (need not be NUL-terminated) as a file
 *  mode: 1 to 4 octal digits, at most 0777 ("600", "0640").
 *  @param[out] out receives the mode on success.
 *  @return 0 on success, -1 if the text is not such a mode. */
int vmp_agent__parse_file_mode(unsigned int *out, const char *text, size_t len);

/** Why vmp_writer_open() failed, from the errno it left: the refusals it
 *  documents in words ("it is a symbolic link, which vmp does not
 *  follow"), strerror() for the rest.  @return a static string. */
const char *vmp_agent__open_why(int err);

/** The chunk age in ms (vmp_writer_options.chunk_age_ms) of a flush=
 *  period `ns` (0: the default). */
uint32_t vmp_agent__flush_ms(uint64_t ns);

/** Which file an output opened: a file deleted (a cleaner of /tmp, a user)
 *  or replaced at its path while it is written cannot be saved (the writer
 *  goes on into an inode no name reaches), but it can be said. */
typedef struct vmp_agent_file_id {
    dev_t dev;
    ino_t ino;
    int known; /* a regular file was at the path when noted */
    int said;  /* its loss was said (vmp_agent__file_check()) */
} vmp_agent_file_id;

/** Note which file is at `path` now (just opened).  A path that is not a
 *  regular file (/dev/null) leaves nothing known. */
void vmp_agent__file_note(vmp_agent_file_id *id, const char *path);

/** Say once on stderr when the file `id` noted is no longer at `path`
 *  (deleted, or another file there): "vmp: PATH was deleted or replaced
 *  while being written: ...", `loop`: the recording goes on in the loop's
 *  next file.  Nothing is said while it is there or when that cannot be
 *  told (nothing known, the directory unreadable).  One stat() until said.
 *  @return 1 when it is said now, else 0. */
int vmp_agent__file_check(vmp_agent_file_id *id, const char *path, int loop);

#endif
