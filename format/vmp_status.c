/* SPDX-License-Identifier: MIT
 *
 * vmp_status.c - names of the status codes (vmp_status.h).
 */
#include "vmp_status.h"

const char *vmp_status_str(vmp_status st)
{
    switch (st) {
    case VMP_OK:
        return "ok";
    case VMP_END:
        return "end of input";
    case VMP_ERR_INVALID_ARG:
        return "invalid argument";
    case VMP_ERR_NOMEM:
        return "out of memory";
    case VMP_ERR_IO:
        return "i/o error";
    case VMP_ERR_NOT_VMP:
        return "not a vmp profile";
    case VMP_ERR_VERSION:
        return "unsupported format version";
    case VMP_ERR_TRUNCATED:
        return "truncated input";
    case VMP_ERR_CORRUPT:
        return "corrupt input";
    case VMP_ERR_LIMIT:
        return "reader limit exceeded";
    case VMP_ERR_FULL:
        return "ring full";
    case VMP_ERR_BUSY:
        return "busy";
    case VMP_ERR_CLOSED:
        return "output stopped after a write error";
    }
    return "unknown status";
}
