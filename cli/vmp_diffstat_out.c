/* SPDX-License-Identifier: MIT
 *
 * vmp_diffstat_out.c - print a repeated-run comparison (vmp_diffstat(),
 * convert/vmp_convert.h) as text, CSV or JSON: shared by `vmp diff BASE...
 * -- NEW...` and `vmp archive diff`.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_cli.h"
#include "vmp_convert.h"

/* Percentage points, never "-0.000". */
static double pp(double share)
{
    double v = 100.0 * share;
    return fabs(v) < 0.0005 ? 0.0 : v;
}

static void json_names(FILE *f, const char *const *names, size_t n)
{
    size_t i;
    fputc('[', f);
    for (i = 0; i < n; i++) {
        if (i)
            fputc(',', f);
        vmp_put_json_string(f, names[i], strlen(names[i]));
    }
    fputc(']', f);
}

int vmp_cli_parse_alpha(const char *cmd, const char *arg, double *out)
{
    char *end;
    *out = strtod(arg, &end);
    if (*end || end == arg || !(*out > 0 && *out < 1))
        return vmp_cli_usage_error(cmd, "bad --alpha '%s' (a number between 0 and 1)", arg);
    return VMP_EXIT_OK;
}

void vmp_cli_diffstat_print(FILE *f, const vmp_diffstat_row *rows, size_t n,
                            const char *const *base, size_t n_base, const char *const *new_runs,
                            size_t n_new, double alpha, int format)
{
    size_t i, sig = 0;
    const int noise_known = n_base >= 2 && n_new >= 2;

    for (i = 0; i < n; i++)
        sig += rows[i].significant != 0;
    if (format == VMP_CLI_DIFFSTAT_CSV) {
        fputs("function,significant,self_base_pct,self_new_pct,d_self_pp,d_self_lo_pp,"
              "d_self_hi_pp,p_self,q_self,total_base_pct,total_new_pct,d_total_pp,"
              "d_total_lo_pp,d_total_hi_pp,p_total,q_total\n",
              f);
        for (i = 0; i < n; i++) {
            const vmp_diffstat_row *r = &rows[i];
            vmp_put_csv_field(f, r->name);
            fprintf(
                f, ",%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.3g,%.3g,%.4f,%.4f,%.4f,%.4f,%.4f,%.3g,%.3g\n",
                r->significant != 0, pp(r->self[0]), pp(r->self[1]), pp(r->d_self), pp(r->self_lo),
                pp(r->self_hi), r->p_self, r->q_self, pp(r->total[0]), pp(r->total[1]),
                pp(r->d_total), pp(r->total_lo), pp(r->total_hi), r->p_total, r->q_total);
        }
        return;
    }
    if (format == VMP_CLI_DIFFSTAT_JSON) {
        fprintf(f, "{\"alpha\":%g,\"base\":", alpha);
        json_names(f, base, n_base);
        fputs(",\"new\":", f);
        json_names(f, new_runs, n_new);
        fprintf(f, ",\"noise\":\"%s\",\"tests\":%zu,\"significant\":%zu,\"functions\":[",
                noise_known ? "runs" : "sampling", 2 * n, sig);
        for (i = 0; i < n; i++) {
            const vmp_diffstat_row *r = &rows[i];
            fputs(i ? ",\n{\"function\":" : "\n{\"function\":", f);
            vmp_put_json_string(f, r->name, strlen(r->name));
            fprintf(f,
                    ",\"significant\":%s,\"self_base_pct\":%.4f,\"self_new_pct\":%.4f,"
                    "\"d_self_pp\":%.4f,\"d_self_ci_pp\":[%.4f,%.4f],\"p_self\":%.3g,"
                    "\"q_self\":%.3g,\"total_base_pct\":%.4f,\"total_new_pct\":%.4f,"
                    "\"d_total_pp\":%.4f,\"d_total_ci_pp\":[%.4f,%.4f],\"p_total\":%.3g,"
                    "\"q_total\":%.3g}",
                    r->significant ? "true" : "false", pp(r->self[0]), pp(r->self[1]),
                    pp(r->d_self), pp(r->self_lo), pp(r->self_hi), r->p_self, r->q_self,
                    pp(r->total[0]), pp(r->total[1]), pp(r->d_total), pp(r->total_lo),
                    pp(r->total_hi), r->p_total, r->q_total);
        }
        fputs("]}\n", f);
        return;
    }
    fprintf(f, "# base: %zu run%s (%s%s)\n# new:  %zu run%s (%s%s)\n", n_base,
            n_base == 1 ? "" : "s", base[0], n_base > 1 ? ", ..." : "", n_new,
            n_new == 1 ? "" : "s", new_runs[0], n_new > 1 ? ", ..." : "");
    if (noise_known)
        fputs("# noise: between-run spread of each side's runs, at least the sampling noise\n", f);
    else
        fputs("# noise: run-to-run noise is unknown (one run on a side): sampling noise alone,\n"
              "#        which understates the real uncertainty; give several runs per side\n",
              f);
    fprintf(f,
            "# alpha %g after Benjamini-Hochberg over %zu tests (self and total of %zu "
            "functions): %zu significant\n",
            alpha, 2 * n, n, sig);
    fprintf(f, "# %3s %8s %19s %8s %19s %7s %7s %7s %7s %8s %8s  %s\n", "sig", "d_self", "interval",
            "d_total", "interval", "self_b", "self_n", "total_b", "total_n", "q_self", "q_total",
            "function");
    for (i = 0; i < n; i++) {
        const vmp_diffstat_row *r = &rows[i];
        fprintf(f,
                "%5s %+8.3f [%+8.3f,%+8.3f] %+8.3f [%+8.3f,%+8.3f] %7.3f %7.3f %7.3f %7.3f "
                "%8.2g %8.2g  %s\n",
                r->significant == 3   ? "**"
                : r->significant == 1 ? "*s"
                : r->significant == 2 ? "*t"
                                      : "",
                pp(r->d_self), pp(r->self_lo), pp(r->self_hi), pp(r->d_total), pp(r->total_lo),
                pp(r->total_hi), pp(r->self[0]), pp(r->self[1]), pp(r->total[0]), pp(r->total[1]),
                r->q_self, r->q_total, r->name);
    }
}
