/* SPDX-License-Identifier: MIT
 *
 * vmp_textout.h - the UTF-8 check of every view that writes text (JSON,
 * CSV, SVG, speedscope; vmp_textout.c).  Internal: not installed.
 */
#ifndef VMP_TEXTOUT_H
#define VMP_TEXTOUT_H

#include <stddef.h>

/* The length of the valid UTF-8 sequence at s[0..n) (n >= 1): 1 to 4, or 0
 * when it is not one (overlong forms, surrogates and code points past
 * U+10FFFF are not). */
size_t vmp_utf8__seq(const unsigned char *s, size_t n);

#endif
