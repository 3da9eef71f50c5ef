/* SPDX-License-Identifier: MIT
 *
 * vmp_textout.c - how the views write text: quoted and JSON strings, CSV
 * fields, UTC times (vmp_convert.h "Text output"), for the report, the
 * archive and the commands.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "vmp_convert.h"
#include "vmp_textout.h"

size_t vmp_utf8__seq(const unsigned char *s, size_t n)
{
    size_t len, i;
    uint32_t cp;
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        len = 2;
        cp = s[0] & 0x1Fu;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        len = 3;
        cp = s[0] & 0x0Fu;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        len = 4;
        cp = s[0] & 0x07u;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

/* s[0..len) in double quotes: \" \\ \n \r \t escaped; other control bytes
 * and bytes that are not valid UTF-8 as \xNN in text (0x7F too), and as
 * \u00NN and U+FFFD in JSON. */
static void put_escaped(FILE *f, const char *s, size_t len, int json)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i, n;
    fputc('"', f);
    for (i = 0; i < len; i += n) {
        unsigned char c = p[i];
        const char *esc = c == '"'    ? "\\\""
                          : c == '\\' ? "\\\\"
                          : c == '\n' ? "\\n"
                          : c == '\r' ? "\\r"
                          : c == '\t' ? "\\t"
                                      : NULL;
        n = 1;
        if (esc != NULL) {
            fputs(esc, f);
        } else if (c < 0x20 || (!json && c == 0x7F)) {
            fprintf(f, json ? "\\u%04x" : "\\x%02x", c);
        } else if ((n = vmp_utf8__seq(p + i, len - i)) == 0) {
            n = 1;
            if (json)
                fputs("\\ufffd", f);
            else
                fprintf(f, "\\x%02x", c);
        } else {
            fwrite(p + i, 1, n, f);
        }
    }
    fputc('"', f);
}

void vmp_put_quoted(FILE *f, const char *s, size_t len)
{
    put_escaped(f, s, len, 0);
}

void vmp_put_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void vmp_put_json_string(FILE *f, const char *s, size_t len)
{
    put_escaped(f, s, len, 1);
}

void vmp_format_utc(char *buf, size_t size, uint64_t ns)
{
    time_t secs = (time_t)(ns / 1000000000u);
    struct tm tm;
    if (!gmtime_r(&secs, &tm)) {
        snprintf(buf, size, "%llu ns", (unsigned long long)ns);
        return;
    }
    snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%09lluZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (unsigned long long)(ns % 1000000000u));
}
