/* SPDX-License-Identifier: MIT
 *
 * vmp_agent_file.c - the agents' output files (vmp_agent_file.h).
 */
#include "vmp_agent_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int vmp_agent__parse_file_mode(unsigned int *out, const char *text, size_t len)
{
    unsigned int mode = 0;
    if (len == 0 || len > 4)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '7')
            return -1;
        mode = mode * 8 + (unsigned int)(text[i] - '0');
    }
    if (mode > 0777)
        return -1;
    *out = mode;
    return 0;
}

uint32_t vmp_agent__flush_ms(uint64_t ns)
{
    return (uint32_t)((ns ? ns : VMP_AGENT_DEFAULT_FLUSH_NS) / 1000000u);
}

const char *vmp_agent__open_why(int err)
{
    switch (err) {
    case ELOOP:
        return "it is a symbolic link, which vmp does not follow";
    case EPERM:
        return "a file of another user, or with other links, is there; vmp does not overwrite it";
    case EINVAL:
        return "it is not a regular file";
    default:
        return strerror(err);
    }
}

void vmp_agent__file_note(vmp_agent_file_id *id, const char *path)
{
    struct stat sb;
    id->known = stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
    id->dev = id->known ? sb.st_dev : 0;
    id->ino = id->known ? sb.st_ino : 0;
    id->said = 0;
}

int vmp_agent__file_check(vmp_agent_file_id *id, const char *path, int loop)
{
    struct stat sb;
    if (!id->known || id->said)
        return 0;
    if (stat(path, &sb) == 0 ? sb.st_dev == id->dev && sb.st_ino == id->ino
                             : errno != ENOENT && errno != ENOTDIR)
        return 0; /* there, or cannot tell */
    id->said = 1;
    fprintf(stderr, "vmp: %s was deleted or replaced while being written: %s\n", path,
            loop ? "its samples are lost; the loop's next file starts as usual"
                 : "the recording goes on into a file no one can open and is lost; the program "
                   "runs on");
    return 1;
}
