#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# test_diffruns.py - `vmp diff BASE... -- NEW...` (docs/diff-statistics.md):
# each side's mean share is the mean of the shares the two-file `vmp diff`
# gives per file; a function made 50% more expensive (vmp-simvm --slow) is
# significant and ranked first; runs of one program with other seeds give no
# significant function; one run per side says that run-to-run noise is
# unknown; csv, json and the SVG that colours only significant functions;
# --ranges adds "name A->B" rows; exit codes 0/1/2.
#
# usage: test_diffruns.py VMP VMP_SIMVM WORKDIR
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

VMP, SIMVM, WORK = sys.argv[1:4]
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def run(*args):
    p = subprocess.run([VMP, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def simvm(name, seed, slow=None):
    args = [SIMVM, "--seed", "1", "--run-seed", str(seed), "--stacks", "20", "--samples", "20000",
            "-o", name]
    if slow:
        args += ["--slow", slow]
    subprocess.run(args, check=True, stderr=subprocess.DEVNULL)
    return name


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
os.chdir(WORK)
base = [simvm("b%d.vmp" % i, i) for i in range(1, 4)]
new = [simvm("n%d.vmp" % i, 10 + i) for i in range(1, 4)]

rc, out, err = run("diff", "--format", "json", *base, "--", *new)
check(rc == 0, "diff BASE... -- NEW... --format json exits 0 (%s)" % err.strip())
j = json.loads(out)
check(j["noise"] == "runs" and j["base"] == base and j["new"] == new and j["alpha"] == 0.01,
      "json heading: runs, noise from the runs, alpha 0.01")
check(j["significant"] == 0, "A/A: runs of one program with other seeds: no significant function "
      "(%d)" % j["significant"])
rows = {r["function"]: r for r in j["functions"]}
top = max(j["functions"], key=lambda r: r["self_base_pct"])


def two_file_shares(path):
    """{function: (self %, total %)} of `vmp diff path path`."""
    _, o, _ = run("diff", path, path)
    res = {}
    for line in o.splitlines():
        if line.startswith("#"):
            continue
        f = line.split(None, 10)
        res[f[10]] = (float(f[2]), float(f[4]))
    return res


per = [two_file_shares(p) for p in base]
for name in [top["function"]] + [r["function"] for r in j["functions"][:5]]:
    want_self = sum(p.get(name, (0, 0))[0] for p in per) / 3
    want_total = sum(p.get(name, (0, 0))[1] for p in per) / 3
    got = rows[name]
    check(abs(got["self_base_pct"] - want_self) < 0.006 and
          abs(got["total_base_pct"] - want_total) < 0.006,
          "%s: base means %.3f/%.3f == mean of the two-file diff's shares %.3f/%.3f"
          % (name, got["self_base_pct"], got["total_base_pct"], want_self, want_total))
for r in j["functions"]:
    lo, hi = r["d_self_ci_pp"]
    if not (lo - 1e-3 <= r["d_self_pp"] <= hi + 1e-3):
        check(False, "interval holds the change: %r" % r)
        break
else:
    check(True, "every interval holds its change")

# a large injected change: found, ranked first
target = top["function"]
slow = [simvm("s%d.vmp" % i, 10 + i, "%s:50" % target) for i in range(1, 4)]
rc, out, _ = run("diff", "--format", "csv", *base, "--", *slow)
rows_ab = list(csv.DictReader(io.StringIO(out)))
check(rc == 0 and rows_ab[0]["function"] == target and rows_ab[0]["significant"] == "1",
      "+50%% on %r: significant and ranked first (first row %r)" % (target, rows_ab[0]["function"]))
check(float(rows_ab[0]["d_self_pp"]) > 0 and float(rows_ab[0]["d_self_lo_pp"]) > 0,
      "its self share grew, the interval above 0")
rc, out, _ = run("diff", *base, "--", *slow)
first = [l for l in out.splitlines() if not l.startswith("#")][0]
check(first.split()[0] in ("**", "*s") and first.endswith("  " + target),
      "text: the first line is the slowed function, marked significant: %r" % first)

# one run per side
rc, out, _ = run("diff", base[0], "--", slow[0])
check(rc == 0 and "run-to-run noise is unknown" in out,
      "one run per side: says that run-to-run noise is unknown")
rc, out, _ = run("diff", "--format", "json", base[0], "--", slow[0])
check(json.loads(out)["noise"] == "sampling", "json: noise from sampling alone")

# --ranges
rc, out, _ = run("diff", "--ranges", "--format", "csv", *base, "--", *new)
names = [r["function"] for r in csv.DictReader(io.StringIO(out))]
check(rc == 0 and any("->" in n for n in names) and target in names,
      "--ranges adds bytecode-range rows to the functions")

# SVG: only significant functions coloured
rc, _, err = run("diff", "-o", "ab.svg", *base, "--", *slow)
check(rc == 0, "-o ab.svg writes the SVG (%s)" % err.strip())
svg = ET.parse("ab.svg").getroot()
ns = "{http://www.w3.org/2000/svg}"
coloured, grey = set(), 0
for g in svg.iter(ns + "g"):
    if g.get("class") != "f":
        continue
    title = g.find(ns + "title").text.split("\n")[0]
    fill = g.find(ns + "rect").get("fill")
    if fill == "rgb(225,225,225)":
        grey += 1
    else:
        coloured.add(title)
check(target in coloured and grey > 0, "SVG colours the slowed function and greys the rest "
      "(coloured: %s; %d grey)" % (sorted(coloured)[:5], grey))
sig = {r["function"] for r in rows_ab if r["significant"] == "1"}
check(coloured <= sig, "only significant functions are coloured")

# exit codes
check(run("diff", "--alpha", "2", base[0], "--", new[0])[0] == 2, "--alpha 2: usage error")
check(run("diff", "--", new[0])[0] == 2, "no BASE: usage error")
check(run("diff", base[0], "--")[0] == 2, "no NEW: usage error")
check(run("diff", "--format", "xml", base[0], "--", new[0])[0] == 2, "bad format: usage error")
rc, _, err = run("diff", "--alpha", "0.05", base[0], new[0])
check(rc == 2 and "--alpha compares repeated runs" in err, "--alpha with two files: %s" % err.strip())
rc, _, err = run("diff", "--normalize", base[0], "--", new[0])
check(rc == 2 and "--normalize applies to two files" in err,
      "--normalize with repeated runs: %s" % err.strip())
rc, _, err = run("diff", base[0], "--", new[0], "-o", "x.svg")
check(rc == 2 and "options go before" in err, "an option after --: usage error (%s)" % err.strip())
with open("bad.vmp", "wb") as f:
    f.write(b"not a profile at all")
rc, _, err = run("diff", base[0], "--", "bad.vmp")
check(rc == 1 and "bad.vmp" in err and len(err.strip().splitlines()) == 1,
      "a bad file: exit 1, one line naming it (%r)" % err.strip())
rc, out, _ = run("diff", "--help")
check(rc == 0 and "BASE... -- NEW..." in out and "--alpha" in out, "--help documents the form")

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("all repeated-run diff checks passed")
