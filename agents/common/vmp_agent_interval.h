/* SPDX-License-Identifier: MIT
 *
 * vmp_agent_interval.h - durations in the agents' options and header labels
 * ("1ms", "100us", "250000ns", "1s"): one parser and one formatter for the
 * HotSpot and LuaJIT agents.
 *
 * Internal to the agents (a static library each links): nothing here is
 * exported from their shared objects.  Reentrant; not async-signal-safe
 * (the formatter uses snprintf).
 */
#ifndef VMP_AGENT_INTERVAL_H
#define VMP_AGENT_INTERVAL_H

#include <stddef.h>
#include <stdint.h>

/** Parse the `len` bytes at `text` (need not be NUL-terminated) as a
 *  duration: a decimal number with an optional unit ns, us, ms or s (no
 *  unit == ns).  @param[out] out_ns receives the value on success.
 *  @return 0 on success, -1 if the text is not a duration or overflows. */
int vmp_agent__parse_interval(uint64_t *out_ns, const char *text, size_t len);

/** Format `ns` as the shortest exact text with a unit ("1ms", "100us",
 *  "1500ns") into `buf` (`size` bytes, NUL-terminated). */
void vmp_agent__format_interval(char *buf, size_t size, uint64_t ns);

#endif
