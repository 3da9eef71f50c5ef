/* SPDX-License-Identifier: MIT
 *
 * vmp_main.c - entry point of the `vmp` command: dispatches
 * `vmp <command> [args]` through the command table (tools for spec.md files).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_analyze.h"
#include "vmp_cli.h"

#ifndef VMP_VERSION_STRING
#    define VMP_VERSION_STRING "unknown"
#endif

typedef struct vmp_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} vmp_command;

/* One line per command; keep sorted by name. */
static const vmp_command commands[] = {
    {"archive", "index many profiles in an SQLite database: add, ls, diff by label",
     vmp_cmd_archive},
    {"decode", "print every record of a profile, one per line (text or JSON Lines)",
     vmp_cmd_decode},
    {"diff", "compare two profiles per function, or as a differential flame graph", vmp_cmd_diff},
    {"filter", "keep the samples of a profile by thread, state, time, function, generation",
     vmp_cmd_filter},
    {"flame", "folded stacks or an interactive SVG flame graph of a profile", vmp_cmd_flame},
    {"import", "convert a pprof profile (.pb.gz or .pb) into a vmp profile", vmp_cmd_import},
    {"info", "summarize a profile: producer, VM, threads, code, samples, status", vmp_cmd_info},
    {"merge", "merge profiles of different processes and runs into one", vmp_cmd_merge},
    {"pprof", "convert a profile to pprof (gzip'd profile.proto) for go tool pprof", vmp_cmd_pprof},
    {"recompress", "copy a profile with every chunk compressed again at another zstd level",
     vmp_cmd_recompress},
    {"record", "run a java command with the HotSpot agent and write a profile", vmp_cmd_record},
    {"report", "VMProfiler-style report: time per method, bytecode range, C function, state",
     vmp_cmd_report},
    {"speedscope", "convert a profile to speedscope's JSON file format (one profile per thread)",
     vmp_cmd_speedscope},
    {"validate", "check a profile against every rule of the format specification",
     vmp_cmd_validate},
};

static void usage(FILE *f)
{
    size_t i;
    fprintf(f, "usage: vmp [--limit NAME=N]... <command> [options] [args]\n"
               "       vmp --help | --version\n"
               "\n"
               "commands:\n");
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n"
               "Every command takes --help.  An input file '-' is standard input;\n"
               "'-o FILE' writes the output to FILE ('-o -' to standard output).\n"
               "Exit status: 0 success, 1 failure (unreadable or invalid input,\n"
               "write error, a limit reached), 2 usage error.\n"
               "\n"
               "--limit NAME=N bounds what the analysis of a profile retains, so that a\n"
               "hostile or runaway file stops with a one-line error instead of taking\n"
               "the machine's memory (the defaults fit a laptop):\n"
               "  history=N      code placements: code objects and their moves (16Mi)\n"
               "  symbols=N      module symbols (2Mi)\n"
               "  stack-nodes=N  STACK_NODE records (2Mi)\n"
               "  stacks=N       distinct resolved stacks (2Mi)\n"
               "  depth=N        frames kept per stack; deeper stacks keep their\n"
               "                 innermost frames under '[truncated N frames]' (65536)\n"
               "N takes a K, M or G suffix (powers of 1024).\n");
}

/* "--limit NAME=N": set one process-wide analysis default; 0 on success. */
static int take_limit(vmp_analysis_options *o, const char *arg)
{
    static const char *const names[] = {"history", "symbols", "stack-nodes", "stacks", "depth"};
    uint64_t *const fields[] = {&o->max_code_history, &o->max_symbols, &o->max_stack_nodes,
                                &o->max_stacks, &o->max_stack_depth};
    const char *eq = strchr(arg, '=');
    char *end;
    unsigned long long v;
    size_t i;
    if (!eq)
        return -1;
    errno = 0;
    v = strtoull(eq + 1, &end, 10);
    if (errno || end == eq + 1 || eq[1] == '-')
        return -1;
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    else if (*end == 'G' || *end == 'g')
        v <<= 30, end++;
    if (*end || v == 0)
        return -1;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strlen(names[i]) == (size_t)(eq - arg) &&
            strncmp(arg, names[i], (size_t)(eq - arg)) == 0) {
            if (fields[i] == &o->max_stack_depth && v < 2)
                return -1;
            *fields[i] = v;
            return 0;
        }
    }
    return -1;
}

int main(int argc, char **argv)
{
    vmp_analysis_options limits = VMP_ANALYSIS_OPTIONS_INIT;
    size_t i;
    while (argc > 2 && strncmp(argv[1], "--limit", 7) == 0) {
        const char *arg = argv[1][7] == '=' ? argv[1] + 8 : argv[1][7] ? NULL : argv[2];
        if (!arg || take_limit(&limits, arg) != 0) {
            fprintf(stderr,
                    "vmp: bad --limit '%s' (NAME=N; NAME: history, symbols, "
                    "stack-nodes, stacks, depth)\ntry 'vmp --help'\n",
                    arg ? arg : argv[1]);
            return VMP_EXIT_USAGE;
        }
        vmp_analysis_set_defaults(&limits);
        {
            int step = argv[1][7] ? 1 : 2;
            argc -= step;
            argv += step;
        }
    }
    if (argc < 2) {
        usage(stderr);
        return VMP_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        if (argc > 2 && strcmp(argv[1], "help") == 0) {
            for (i = 0; i < sizeof commands / sizeof commands[0]; i++) {
                if (strcmp(argv[2], commands[i].name) == 0) {
                    char *help_argv[] = {argv[2], "--help", NULL};
                    return commands[i].run(2, help_argv);
                }
            }
            fprintf(stderr, "vmp: unknown command '%s'\ntry 'vmp --help'\n", argv[2]);
            return VMP_EXIT_USAGE;
        }
        usage(stdout);
        return fflush(stdout) == 0 ? VMP_EXIT_OK : VMP_EXIT_FAIL;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("vmp %s (file format %d.%d; reads 1.x and %d.0)\n", VMP_VERSION_STRING,
               VMP_FORMAT_MAJOR, VMP_FORMAT_MINOR, VMP_FORMAT_MAJOR_MAX);
        return fflush(stdout) == 0 ? VMP_EXIT_OK : VMP_EXIT_FAIL;
    }
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    }
    if (argv[1][0] == '-')
        fprintf(stderr, "vmp: unknown option '%s'\ntry 'vmp --help'\n", argv[1]);
    else
        fprintf(stderr, "vmp: unknown command '%s'\ntry 'vmp --help'\n", argv[1]);
    return VMP_EXIT_USAGE;
}
