#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# run_speedscope_tests.py - checks `vmp speedscope` with a real reader: the
# JSON schema shipped by the speedscope npm package, validated by Ajv, plus
# totals per thread (the simulator's ground truth) and per executing frame
# (`vmp report --format csv`).
#
#   run_speedscope_tests.py VMP SIMVM SRCDIR WORKDIR
#
# The npm packages (pinned by SRCDIR/package.json and package-lock.json) are
# installed once into WORKDIR/../npm and reused.  Exit 77 (skipped) when node
# or npm is missing or the npm registry cannot be reached.
import collections
import csv
import io
import json
import os
import shutil
import subprocess
import sys

SKIP = 77
failures = 0
checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL: " + what, flush=True)


def run(args, ok=True, **kw):
    p = subprocess.run(args, capture_output=True, **kw)
    if ok and p.returncode != 0:
        print("command failed (%d): %s\n%s" % (p.returncode, " ".join(args),
                                               p.stderr.decode(errors="replace")))
        sys.exit(1)
    return p


def npm_setup(src, npm_dir):
    """Install the pinned packages into npm_dir unless already there."""
    lock = open(os.path.join(src, "package-lock.json"), "rb").read()
    stamp = os.path.join(npm_dir, "installed-lock.json")
    if os.path.exists(stamp) and open(stamp, "rb").read() == lock and \
            os.path.isdir(os.path.join(npm_dir, "node_modules", "ajv")):
        return True
    os.makedirs(npm_dir, exist_ok=True)
    for f in ("package.json", "package-lock.json"):
        shutil.copy(os.path.join(src, f), os.path.join(npm_dir, f))
    try:
        p = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts",
                            "--cache", os.path.join(npm_dir, "cache")],
                           cwd=npm_dir, capture_output=True, timeout=300)
    except subprocess.TimeoutExpired:
        print("SKIP: npm ci timed out (no registry?)")
        return False
    if p.returncode != 0:
        print("SKIP: npm ci failed (no registry?):\n" + p.stderr.decode(errors="replace")[-600:])
        return False
    with open(stamp, "wb") as f:
        f.write(lock)
    return True


def report(vmp, path, ranges):
    args = [vmp, "report", "--format", "csv", "--top", "0", path]
    if not ranges:
        args.insert(4, "--no-ranges")
    rows = csv.DictReader(io.StringIO(run(args).stdout.decode()))
    d = collections.Counter()
    for r in rows:
        if ranges:
            d[r["function"] + (" " + r["range"] if r["range"] else "")] += int(r["samples"])
        elif r["range"] == "":
            d[r["function"]] += int(r["samples"])
    return d


def main():
    if len(sys.argv) != 5:
        print("usage: run_speedscope_tests.py VMP SIMVM SRCDIR WORKDIR")
        return 2
    vmp, simvm, src, work = sys.argv[1:]
    if shutil.which("node") is None or shutil.which("npm") is None:
        print("SKIP: node or npm is not installed (scripts/setup installs them)")
        return SKIP
    npm_dir = os.path.join(os.path.dirname(work), "npm")
    if not npm_setup(src, npm_dir):
        return SKIP
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    checker = os.path.join(src, "check_speedscope.js")

    path, truth = os.path.join(work, "sim.vmp"), os.path.join(work, "sim.truth")
    run([simvm, "--samples", "20000", "--seed", "9", "--threads", "4", "-o", path,
         "--truth", truth])
    interval = json.loads(run([vmp, "info", "--json", path]).stdout)["interval_ns"]
    check(interval > 0, "the simulated file has a sampling interval")
    threads = collections.Counter(l.split("\t", 1)[0] for l in open(truth))

    for ranges in (True, False):
        out = os.path.join(work, "sim%s.json" % ("" if ranges else "-noranges"))
        args = [vmp, "speedscope", "-o", out, path]
        if not ranges:
            args.insert(2, "--no-ranges")
        run(args)
        d = json.load(open(out))
        check(d.get("$schema") == "https://www.speedscope.app/file-format-schema.json",
              "$schema names speedscope's file format")
        p = run(["node", checker, npm_dir, out], ok=False)
        check(p.returncode == 0, "speedscope's schema accepts the output (Ajv): " +
              p.stderr.decode(errors="replace"))
        if p.returncode != 0:
            continue
        s = json.loads(p.stdout)
        names = [q["name"] for q in s["profiles"]]
        check(sorted(names) == sorted(threads), "one profile per thread: %s" % names)
        for q in s["profiles"]:
            check(q["unit"] == "nanoseconds", "%s: unit nanoseconds" % q["name"])
            check(q["total"] == threads[q["name"]] * interval,
                  "%s: weights %d == truth samples %d x interval" %
                  (q["name"], q["total"], threads[q["name"]]))
        leaf = collections.Counter()
        for q in s["profiles"]:
            for k, v in q["leaf"].items():
                leaf[k] += v // interval
        want = report(vmp, path, ranges)
        want = {k: v for k, v in want.items() if v}
        diff = sorted((k, leaf.get(k), want.get(k)) for k in set(leaf) | set(want)
                      if leaf.get(k) != want.get(k))
        check(not diff, "%s: weight per executing frame == vmp report's rows (off: %s)" %
              ("ranges" if ranges else "functions", diff[:4]))
        if ranges:
            check(any("->" in f["name"] for f in d["shared"]["frames"]),
                  "frames carry bytecode ranges")
            check(any("file" in f and "line" in f for f in d["shared"]["frames"]),
                  "frames carry file and line")
        else:
            check(not any("->" in f["name"] for f in d["shared"]["frames"]),
                  "--no-ranges: no bytecode ranges")

    # the validator is real: a broken file is rejected
    d = json.load(open(os.path.join(work, "sim.json")))
    del d["profiles"][0]["weights"]
    broken = os.path.join(work, "broken.json")
    json.dump(d, open(broken, "w"))
    p = run(["node", checker, npm_dir, broken], ok=False)
    check(p.returncode != 0 and "schema" in p.stderr.decode(),
          "a profile without weights is rejected by the schema")

    # bad input: one line naming the file, exit 1, no output left
    bad = os.path.join(work, "bad.vmp")
    with open(bad, "wb") as f:
        f.write(open(path, "rb").read()[:4000])
    out = os.path.join(work, "bad.json")
    p = run([vmp, "speedscope", "-o", out, bad], ok=False)
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 1 and bad in err and err.count("\n") == 1,
          "truncated input: exit 1 and one line naming the file (%d, %r)" % (p.returncode, err))
    check(not os.path.exists(out), "truncated input: no output file left")

    print("%d passed, %d failed" % (checks - failures, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
