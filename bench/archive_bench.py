#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# archive_bench.py - `vmp archive` and `vmp recompress` speed, for bench/run
# section 11: `archive add` throughput (profiles/s, samples/s) on N
# vmp-simvm profiles, `archive trend` and `archive diff` latency on the N
# indexed runs (against `vmp diff` reading the same files), and the size and
# CPU cost of `vmp recompress --level 19`.  Prints markdown.
#
# usage: archive_bench.py VMP VMP_SIMVM WORKDIR N SAMPLES REPEATS
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

VMP, SIMVM, WORK = sys.argv[1:4]
N, SAMPLES, REPEATS = (int(a) for a in sys.argv[4:7])


def cpu_of(args, **kw):
    """(wall s, CPU s of the child) of one run of args."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
os.chdir(WORK)
half = N // 2
files = []
for i in range(N):
    name = "r%04d.vmp" % i
    args = [SIMVM, "--seed", "1", "--run-seed", str(i + 1), "--stacks", "50", "--samples",
            str(SAMPLES), "--label", "commit=%s" % ("a" if i < half else "b"), "-o", name]
    if i >= half:
        args += ["--slow", "String>>sortBlock:10"]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    files.append(name)
size = sum(os.path.getsize(f) for f in files)

adds = []
for r in range(REPEATS):
    for f in ("a.db", "a.db-wal", "a.db-shm"):
        if os.path.exists(f):
            os.remove(f)
    adds.append(cpu_of([VMP, "archive", "add", "a.db", *files]))
con = sqlite3.connect("a.db")
runs, weight = con.execute("SELECT count(*), sum(total_weight) FROM runs").fetchone()
con.close()
wall = statistics.median(a[0] for a in adds)
cpu = statistics.median(a[1] for a in adds)
again = cpu_of([VMP, "archive", "add", "a.db", *files])
db_bytes = os.path.getsize("a.db")

F = "String>>sortBlock"
trend = [cpu_of([VMP, "archive", "trend", "a.db", F]) for _ in range(REPEATS)]
trend_svg = [cpu_of([VMP, "archive", "trend", "-o", "t.svg", "a.db", F]) for _ in range(REPEATS)]
adiff = [cpu_of([VMP, "archive", "diff", "--base", "commit=a", "--new", "commit=b", "a.db"])
         for _ in range(REPEATS)]
fdiff = [cpu_of([VMP, "diff", *files[:half], "--", *files[half:]]) for _ in range(REPEATS)]
out = subprocess.run([VMP, "archive", "trend", "a.db", F], stdout=subprocess.PIPE).stdout.decode()
changes = [l for l in out.splitlines() if l.startswith("#   from run")]

print("| what | figure |")
print("|---|---|")
print("| profiles | %d vmp-simvm runs of %d samples, %.1f MB in all |" % (runs, SAMPLES, size / 1e6))
print("| `archive add` of all, from empty | **%.0f profiles/s**, **%.2f M samples/s** "
      "(%.2f s wall, %.2f CPU s; median of %d) |" %
      (runs / wall, weight / wall / 1e6, wall, cpu, REPEATS))
print("| `archive add` of the same files again | %.2f s (hash and look up only) |" % again[0])
print("| database | %.1f MB (%.0f bytes per run) |" % (db_bytes / 1e6, db_bytes / runs))
print("| `archive trend` over %d runs, text | **%.3f s** (median of %d) |" %
      (runs, statistics.median(t[0] for t in trend), REPEATS))
print("| `archive trend -o t.svg` | %.3f s |" % statistics.median(t[0] for t in trend_svg))
print("| `archive diff` %d vs %d from the index | **%.3f s** |" %
      (half, runs - half, statistics.median(t[0] for t in adiff)))
print("| `vmp diff` of the same %d files | %.3f s |" %
      (runs, statistics.median(t[0] for t in fdiff)))
print("| changes found by trend (%s 10%% slower in the second half) | %d: %s |" %
      (F, len(changes), "; ".join(c[2:].strip() for c in changes)[:160]))
print()

# recompress: one large profile
subprocess.run([SIMVM, "--seed", "2", "--stacks", "200", "--samples", str(SAMPLES * 200), "-o",
                "big.vmp"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("| `vmp recompress` | bytes | ratio | CPU s |")
print("|---|---|---|---|")
print("| input (the writer's level 3), %d samples | %d | 1.000 | |" %
      (SAMPLES * 200, os.path.getsize("big.vmp")))
for level in (19, 22):
    w, c = cpu_of([VMP, "recompress", "--level", str(level), "big.vmp", "-o", "big%d.vmp" % level])
    print("| --level %d | %d | %.3f | %.2f |" % (level, os.path.getsize("big%d.vmp" % level),
                                                os.path.getsize("big%d.vmp" % level) /
                                                os.path.getsize("big.vmp"), c))
