#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# test_labels.py - a profile's labels (spec.md §5.1, HEADER key 16): a label
# given twice keeps its last value; `vmp info` lists them (text and --json),
# `vmp report` shows them in its heading (text and json), `vmp pprof` writes
# one comment "key=value" per label (read back with `vmp import`, whose keys
# stay unique); `vmp record --label` hands them to the agent as
# label=KEY:VALUE options with %XX escapes (so values may hold spaces,
# commas, ':' and '='); labels change no sample; bad labels are usage errors.
#
# usage: test_labels.py VMP VMP_SIMVM WORKDIR
import json
import os
import shutil
import subprocess
import sys

VMP, SIMVM, WORK = sys.argv[1:4]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    else:
        print("ok:", what)


def run(*args, cmd=None):
    p = subprocess.run([cmd or VMP, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
os.chdir(WORK)

rc, _, err = run("--seed", "7", "--samples", "3000", "--label", "bench=sieve", "--label",
                 "commit=abc123", "--label", "bench=fib", "--label", "empty=", "-o", "l.vmp",
                 cmd=SIMVM)
check(rc == 0, "simvm --label writes a profile (%s)" % err.strip())
rc, _, _ = run("--seed", "7", "--samples", "3000", "-o", "plain.vmp", cmd=SIMVM)

rc, out, _ = run("info", "l.vmp")
check(rc == 0 and '  "bench"="fib"\n' in out and '  "commit"="abc123"\n' in out and
      "sieve" not in out and "labels:           5\n" in out,
      "info lists each label once, the last value of a repeated key:\n" + out)
rc, out, _ = run("info", "--json", "l.vmp")
j = json.loads(out)
check(j["labels"] == {"benchmark": "simulated", "mode": "test", "bench": "fib",
                      "commit": "abc123", "empty": ""}, "info --json labels: %r" % j["labels"])

rc, out, _ = run("report", "l.vmp")
check("\nlabels: benchmark=simulated, mode=test, bench=fib, commit=abc123, empty=\n" in out,
      "report heading shows the labels")
rc, out, _ = run("report", "--format", "json", "l.vmp")
check(json.loads(out)["labels"]["bench"] == "fib", "report json has the labels")

# labels change no sample
_, a, _ = run("report", "--no-ranges", "--format", "csv", "l.vmp")
_, b, _ = run("report", "--no-ranges", "--format", "csv", "plain.vmp")
check(a == b and len(a) > 100, "the same run with and without labels reports the same")

# pprof comments, through vmp import
rc, _, err = run("pprof", "-o", "l.pb.gz", "l.vmp")
check(rc == 0, "pprof converts (%s)" % err.strip())
rc, _, err = run("import", "-o", "back.vmp", "l.pb.gz")
check(rc == 0, "import reads it back (%s)" % err.strip())
_, out, _ = run("info", "--json", "back.vmp")
lab = json.loads(out)["labels"]
comments = [v for k, v in lab.items() if k.startswith("pprof.comment")]
check(comments[1:] == ["benchmark=simulated", "mode=test", "bench=fib", "commit=abc123", "empty="],
      "pprof comments: the note, then one key=value per label: %r" % comments)
check("pprof.comment.2" in lab and lab["pprof.comment"].startswith("converted by vmp pprof"),
      "imported comment labels have unique keys")
rc, out, _ = run("validate", "back.vmp")
check(rc == 0, "the imported file validates")

# vmp record --label: what the agent receives (any readable file stands for
# the agent; the command is a shell that prints JAVA_TOOL_OPTIONS)
env = dict(os.environ)
env.pop("JAVA_TOOL_OPTIONS", None)
p = subprocess.run([VMP, "record", "--agent", VMP, "-o", "r.vmp", "--label", "bench=sieve",
                    "--label", "commit=abc 1,2:x=y%", "--", "sh", "-c",
                    'printf "%s" "$JAVA_TOOL_OPTIONS" > opts.txt'], env=env,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
opts = open("opts.txt").read() if os.path.exists("opts.txt") else ""
check(p.returncode == 0 and
      opts.endswith(",label=bench:sieve,label=commit:abc%201%2C2%3Ax%3Dy%25") and " " not in opts,
      "record --label becomes the agent's label=KEY:VALUE options, escaped: %r" % opts)
for bad in ("nokey", "=v"):
    rc, _, err = run("record", "--agent", VMP, "--label", bad, "--", "true")
    check(rc == 2 and "bad label" in err, "record --label %r is a usage error" % bad)
rc, out, _ = run("record", "--help")
check(rc == 0 and "--label KEY=VALUE" in out, "record --help documents --label")

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("all label checks passed")
