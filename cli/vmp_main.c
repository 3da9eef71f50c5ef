/* SPDX-License-Identifier: MIT
 *
 * vmp_main.c - entry point of the `vmp` command: dispatches
 * `vmp <command> [args]` through the command table (tools for spec.md files).
 */
#include <stdio.h>
#include <string.h>

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
    fprintf(f, "usage: vmp <command> [options] [args]\n"
               "       vmp --help | --version\n"
               "\n"
               "commands:\n");
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n"
               "Every command takes --help.  An input file '-' is standard input;\n"
               "'-o FILE' writes the output to FILE ('-o -' to standard output).\n"
               "Exit status: 0 success, 1 failure (unreadable or invalid input,\n"
               "write error), 2 usage error.\n");
}

int main(int argc, char **argv)
{
    size_t i;
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
        printf("vmp %s (file format %d.%d)\n", VMP_VERSION_STRING, VMP_FORMAT_MAJOR,
               VMP_FORMAT_MINOR);
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
