/* SPDX-License-Identifier: MIT
 *
 * vmp_err.c - the one-line error messages of the library's rewriting and
 * converting functions (vmp_analyze_int.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "vmp_analyze_int.h"

void vmp_set_err__(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;
    if (!err || size == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
}
