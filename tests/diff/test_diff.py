#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# test_diff.py - `vmp diff`: a profile against itself changes nothing; two
# runs' per-function figures match their own `vmp flame` folded stacks; the
# order is by magnitude of change; --normalize, --folded (two columns that
# add up to each file's total, failed samples included, spec.md R-SMP-2), the
# differential SVG (well-formed, titled "Differential flame graph: BASE ->
# NEW"); exit codes.
#
# usage: test_diff.py VMP VMP_SIMVM WORKDIR
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

VMP, SIMVM, WORK = sys.argv[1:4]
SVG_NS = "{http://www.w3.org/2000/svg}"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    p = subprocess.run([VMP, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


LINE = re.compile(r"\s*([+-]\d+\.\d\d) +([+-]\d+\.\d\d) +(\d+\.\d\d) +(\d+\.\d\d) +(\d+\.\d\d) +"
                  r"(\d+\.\d\d) +(\d+) +(\d+) +(\d+) +(\d+)  (.+)")


def table(text):
    rows = []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = LINE.fullmatch(line)
        check(m is not None, "diff line shape: %r" % line[:200])
        if m:
            g = m.groups()
            rows.append({"d_self": float(g[0]), "d_total": float(g[1]),
                         "self": (float(g[2]), float(g[3])), "total": (float(g[4]), float(g[5])),
                         "n_self": (int(g[6]), int(g[7])), "n_total": (int(g[8]), int(g[9])),
                         "name": g[10]})
    return rows


def flame_functions(prof):
    """{name: (self, total)} from `vmp flame`'s folded stacks."""
    rc, out, _ = run("flame", prof)
    funcs = {}
    for line in out.splitlines():
        stack, count = line.rsplit(" ", 1)
        frames = stack.split(";")
        for i, f in enumerate(set(frames)):
            s, t = funcs.get(f, (0, 0))
            funcs[f] = (s, t + int(count))
        s, t = funcs[frames[-1]]
        funcs[frames[-1]] = (s + int(count), t)
    return funcs


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
os.chdir(WORK)
for seed, n in ((31, 20000), (32, 8000)):
    subprocess.run([SIMVM, "--seed", str(seed), "--samples", str(n), "-o", "s%d.vmp" % seed],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

# A profile against itself: zero change on every line.
rc, out, err = run("diff", "s31.vmp", "s31.vmp")
rows = table(out)
check(rc == 0 and len(rows) > 100, "self diff lists the functions (%d)" % len(rows))
check(all(r["d_self"] == 0 and r["d_total"] == 0 and r["n_self"][0] == r["n_self"][1] and
          r["n_total"][0] == r["n_total"][1] for r in rows), "self diff: all zeros")
rc, out, err = run("diff", "--folded", "s31.vmp", "s31.vmp")
lines = [l.rsplit(" ", 2) for l in out.splitlines()]
check(rc == 0 and all(a == b for _, a, b in lines), "self diff --folded: equal columns")
check(sum(int(a) for _, a, _ in lines) == 20000, "self diff --folded: sums to the total")

# Two runs: the figures are those of each file's flame graph.
rc, out, err = run("diff", "s31.vmp", "s32.vmp")
rows = table(out)
check(rc == 0 and "# base: s31.vmp (20000 samples)" in out, "diff header")
base, new = flame_functions("s31.vmp"), flame_functions("s32.vmp")
check(len(rows) == len(set(base) | set(new)), "one line per function of either profile")
for r in rows:
    b, nw = base.get(r["name"], (0, 0)), new.get(r["name"], (0, 0))
    ok = (r["n_self"] == (b[0], nw[0]) and r["n_total"] == (b[1], nw[1]) and
          abs(r["d_self"] - (100.0 * nw[0] / 8000 - 100.0 * b[0] / 20000)) < 0.006 and
          abs(r["d_total"] - (100.0 * nw[1] / 8000 - 100.0 * b[1] / 20000)) < 0.006)
    check(ok, "figures of %r: %r vs base %r new %r" % (r["name"], r, b, nw))
    if not ok:
        break
mags = [max(abs(r["d_self"]), abs(r["d_total"])) for r in rows]
check(all(mags[i] >= mags[i + 1] - 0.01 for i in range(len(mags) - 1)), "sorted by magnitude")
check(abs(sum(r["d_self"] for r in rows)) < 0.01 * len(rows), "self shares: changes sum to ~0")
check(any(r["name"].startswith("[failed: ") for r in rows), "failed samples are listed")

# --normalize scales BASE's counts to NEW's total.
rc, out, err = run("diff", "--normalize", "--folded", "s31.vmp", "s32.vmp")
cols = [l.rsplit(" ", 2) for l in out.splitlines()]
sb, sn = sum(int(b) for _, b, _ in cols), sum(int(n) for _, _, n in cols)
check(sn == 8000 and abs(sb - 8000) <= len(cols), "normalized base %d ~ new %d" % (sb, sn))
rc, out, err = run("diff", "--folded", "s31.vmp", "s32.vmp")
cols = [l.rsplit(" ", 2) for l in out.splitlines()]
check(sum(int(b) for _, b, _ in cols) == 20000 and sum(int(n) for _, _, n in cols) == 8000,
      "--folded columns sum to each total")
rc, out2, err = run("diff", "--format", "folded", "s31.vmp", "s32.vmp")
check(out2 == out, "--format folded == --folded")

# The differential flame graph.
for args in (["-o", "d.svg"], ["--format", "svg", "-o", "d.out"]):
    rc, out, err = run("diff", *args, "s31.vmp", "s32.vmp")
    check(rc == 0, "diff svg %r" % args)
    root = ET.parse(args[-1]).getroot()
    title = [t for t in root.iter(SVG_NS + "text") if t.get("id") == "title"][0].text
    check(title == "Differential flame graph: s31.vmp -> s32.vmp", "title %r" % title)
    frames = [g for g in root.iter(SVG_NS + "g") if g.get("class") == "f"]
    check(len(frames) > 10 and all(len(g.findall(SVG_NS + "rect")) == 1 for g in frames),
          "one <rect> per frame")
    fills = {g.find(SVG_NS + "rect").get("fill") for g in frames}
    check(any(re.fullmatch(r"rgb\(255,\d+,\d+\)", f) and f != "rgb(255,255,255)" for f in fills),
          "red frames (grew)")
    check(any(re.fullmatch(r"rgb\(\d+,\d+,255\)", f) and f != "rgb(255,255,255)" for f in fills),
          "blue frames (shrank)")
    rootf = [g for g in frames if g.get("data-d") == "0"][0]
    check(rootf.get("data-n") == "8000", "sized by NEW")
rc, out, err = run("diff", "-o", "same.svg", "s32.vmp", "s32.vmp")
root = ET.parse("same.svg").getroot()
fills = {g.find(SVG_NS + "rect").get("fill") for g in root.iter(SVG_NS + "g")
         if g.get("class") == "f"}
check(fills == {"rgb(250,250,250)"}, "self diff svg: no change anywhere (%r)" % fills)

# Usage errors exit 2, bad input 1 with one line.
rc, out, err = run("diff", "--help")
check(rc == 0 and "usage: vmp diff" in out, "--help")
for args in ([], ["s31.vmp"], ["a", "b", "c"], ["--bogus", "a", "b"], ["-", "-"],
             ["--format", "png", "s31.vmp", "s32.vmp"], ["--folded", "--format", "svg", "a", "b"]):
    rc, out, err = run("diff", *args)
    check(rc == 2 and "try 'vmp diff --help'" in err, "usage error %r: %d %r" % (args, rc, err))
open("junk.vmp", "w").write("not a profile\n" * 20)
for args in (["junk.vmp", "s31.vmp"], ["s31.vmp", "junk.vmp"], ["s31.vmp", "missing.vmp"]):
    rc, out, err = run("diff", *args)
    check(rc == 1 and err.count("\n") == 1 and err.startswith("vmp diff: ") and out == "",
          "bad input %r: %d %r" % (args, rc, err))
if os.path.exists("/dev/full"):
    rc, out, err = run("diff", "-o", "/dev/full", "s31.vmp", "s32.vmp")
    check(rc == 1 and "/dev/full" in err, "write error: %r" % err)

print("diff: %d failures" % len(failures))
sys.exit(1 if failures else 0)
