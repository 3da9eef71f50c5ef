#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# archive_bench.py - `vmp archive` and `vmp recompress` speed, for bench/run
# section 11: `archive add` throughput (profiles/s, samples/s) on N
# vmp-simvm profiles, `archive trend` and `archive diff` latency on the N
# indexed runs (against `vmp diff` reading the same files); on a PostgreSQL
# server started for the run (tests/archive/pg_server.py): 4 processes
# adding N/4 each at once against 1 process adding N into SQLite, and
# `archive trend` over 100,000 runs on both databases (the N runs copied
# with new hashes and times, in SQL); the size and CPU cost of
# `vmp recompress --level 19`.  Prints markdown.
#
# usage: archive_bench.py VMP VMP_SIMVM WORKDIR N SAMPLES REPEATS
import os
import re
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

VMP, SIMVM, WORK = sys.argv[1:4]
N, SAMPLES, REPEATS = (int(a) for a in sys.argv[4:7])
BIG = int(os.environ.get("VMP_BENCH_BIG_RUNS", "100000"))  # runs of the trend on both databases
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "archive"))
import pg_server  # noqa: E402


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

# ---- PostgreSQL: concurrent adds, trend over BIG runs on both databases ----------------
# BIG runs: the N indexed runs copied BIG / N times with new hashes, ids and
# times (later copies later), labels and weights with them.
COPIES = BIG // runs


def grow_sql(series):
    cols = ("path, file_bytes, added_ns, format_minor, producer, vm_name, vm_version, pid, "
            "start_ns, interval_ns, total_weight, complete, ranges")
    return [
        "INSERT INTO runs (run_id, sha256, %s) SELECT run_id + k * %d, sha256 || '-' || k, %s "
        "FROM runs, %s" % (cols, runs, cols.replace("start_ns", "start_ns + k * 1000000000000"),
                           series),
        "INSERT INTO labels SELECT run_id + k * %d, name, value FROM labels, %s" % (runs, series),
        "INSERT INTO weights SELECT run_id + k * %d, function_id, self, total, executing "
        "FROM weights, %s" % (runs, series)]


print("| PostgreSQL %s, a private server on a Unix socket, default settings | figure |" %
      pg_server.bindir().split("/")[4])
print("|---|---|")
server = pg_server.Server()
try:
    server.createdb("one")
    one = cpu_of([VMP, "archive", "add", server.uri("one"), *files])
    fours, ok = [], True
    for r in range(REPEATS):  # each into an empty database
        db = "four%d" % r
        server.createdb(db)
        t0 = time.monotonic()
        ps = [subprocess.Popen([VMP, "archive", "add", server.uri(db), *files[i::4]],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
              for i in range(4)]
        for p in ps:
            p.wait()
        fours.append(time.monotonic() - t0)
        got = server.psql("SELECT count(*), count(DISTINCT sha256) FROM runs", db=db)[0]
        ok = ok and all(p.returncode == 0 for p in ps) and got == [str(runs)] * 2
    four = statistics.median(fours)
    print("| `archive add` of %d, 1 process into SQLite (above) | **%.2f s** (median of %d) |" %
          (runs, wall, REPEATS))
    print("| `archive add` of %d, 4 processes of %d at once into PostgreSQL | **%.2f s** (median "
          "of %d: %.2f of SQLite's time; every time %d runs, none twice, all exited 0: %s) |" %
          (runs, runs // 4, four, REPEATS, four / wall, runs, "yes" if ok else "NO"))
    print("| `archive add` of %d, 1 process into PostgreSQL | %.2f s |" % (runs, one[0]))

    # trend over BIG runs
    shutil.copy("a.db", "big.db")
    con = sqlite3.connect("big.db")
    t0 = time.monotonic()
    for sql in grow_sql("(WITH RECURSIVE c(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM c "
                        "WHERE k < %d) SELECT k FROM c)" % (COPIES - 1)):
        con.execute(sql)
    con.commit()
    big_runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    con.close()
    grow_sq = time.monotonic() - t0
    t0 = time.monotonic()
    server.psql("; ".join(grow_sql("generate_series(1, %d) AS g(k)" % (COPIES - 1))) +
                "; ANALYZE", db="one")
    grow_pg = time.monotonic() - t0
    big_pg = server.psql("SELECT count(*) FROM runs", db="one")[0][0]
    outs = {}
    for name, db in (("SQLite", "big.db"), ("PostgreSQL", server.uri("one"))):
        t = [cpu_of([VMP, "archive", "trend", db, F]) for _ in range(REPEATS)]
        outs[name] = subprocess.run([VMP, "archive", "trend", db, F],
                                    stdout=subprocess.PIPE).stdout
        ch = [l for l in outs[name].decode().splitlines() if l.startswith("#   from run")]
        print("| `archive trend` over %s runs, %s | **%.2f s** wall, %.2f CPU s of vmp "
              "(median of %d); %d change%s |" %
              (big_runs if name == "SQLite" else big_pg, name,
               statistics.median(x[0] for x in t), statistics.median(x[1] for x in t), REPEATS,
               len(ch), "" if len(ch) == 1 else "s"))
    print("| the two outputs | %s (%d bytes) |" %
          ("identical" if outs["SQLite"] == outs["PostgreSQL"] else "DIFFER",
           len(outs["SQLite"])))
    print("| copying the runs to %d in SQL (not vmp's time) | SQLite %.1f s, PostgreSQL %.1f s |"
          % (big_runs, grow_sq, grow_pg))
finally:
    server.close()
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
