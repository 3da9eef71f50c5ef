#!/usr/bin/env python3
"""Samples written in SAMPLE_BLOCK records (format 2.0, spec.md §5.14) read
as the same samples written as SAMPLE records (1.2).

vmp-simvm writes each program as 1.2 and as 2.0 with times in ns:
every view must be byte for byte the same (report json and csv, folded
stacks with every option, pprof, speedscope).  As 2.0 with its default
time unit (microseconds, at simvm's 1 ms interval) everything but the times
is the same.  Prints the bytes
per sample of each (a figure, not a check; bench/run measures them).

usage: test_blocks.py VMP SIMVM WORKDIR
"""
import gzip
import os
import subprocess
import sys

VMP, SIMVM, WORK = sys.argv[1:4]
os.makedirs(WORK, exist_ok=True)
failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    failures += not cond


def vmp(*args):
    p = subprocess.run([VMP] + list(args), capture_output=True)
    if p.returncode != 0:
        check(False, "vmp %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.decode()))
    return p.stdout


def simvm(name, *args):
    path = os.path.join(WORK, name)
    subprocess.run([SIMVM, "-o", path] + list(args), check=True, stdout=subprocess.DEVNULL)
    return path


def samples_of(path):
    for line in vmp("info", path).decode().splitlines():
        if line.startswith("samples:"):
            return int(line.split()[1])
    return 0


VIEWS = [["report", "--format", "json", "--top", "0"],
         ["report", "--format", "csv"],
         ["report", "--by", "unit", "--format", "csv"],
         ["report", "--by", "thread", "--format", "csv"],
         ["report", "--by", "state", "--format", "csv"],
         ["flame", "--ranges", "--tiers", "--units"],
         ["flame", "--thread-root", "--state"],
         ["speedscope", "-o", "-"]]
TIMELESS = [v for v in VIEWS if v[0] == "flame" or v[-1] == "csv"]

PROGRAMS = [["--seed", "5", "--samples", "30000", "--stacks", "300", "--compactions", "20",
             "--zone-size", "65536", "--depth", "12", "--blame"],
            ["--seed", "7", "--samples", "20000", "--threads", "6", "--compactions", "8"]]
for k, prog in enumerate(PROGRAMS):
    a = simvm("p%d-records.vmp" % k, *prog, "--format", "1.2")
    b = simvm("p%d-blocks.vmp" % k, *prog, "--time-unit", "1")
    c = simvm("p%d-blocks-us.vmp" % k, *prog)
    for f in (a, b, c):
        vmp("validate", f)
    n = samples_of(a)
    check(n > 0 and samples_of(b) == n and samples_of(c) == n, "program %d: %d samples in each" % (k, n))
    for view in VIEWS:
        ra, rb = (vmp(*view, f).replace(f.encode(), b"FILE") for f in (a, b))
        check(ra == rb, "program %d, ns: vmp %s the same" % (k, " ".join(view)))
    for view in TIMELESS:
        ra, rc = (vmp(*view, f) for f in (a, c))
        check(ra == rc, "program %d, us: vmp %s the same" % (k, " ".join(view)))
    pa, pb = (gzip.decompress(vmp("pprof", "-o", "-", f)) for f in (a, b))
    check(pa == pb, "program %d, ns: vmp pprof the same" % k)
    print("  program %d bytes per sample: 1.2 records %.2f, 2.0 blocks ns %.2f, 2.0 blocks us %.2f" %
          (k, os.path.getsize(a) / n, os.path.getsize(b) / n, os.path.getsize(c) / n))
if failures:
    sys.exit("%d check(s) failed" % failures)
