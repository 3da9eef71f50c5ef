/* SPDX-License-Identifier: MIT
 *
 * vmp_cli.c - helpers shared by the `vmp` commands: operands, usage errors, opening
 * inputs and outputs, write-error detection, string quoting (no spec section:
 * tool conventions, see vmp_cli.h).
 */
#include "vmp_cli.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "vmp_convert.h"

/* "vmp CMD: <message>" on stderr, without the newline. */
static void say(const char *cmd, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static void say(const char *cmd, const char *fmt, va_list ap)
{
    fprintf(stderr, "vmp %s: ", cmd);
    vfprintf(stderr, fmt, ap);
}

int vmp_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(cmd, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\ntry 'vmp %s --help'\n", cmd);
    return VMP_EXIT_USAGE;
}

int vmp_cli_fail(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(cmd, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return VMP_EXIT_FAIL;
}

int vmp_cli_open_reader(vmp_reader **out, const char *cmd, const char *path)
{
    vmp_reader *r = NULL;
    vmp_status st = vmp_reader_open_file(&r, path, NULL);
    *out = NULL;
    if (st < 0) {
        const char *msg = r ? vmp_reader_errmsg(r) : "";
        if (msg[0])
            vmp_cli_fail(cmd, "%s", msg);
        else
            vmp_cli_fail(cmd, "%s: %s", path, vmp_status_str(st));
        vmp_reader_close(r);
        return VMP_EXIT_FAIL;
    }
    *out = r;
    return VMP_EXIT_OK;
}

int vmp_cli_output_open(vmp_cli_output *out, const char *cmd, const char *path)
{
    if (!path || strcmp(path, "-") == 0) {
        out->f = stdout;
        out->name = "standard output";
        out->is_stdout = 1;
        return VMP_EXIT_OK;
    }
    out->f = fopen(path, "w");
    out->name = path;
    out->is_stdout = 0;
    if (!out->f)
        return vmp_cli_fail(cmd, "%s: cannot create: %s", path, strerror(errno));
    return VMP_EXIT_OK;
}

int vmp_cli_output_close(vmp_cli_output *out, const char *cmd)
{
    int failed = 0, err = 0;
    if (!out->f)
        return VMP_EXIT_OK;
    if (fflush(out->f) != 0) {
        failed = 1;
        err = errno;
    }
    if (ferror(out->f) && !failed) {
        failed = 1;
        err = errno ? errno : EIO;
    }
    if (out->is_stdout) {
        /* Keep fd 1 open (atexit handlers may still print) but make sure the
         * data reached the kernel: fflush above did that for stdio. */
    } else if (fclose(out->f) != 0 && !failed) {
        failed = 1;
        err = errno;
    }
    out->f = NULL;
    if (failed)
        return vmp_cli_fail(cmd, "%s: write error: %s", out->name, strerror(err ? err : EIO));
    return VMP_EXIT_OK;
}

int vmp_cli_open_io(vmp_reader **r, vmp_cli_output *out, const char *cmd, const char *path,
                    const char *outpath)
{
    int rc;
    if (vmp_cli_open_reader(r, cmd, path) != VMP_EXIT_OK)
        return VMP_EXIT_FAIL;
    rc = vmp_cli_output_open(out, cmd, outpath);
    if (rc != VMP_EXIT_OK) {
        vmp_reader_close(*r);
        *r = NULL;
    }
    return rc;
}

int vmp_cli_output_finish(vmp_cli_output *out, const char *cmd, const char *outpath, vmp_status st,
                          const char *err)
{
    if (st >= 0)
        return vmp_cli_output_close(out, cmd);
    if (st == VMP_ERR_IO)
        vmp_cli_fail(cmd, "%s: %s", out->name, err);
    else
        vmp_cli_fail(cmd, "%s", err);
    vmp_cli_output_abandon(out, outpath);
    return VMP_EXIT_FAIL;
}

int vmp_cli_convert(const char *cmd, const char *path, const char *outpath,
                    vmp_cli_converter convert, const void *opts, vmp_convert_stats *stats)
{
    vmp_cli_output out;
    vmp_reader *r;
    vmp_status st;
    char err[512];

    if (vmp_cli_open_io(&r, &out, cmd, path, outpath) != VMP_EXIT_OK)
        return VMP_EXIT_FAIL;
    memset(stats, 0, sizeof *stats);
    st = convert(r, out.f, opts, stats, err, sizeof err);
    vmp_reader_close(r);
    return vmp_cli_output_finish(&out, cmd, outpath, st, err);
}

int vmp_cli_open_writer(vmp_record_writer **w, const char *cmd, const char *path, unsigned major,
                        unsigned minor)
{
    vmp_record_writer_options o = VMP_RECORD_WRITER_OPTIONS_INIT;
    o.min_minor = minor;
    o.format_major = major;
    vmp_status st = vmp_record_writer_open_file(w, path, &o);
    if (st >= 0)
        return VMP_EXIT_OK;
    vmp_cli_fail(cmd, "%s", *w ? vmp_record_writer_errmsg(*w) : "out of memory");
    vmp_record_writer_close(*w);
    *w = NULL;
    return VMP_EXIT_FAIL;
}

int vmp_cli_format_option(const char *cmd, const char *arg, unsigned *major)
{
    if (strcmp(arg, "1.2") == 0)
        *major = 1;
    else if (strcmp(arg, "2.0") == 0)
        *major = 2;
    else
        return vmp_cli_usage_error(cmd, "--format: expected 1.2 or 2.0, got '%s'", arg);
    return VMP_EXIT_OK;
}

int vmp_cli_flame_option(const char *cmd, int key, const char *arg, struct vmp_flame_options *fo,
                         struct vmp_flame_svg_options *so)
{
    double px;
    switch (key) {
    case VMP_CLI_OPT_THREAD_ROOT:
        fo->flags |= VMP_FLAME_THREAD_ROOT;
        break;
    case VMP_CLI_OPT_STATE:
        fo->flags |= VMP_FLAME_STATE;
        break;
    case VMP_CLI_OPT_UNITS:
        fo->flags |= VMP_FLAME_UNITS;
        break;
    case VMP_CLI_OPT_TIERS:
        fo->flags |= VMP_FLAME_TIERS;
        break;
    case VMP_CLI_OPT_VM_FRAMES:
        fo->flags |= VMP_FLAME_VM_FRAMES;
        break;
    case VMP_CLI_OPT_TITLE:
        so->title = arg;
        break;
    case VMP_CLI_OPT_ICICLE:
        so->icicle = 1;
        break;
    case VMP_CLI_OPT_WIDTH:
        if (vmp_cli_parse_px(cmd, "--width", arg, 200, 100000, &px))
            return VMP_EXIT_USAGE;
        so->width = (unsigned int)px;
        break;
    case VMP_CLI_OPT_MIN_WIDTH:
        if (vmp_cli_parse_px(cmd, "--min-width", arg, 0.01, 1000, &px))
            return VMP_EXIT_USAGE;
        so->min_width = px;
        break;
    default:
        return vmp_cli_usage_error(cmd, "option %d is not handled", key);
    }
    return VMP_EXIT_OK;
}

int vmp_cli_flame_finish(vmp_cli_output *out, const char *cmd, vmp_status st)
{
    if (st == VMP_ERR_NOMEM) {
        vmp_cli_output_close(out, cmd);
        return vmp_cli_fail(cmd, "out of memory");
    }
    return vmp_cli_output_close(out, cmd);
}

void vmp_cli_remove_partial(const char *path)
{
    struct stat st;
    if (path && strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode))
        remove(path);
}

void vmp_cli_output_abandon(vmp_cli_output *out, const char *path)
{
    if (!out->f)
        return;
    if (out->is_stdout) {
        fflush(out->f);
    } else {
        fclose(out->f);
        vmp_cli_remove_partial(path);
    }
    out->f = NULL;
}
