/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_record.c - `vmp record -- java ...`: runs a Java command with the
 * HotSpot agent (libvmp-jvmti.so) attached through JAVA_TOOL_OPTIONS;
 * `vmp record --pid PID`: loads the agent into a running JVM (vmp_attach.h)
 * and stops it after a duration.  Then summarizes the profile it wrote
 * (spec.md §5.2 END, §5.12 samples).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmp_attach.h"
#include "vmp_cli.h"
#include "vmp_jvmti_attach.h"

#ifndef VMP_INSTALL_LIBDIR
#    define VMP_INSTALL_LIBDIR "lib"
#endif

enum {
    OPT_PID = VMP_CLI_OPT_END,
    OPT_DURATION,
    OPT_STOP,
    OPT_INTERVAL,
    OPT_AGENT,
    OPT_FILE_MODE,
    OPT_FLUSH,
    OPT_MODE, /* from here to OPT_LIVE: the HotSpot agent's alone */
    OPT_LOOP,
    OPT_KEEP,
    OPT_SAMPLER,
    OPT_THREADS,
    OPT_LABEL,
    OPT_METADATA,
    OPT_DEPTH,
    OPT_ALLOC,
    OPT_LOCK,
    OPT_LIVE,
    OPT_COUNT /* past the last */
};

static const char record_synopsis[] =
    "usage: vmp record [options] -- COMMAND [ARGS...]\n"
    "       vmp record [options] --pid PID [--duration TIME]\n"
    "       vmp record --pid PID --stop\n"
    "\n"
    "Run COMMAND (a java command line) with the vmp HotSpot agent attached and\n"
    "write a profile.  The agent is passed to every JVM the command starts\n"
    "through the JAVA_TOOL_OPTIONS environment variable (appended to its\n"
    "current value).  A COMMAND whose program is luajit gets the LuaJIT agent\n"
    "instead (the Lua module vmp_luajit, through LUA_CPATH and LUA_INIT; -o,\n"
    "--interval, --format, --flush and --file-mode apply).  When the command ends, print\n"
    "a summary of the profile (samples, failed samples, dropped samples,\n"
    "duration) to standard error and exit with the command's exit status.\n"
    "\n"
    "With --pid, load the agent into the running HotSpot JVM PID through its\n"
    "attach mechanism (as jcmd does; no JDK tool is needed), record until the\n"
    "duration ends, Ctrl-C or `vmp record --pid PID --stop`, then stop the\n"
    "agent, which closes the file; the JVM runs on.  Classes loaded, code\n"
    "compiled and threads started before the attach are all in the profile.\n"
    "Run it as the JVM's user or as root.  The JVM writes the file.\n"
    "\n"
    "options:\n";

static const char record_epilogue[] =
    "\n"
    "Exit status: the command's (128 + N when it died of signal N); 1 when the\n"
    "command could not be started or no agent was found; with --pid 0, or 1\n"
    "when the process is not a JVM, cannot be attached, is being recorded\n"
    "already, or exits during the recording; 2 usage error.\n";
static const vmp_cli_option record_options[] = {
    {NULL, 'o', "FILE", NULL,
     "write the profile to FILE (default: vmp-PID.vmp, PID\n"
     "being the command's or the JVM's process id)"},
    {"flush", OPT_FLUSH, "TIME", NULL,
     "write what was sampled to the file at least every TIME\n"
     "(10ms to 60s, default 1s): what a crash of the program\n"
     "loses at most"},
    {"file-mode", OPT_FILE_MODE, "MODE", NULL,
     "the profile's permission bits, in octal (default 600:\n"
     "profiles hold command lines, labels and symbol names;\n"
     "640 or 644 widen it)"},
    {"pid", OPT_PID, "PID", NULL, "record the running JVM PID instead of a command"},
    {"duration", OPT_DURATION, "TIME", NULL,
     "with --pid: stop after TIME (a number with unit ms, s,\n"
     "m or h; default: until Ctrl-C or --stop)"},
    {"stop", OPT_STOP, NULL, NULL, "with --pid: stop the JVM's recording now"},
    {"loop", OPT_LOOP, "TIME", NULL,
     "record continuously: a new complete file every TIME\n"
     "(100ms to 7 days), each readable alone, named FILE\n"
     "with a counter (vmp-PID-000001.vmp, ...); no sample is\n"
     "lost or written twice between two files"},
    {"keep", OPT_KEEP, "N", NULL, "with --loop: keep only the newest N files"},
    {"interval", OPT_INTERVAL, "TIME", NULL,
     "sampling interval: a number with unit ns, us, ms or s\n"
     "(default 1ms)"},
    {"mode", OPT_MODE, "MODE", NULL,
     "cpu: sample each thread per interval of its CPU time\n"
     "(default); wall: per interval of elapsed time"},
    {"sampler", OPT_SAMPLER, "S", NULL,
     "cpu mode's clock: auto (default: a perf_event cpu-clock\n"
     "per thread, the asked rate; POSIX CPU-time timers, at\n"
     "most one signal per scheduler tick, where the kernel\n"
     "refuses perf events), perf or posix; the header label\n"
     "'sampler' says which ran (vmp info)"},
    {"threads", OPT_THREADS, "T", NULL,
     "all: every thread of the process, the JVM's own (GC,\n"
     "JIT compilers, VM thread) and native ones by their\n"
     "kernel names; java: only Java threads (default: all\n"
     "in cpu mode, java in wall mode; with --pid always all)"},
    {"label", OPT_LABEL, "KEY=VALUE", NULL,
     "a label for the profile's header (repeatable: bench=sieve,\n"
     "commit=abc123); vmp info, report and pprof show them, and\n"
     "they replace the agent's own labels of the same key"},
    {"metadata", OPT_METADATA, "M", NULL,
     "used: the functions, symbols and code maps the samples\n"
     "need (default); all: every one the JVM describes"},
    {"depth", OPT_DEPTH, "N", NULL, "keep at most N frames per stack (1-2048, default 128)"},
    {"alloc", OPT_ALLOC, "SIZE", NULL,
     "also sample allocations, one every SIZE bytes on average\n"
     "(512k, as async-profiler and JFR; 1 to 1g): samples of\n"
     "kind alloc (format 2.1), weighing the bytes each stands\n"
     "for, the allocated class as their innermost frame;\n"
     "'vmp report --kind alloc' and 'vmp flame --kind alloc'\n"
     "show them (JDK 11 and later)"},
    {"live", OPT_LIVE, NULL, NULL,
     "with --alloc: also which sampled allocations are still\n"
     "reachable when the recording ends (after a garbage\n"
     "collection), as samples of kind live: the view of a\n"
     "memory leak ('vmp report --kind live')"},
    {"lock", OPT_LOCK, "TIME", NULL,
     "also record lock contention: every wait of at least\n"
     "TIME (10us, as async-profiler) to enter a contended\n"
     "monitor, as a sample of kind lock weighing the ns\n"
     "waited, the monitor's class innermost (synchronized;\n"
     "java.util.concurrent locks park, which JVMTI does not\n"
     "report)"},
    {"format", VMP_CLI_OPT_FORMAT_VERSION, "1.2|2.0", NULL,
     "the profile's format: 2.0 stores the samples column by\n"
     "column (spec.md §5.14), several times smaller, their\n"
     "times in us at intervals of 10us or more (the\n"
     "default); 1.2 is read by every version of vmp"},
    {"agent", OPT_AGENT, "PATH", NULL,
     "the agent library (default: libvmp-jvmti.so, or\n"
     "vmp_luajit.so for luajit, next to this program's\n"
     "installation, or in its build tree)"},
    VMP_CLI_OPTION_HELP,
};
static const vmp_cli_command record_command = {
    .name = "record",
    .synopsis = {record_synopsis},
    .options = record_options,
    .n_options = sizeof record_options / sizeof record_options[0],
    .epilogue = record_epilogue,
    .column = 20,
    .stop_at_operand = 1,
};

/* The agent's size syntax (alloc=, vmp_jvmti_parse_size()): 1 to 1g. */
static int valid_size(const char *s)
{
    uint64_t v;
    return vmp_jvmti_parse_size(&v, s) == 0 && v >= 1 && v <= (1u << 30);
}

/* The agents' duration syntax: digits, then nothing or ns/us/ms/s, into
 * `*ns` (may be NULL).  @return 1 when `s` is one. */
static int parse_agent_time(const char *s, uint64_t *ns)
{
    static const struct {
        const char *unit;
        uint64_t ns;
    } units[] = {{"", 1}, {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};

    size_t digits = strspn(s, "0123456789");
    if (digits == 0 || digits >= 12)
        return 0;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(s + digits, units[i].unit) == 0) {
            if (ns != NULL)
                *ns = strtoull(s, NULL, 10) * units[i].ns;
            return 1;
        }
    }
    return 0;
}

static int valid_interval(const char *s)
{
    return parse_agent_time(s, NULL);
}

/* Append `s` (n bytes) to `out` (at `*at`, size bytes) %XX-escaped where a
 * byte would break the agent option list or JAVA_TOOL_OPTIONS, or is the
 * label separator ':' (the agent decodes it, vmp_jvmti_opts.h).
 * @return 0, or -1 when it does not fit. */
static int append_escaped(char *out, size_t size, size_t *at, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int esc = c <= ' ' || c >= 0x7f || strchr(",\"'=:%\\", c) != NULL;
        if (*at + (esc ? 3 : 1) >= size)
            return -1;
        if (esc)
            *at += (size_t)snprintf(out + *at, size - *at, "%%%02X", c);
        else
            out[(*at)++] = (char)c;
    }
    out[*at] = '\0';
    return 0;
}

/* The agents' filemode= syntax: 1 to 4 octal digits, at most 0777. */
static int valid_file_mode(const char *s)
{
    size_t len = strlen(s);
    return len > 0 && len <= 4 && strspn(s, "01234567") == len && strtoul(s, NULL, 8) <= 0777;
}

/* Characters that would break the agent option list or JAVA_TOOL_OPTIONS. */
static int unsafe_for_agent(const char *s)
{
    return strpbrk(s, ", \t\n\"'=") != NULL;
}

static int readable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* 1 when a profile may be at `path`: a regular file, not reached through a
 * symlink (which the agents do not follow, vmp_writer_open()). */
static int profile_at(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The agents vmp record runs, each where an installation and the build tree
 * put it relative to bin/vmp and cli/vmp. */
enum {
    AGENT_JVMTI,
    AGENT_LUAJIT
};

static const char *const agent_paths[][3] = {
    [AGENT_JVMTI] = {"../" VMP_INSTALL_LIBDIR "/libvmp-jvmti.so", "../lib/libvmp-jvmti.so",
                     "../agents/jvmti/libvmp-jvmti.so"},
    [AGENT_LUAJIT] = {"../" VMP_INSTALL_LIBDIR "/lua/5.1/vmp_luajit.so",
                      "../lib/lua/5.1/vmp_luajit.so", "../agents/luajit/vmp_luajit.so"}};
static const char *const agent_names[] = {
    [AGENT_JVMTI] = "libvmp-jvmti.so", [AGENT_LUAJIT] = "vmp_luajit.so"};

/* 1 when COMMAND runs LuaJIT (its program is named luajit...). */
static int runs_luajit(const char *command)
{
    const char *base = strrchr(command, '/');
    return strncmp(base ? base + 1 : command, "luajit", 6) == 0;
}

/* Find agent `which` relative to this executable: installed
 * (<prefix>/bin/vmp -> <prefix>/<libdir>/) or in the build tree
 * (<build>/cli/vmp -> <build>/agents/). */
static int find_agent(int which, char *out, size_t size)
{
    const char *const *rel = agent_paths[which];
    char exe[PATH_MAX], cand[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash;
    size_t i;

    if (n <= 0)
        return -1;
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if (slash == NULL)
        return -1;
    *slash = '\0';
    for (i = 0; i < sizeof agent_paths[0] / sizeof agent_paths[0][0]; i++) {
        snprintf(cand, sizeof cand, "%s/%s", exe, rel[i]);
        if (readable(cand) && realpath(cand, out) != NULL && strlen(out) < size)
            return 0;
    }
    return -1;
}

/* Print the summary line from the profile's records. */
static void summarize(const char *path)
{
    vmp_reader *r = NULL;
    vmp_record rec;
    vmp_status st;
    uint64_t samples = 0, failed = 0, last = 0, kinds = 0;
    vmp_rec_end end;
    int have_end = 0;

    memset(&end, 0, sizeof end);
    if (vmp_reader_open_file(&r, path, NULL) < 0) {
        fprintf(stderr, "vmp record: no readable profile in %s: %s\n", path,
                r ? vmp_reader_errmsg(r) : "cannot open");
        vmp_reader_close(r);
        return;
    }
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        if (rec.type == VMP_REC_SAMPLE || rec.type == VMP_REC_FAILED_SAMPLE) {
            samples++;
            failed += rec.type == VMP_REC_FAILED_SAMPLE;
            if (rec.u.sample.time_ns > last)
                last = rec.u.sample.time_ns;
        } else if (rec.type == VMP_REC_KIND_SAMPLE) { /* spec §5.15: counted apart */
            kinds++;
        } else if (rec.type == VMP_REC_END) {
            end = rec.u.end;
            have_end = 1;
            if (end.time_ns > last)
                last = end.time_ns;
        }
    }
    fprintf(stderr, "vmp record: %s: %" PRIu64 " samples (%" PRIu64 " failed)", path, samples,
            failed);
    if (kinds)
        fprintf(stderr, ", %" PRIu64 " samples of other kinds ('vmp info' lists them)", kinds);
    if (have_end)
        fprintf(stderr, ", %" PRIu64 " dropped", end.dropped_full + end.dropped_write);
    fprintf(stderr, ", %.3f s%s\n", (double)last / 1e9,
            have_end ? "" : "; no END record: the profile is incomplete");
    if (st < 0)
        fprintf(stderr, "vmp record: %s\n", vmp_reader_errmsg(r));
    vmp_reader_close(r);
}

/* File `n` of a recording on `file`: `file` itself, or with `loop` its
 * numbered file (vmp_jvmti_loop_path()). */
static void recording_file(char *out, size_t size, const char *file, int loop, uint64_t n)
{
    if (!loop || vmp_jvmti_loop_path(out, size, file, n) != 0)
        snprintf(out, size, "%s", file);
}

/* The numbers of the first and last files of a loop on `file` that exist
 * (read from its directory).  @return 0, or -1 when there is none. */
static int loop_range(const char *file, uint64_t *first, uint64_t *last)
{
    char dir[PATH_MAX], probe[PATH_MAX];
    const char *slash = strrchr(file, '/');
    size_t stem_len, sfx_len;
    struct dirent *e;
    DIR *d;

    /* the name of file 0 gives the stem and the suffix around the number */
    if (vmp_jvmti_loop_path(probe, sizeof probe, slash ? slash + 1 : file, 0) != 0)
        return -1;
    stem_len = strlen(probe) - strlen(strstr(probe, "-000000")) + 1;
    sfx_len = strlen(probe) - stem_len - 6;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - file) + 1 : 1, slash ? file : ".");
    d = opendir(dir);
    if (d == NULL)
        return -1;
    *first = UINT64_MAX;
    *last = 0;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name), digits;
        uint64_t n;
        if (len < stem_len + 6 + sfx_len || strncmp(e->d_name, probe, stem_len) != 0 ||
            strcmp(e->d_name + len - sfx_len, probe + strlen(probe) - sfx_len) != 0)
            continue;
        digits = len - stem_len - sfx_len;
        if (digits > 12 || strspn(e->d_name + stem_len, "0123456789") != digits)
            continue;
        n = strtoull(e->d_name + stem_len, NULL, 10);
        *first = n < *first ? n : *first;
        *last = n > *last ? n : *last;
    }
    closedir(d);
    return *last > 0 ? 0 : -1;
}

/* The summary of each file of the recording (the last one when there are
 * many).  @return 1 when there was a file. */
static int summarize_recording(const char *file, int loop)
{
    char path[PATH_MAX];
    uint64_t first, last, n;

    if (!loop) {
        if (!profile_at(file))
            return 0;
        summarize(file);
        return 1;
    }
    if (loop_range(file, &first, &last) != 0)
        return 0;
    if (last - first >= 20) {
        fprintf(stderr, "vmp record: %" PRIu64 " files, numbers %" PRIu64 " to %" PRIu64 "\n",
                last - first + 1, first, last);
        first = last;
    }
    for (n = first; n <= last; n++) {
        recording_file(path, sizeof path, file, 1, n);
        if (profile_at(path))
            summarize(path);
    }
    return 1;
}

/* A duration: digits, then ms, s, m or h (none: s).  @return 0, or -1. */
static int parse_duration(const char *s, uint64_t *ms)
{
    static const struct {
        const char *unit;
        uint64_t ms;
    } units[] = {{"", 1000}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};

    size_t digits = strspn(s, "0123456789"), i;
    uint64_t n;

    if (digits == 0 || digits > 9)
        return -1;
    n = strtoull(s, NULL, 10);
    for (i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(s + digits, units[i].unit) == 0 && n > 0) {
            *ms = n * units[i].ms;
            return 0;
        }
    }
    return -1;
}

/* 1 while process `pid` runs (not gone, not a zombie). */
static int process_alive(pid_t pid)
{
    char path[64], buf[512], *close_paren;
    FILE *f;
    size_t n;

    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    close_paren = strrchr(buf, ')');
    return close_paren != NULL && close_paren[1] == ' ' && close_paren[2] != 'Z' &&
           close_paren[2] != 'X';
}

/* 1 while process `pid` holds `st`'s file open (the agent's writer), 0 when
 * not, -1 when its descriptors cannot be read. */
static int holds_file(pid_t pid, const struct stat *st)
{
    struct dirent *e;
    char dir[64], path[64 + sizeof e->d_name];
    DIR *d;
    int found = 0;

    snprintf(dir, sizeof dir, "/proc/%ld/fd", (long)pid);
    d = opendir(dir);
    if (d == NULL)
        return -1;
    while (!found && (e = readdir(d)) != NULL) {
        struct stat fst;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        found = stat(path, &fst) == 0 && fst.st_dev == st->st_dev && fst.st_ino == st->st_ino;
    }
    closedir(d);
    return found;
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* Send `options` to the agent in JVM `pid`.  @return the agent's code, or
 * -1 after saying why the attach failed. */
static int attach_agent(pid_t pid, const char *agent, const char *options)
{
    char msg[512];
    int rc = -1;

    if (vmp_attach_load(pid, agent, options, &rc, msg, sizeof msg) != 0) {
        vmp_cli_fail("record", "%s", msg);
        return -1;
    }
    return rc;
}

/* vmp record --pid: attach, wait, stop, summarize. */
static int record_pid(pid_t pid, const char *agent, const char *file, int loop, const char *options,
                      uint64_t duration_ms)
{
    struct timespec start, now;
    struct stat st;
    int rc, exited = 0, stopped_elsewhere = 0;
    char msg[512], path[PATH_MAX];
    uint64_t cur = 1; /* the loop's file being written */

    if (vmp_attach_check(pid, msg, sizeof msg) != 0)
        return vmp_cli_fail("record", "%s", msg);
    rc = attach_agent(pid, agent, options);
    if (rc < 0)
        return 1;
    switch (rc) {
    case VMP_JVMTI_ATTACH_OK:
        break;
    case VMP_JVMTI_ATTACH_BUSY:
        return vmp_cli_fail("record",
                            "process %ld is being recorded already (end that with vmp record "
                            "--pid %ld --stop)",
                            (long)pid, (long)pid);
    case VMP_JVMTI_ATTACH_NO_FILE:
        return vmp_cli_fail("record", "process %ld cannot create %s (its user must be able to)",
                            (long)pid, file);
    case VMP_JVMTI_ATTACH_NO_JVMTI:
        return vmp_cli_fail("record", "process %ld: the agent found no JVMTI or cannot sample",
                            (long)pid);
    default:
        return vmp_cli_fail("record", "process %ld: the agent failed (code %d)", (long)pid, rc);
    }
    recording_file(path, sizeof path, file, loop, cur);
    fprintf(stderr, "vmp record: recording process %ld into %s%s\n", (long)pid, path,
            loop ? " and the next files" : "");
    interrupted = 0;
    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        struct timespec tick = {0, 50000000};
        uint64_t elapsed_ms;

        nanosleep(&tick, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
        elapsed_ms = (uint64_t)(now.tv_sec - start.tv_sec) * 1000u +
                     (uint64_t)((now.tv_nsec - start.tv_nsec) / 1000000);
        if (!process_alive(pid)) {
            exited = 1;
            break;
        }
        if (interrupted || (duration_ms > 0 && elapsed_ms >= duration_ms))
            break;
        for (; loop; cur++) { /* the newest file */
            recording_file(path, sizeof path, file, loop, cur + 1);
            if (!profile_at(path))
                break;
        }
        recording_file(path, sizeof path, file, loop, cur);
        if (lstat(path, &st) == 0 && holds_file(pid, &st) == 0) {
            uint64_t first, last;
            /* numbers the agent could not open are skipped: a newer file
             * (opened before this one closed) goes on with the recording */
            if (loop && loop_range(file, &first, &last) == 0 && last > cur) {
                cur = last;
                continue;
            }
            /* closed by vmp record --pid PID --stop, or at the JVM's exit
             * (VMDeath), which ends the process soon after */
            for (int i = 0; i < 60 && process_alive(pid); i++)
                nanosleep(&tick, NULL);
            exited = !process_alive(pid);
            stopped_elsewhere = !exited;
            break;
        }
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (!exited && !stopped_elsewhere) {
        rc = attach_agent(pid, agent, VMP_JVMTI_STOP_OPTION);
        if (rc < 0 && !process_alive(pid))
            exited = 1;
        else if (rc < 0)
            return 1;
    }
    /* At the JVM's exit the agent closes the file, unless it was killed. */
    summarize_recording(file, loop);
    if (exited)
        return vmp_cli_fail("record", "process %ld exited during the recording", (long)pid);
    return 0;
}

/* vmp record --pid PID --stop */
static int stop_pid(pid_t pid, const char *agent)
{
    char msg[512];
    int rc;

    if (vmp_attach_check(pid, msg, sizeof msg) != 0)
        return vmp_cli_fail("record", "%s", msg);
    rc = attach_agent(pid, agent, VMP_JVMTI_STOP_OPTION);
    if (rc < 0)
        return 1;
    if (rc == VMP_JVMTI_ATTACH_IDLE)
        return vmp_cli_fail("record", "process %ld is not being recorded", (long)pid);
    if (rc != VMP_JVMTI_ATTACH_OK)
        return vmp_cli_fail("record", "process %ld: the agent failed (code %d)", (long)pid, rc);
    fprintf(stderr, "vmp record: process %ld: recording stopped\n", (long)pid);
    return 0;
}

/* The profile's path: `out`, else vmp-PID.vmp. */
static void output_file(char *file, size_t size, const char *out, pid_t pid)
{
    if (out != NULL)
        snprintf(file, size, "%s", out);
    else
        snprintf(file, size, "vmp-%ld.vmp", (long)pid);
}

/* The environment that makes every JVM the command starts load the agent:
 * "-agentpath:AGENT=file=FILE,OPTIONS" appended to JAVA_TOOL_OPTIONS.
 * @return 0, or -1. */
static int java_env(const char *agent, const char *file, const char *options)
{
    const char *old = getenv("JAVA_TOOL_OPTIONS");
    size_t len = (old ? strlen(old) : 0) + strlen(agent) + strlen(file) + strlen(options) + 32;
    char *opts = malloc(len);
    int ok;

    if (opts == NULL)
        return -1;
    snprintf(opts, len, "%s%s-agentpath:%s=file=%s,%s", old ? old : "", old && *old ? " " : "",
             agent, file, options);
    ok = setenv("JAVA_TOOL_OPTIONS", opts, 1) == 0;
    free(opts);
    return ok ? 0 : -1;
}

/* The environment that makes luajit load the agent (a Lua C module):
 * LUA_CPATH finds it, LUA_INIT requires it before the script (then runs the
 * user's LUA_INIT), VMP_LUAJIT_OPTIONS are its options.  @return 0, or -1. */
static int luajit_env(const char *agent, const char *file, const char *interval, unsigned major,
                      const char *file_mode, const char *flush)
{
    const char *cpath = getenv("LUA_CPATH"), *init = getenv("LUA_INIT");
    const char *slash = strrchr(agent, '/');
    size_t len = strlen(agent) + strlen(file) + strlen(interval) + strlen(file_mode) +
                 strlen(flush) + (cpath ? strlen(cpath) : 0) + (init ? strlen(init) : 0) + 64;
    char *buf = malloc(len);
    int ok;

    if (buf == NULL || slash == NULL)
        return -1;
    snprintf(buf, len, "%.*s/?.so;%s", (int)(slash - agent), agent, cpath ? cpath : ";");
    ok = setenv("LUA_CPATH", buf, 1) == 0;
    if (init != NULL && init[0] == '@')
        snprintf(buf, len, "require 'vmp_luajit' dofile [==[%s]==]", init + 1);
    else
        snprintf(buf, len, "require 'vmp_luajit' %s", init ? init : "");
    ok = ok && setenv("LUA_INIT", buf, 1) == 0;
    snprintf(buf, len, "file=%s,interval=%s,format=%s,filemode=%s,flush=%s", file, interval,
             major == 2 ? "2.0" : "1.2", file_mode, flush);
    ok = ok && setenv("VMP_LUAJIT_OPTIONS", buf, 1) == 0;
    free(buf);
    return ok ? 0 : -1;
}

int vmp_cmd_record(int argc, char **argv)
{
    vmp_cli_parser p;
    const char *given[OPT_COUNT - VMP_CLI_OPT_END] = {NULL}; /* by key: value, "" for a flag */
    const char *interval, *mode, *depth, *agent_opt, *sampler, *threads, *metadata, *pid_arg;
    const char *duration, *loop, *keep, *alloc, *lock, *file_mode, *flush;
    uint64_t flush_ns = 0;
    int stop, which, live, java_only = 0; /* java_only: a HotSpot option given */
    unsigned major = 2;                   /* --format */
    char opt_name[32];
    uint64_t duration_ms = 0, loop_ms = 0;
    char *tail; /* the agent's options but its file */
    size_t tail_len;
    char labels[4096] = ""; /* ",label=K:V" agent options, escaped */
    size_t labels_len = 0, n_labels = 0;
    char agent[PATH_MAX], file[PATH_MAX];
    int c, status = 0;
    pid_t pid = 0;

    vmp_cli_begin(&p, &record_command, argc, argv);
    while ((c = vmp_cli_next(&p)) > 0) {
        given[c - VMP_CLI_OPT_END] = p.arg ? p.arg : "";
        if (c >= OPT_MODE)
            java_only = c;
        if (c == OPT_LABEL) {
            const char *eq = strchr(p.arg, '=');
            if (eq == NULL || eq == p.arg)
                return vmp_cli_usage_error("record", "bad label '%s' (KEY=VALUE)", p.arg);
            if (++n_labels > 16)
                return vmp_cli_usage_error("record", "more than 16 labels");
            if (strlen(p.arg) >= 256 || labels_len + 8 >= sizeof labels)
                return vmp_cli_usage_error("record", "label '%s' is too long", p.arg);
            memcpy(labels + labels_len, ",label=", 8);
            labels_len += 7;
            if (append_escaped(labels, sizeof labels, &labels_len, p.arg, (size_t)(eq - p.arg)) !=
                    0 ||
                labels_len + 2 >= sizeof labels)
                return vmp_cli_usage_error("record", "labels are too long");
            labels[labels_len++] = ':';
            if (append_escaped(labels, sizeof labels, &labels_len, eq + 1, strlen(eq + 1)) != 0)
                return vmp_cli_usage_error("record", "labels are too long");
        }
    }
    if (c < 0)
        return p.exit;
    if (p.format_major)
        major = p.format_major;
#define GIVEN(key, otherwise) \
    (given[(key)-VMP_CLI_OPT_END] ? given[(key)-VMP_CLI_OPT_END] : (otherwise))
    interval = GIVEN(OPT_INTERVAL, "1ms");
    mode = GIVEN(OPT_MODE, "cpu");
    depth = GIVEN(OPT_DEPTH, "128");
    sampler = GIVEN(OPT_SAMPLER, "auto");
    threads = GIVEN(OPT_THREADS, NULL); /* NULL: the agent's default */
    metadata = GIVEN(OPT_METADATA, "used");
    agent_opt = GIVEN(OPT_AGENT, NULL);
    pid_arg = GIVEN(OPT_PID, NULL);
    duration = GIVEN(OPT_DURATION, NULL);
    loop = GIVEN(OPT_LOOP, NULL);
    keep = GIVEN(OPT_KEEP, NULL);
    alloc = GIVEN(OPT_ALLOC, NULL);
    lock = GIVEN(OPT_LOCK, NULL);
    file_mode = GIVEN(OPT_FILE_MODE, "600");
    flush = GIVEN(OPT_FLUSH, "1s");
    stop = GIVEN(OPT_STOP, NULL) != NULL;
    live = GIVEN(OPT_LIVE, NULL) != NULL;
#undef GIVEN
    if (pid_arg != NULL) {
        char *end;
        long v = strtol(pid_arg, &end, 10);
        if (*pid_arg == '\0' || *end != '\0' || v <= 0 || v > INT_MAX)
            return vmp_cli_usage_error("record", "bad process id '%s'", pid_arg);
        pid = (pid_t)v;
        if (optind < argc)
            return vmp_cli_usage_error("record", "--pid records a running JVM: no command");
        if (threads != NULL && strcmp(threads, "all") != 0)
            return vmp_cli_usage_error("record", "--pid samples every thread (--threads all)");
    } else if (stop || duration != NULL) {
        return vmp_cli_usage_error("record", "%s needs --pid", stop ? "--stop" : "--duration");
    } else if (optind >= argc) {
        return vmp_cli_usage_error("record", "no command to run (put it after --)");
    }
    if (duration != NULL && parse_duration(duration, &duration_ms) != 0)
        return vmp_cli_usage_error("record", "bad duration '%s' (e.g. 30s, 500ms, 5m)", duration);
    if (loop != NULL &&
        (parse_duration(loop, &loop_ms) != 0 || loop_ms < 100 || loop_ms > 7 * 24 * 3600 * 1000ull))
        return vmp_cli_usage_error("record", "bad loop period '%s' (100ms to 7 days, e.g. 60s)",
                                   loop);
    if (keep != NULL && loop == NULL)
        return vmp_cli_usage_error("record", "--keep needs --loop");
    if (keep != NULL && (strspn(keep, "0123456789") != strlen(keep) || strlen(keep) > 7 ||
                         atol(keep) < 1 || atol(keep) > 1000000))
        return vmp_cli_usage_error("record", "bad --keep '%s' (1 to 1000000)", keep);
    if (!valid_interval(interval))
        return vmp_cli_usage_error("record", "bad interval '%s' (e.g. 1ms, 100us)", interval);
    if (!parse_agent_time(flush, &flush_ns) || flush_ns < 10000000u || flush_ns > 60000000000u)
        return vmp_cli_usage_error("record", "bad flush period '%s' (10ms to 60s, e.g. 200ms)",
                                   flush);
    if (!valid_file_mode(file_mode))
        return vmp_cli_usage_error("record", "bad file mode '%s' (octal, at most 777: 600, 644)",
                                   file_mode);
    if (live && alloc == NULL)
        return vmp_cli_usage_error("record", "--live needs --alloc");
    if (lock != NULL && !valid_interval(lock))
        return vmp_cli_usage_error("record", "bad lock threshold '%s' (e.g. 10us, 1ms)", lock);
    if (alloc != NULL && !valid_size(alloc))
        return vmp_cli_usage_error("record", "bad allocation interval '%s' (1 to 1g, e.g. 512k)",
                                   alloc);
    if (strcmp(mode, "cpu") != 0 && strcmp(mode, "wall") != 0)
        return vmp_cli_usage_error("record", "bad mode '%s' (cpu or wall)", mode);
    if (strcmp(sampler, "auto") != 0 && strcmp(sampler, "perf") != 0 &&
        strcmp(sampler, "posix") != 0)
        return vmp_cli_usage_error("record", "bad sampler '%s' (auto, perf or posix)", sampler);
    if (threads != NULL && strcmp(threads, "all") != 0 && strcmp(threads, "java") != 0)
        return vmp_cli_usage_error("record", "bad threads '%s' (all or java)", threads);
    if (strcmp(metadata, "used") != 0 && strcmp(metadata, "all") != 0)
        return vmp_cli_usage_error("record", "bad metadata '%s' (used or all)", metadata);
    if (strspn(depth, "0123456789") != strlen(depth) || atoi(depth) < 1 || atoi(depth) > 2048 ||
        strlen(depth) > 4)
        return vmp_cli_usage_error("record", "bad depth '%s' (1 to 2048)", depth);
    if (p.output != NULL && (*p.output == '\0' || unsafe_for_agent(p.output)))
        return vmp_cli_usage_error("record",
                                   "output file '%s' must not contain spaces, "
                                   "quotes, '=' or ','",
                                   p.output);
    which = pid_arg == NULL && runs_luajit(argv[optind]) ? AGENT_LUAJIT : AGENT_JVMTI;
    if (which == AGENT_LUAJIT && java_only)
        return vmp_cli_usage_error(
            "record", "%s applies to java, not to luajit",
            vmp_cli_option_name(&record_command, java_only, opt_name, sizeof opt_name));
    if (agent_opt != NULL) {
        if (!readable(agent_opt) || realpath(agent_opt, agent) == NULL)
            return vmp_cli_fail("record", "agent %s: %s", agent_opt,
                                errno ? strerror(errno) : "not a file");
    } else if (find_agent(which, agent, sizeof agent) != 0) {
        return vmp_cli_fail("record", "cannot find %s; give its path with --agent",
                            agent_names[which]);
    }
    if (unsafe_for_agent(agent))
        return vmp_cli_fail("record", "agent path %s contains a space, quote, '=' or ','", agent);
    tail_len = strlen(interval) + strlen(mode) + strlen(depth) + strlen(sampler) +
               (threads ? strlen(threads) : 0) + strlen(metadata) + labels_len +
               (alloc ? strlen(alloc) : 0) + (lock ? strlen(lock) : 0) + strlen(flush) +
               strlen(file_mode) + 192;
    tail = malloc(tail_len);
    if (tail == NULL)
        return vmp_cli_fail("record", "out of memory");
    snprintf(
        tail, tail_len,
        "interval=%s,mode=%s,depth=%s,sampler=%s,metadata=%s,format=%s,filemode=%s,flush=%s%s%s%s",
        interval, mode, depth, sampler, metadata, major == 2 ? "2.0" : "1.2", file_mode, flush,
        threads ? ",threads=" : "", threads ? threads : "", labels);
    if (alloc != NULL)
        snprintf(tail + strlen(tail), tail_len - strlen(tail), ",alloc=%s", alloc);
    if (lock != NULL)
        snprintf(tail + strlen(tail), tail_len - strlen(tail), ",lock=%s", lock);
    if (live)
        snprintf(tail + strlen(tail), tail_len - strlen(tail), ",live=on");
    if (loop_ms > 0)
        snprintf(tail + strlen(tail), tail_len - strlen(tail), ",loop=%" PRIu64 "ms%s%s", loop_ms,
                 keep ? ",keep=" : "", keep ? keep : "");
    if (pid_arg != NULL) {
        char cwd[PATH_MAX], *opts;
        size_t len;
        int ret;

        if (stop) {
            free(tail);
            return stop_pid(pid, agent);
        }
        /* the JVM opens the file from its own working directory */
        char name[64];
        int n = -1;
        output_file(name, sizeof name, NULL, pid);
        if (p.output != NULL && p.output[0] == '/')
            n = snprintf(file, sizeof file, "%s", p.output);
        else if (getcwd(cwd, sizeof cwd) != NULL && !unsafe_for_agent(cwd))
            n = snprintf(file, sizeof file, "%s/%s", cwd, p.output != NULL ? p.output : name);
        if (n < 0 || (size_t)n >= sizeof file) {
            free(tail);
            return vmp_cli_fail("record", "give -o an absolute path without spaces, quotes or ','");
        }
        len = strlen(file) + strlen(tail) + 16;
        opts = malloc(len);
        if (opts == NULL) {
            free(tail);
            return vmp_cli_fail("record", "out of memory");
        }
        snprintf(opts, len, "file=%s,%s", file, tail);
        ret = record_pid(pid, agent, file, loop_ms > 0, opts, duration_ms);
        free(opts);
        free(tail);
        return ret;
    }

    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        free(tail);
        return vmp_cli_fail("record", "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        output_file(file, sizeof file, p.output, getpid());
        if ((which == AGENT_LUAJIT ? luajit_env(agent, file, interval, major, file_mode, flush)
                                   : java_env(agent, file, tail)) != 0)
            _exit(126);
        execvp(argv[optind], argv + optind);
        fprintf(stderr, "vmp record: cannot run %s: %s\n", argv[optind], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    free(tail);
    output_file(file, sizeof file, p.output, pid);
    /* Ctrl-C reaches the JVM too, which exits cleanly and closes the profile;
     * stay alive to report on it. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return vmp_cli_fail("record", "waitpid: %s", strerror(errno));
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    if (!summarize_recording(file, loop_ms > 0)) {
        if (WIFEXITED(status) && WEXITSTATUS(status) >= 126)
            return WEXITSTATUS(status);
        struct stat st;
        if (lstat(file, &st) == 0 && S_ISLNK(st.st_mode))
            fprintf(stderr, "vmp record: no profile was written to %s: a symbolic link is there\n",
                    file);
        else
            fprintf(stderr, "vmp record: no profile was written to %s (was the command a JVM?)\n",
                    file);
    }
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}
