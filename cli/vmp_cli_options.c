/* SPDX-License-Identifier: MIT
 *
 * vmp_cli_options.c - the commands' option tables: parsing them with
 * getopt_long(), their usage errors and the --help pages written from them
 * (tool conventions, see vmp_cli.h).
 */
#include <string.h>

#include "vmp_cli.h"
#include "vmp_convert.h"

/* How `o` is spelled in help: "-c, --name ARG", "-c ARG" or "--name ARG". */
static void spell(char *buf, size_t size, const vmp_cli_option *o)
{
    const char *sep = o->arg ? " " : "", *arg = o->arg ? o->arg : "";
    if (o->spec)
        snprintf(buf, size, "%s", o->spec);
    else if (o->key < 256 && o->name)
        snprintf(buf, size, "-%c, --%s%s%s", o->key, o->name, sep, arg);
    else if (o->key < 256)
        snprintf(buf, size, "-%c%s%s", o->key, sep, arg);
    else
        snprintf(buf, size, "--%s%s%s", o->name, sep, arg);
}

void vmp_cli_write_help(FILE *f, const vmp_cli_command *cmd)
{
    const vmp_cli_option *o;
    size_t i;
    if (cmd->help_page)
        cmd = cmd->help_page;
    for (i = 0; i < 2; i++)
        if (cmd->synopsis[i])
            fputs(cmd->synopsis[i], f);
    if (cmd->write_more)
        cmd->write_more(f);
    for (o = cmd->options; o < cmd->options + cmd->n_options; o++) {
        char head[128];
        const char *line, *nl;
        int n;
        if (!o->help)
            continue;
        if (!o->key && !o->spec) { /* free text */
            fputs(o->help, f);
            continue;
        }
        spell(head, sizeof head, o);
        n = fprintf(f, "  %s", head);
        if (n < cmd->column)
            fprintf(f, "%*s", cmd->column - n, "");
        else
            fprintf(f, "\n%*s", cmd->column, "");
        for (line = o->help;; line = nl + 1) {
            nl = strchr(line, '\n');
            if (line != o->help)
                fprintf(f, "%*s", cmd->column, "");
            fprintf(f, "%.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
            if (!nl)
                break;
        }
    }
    if (cmd->epilogue)
        fputs(cmd->epilogue, f);
}

int vmp_cli_print_help(const vmp_cli_command *cmd)
{
    vmp_cli_write_help(stdout, cmd);
    return fflush(stdout) == 0 ? VMP_EXIT_OK : VMP_EXIT_FAIL;
}

void vmp_cli_begin(vmp_cli_parser *p, const vmp_cli_command *cmd, int argc, char **argv)
{
    const vmp_cli_option *o;
    size_t n = 0, k = 0;

    memset(p, 0, sizeof *p);
    p->cmd = cmd;
    p->argc = argc;
    p->argv = argv;
    if (cmd->stop_at_operand)
        p->shortopts[k++] = '+';
    p->shortopts[k++] = ':'; /* a missing value is ':', not '?' */
    for (o = cmd->options; o < cmd->options + cmd->n_options; o++) {
        if (!o->key)
            continue;
        if (n == VMP_CLI_MAX_OPTIONS) { /* a table too long: caught by any test */
            p->exit = -1;
            break;
        }
        if (o->name) {
            p->longopts[n].name = o->name;
            p->longopts[n].has_arg = o->arg ? required_argument : no_argument;
            p->longopts[n].val = o->key;
            n++;
        }
        if (o->key < 256) {
            p->shortopts[k++] = (char)o->key;
            if (o->arg)
                p->shortopts[k++] = ':';
        }
    }
    optind = 0; /* glibc: 0 re-initialises getopt completely */
    opterr = 0;
}

/* Print the usage error for the option getopt_long() just rejected. */
static int bad_option(vmp_cli_parser *p, int c)
{
    const char *name = p->cmd->name;
    const char *arg = (optind > 0 && optind <= p->argc) ? p->argv[optind - 1] : "";
    /* getopt_long() sets optopt to a long option's value, which is no
     * character for the long-only options (values from 256): name those by
     * the word on the command line. */
    int short_opt = optopt > 0 && optopt < 256;
    if (c == ':') {
        if (short_opt)
            return vmp_cli_usage_error(name, "option '-%c' needs a value", optopt);
        return vmp_cli_usage_error(name, "option '%s' needs a value", arg);
    }
    if (optopt != 0 && strncmp(arg, "--", 2) == 0 && strchr(arg, '=')) /* --stats=1 */
        return vmp_cli_usage_error(name, "option '%.*s' takes no value", (int)strcspn(arg, "="),
                                   arg);
    if (short_opt)
        return vmp_cli_usage_error(name, "unknown option '-%c'", optopt);
    return vmp_cli_usage_error(name, "unknown option '%s'", arg);
}

int vmp_cli_next(vmp_cli_parser *p)
{
    int c;
    if (p->exit < 0) {
        p->exit = vmp_cli_fail(p->cmd->name, "too many options in the command's table");
        return -1;
    }
    for (;;) {
        c = getopt_long(p->argc, p->argv, p->shortopts, p->longopts, NULL);
        if (c == 'o')
            p->output = optarg;
        else if (c == VMP_CLI_OPT_STATS)
            p->stats = 1;
        else if (c == VMP_CLI_OPT_FORMAT_VERSION) {
            if (vmp_cli_format_option(p->cmd->name, optarg, &p->format_major) != VMP_EXIT_OK) {
                p->exit = VMP_EXIT_USAGE;
                return -1;
            }
        } else if (c == VMP_CLI_OPT_NO_GROUP_HIDDEN)
            vmp_analysis_add_default_flags(VMP_ANALYSIS_NO_GROUP_HIDDEN);
        else if (c == VMP_CLI_OPT_KIND) /* spec §5.15: the samples of one kind */
            vmp_analysis_set_default_kind(optarg);
        else
            break;
    }
    p->arg = optarg;
    if (c == -1)
        return 0;
    if (c == 'h') {
        p->exit = vmp_cli_print_help(p->cmd);
        return -1;
    }
    if (c == '?' || c == ':') {
        p->exit = bad_option(p, c);
        return -1;
    }
    return c;
}

const char *vmp_cli_option_name(const vmp_cli_command *cmd, int key, char *buf, size_t size)
{
    const vmp_cli_option *o;
    for (o = cmd->options; o < cmd->options + cmd->n_options; o++) {
        if (o->key != key)
            continue;
        if (o->name)
            snprintf(buf, size, "--%s", o->name);
        else
            snprintf(buf, size, "-%c", key);
        return buf;
    }
    return "?";
}

int vmp_cli_file_operand(vmp_cli_parser *p, int c, const char **path)
{
    if (c < 0)
        return p->exit;
    if (optind >= p->argc)
        return vmp_cli_usage_error(p->cmd->name, "missing FILE");
    if (p->argc - optind > 1)
        return vmp_cli_usage_error(p->cmd->name, "too many arguments ('%s')", p->argv[optind + 1]);
    *path = p->argv[optind];
    return -1;
}
