/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_opts.c - parse the HotSpot agent's option string (the sampling
 * interval and labels it yields are written to the header, spec.md §5.1).
 */
#include "vmp_jvmti_opts.h"

#include "vmp_agent_clock.h"
#include "vmp_agent_file.h"
#include "vmp_agent_interval.h"
#include "vmp_jvmti_attach.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void warnf(char *warn, size_t warn_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void warnf(char *warn, size_t warn_size, const char *fmt, ...)
{
    size_t used;
    va_list ap;

    if (warn == NULL || warn_size == 0)
        return;
    used = strnlen(warn, warn_size);
    if (used + 1 >= warn_size)
        return;
    va_start(ap, fmt);
    vsnprintf(warn + used, warn_size - used, fmt, ap);
    va_end(ap);
}

/* Copy `name` into `out`, replacing every "%p" with the pid. */
static int expand_file(char *out, size_t size, const char *name, size_t len, long pid)
{
    size_t o = 0, i;

    for (i = 0; i < len; i++) {
        if (name[i] == '%' && i + 1 < len && name[i + 1] == 'p') {
            int n = snprintf(out + o, size - o, "%ld", pid);
            if (n < 0 || (size_t)n >= size - o)
                return -1;
            o += (size_t)n;
            i++;
        } else {
            if (o + 1 >= size)
                return -1;
            out[o++] = name[i];
        }
    }
    out[o] = '\0';
    return o == 0 ? -1 : 0;
}

/* `in` (n bytes) with %XX decoded into `out` (size bytes, NUL-terminated).
 * @return 0, or -1 when it does not fit or a % is not followed by two hex
 * digits. */
static int percent_decode(char *out, size_t size, const char *in, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = in[i];
        if (c == '%') {
            unsigned v = 0;
            for (int k = 1; k <= 2; k++) {
                char h = i + (size_t)k < n ? in[i + (size_t)k] : '\0';
                v = v * 16 + (unsigned)(h >= '0' && h <= '9'   ? h - '0'
                                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                               : 99);
                if (v > 255)
                    return -1;
            }
            c = (char)v;
            i += 2;
        }
        if (o + 1 >= size)
            return -1;
        out[o++] = c;
    }
    out[o] = '\0';
    return 0;
}

/* A label=KEY:VALUE option.  @return 0, or 1 after a warning. */
static int add_label(vmp_jvmti_options *out, const char *val, char *warn, size_t warn_size)
{
    const char *colon = strchr(val, ':');
    char key[VMP_JVMTI_LABEL_MAX], value[VMP_JVMTI_LABEL_MAX];
    uint32_t i;

    if (colon == NULL || colon == val ||
        percent_decode(key, sizeof key, val, (size_t)(colon - val)) != 0 ||
        percent_decode(value, sizeof value, colon + 1, strlen(colon + 1)) != 0 || key[0] == '\0') {
        warnf(warn, warn_size,
              "label '%s' is not KEY:VALUE (KEY not empty, each below %u bytes, %%XX escapes); "
              "ignored\n",
              val, VMP_JVMTI_LABEL_MAX);
        return 1;
    }
    for (i = 0; i < out->n_labels && strcmp(out->label_keys[i], key) != 0; i++)
        ;
    if (i == VMP_JVMTI_MAX_LABELS) {
        warnf(warn, warn_size, "more than %u labels; '%s' ignored\n", VMP_JVMTI_MAX_LABELS, val);
        return 1;
    }
    memcpy(out->label_keys[i], key, sizeof key);
    memcpy(out->label_values[i], value, sizeof value);
    if (i == out->n_labels)
        out->n_labels++;
    return 0;
}

size_t vmp_jvmti__header_labels(const vmp_jvmti_options *o, const char *const *own, size_t n_own,
                                const char **out)
{
    size_t n = 0, k;
    uint32_t j;
    for (k = 0; k < n_own; k++) {
        for (j = 0; j < o->n_labels && strcmp(o->label_keys[j], own[2 * k]) != 0; j++)
            ;
        if (j == o->n_labels) {
            out[2 * n] = own[2 * k];
            out[2 * n + 1] = own[2 * k + 1];
            n++;
        }
    }
    for (j = 0; j < o->n_labels; j++, n++) {
        out[2 * n] = o->label_keys[j];
        out[2 * n + 1] = o->label_values[j];
    }
    return n;
}

static void set_defaults(vmp_jvmti_options *out, long pid)
{
    memset(out, 0, sizeof *out);
    snprintf(out->file, sizeof out->file, "vmp-%ld.vmp", pid);
    out->interval_ns = VMP_JVMTI_DEFAULT_INTERVAL_NS;
    out->mode = VMP_JVMTI_MODE_CPU;
    out->depth = VMP_JVMTI_DEFAULT_DEPTH;
    out->format_major = 2;
}

uint64_t vmp_jvmti__time_unit(const vmp_jvmti_options *o)
{
    if (o->times != 0)
        return o->times == 2 ? 1000 : 1;
    /* below 10us, a microsecond would lose the sampler's own resolution */
    return o->interval_ns >= 10000 ? 1000 : 1;
}

int vmp_jvmti__parse_options(vmp_jvmti_options *out, const char *text, long pid, char *warn,
                             size_t warn_size)
{
    const char *p = text;
    int problems = 0, threads_given = 0;

    if (warn != NULL && warn_size > 0)
        warn[0] = '\0';
    set_defaults(out, pid);
    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        char key[32], val[VMP_JVMTI_PATH_MAX];
        size_t klen, vlen;

        if (len == 0) { /* tolerate ",," and a trailing comma */
            p = end ? end + 1 : NULL;
            continue;
        }
        klen = eq ? (size_t)(eq - p) : len;
        vlen = eq ? len - klen - 1 : 0;
        if (eq == NULL || klen == 0 || klen >= sizeof key || vlen >= sizeof val) {
            warnf(warn, warn_size, "option '%.*s' is not key=value; ignored\n", (int)len, p);
            problems++;
            p = end ? end + 1 : NULL;
            continue;
        }
        memcpy(key, p, klen);
        key[klen] = '\0';
        memcpy(val, eq + 1, vlen);
        val[vlen] = '\0';

        if (strcmp(key, "file") == 0) {
            char tmp[VMP_JVMTI_PATH_MAX];
            if (expand_file(tmp, sizeof tmp, val, vlen, pid) != 0) {
                warnf(warn, warn_size, "file '%s' is empty or too long; using %s\n", val,
                      out->file);
                problems++;
            } else {
                memcpy(out->file, tmp, sizeof tmp);
            }
        } else if (strcmp(key, "interval") == 0) {
            uint64_t ns;
            if (vmp_agent__parse_interval(&ns, val, strlen(val)) != 0 ||
                ns < VMP_JVMTI_MIN_INTERVAL_NS || ns > VMP_JVMTI_MAX_INTERVAL_NS) {
                warnf(warn, warn_size,
                      "interval '%s' is not a duration from 1us to 10s (e.g. 1ms, 100us); "
                      "using 1ms\n",
                      val);
                problems++;
            } else {
                out->interval_ns = ns;
            }
        } else if (strcmp(key, "mode") == 0) {
            if (strcmp(val, "cpu") == 0) {
                out->mode = VMP_JVMTI_MODE_CPU;
            } else if (strcmp(val, "wall") == 0) {
                out->mode = VMP_JVMTI_MODE_WALL;
            } else {
                warnf(warn, warn_size, "mode '%s' is neither cpu nor wall; using cpu\n", val);
                problems++;
            }
        } else if (strcmp(key, "sampler") == 0) {
            if (strcmp(val, "auto") == 0) {
                out->sampler = VMP_AGENT_SAMPLER_AUTO;
            } else if (strcmp(val, "perf") == 0) {
                out->sampler = VMP_AGENT_SAMPLER_PERF;
            } else if (strcmp(val, "posix") == 0) {
                out->sampler = VMP_AGENT_SAMPLER_POSIX;
            } else {
                warnf(warn, warn_size, "sampler '%s' is not auto, perf or posix; using auto\n",
                      val);
                problems++;
            }
        } else if (strcmp(key, "threads") == 0) {
            threads_given = 1;
            if (strcmp(val, "all") == 0) {
                out->threads = VMP_JVMTI_THREADS_ALL;
            } else if (strcmp(val, "java") == 0) {
                out->threads = VMP_JVMTI_THREADS_JAVA;
            } else {
                warnf(warn, warn_size, "threads '%s' is neither all nor java; using all\n", val);
                problems++;
            }
        } else if (strcmp(key, "label") == 0) {
            problems += add_label(out, val, warn, warn_size);
        } else if (strcmp(key, "metadata") == 0) {
            if (strcmp(val, "used") == 0 || strcmp(val, "all") == 0) {
                out->all_metadata = strcmp(val, "all") == 0;
            } else {
                warnf(warn, warn_size, "metadata '%s' is neither used nor all; using used\n", val);
                problems++;
            }
        } else if (strcmp(key, "loop") == 0) {
            uint64_t ns;
            if (vmp_agent__parse_interval(&ns, val, strlen(val)) != 0 ||
                ns < VMP_JVMTI_MIN_LOOP_NS || ns > VMP_JVMTI_MAX_LOOP_NS) {
                warnf(warn, warn_size,
                      "loop '%s' is not a duration from 100ms to 7 days (e.g. 60s); one file\n",
                      val);
                problems++;
            } else {
                out->loop_ns = ns;
            }
        } else if (strcmp(key, "format") == 0) {
            if (strcmp(val, "1.2") == 0 || strcmp(val, "2.0") == 0) {
                out->format_major = strcmp(val, "2.0") == 0 ? 2 : 1;
            } else {
                warnf(warn, warn_size, "format '%s' is neither 1.2 nor 2.0; using 2.0\n", val);
                problems++;
            }
        } else if (strcmp(key, "times") == 0) {
            if (strcmp(val, "ns") == 0 || strcmp(val, "us") == 0) {
                out->times = strcmp(val, "ns") == 0 ? 1 : 2;
            } else {
                warnf(warn, warn_size, "times '%s' is neither ns nor us; using the default\n", val);
                problems++;
            }
        } else if (strcmp(key, "keep") == 0) {
            uint64_t k;
            if (vmp_agent__parse_interval(&k, val, strlen(val)) != 0 || k == 0 ||
                k > VMP_JVMTI_MAX_KEEP || strspn(val, "0123456789") != vlen) {
                warnf(warn, warn_size, "keep '%s' is not a number from 1 to %u; keeping all\n", val,
                      VMP_JVMTI_MAX_KEEP);
                problems++;
            } else {
                out->keep = (uint32_t)k;
            }
        } else if (strcmp(key, "flush") == 0) {
            uint64_t ns;
            if (vmp_agent__parse_interval(&ns, val, strlen(val)) != 0 ||
                ns < VMP_AGENT_MIN_FLUSH_NS || ns > VMP_AGENT_MAX_FLUSH_NS) {
                warnf(warn, warn_size, "flush '%s' is not a duration from 10ms to 60s; using 1s\n",
                      val);
                problems++;
            } else {
                out->flush_ns = ns;
            }
        } else if (strcmp(key, "filemode") == 0) {
            if (vmp_agent__parse_file_mode(&out->file_mode, val, vlen) != 0) {
                warnf(warn, warn_size, "filemode '%s' is not an octal mode up to 777; using 600\n",
                      val);
                problems++;
            }
        } else if (strcmp(key, "alloc") == 0) {
            uint64_t b;
            if (vmp_jvmti_parse_size(&b, val) != 0 || b == 0 || b > VMP_JVMTI_MAX_ALLOC_BYTES) {
                warnf(warn, warn_size,
                      "alloc '%s' is not a size from 1 byte to 1g (e.g. 512k); no allocation "
                      "samples\n",
                      val);
                problems++;
            } else {
                out->alloc_bytes = b;
            }
        } else if (strcmp(key, "live") == 0) {
            if (strcmp(val, "on") == 0 || strcmp(val, "off") == 0) {
                out->live = strcmp(val, "on") == 0;
            } else {
                warnf(warn, warn_size, "live '%s' is neither on nor off; off\n", val);
                problems++;
            }
        } else if (strcmp(key, "lock") == 0) {
            uint64_t ns;
            if (vmp_agent__parse_interval(&ns, val, strlen(val)) != 0 || ns == 0 ||
                ns > VMP_JVMTI_MAX_INTERVAL_NS) {
                warnf(warn, warn_size,
                      "lock '%s' is not a duration from 1ns to 10s (e.g. 10us); no lock "
                      "samples\n",
                      val);
                problems++;
            } else {
                out->lock_ns = ns;
            }
        } else if (strcmp(key, "depth") == 0) {
            uint64_t d;
            if (vmp_agent__parse_interval(&d, val, strlen(val)) != 0 || d == 0 ||
                d > VMP_JVMTI_MAX_DEPTH || strspn(val, "0123456789") != vlen) {
                warnf(warn, warn_size, "depth '%s' is not a number from 1 to %u; using %u\n", val,
                      VMP_JVMTI_MAX_DEPTH, VMP_JVMTI_DEFAULT_DEPTH);
                problems++;
            } else {
                out->depth = (uint32_t)d;
            }
        } else {
            warnf(warn, warn_size, "unknown option '%s'; ignored\n", key);
            problems++;
        }
        p = end ? end + 1 : NULL;
    }
    /* wall mode signals every sampled thread at each interval, idle or not:
     * by default only the Java threads, as before the JVM's own were sampled */
    if (!threads_given && out->mode == VMP_JVMTI_MODE_WALL)
        out->threads = VMP_JVMTI_THREADS_JAVA;
    return problems;
}
