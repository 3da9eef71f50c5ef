#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# luajit_compare.py - bench/run section 10: the LuaJIT agent next to LuaJIT's
# own profiler (-jp) on examples/luajit/hot.lua with a fixed number of rounds.
#
#   cost:   the workload's CPU time (user + system of the luajit process)
#           unprofiled, under vmp at 1 ms and 100 us, and under -jp at 1 ms,
#           alternated in the same run; medians, and ratios to unprofiled.
#   per sample: the CPU each profiler adds per sample it takes (vmp's records
#           against -jp's raw sample counts): -jp's setitimer fires at most
#           once per scheduler tick, so its overhead per run is not comparable.
#   size:   bytes per sample record of vmp's file at 1 ms and 100 us.
#           The ratio of vmp's CPU per sample at 100 us to that at 1 ms.
#   truth:  VM-state shares (vmp report --by state against -jp=v, both over
#           the REPEATS runs, with -jp's own sampling error) and the
#           functions' shares (vmp report --by vm-function against -jp=f,
#           medians over the REPEATS runs) at 1 ms, in points, on hot.lua
#           and on cheavy.lua (Lua functions whose time goes to C).
#
# usage: luajit_compare.py VMP LUAJIT HOT_LUA WORKDIR ROUNDS REPEATS
# Prints markdown.
import csv
import io
import os
import re
import resource
import subprocess
import sys

VMP, LUAJIT, HOT, WORK = sys.argv[1:5]
ROUNDS, REPEATS = int(sys.argv[5]), int(sys.argv[6])
os.makedirs(WORK, exist_ok=True)


def cpu_of(cmd):
    """CPU seconds (user + system) of the children `cmd` starts, and its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, cwd=WORK, capture_output=True, text=True, timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), p


def median(xs):
    xs = sorted(xs)
    return xs[(len(xs) - 1) // 2] if xs else 0.0


work = [LUAJIT, HOT, "1", str(ROUNDS)]
conditions = {
    "unprofiled": lambda i: work,
    "vmp 1ms": lambda i: [VMP, "record", "-o", "v1ms-%d.vmp" % i, "--interval", "1ms", "--"] + work,
    "vmp 100us": lambda i: [VMP, "record", "-o", "v100us-%d.vmp" % i, "--interval", "100us",
                            "--"] + work,
    # raw counts (r): its number of samples, and shares finer than whole percents
    "luajit -jp 1ms": lambda i: [LUAJIT, "-jp=vri1,jp-%d.txt" % i, HOT, "1", str(ROUNDS)],
    # by function (the functions' shares, below)
    "luajit -jp=f 1ms": lambda i: [LUAJIT, "-jp=fri1,jpf-%d.txt" % i, HOT, "1", str(ROUNDS)],
}
cpu = {k: [] for k in conditions}
for i in range(REPEATS):
    for name, cmd in conditions.items():
        seconds, p = cpu_of(cmd(i))
        if p.returncode == 0:
            cpu[name].append(seconds)

print("| run | CPU s (median of %d) | against unprofiled |" % REPEATS)
print("|---|---|---|")
base = median(cpu["unprofiled"]) or 1.0
for name in conditions:
    m = median(cpu[name])
    print("| %s | %.3f | %s |" % (name, m, "%+.1f%%" % ((m / base - 1) * 100)
                                  if name != "unprofiled" else "-"))
print()


def samples_and_size(path):
    out = subprocess.run([VMP, "info", path], capture_output=True, text=True).stdout
    m = re.search(r"samples:\s+(\d+)", out)
    return (int(m.group(1)) if m else 0), os.path.getsize(path)


def jp_counts(i):
    """-jp's raw counts by VM state in run i ({} if unreadable)."""
    try:
        with open(os.path.join(WORK, "jp-%d.txt" % i)) as f:
            return {m.group(2).strip(): int(m.group(1))
                    for m in re.finditer(r"^\s*(\d+)\s+(\D.*)$", f.read(), re.M)}
    except OSError:
        return {}


print("| profiler | samples per run (median) | CPU added per run | CPU per sample |")
print("|---|---|---|---|")
per_run = {}
for name, count in (("vmp 1ms", lambda i: samples_and_size(os.path.join(WORK, "v1ms-%d.vmp" % i))[0]),
                    ("vmp 100us",
                     lambda i: samples_and_size(os.path.join(WORK, "v100us-%d.vmp" % i))[0]),
                    ("luajit -jp 1ms", lambda i: sum(jp_counts(i).values()))):
    n = median([count(i) for i in range(REPEATS)])
    added = median(cpu[name]) - base
    per_run[name] = (n, added)
    print("| %s | %d | %.3f s | %s |" % (name, n, added,
                                         "%.1f us" % (added / n * 1e6) if n else "-"))
print()
# vmp's cost split in a part per sample (the slope between 1 ms and 100 us)
# and a part per run (loading the module, probes, symbols, closing the file)
(n1, a1), (n2, a2) = per_run["vmp 1ms"], per_run["vmp 100us"]
if n2 > n1:
    slope = (a2 - a1) / (n2 - n1)
    print("vmp: **%.1f us of CPU per sample** (between 1 ms and 100 us) and %.3f s per run. "
          "Section 6 prints the floor of a per-thread CPU-time timer and its signal with an "
          "empty handler (bench_sigfloor); -jp's setitimer fires at scheduler ticks only." %
          (slope * 1e6, a1 - slope * n1))
    print()
if n1 and n2 and a1 > 0:
    print("vmp's CPU per sample at 100 us is **%.2fx** that at 1 ms (target: at most 1.5x)." %
          ((a2 / n2) / (a1 / n1)))
    print()


for tag in ("1ms", "100us"):
    path = os.path.join(WORK, "v%s-0.vmp" % tag)
    if os.path.exists(path):
        n, size = samples_and_size(path)
        print("vmp at %s: %d sample records, %d bytes: **%.1f bytes per sample**." %
              (tag, n, size, size / n if n else 0))
print()

# ---- shares against -jp -------------------------------------------------------------
# VM states over the REPEATS runs of each at 1 ms (vmp's samples summed, -jp's
# shares averaged): one -jp run has a few hundred samples (setitimer: at most
# one per tick), so its own sampling error is a couple of points.
path = os.path.join(WORK, "v1ms-0.vmp")
state_w = {}
for i in range(REPEATS):
    csv_out = subprocess.run([VMP, "report", "--by", "state", "--format", "csv",
                              os.path.join(WORK, "v1ms-%d.vmp" % i)], capture_output=True,
                             text=True).stdout
    for line in csv_out.splitlines()[1:]:
        name, n = line.rsplit(",", 1)
        state_w[name] = state_w.get(name, 0) + int(n)
state_total = sum(state_w.values()) or 1
ours_states = {k: v * 100.0 / state_total for k, v in state_w.items()}
jp_runs = []
for i in range(REPEATS):
    counts = jp_counts(i)
    n = sum(counts.values())
    if n:
        jp_runs.append({k: v * 100.0 / n for k, v in counts.items()})
jp_states = {k: sum(r.get(k, 0.0) for r in jp_runs) / len(jp_runs)
             for r0 in jp_runs for k in r0} if jp_runs else {}
jp_samples = median([sum(jp_counts(i).values()) for i in range(REPEATS)])
names = {"trace": "Compiled", "interp": "Interpreted", "c": "C code", "gc": "Garbage Collector",
         "exit": "Trace exit", "record": "JIT Compiler", "opt": "JIT Compiler",
         "asm": "JIT Compiler"}
jit_states = {}
for ours, theirs in names.items():
    jit_states.setdefault(theirs, 0.0)
    jit_states[theirs] += ours_states.get(ours, 0.0)
print("VM states over the %d runs at 1 ms (vmp: %d samples; -jp=v: the mean of its %d runs' "
      "shares, each of some %d samples):" % (REPEATS, state_total, len(jp_runs), jp_samples))
print()
print("| VM state | vmp | luajit -jp=v | points | -jp's sampling error (1 sigma, mean of %d) |"
      % len(jp_runs))
print("|---|---|---|---|---|")
for theirs in sorted(set(jit_states) | set(jp_states)):
    a, b = jit_states.get(theirs, 0.0), jp_states.get(theirs, 0.0)
    err = (b / 100 * (1 - b / 100) / (jp_samples * max(len(jp_runs), 1))) ** 0.5 * 100 \
        if jp_samples else 0.0
    if a or b:
        print("| %s | %.1f%% | %.1f%% | %+.1f | %.1f |" % (theirs, a, b, a - b, err))
print()

# ---- functions against -jp=f ----------------------------------------------------------
# The VM's view (vmp report --by vm-function, spec R-VIEW-7): each sample under
# the innermost Lua function of its stack, C and GC time included, as -jp=f
# counts.  hot.lua's runs are those above (vmp at 1 ms, -jp=f at 1 ms in the
# same alternation); cheavy.lua (Lua functions whose time goes to C) runs here,
# vmp and -jp=f alternated.  Medians of each function's share over the runs.


def vm_shares(path):
    """{function as -jp=f names it: % of samples} of vmp's VM view."""
    out = subprocess.run([VMP, "report", "--by", "vm-function", "--format", "csv", path],
                         capture_output=True, text=True).stdout
    rows = list(csv.reader(io.StringIO(out)))[1:]
    total = sum(int(r[2]) for r in rows) or 1
    return {r[1].split(" (")[0]: int(r[2]) * 100.0 / total for r in rows if r[0] == "function"}


def jp_shares(name):
    """{function: %} of a -jp=fr run's raw counts."""
    try:
        with open(os.path.join(WORK, name)) as f:
            counts = {m.group(2).strip(): int(m.group(1))
                      for m in re.finditer(r"^\s*(\d+)\s+(\S.*)$", f.read(), re.M)}
    except OSError:
        return {}
    n = sum(counts.values()) or 1
    return {k: v * 100.0 / n for k, v in counts.items()}


cheavy = os.path.join(os.path.dirname(HOT), "cheavy.lua")
for i in range(REPEATS):
    subprocess.run([VMP, "record", "-o", "c1ms-%d.vmp" % i, "--interval", "1ms", "--", LUAJIT,
                    cheavy, "30"], cwd=WORK, capture_output=True, timeout=600)
    subprocess.run([LUAJIT, "-jp=fri1,jpc-%d.txt" % i, cheavy, "30"], cwd=WORK,
                   capture_output=True, timeout=600)
worst = 0.0
for label, ours_of, theirs_of in (
        ("hot.lua", lambda i: "v1ms-%d.vmp" % i, lambda i: "jpf-%d.txt" % i),
        ("cheavy.lua", lambda i: "c1ms-%d.vmp" % i, lambda i: "jpc-%d.txt" % i)):
    ours = [vm_shares(os.path.join(WORK, ours_of(i))) for i in range(REPEATS)]
    theirs = [jp_shares(theirs_of(i)) for i in range(REPEATS)]
    names = sorted({k for r in ours + theirs for k in r},
                   key=lambda k: -median([r.get(k, 0.0) for r in ours]))
    print("%s, %d runs each at 1 ms: each Lua function's share (median), vmp report --by "
          "vm-function against luajit -jp=f:" % (label, REPEATS))
    print()
    print("| function | vmp | luajit -jp=f | points |")
    print("|---|---|---|---|")
    for name in names:
        a = median([r.get(name, 0.0) for r in ours])
        b = median([r.get(name, 0.0) for r in theirs])
        if a >= 0.5 or b >= 0.5:
            worst = max(worst, abs(a - b))
            print("| %s | %.1f%% | %.1f%% | %+.1f |" % (name, a, b, a - b))
    print()
print("Largest difference: **%.1f points** (target: 5)." % worst)
print()
