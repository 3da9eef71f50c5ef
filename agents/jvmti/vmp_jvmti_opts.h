/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_opts.h - the HotSpot agent's option string
 * ("file=out.vmp,interval=1ms,mode=cpu,depth=128,label=bench:sieve"); the
 * header it produces is
 * described in spec.md §5.1 (interval, labels).
 *
 * Internal to libvmp-jvmti: nothing here is exported from the shared object.
 */
#ifndef VMP_JVMTI_OPTS_H
#define VMP_JVMTI_OPTS_H

#include <stddef.h>
#include <stdint.h>

/** Sampling clock of the agent. */
enum vmp_jvmti_mode {
    VMP_JVMTI_MODE_CPU = 0, /* per-thread CPU-time timers */
    VMP_JVMTI_MODE_WALL = 1 /* one agent thread signals every thread */
};

/** Which threads are sampled. */
enum vmp_jvmti_threads {
    VMP_JVMTI_THREADS_ALL = 0, /* every thread of the process */
    VMP_JVMTI_THREADS_JAVA = 1 /* only threads JVMTI reports (ThreadStart) */
};

#define VMP_JVMTI_DEFAULT_INTERVAL_NS 1000000u
#define VMP_JVMTI_MIN_INTERVAL_NS     1000u
#define VMP_JVMTI_MAX_INTERVAL_NS     10000000000u
#define VMP_JVMTI_DEFAULT_DEPTH       128u
#define VMP_JVMTI_MAX_DEPTH           2048u
#define VMP_JVMTI_PATH_MAX            4096
#define VMP_JVMTI_MAX_LABELS          16u        /* label= options kept */
#define VMP_JVMTI_LABEL_MAX           256u       /* bytes of a label key or value, NUL included */
#define VMP_JVMTI_MIN_LOOP_NS         100000000u /* loop=: 100ms */
#define VMP_JVMTI_MAX_LOOP_NS         604800000000000u /* loop=: 7 days */
#define VMP_JVMTI_MAX_KEEP            1000000u
#define VMP_JVMTI_MAX_ALLOC_BYTES     (1u << 30) /* alloc=: 1g */

/** Parsed agent options. */
typedef struct vmp_jvmti_options {
    char file[VMP_JVMTI_PATH_MAX]; /* output path, "%p" expanded; never empty */
    uint64_t interval_ns;          /* VMP_JVMTI_MIN_INTERVAL_NS..VMP_JVMTI_MAX_INTERVAL_NS */
    int mode;                      /* enum vmp_jvmti_mode */
    uint32_t depth;                /* 1..VMP_JVMTI_MAX_DEPTH */
    int sampler;                   /* cpu mode: enum vmp_agent_sampler (auto, perf, posix) */
    int threads;                   /* enum vmp_jvmti_threads (all, java) */
    int all_metadata;              /* metadata=all: every function, symbol and code map */
    uint64_t loop_ns;              /* loop=: a new file every loop_ns; 0 == one file */
    uint32_t keep;                 /* keep=: with loop, the newest files kept; 0 == all */
    unsigned format_major;         /* format=: 2 (2.0, samples in SAMPLE_BLOCKs, spec.md
                                      §5.14), the default, or 1 (1.2) */
    int times;                     /* times=: 0 auto, 1 ns, 2 us (format 2.0's sample times) */
    /* alloc=: sample an allocation every this many bytes on average (JVMTI
     * SampledObjectAlloc, spec.md §5.15 kind "alloc"); 0 == off */
    uint64_t alloc_bytes;
    /* lock=: a wait for a contended monitor of at least this long is a
     * sample (spec.md §5.15 kind "lock"); 0 == off */
    uint64_t lock_ns;
    /* live=on: with alloc, which sampled allocations are still reachable
     * when the recording ends (spec.md §5.15 kind "live"); 0 == off */
    int live;
    /* filemode=: the permission bits of the files (octal); 0 == the
     * writer's default, 0600 */
    unsigned int file_mode;
    /* flush=: a chunk closes at this age: what a crash loses at most;
     * 0 == VMP_AGENT_DEFAULT_FLUSH_NS */
    uint64_t flush_ns;
    /* label=KEY:VALUE options, in order, decoded: the header's labels */
    char label_keys[VMP_JVMTI_MAX_LABELS][VMP_JVMTI_LABEL_MAX];
    char label_values[VMP_JVMTI_MAX_LABELS][VMP_JVMTI_LABEL_MAX];
    uint32_t n_labels;
} vmp_jvmti_options;

/** Parse the agent option string `text` (may be NULL or empty) into `*out`.
 *
 * Options are comma-separated key=value pairs: file, interval, mode (cpu or
 * wall), depth, sampler (auto, perf or posix: the cpu-mode clock,
 * vmp_agent_clock.h), threads (all or java; default all in cpu mode, java
 * in wall mode), metadata (used: the functions, symbols and code maps the
 * samples need, the default; all: every one the JVM describes), loop
 * (a duration, 100ms to 7 days: a new file every period, named by
 * vmp_jvmti_loop_path()), keep (with loop: how many of the newest files to
 * keep, 1 to VMP_JVMTI_MAX_KEEP), format (2.0, the default: samples in
 * SAMPLE_BLOCK records, which 1.x readers refuse; or 1.2), times (with format
 * 2.0: ns or us, the unit of sample times; default us when the interval is
 * 10us or more, else ns), alloc (a size, 1 to 1g, with k, m or g: sample
 * allocations every that many bytes on average, as allocation samples of
 * kind "alloc" beside the CPU samples), lock (a duration, 1ns to 10s: every
 * wait of at least that long to enter a contended monitor is a sample of
 * kind "lock" weighing the nanoseconds waited), live (on or off: with alloc,
 * the sampled allocations still reachable at the end, as samples of kind
 * "live"), filemode (1 to 4 octal digits, at most 777: the permission bits
 * of the files; default 600), flush (a duration, 10ms to 60s, default 1s:
 * the writer closes a chunk at this age, so a crash loses at most that) and label=KEY:VALUE
 * (repeatable, at most VMP_JVMTI_MAX_LABELS; a later label with the same KEY replaces the earlier
 * one; %XX in KEY or VALUE stands for the byte XX, so that a value may hold ',', ' ', ':' or '=').
 * Every problem (unknown key, bad value, value out of range) leaves that option at its default and
 * is described by one line appended to `warn` (at most `warn_size` bytes, always NUL-terminated,
 * may be NULL).
 *
 * @param[out] out  receives the options; always fully initialised.
 * @param text      borrowed.
 * @param pid       replaces "%p" in the file name and names the default file.
 * @return the number of problems found (0 == all options understood).
 *
 * Thread safety: reentrant.  Not async-signal-safe (uses snprintf).
 */
/** The unit of sample times the options ask for, ns: 1 or 1000 (format 2.0,
 *  spec.md §5.1 key 19). */
uint64_t vmp_jvmti__time_unit(const vmp_jvmti_options *o);

int vmp_jvmti__parse_options(vmp_jvmti_options *out, const char *text, long pid, char *warn,
                             size_t warn_size);

/** The HEADER labels of an agent (spec.md §5.1): its own `n_own` key,
 *  value pairs in `own`, each unless a label= option gave its key, then the
 *  label= options of `o`, as key, value pointers into `out` (room for
 *  2 * (n_own + VMP_JVMTI_MAX_LABELS) pointers; they borrow from `own` and
 *  `o`).  @return the number of pairs written. */
size_t vmp_jvmti__header_labels(const vmp_jvmti_options *o, const char *const *own, size_t n_own,
                                const char **out);

#endif
