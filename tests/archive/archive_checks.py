# SPDX-License-Identifier: MIT
#
# archive_checks.py - what the tests of `vmp archive` share: checks that are
# counted, running vmp, the two sides of vmp-simvm profiles they index.
import os
import shutil
import subprocess
import sys

failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def runner(vmp):
    """run(*args, env=None) -> (exit status, stdout, stderr) of `vmp args`."""
    def run(*args, env=None):
        p = subprocess.run([vmp, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        return (p.returncode, p.stdout.decode("utf-8", "replace"),
                p.stderr.decode("utf-8", "replace"))
    return run


def make_profile(program, name, seed, commit, slow=None):
    """A profile of 1,500 samples of vmp-simvm's program 1, run `seed`,
    labelled commit=`commit`, with `slow` ("function:percent") slowed."""
    args = [program, "--seed", "1", "--run-seed", str(seed), "--stacks", "20", "--samples",
            "1500", "--label", "commit=" + commit, "-o", name]
    if slow:
        args += ["--slow", slow]
    subprocess.run(args, check=True, stderr=subprocess.DEVNULL)
    return name


SLOW = "String>>sortBlock:40"


def two_sides(program, work, n):
    """In a new, empty `work` (made the current directory): n runs of the
    program labelled commit=a (a000.vmp...), and n with String>>sortBlock 40%
    slower labelled commit=b (b000.vmp...).  Returns (base, new)."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chdir(work)
    base = [make_profile(program, "a%03d.vmp" % i, i, "a") for i in range(n)]
    new = [make_profile(program, "b%03d.vmp" % i, 1000 + i, "b", SLOW) for i in range(n)]
    return base, new


def finish():
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all checks passed")
