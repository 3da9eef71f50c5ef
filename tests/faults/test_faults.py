#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# test_faults.py - the agents under what production does to them, against a
# real JVM (the demo) and the real luajit, through `vmp record`.
#
#   files:  output files are safe in a directory others can write to.  A
#           profile gets mode 0600 whatever the umask (--file-mode 640 widens
#           it); a symlink planted at its path is not followed (its target
#           stays as it was, the program runs to its end and the agent says
#           so in one line); likewise a loop's numbered file; the attach
#           trigger file is not created through a symlink planted at its
#           path (the attach still works).  HotSpot and LuaJIT.
#
# usage: test_faults.py --vmp VMP --java JAVA --jar JAR [--luajit LUAJIT]
#                       --examples DIR --work DIR PART
import argparse
import glob
import os
import shutil
import stat
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--vmp", required=True)
ap.add_argument("--java", required=True)
ap.add_argument("--jar", required=True)
ap.add_argument("--luajit")
ap.add_argument("--examples", required=True)
ap.add_argument("--work", required=True)
ap.add_argument("part")
A = ap.parse_args()
failures = 0
VICTIM_TEXT = "not a profile: must stay as it is\n"


def check(cond, what):
    global failures
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures += 1


def vmp(*args, timeout=120, cwd=None):
    p = subprocess.run([A.vmp, *args], cwd=cwd or A.work, capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def java_env():
    env = dict(os.environ)
    env.pop("JAVA_TOOL_OPTIONS", None)
    return env


def start_demo(mode, scale, cwd=None):
    return subprocess.Popen([A.java, "-jar", A.jar, mode, str(scale)], cwd=cwd or A.work,
                            env=java_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def mode_of(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def plant_symlink(at, victim):
    with open(victim, "w") as f:
        f.write(VICTIM_TEXT)
    if os.path.lexists(at):
        os.unlink(at)
    os.symlink(victim, at)


def intact(victim):
    with open(victim) as f:
        return f.read() == VICTIM_TEXT


def valid(path):
    rc, out, err = vmp("validate", path)
    return rc == 0


def agent_lines(err):
    return [l for l in err.splitlines() if l.startswith("vmp: cannot open")]


# ---- files ----------------------------------------------------------------------

def files_record(name, *opts, program):
    """vmp record -o NAME OPTS -- PROGRAM under umask 022; (rc, stderr)."""
    path = os.path.join(A.work, name)
    old = os.umask(0o022)
    try:
        p = subprocess.run([A.vmp, "record", "-o", path, *opts, "--", *program], cwd=A.work,
                           env=java_env(), capture_output=True, text=True, timeout=180)
    finally:
        os.umask(old)
    return p.returncode, p.stderr


def files_vm(vm, program):
    rc, err = files_record("%s-mode.vmp" % vm, program=program)
    path = os.path.join(A.work, "%s-mode.vmp" % vm)
    check(rc == 0 and valid(path), "%s: the profile is written (%d)" % (vm, rc))
    check(mode_of(path) == 0o600, "%s: mode 0600 under umask 022 (%o)" % (vm, mode_of(path)))
    rc, err = files_record("%s-wide.vmp" % vm, "--file-mode", "640", program=program)
    path = os.path.join(A.work, "%s-wide.vmp" % vm)
    check(rc == 0 and mode_of(path) == 0o640,
          "%s: --file-mode 640 gives 0640 (%d, %o)" % (vm, rc, mode_of(path)))
    # a file of ours with mode 0644 there already: now 0600
    path = os.path.join(A.work, "%s-mode.vmp" % vm)
    os.chmod(path, 0o644)
    rc, err = files_record("%s-mode.vmp" % vm, program=program)
    check(rc == 0 and valid(path) and mode_of(path) == 0o600,
          "%s: a profile there with mode 0644 is rewritten with 0600 (%o)" % (vm, mode_of(path)))

    link = os.path.join(A.work, "%s-link.vmp" % vm)
    victim = os.path.join(A.work, "%s-victim.txt" % vm)
    plant_symlink(link, victim)
    rc, err = files_record("%s-link.vmp" % vm, program=program)
    print(err, end="")
    check(rc == 0, "%s, symlink planted: the program ran to its end, exit 0 (%d)" % (vm, rc))
    check(intact(victim), "%s, symlink planted: its target is as it was" % vm)
    check(os.path.islink(link), "%s, symlink planted: the symlink is still there" % vm)
    lines = agent_lines(err)
    check(len(lines) == 1 and link in lines[0] and "symbolic link" in lines[0],
          "%s, symlink planted: the agent says so in one line: %r" % (vm, lines))


def part_files():
    # ---- HotSpot ----
    files_vm("java", [A.java, "-jar", A.jar, "hot", "0.3"])
    # a loop's numbered files: 0600, and a symlink planted at file 2 not followed
    base = os.path.join(A.work, "loop.vmp")
    for old in glob.glob(os.path.join(A.work, "loop-*.vmp")):
        os.unlink(old)
    victim = os.path.join(A.work, "loop-victim.txt")
    plant_symlink(os.path.join(A.work, "loop-000002.vmp"), victim)
    rc, err = files_record("loop.vmp", "--loop", "300ms",
                           program=[A.java, "-jar", A.jar, "hot", "0.5"])
    files = sorted(f for f in glob.glob(os.path.join(A.work, "loop-*.vmp"))
                   if not os.path.islink(f))
    check(rc == 0 and len(files) >= 3, "loop: exit 0, %d numbered files (%d)" % (len(files), rc))
    check(all(mode_of(f) == 0o600 for f in files),
          "loop: every numbered file is 0600 (%s)" % sorted({oct(mode_of(f)) for f in files}))
    check(all(valid(f) for f in files), "loop: every numbered file validates")
    check(intact(victim), "loop: the target of the symlink at file 2 is as it was")
    lines = agent_lines(err)
    check(len(lines) == 1 and "loop-000002.vmp" in lines[0] and "symbolic link" in lines[0],
          "loop: one line names file 2 and the symlink: %r" % lines)

    # the attach trigger: a symlink at the JVM's cwd/.attach_pid<PID>
    cwd = os.path.join(A.work, "attach-cwd")
    os.makedirs(cwd, exist_ok=True)
    demo = start_demo("hot", 2, cwd=cwd)
    victim = os.path.join(A.work, "trigger-victim.txt")
    trigger = os.path.join(cwd, ".attach_pid%d" % demo.pid)
    plant_symlink(trigger, victim)
    os.chmod(victim, 0o600)
    time.sleep(1.0)
    path = os.path.join(A.work, "attach.vmp")
    rc, out, err = vmp("record", "--pid", str(demo.pid), "--duration", "500ms", "-o", path)
    print(err, end="")
    check(rc == 0 and valid(path), "attach with a symlink at the trigger's path: recorded (%d)" % rc)
    check(intact(victim), "attach: the symlink's target is as it was (not truncated)")
    check(mode_of(path) == 0o600, "attach: the profile is 0600 (%o)" % mode_of(path))
    check(not os.path.exists("/tmp/.attach_pid%d" % demo.pid), "attach: no trigger file left")
    # attached with --loop, a symlink at file 2: vmp record follows the
    # recording past the number the agent skipped
    for old in glob.glob(os.path.join(A.work, "attloop-*.vmp")):
        os.unlink(old)
    victim = os.path.join(A.work, "attloop-victim.txt")
    plant_symlink(os.path.join(A.work, "attloop-000002.vmp"), victim)
    rc, out, err = vmp("record", "--pid", str(demo.pid), "--duration", "1500ms", "--loop", "300ms",
                       "-o", os.path.join(A.work, "attloop.vmp"))
    print(err, end="")
    files = sorted(f for f in glob.glob(os.path.join(A.work, "attloop-*.vmp"))
                   if not os.path.islink(f))
    check(rc == 0 and len(files) >= 3 and "stopped" not in err,
          "attach --loop past a skipped number: exit 0, %d files (%d)" % (len(files), rc))
    check(all(valid(f) and mode_of(f) == 0o600 for f in files),
          "attach --loop: every file validates and is 0600")
    check(intact(victim), "attach --loop: the symlink's target is as it was")
    demo.communicate(timeout=120)
    check(demo.returncode == 0, "attach: the JVM finished its work (%d)" % demo.returncode)
    os.unlink(trigger)

    # ---- LuaJIT ----
    if A.luajit:
        hot = os.path.join(A.examples, "luajit", "hot.lua")
        files_vm("luajit", [A.luajit, hot, "1", "10"])
    else:
        print("skip  luajit: not built")


PARTS = {"files": part_files}

if __name__ == "__main__":
    os.makedirs(A.work, exist_ok=True)
    PARTS[A.part]()
    print("%s: %s" % (A.part, "FAILED (%d)" % failures if failures else "passed"))
    sys.exit(1 if failures else 0)
