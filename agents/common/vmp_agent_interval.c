/* SPDX-License-Identifier: MIT
 *
 * vmp_agent_interval.c - durations in the agents' options and labels; see
 * vmp_agent_interval.h.
 */
#include "vmp_agent_interval.h"

#include <stdio.h>
#include <string.h>

int vmp_agent__parse_interval(uint64_t *out_ns, const char *text, size_t len)
{
    static const struct {
        const char *suffix;
        uint64_t mul;
    } units[] = {{"", 1}, {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};

    uint64_t v = 0;
    size_t i = 0, k;

    if (text == NULL || len == 0 || text[0] < '0' || text[0] > '9')
        return -1;
    for (; i < len && text[i] >= '0' && text[i] <= '9'; i++) {
        if (v > (UINT64_MAX - (uint64_t)(text[i] - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(text[i] - '0');
    }
    for (k = 0; k < sizeof units / sizeof units[0]; k++) {
        if (len - i == strlen(units[k].suffix) && memcmp(text + i, units[k].suffix, len - i) == 0) {
            if (v > UINT64_MAX / units[k].mul)
                return -1;
            *out_ns = v * units[k].mul;
            return 0;
        }
    }
    return -1;
}

void vmp_agent__format_interval(char *buf, size_t size, uint64_t ns)
{
    if (ns != 0 && ns % 1000000000u == 0)
        snprintf(buf, size, "%llus", (unsigned long long)(ns / 1000000000u));
    else if (ns != 0 && ns % 1000000u == 0)
        snprintf(buf, size, "%llums", (unsigned long long)(ns / 1000000u));
    else if (ns != 0 && ns % 1000u == 0)
        snprintf(buf, size, "%lluus", (unsigned long long)(ns / 1000u));
    else
        snprintf(buf, size, "%lluns", (unsigned long long)ns);
}
