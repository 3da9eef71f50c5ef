#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# diff_honesty.py - statistical honesty of `vmp diff BASE... -- NEW...` on
# simulated runs (vmp-simvm --run-seed, --slow):
#   A/A: N comparisons of 5 vs 5 runs of one program, every run with its own
#        seed: the share of comparisons that report any significant function
#        must stay near alpha (BH controls the family-wise rate when nothing
#        changed); printed with its binomial 95% upper bound.
#   A/B: the same base runs against 5 runs where the function with the
#        largest self share is PCT% more expensive: the share of comparisons
#        where it is significant, and where it is the top-ranked row.
#
# usage: diff_honesty.py VMP VMP_SIMVM WORKDIR [--comparisons N] [--samples S]
#                        [--pct K] [--alpha A] [--stacks P] [--check]
# --check: exit 1 unless A/A rate <= alpha + 2 binomial sd (+1/N) and the
# A/B detection and top rates are >= 0.9.
import argparse
import csv
import io
import math
import os
import shutil
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("vmp")
ap.add_argument("simvm")
ap.add_argument("work")
ap.add_argument("--comparisons", type=int, default=200)
ap.add_argument("--samples", type=int, default=200000)
ap.add_argument("--pct", type=float, default=3.0)
ap.add_argument("--alpha", type=float, default=0.01)
ap.add_argument("--stacks", type=int, default=20)
ap.add_argument("--check", action="store_true")
a = ap.parse_args()

shutil.rmtree(a.work, ignore_errors=True)
os.makedirs(a.work)


def simvm(path, run_seed, slow=None):
    args = [a.simvm, "--seed", "1", "--run-seed", str(run_seed), "--stacks", str(a.stacks),
            "--samples", str(a.samples), "-o", path]
    if slow:
        args += ["--slow", "%s:%g" % (slow, a.pct)]
    subprocess.run(args, check=True, stderr=subprocess.DEVNULL)
    return path


def diff(base, new):
    p = subprocess.run([a.vmp, "diff", "--alpha", str(a.alpha), "--format", "csv", *base, "--",
                        *new], check=True, stdout=subprocess.PIPE)
    return list(csv.DictReader(io.StringIO(p.stdout.decode())))


def run_files(i, tag, first, slow=None):
    return [simvm(os.path.join(a.work, "%s%d-%d.vmp" % (tag, i, k)), first + k, slow)
            for k in range(5)]


# the function to slow down: the largest self share of a first A/A comparison
rows = diff(run_files(0, "b", 1000), run_files(0, "n", 2000))
target = max(rows, key=lambda r: float(r["self_base_pct"]))["function"]
print("slowed function: %r (self share %.2f%%), +%g%%; %d samples per run, alpha %g"
      % (target, float(max(float(r["self_base_pct"]) for r in rows)), a.pct, a.samples, a.alpha))

aa_any = ab_found = ab_top = 0
n = a.comparisons
for i in range(n):
    base = run_files(i, "b", 10 * i + 1)
    new = run_files(i, "n", 10 * i + 6)
    rows = diff(base, new)
    aa_any += any(r["significant"] == "1" for r in rows)
    slow = run_files(i, "s", 10 * i + 6, target)
    rows = diff(base, slow)
    hit = [r for r in rows if r["function"] == target]
    ab_found += bool(hit) and hit[0]["significant"] == "1"
    ab_top += rows[0]["function"] == target and rows[0]["significant"] == "1"
    for f in base + new + slow:
        os.remove(f)
    print("%d/%d: A/A any significant %d, A/B found %d, top %d" % (i + 1, n, aa_any, ab_found,
                                                                  ab_top), flush=True)

sd = math.sqrt(a.alpha * (1 - a.alpha) / n)
print("A/A: %d of %d comparisons report a significant function: rate %.3f "
      "(alpha %g, binomial sd %.3f)" % (aa_any, n, aa_any / n, a.alpha, sd))
print("A/B (+%g%% on %s): found in %d of %d (rate %.3f), top-ranked in %d (rate %.3f)"
      % (a.pct, target, ab_found, n, ab_found / n, ab_top, ab_top / n))
if a.check:
    ok = aa_any / n <= a.alpha + 2 * sd + 1.0 / n and ab_found / n >= 0.9 and ab_top / n >= 0.9
    print("honesty check:", "passed" if ok else "FAILED")
    sys.exit(0 if ok else 1)
