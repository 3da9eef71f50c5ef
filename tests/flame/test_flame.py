#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# test_flame.py - `vmp flame`: folded stacks add up to the sample totals of
# `vmp report` (failed samples included, spec.md R-SMP-2), per thread with
# --thread-root; output is deterministic; the SVG is well-formed XML with one
# <g>/<rect> per drawn frame and no external resource; exit codes.
#
# usage: test_flame.py VMP VMP_SIMVM WORKDIR
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

VMP, SIMVM, WORK = sys.argv[1:4]
SVG_NS = "{http://www.w3.org/2000/svg}"
failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, stdin=None):
    p = subprocess.run([VMP, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=stdin)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def folded(text):
    """[(frames, count)] of a folded output; checks every line's shape."""
    rows = []
    for line in text.splitlines():
        m = re.fullmatch(r"(.+) (\d+)", line)
        check(m is not None, "folded line shape: %r" % line[:200])
        if m:
            rows.append((m.group(1).split(";"), int(m.group(2))))
    return rows


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
os.chdir(WORK)
for seed, samples, threads in ((11, 20000, 3), (12, 3000, 5)):
    prof = "sim%d.vmp" % seed
    subprocess.run([SIMVM, "--seed", str(seed), "--samples", str(samples), "--threads",
                    str(threads), "-o", prof], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    rc, out, err = run("report", "--format", "json", "--top", "0", prof)
    check(rc == 0, "report exits 0: " + err)
    rep = json.loads(out)
    total = rep["samples"]
    check(total == samples, "report total %d == %d" % (total, samples))
    check(rep["failed"] > 0, "the simulated profile has failed samples")

    # The sum of the counts is the total sample weight, failures included.
    rc, out, err = run("flame", prof)
    check(rc == 0 and err == "", "flame exits 0 silently: " + err)
    rows = folded(out)
    check(sum(c for _, c in rows) == total, "folded sum %d == report total %d" %
          (sum(c for _, c in rows), total))
    failed = sum(c for fr, c in rows if fr[0].startswith("[failed: "))
    check(failed == rep["failed"], "failed roots %d == report failed %d" % (failed, rep["failed"]))
    by_reason = {"[failed: %s]" % f["reason"]: f["samples"] for f in rep["failures"]}
    got = {}
    for fr, c in rows:
        if fr[0].startswith("[failed: "):
            check(len(fr) <= 2, "a failed sample is its failure and its pc's frame: %r" % fr)
            got[fr[0]] = got.get(fr[0], 0) + c
    check(got == by_reason, "failures by reason %r == report %r" % (got, by_reason))
    # spec R-RES-7: a failed sample with a pc counts for the pc's function, in
    # the flame graph as in the report: the innermost frames' sums by name
    # are the report's functions (every section, kinds of one name summed).
    leaf = {}
    for fr, c in rows:
        if not fr[-1].startswith("[failed: ") and fr[-1] != "[unknown]":
            leaf[fr[-1]] = leaf.get(fr[-1], 0) + c
    want = {}
    for sec in ("generated_code", "vanilla_code", "symbolic_frames"):
        for fn in rep[sec]["functions"]:
            if fn["name"] != "[unknown]":
                want[fn["name"]] = want.get(fn["name"], 0) + fn["samples"]
    check(leaf == want, "innermost frames by name == report's functions (%d vs %d names)" %
          (len(leaf), len(want)))
    check(any(len(fr) == 2 and fr[0].startswith("[failed: ") for fr, _ in rows),
          "a failed sample with a pc shows the pc's frame under its failure")
    for fr, c in rows:
        check(";" not in "".join(fr) and all(fr), "no empty frame")
    keys = [";".join(fr) for fr, _ in rows]
    check(len(set(keys)) == len(keys), "one line per distinct stack")
    rc2, out2, _ = run("flame", prof)
    check(out2 == out, "same file, same output (deterministic)")

    # --thread-root: each thread's name first; per-thread sums == report's.
    rc, out, err = run("flame", "--thread-root", prof)
    per = {}
    for fr, c in folded(out):
        per[fr[0]] = per.get(fr[0], 0) + c
    want = {t["name"]: t["samples"] for t in rep["threads"]}
    check(per == want, "per-thread sums %r == report threads %r" % (per, want))

    # --state adds the VM state as the second frame, with the report's sums.
    rc, out, err = run("flame", "--thread-root", "--state", prof)
    states = {}
    for fr, c in folded(out):
        check(re.fullmatch(r"\[.+\]", fr[1]) is not None, "state frame: %r" % fr[1])
        states[fr[1][1:-1]] = states.get(fr[1][1:-1], 0) + c
    want = {s["state"]: s["samples"] for s in rep["states"] if s["samples"]}
    check(states == want, "per-state sums %r == report states %r" % (states, want))

    # --units adds the JIT unit below the innermost frame, with the report's sums.
    rc, out, err = run("flame", "--units", prof)
    rows = folded(out)
    check(rc == 0 and sum(c for _, c in rows) == total, "sum with --units")
    per_unit = {}
    for fr, c in rows:
        if len(fr) >= 2 and re.fullmatch(r"\[.+\]", fr[-1]) and not fr[-1].startswith("[failed"):
            per_unit[fr[-1][1:-1]] = per_unit.get(fr[-1][1:-1], 0) + c
    rc, out, err = run("report", "--by", "unit", "--format", "json", "--top", "0", prof)
    want = {e["name"]: e["samples"] for e in json.loads(out)["entries"]
            if e["name"] != "[not in generated code]"}
    got = {k: v for k, v in per_unit.items() if k in want}
    # failed samples keep their one frame: their units are the difference
    check(want and all(v <= want[k] for k, v in got.items()) and
          0 <= sum(want.values()) - sum(got.values()) <= rep["failed"],
          "per-unit sums of --units (%d units, %d samples) == report --by unit's (%d) but for "
          "failed samples" % (len(want), sum(got.values()), sum(want.values())))

    # --ranges and --tiers change names, never the counts.
    for opts in (["--ranges"], ["--tiers"], ["--ranges", "--tiers", "--state"]):
        rc, out, err = run("flame", *opts, prof)
        rows = folded(out)
        check(rc == 0 and sum(c for _, c in rows) == total, "sum with %s" % opts)
        if "--tiers" in opts:
            frames = [f for fr, _ in rows for f in fr]
            check(any(f.endswith("_[j]") for f in frames), "JIT frames get _[j]")
            check(any(f.endswith("_[k]") for f in frames), "C frames get _[k]")
            check(not any(f.startswith("[failed") and f.endswith("]_[k]") for f in frames),
                  "synthetic frames get no suffix")
        if "--ranges" in opts:
            check(any(re.search(r" \d+->\d+(_\[j\])?$", f) for fr, _ in rows for f in fr),
                  "range frames 'name A->B'")

    # The SVG: well-formed, one <g class="f"> with one <rect> per drawn frame.
    for opts in ([], ["--icicle"], ["--thread-root", "--state", "--min-width", "0.01"]):
        svg = "flame%d%s.svg" % (seed, "".join(o.strip("-")[:2] for o in opts))
        rc, out, err = run("flame", *opts, "-o", svg, prof)
        check(rc == 0 and out == "", "svg %s written: %s" % (opts, err))
        root = ET.parse(svg).getroot()
        check(root.tag == SVG_NS + "svg", "root is <svg>")
        frames = [g for g in root.iter(SVG_NS + "g") if g.get("class") == "f"]
        check(len(frames) > 10, "frames drawn")
        check(all(len(g.findall(SVG_NS + "rect")) == 1 and
                  len(g.findall(SVG_NS + "title")) == 1 for g in frames),
              "one <rect> and one <title> per frame")
        top = [g for g in frames if g.get("data-d") == "0"]
        check(len(top) == 1 and int(top[0].get("data-n")) == total, "root frame holds the total")
        depth0 = sum(int(g.get("data-n")) for g in frames if g.get("data-d") == "1")
        check(depth0 == total, "depth-1 frames (with '...') cover the total")
        scripts = list(root.iter(SVG_NS + "script"))
        check(len(scripts) == 1 and "zoom" in scripts[0].text, "one inline script")
        raw = open(svg, encoding="utf-8").read()
        check("<![CDATA[" in raw, "script in CDATA")
        check(not re.search(r"(href|src)\s*=", raw), "no external reference")
        if "--min-width" in opts:
            drawn = sum(1 for g in frames if g.get("data-d") != "0")
            nodes = set()
            rc, out, err = run("flame", "--thread-root", "--state", prof)
            for fr, _ in folded(out):
                for i in range(1, len(fr) + 1):
                    nodes.add(tuple(fr[:i]))
            check(drawn == len(nodes), "every frame drawn at min width 0.01: %d == %d" %
                  (drawn, len(nodes)))
        ys = [float(g.find(SVG_NS + "rect").get("y")) for g in top]
        others = [float(g.find(SVG_NS + "rect").get("y")) for g in frames if g not in top]
        if "--icicle" in opts:
            check(ys[0] < min(others), "icicle: root at the top")
        else:
            check(ys[0] > max(others), "flame: root at the bottom")

# Against the simulator's ground truth (the function at the pc and the callers
# resolved at their return address - 1): the folded stacks are the truth's
# stacks, except that each failed sample is "[failed: <reason>]" and its
# executing frame alone (the truth does not mark failures; spec R-RES-7).
# With --ranges, "name A->B" frames follow their function.
subprocess.run([SIMVM, "--seed", "13", "--samples", "4000", "-o", "truth.vmp", "--truth",
                "truth.tsv"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for ranges in (False, True):
    want = {}
    for line in open("truth.tsv", encoding="utf-8"):
        thread, state, kind, func, rng, callers = line.rstrip("\n").split("\t")
        frames = []
        for c in reversed(callers.split(";") if callers else []):
            m = re.fullmatch(r"(.*) (\d+->\d+)", c)
            frames += ([m.group(1), c] if ranges else [m.group(1)]) if m else [c]
        frames += [func, func + " " + rng] if ranges and rng else [func]
        key = ";".join(frames)
        want[key] = want.get(key, 0) + 1
    rc, out, err = run("flame", *(["--ranges"] if ranges else []), "truth.vmp")
    got, failed = {}, {}
    for fr, c in folded(out):
        if fr[0].startswith("[failed: "):
            key = ";".join(fr[1:])
            failed[key] = failed.get(key, 0) + c
        else:
            got[";".join(fr)] = c
    extra = [k for k in got if got[k] > want.get(k, 0)]
    check(not extra, "ranges=%s: stacks not in the truth: %r" % (ranges, extra[:3]))
    missing = {}
    for k in want:
        if want[k] != got.get(k, 0):
            frames = k.split(";")
            m = re.fullmatch(r"(.*) (\d+->\d+)", frames[-1])
            n = 2 if m and len(frames) > 1 and frames[-2] == m.group(1) else 1
            top = ";".join(frames[-n:])
            missing[top] = missing.get(top, 0) + want[k] - got.get(k, 0)
    check(sum(failed.values()) > 0 and missing == failed,
          "ranges=%s: only failed samples differ from the truth, each shown by its "
          "executing frame: %r vs %r" % (ranges, sorted(missing.items())[:3],
                                         sorted(failed.items())[:3]))

# Titles and names are escaped for XML.
rc, out, err = run("flame", "--title", "a <b> & \"c\" 'd' \x01", "-o", "t.svg", "sim12.vmp")
root = ET.parse("t.svg").getroot()
title = [t for t in root.iter(SVG_NS + "text") if t.get("id") == "title"][0].text
check(title == "a <b> & \"c\" 'd' ?", "title escaped: %r" % title)
rc, out, err = run("flame", "--format", "svg", "sim12.vmp")
check(rc == 0 and out.startswith("<?xml"), "--format svg to standard output")
rc, out, err = run("flame", "--format", "folded", "-o", "x.svg", "sim12.vmp")
check(rc == 0 and not open("x.svg").read().startswith("<?xml"), "--format wins over .svg")
with open("sim12.vmp", "rb") as f:
    rc, out, err = run("flame", "-", stdin=f)
check(rc == 0 and out == run("flame", "sim12.vmp")[1], "'-' reads standard input")

# Help, usage errors (2), bad input and write errors (1, one line).
rc, out, err = run("flame", "--help")
check(rc == 0 and "usage: vmp flame" in out and "_[j]" in out, "--help")
for args in (["--bogus", "sim12.vmp"], [], ["a", "b"], ["--format", "png", "sim12.vmp"],
             ["--width", "x", "sim12.vmp"], ["--min-width", "-1", "sim12.vmp"], ["-o"]):
    rc, out, err = run("flame", *args)
    check(rc == 2 and "try 'vmp flame --help'" in err and out == "", "usage error %r" % args)
open("not.vmp", "w").write("hello, world\n" * 10)
for args in (["not.vmp"], ["missing.vmp"], ["-o", "/nonexistent/dir/x", "sim12.vmp"]):
    rc, out, err = run("flame", *args)
    check(rc == 1 and err.count("\n") == 1 and err.startswith("vmp flame: "),
          "bad input %r: one line, exit 1: %r" % (args, err))
if os.path.exists("/dev/full"):
    rc, out, err = run("flame", "-o", "/dev/full", "sim11.vmp")
    check(rc == 1 and "/dev/full" in err, "write error exit 1: %r" % err)
# A truncated file: a warning and the graph of what is readable.
data = open("sim11.vmp", "rb").read()
open("trunc.vmp", "wb").write(data[:len(data) // 2])
rc, out, err = run("flame", "trunc.vmp")
rows = folded(out)
check(rc == 0 and "warning" in err and 0 < sum(c for _, c in rows) < 20000,
      "truncated: warning, partial graph (%d, %r)" % (rc, err))

print("%d checks, %d failures" % (checks, len(failures)))
sys.exit(1 if failures else 0)
