#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# test_attach.py - `vmp record --pid`: the HotSpot agent loaded into a running
# JVM through its attach mechanism, against a real JVM (the demo).
#
#   attach:  the demo started without the agent; a 2 s recording, then a
#            second one: both files validate, the demo's hot method leads
#            both, and the JVM finishes its work and exits 0.
#   errors:  a process that is not a JVM, a pid that does not exist, a JVM
#            being recorded already, --stop with no recording, a JVM that
#            exits during the recording: one line, exit status 1, no file
#            (but the profile of the JVM that exited, which its agent closed
#            at exit and which validates), no attach file left behind.
#
# usage: test_attach.py VMP JAVA JAR WORKDIR
# The environment variable VMP_TEST_JAVA_PRELOAD (sanitizer builds) is put
# into LD_PRELOAD of the JVMs only.
import glob
import os
import subprocess
import sys
import time

VMP, JAVA, JAR, WORK = sys.argv[1:5]
failures = 0


def check(cond, what):
    global failures
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures += 1


def start_demo(mode, scale):
    env = dict(os.environ)
    preload = os.environ.get("VMP_TEST_JAVA_PRELOAD", "")
    if preload:
        env["LD_PRELOAD"] = preload
        env["ASAN_OPTIONS"] = "detect_leaks=0:handle_segv=0:handle_sigbus=0:allow_user_segv_handler=1"
    env.pop("JAVA_TOOL_OPTIONS", None)
    return subprocess.Popen([JAVA, "-jar", JAR, mode, str(scale)], cwd=WORK, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def vmp(*args, timeout=120):
    p = subprocess.run([VMP, *args], cwd=WORK, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def attach_files(pid):
    """Attach trigger files of `pid` that a client could leave behind."""
    return [f for f in glob.glob(os.path.join(WORK, ".attach_pid*")) +
            glob.glob("/tmp/.attach_pid%d" % pid)]


def top_function(path):
    """The first function of the report's table of generated code."""
    rc, out, err = vmp("report", path)
    if rc != 0:
        return None
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("% of generated vm code: methods"):
            for row in lines[i + 1:]:
                parts = row.split()
                if len(parts) >= 5 and parts[0].endswith("%") and parts[0] != "%":
                    return parts[4]
    return None


def one_line_error(rc, err, what, needle):
    lines = [l for l in err.splitlines() if l.strip()]
    check(rc == 1, "%s: exit status 1 (got %d)" % (what, rc))
    check(len(lines) == 1 and lines[0].startswith("vmp record: ") and needle in lines[0],
          "%s: one line naming the problem: %r" % (what, lines))


def wait_started(p):
    # the JVM handles SIGQUIT once started; vmp record waits for that itself,
    # the test only gives the demo a moment to reach its hot loop
    time.sleep(1.0)
    check(p.poll() is None, "the demo runs")


os.makedirs(WORK, exist_ok=True)
for old in glob.glob(os.path.join(WORK, "attach-*.vmp")):
    os.unlink(old)

# ---- attach twice to one JVM -------------------------------------------------
demo = start_demo("hot", 3)
wait_started(demo)
for n, seconds in ((1, 2), (2, 1)):
    path = os.path.join(WORK, "attach-%d.vmp" % n)
    t0 = time.monotonic()
    rc, out, err = vmp("record", "--pid", str(demo.pid), "--duration", "%ds" % seconds, "-o", path)
    took = time.monotonic() - t0
    print(err, end="")
    check(rc == 0, "attach %d: exit status 0 (got %d)" % (n, rc))
    check(seconds <= took < seconds + 30, "attach %d: took %.1f s for %d s" % (n, took, seconds))
    rc, out, err = vmp("validate", path)
    check(rc == 0, "attach %d: the file validates: %s" % (n, (out + err).strip()))
    top = top_function(path)
    check(top == "Demo.hotLoop", "attach %d: the hot method leads (%s)" % (n, top))
out, err = demo.communicate(timeout=120)
check(demo.returncode == 0, "the JVM finished its work and exited 0 (%d): %s" %
      (demo.returncode, err.strip().replace("\n", " | ")))
check("elapsed_ms" in out, "the demo printed its result")
check(attach_files(demo.pid) == [], "no attach file left behind")

# ---- errors --------------------------------------------------------------------
sleeper = subprocess.Popen(["sleep", "60"])
path = os.path.join(WORK, "attach-notjvm.vmp")
rc, out, err = vmp("record", "--pid", str(sleeper.pid), "--duration", "1s", "-o", path)
one_line_error(rc, err, "not a JVM", "not a HotSpot JVM")
check(not os.path.exists(path), "not a JVM: no file")
sleeper.kill()
sleeper.wait()

path = os.path.join(WORK, "attach-nopid.vmp")
rc, out, err = vmp("record", "--pid", str(sleeper.pid), "-o", path)
one_line_error(rc, err, "no such process", "no process")
check(not os.path.exists(path), "no such process: no file")

demo = start_demo("hot", 3)
wait_started(demo)
first = subprocess.Popen([VMP, "record", "--pid", str(demo.pid), "-o",
                          os.path.join(WORK, "attach-first.vmp")], cwd=WORK,
                         stderr=subprocess.PIPE, text=True)
time.sleep(2.0)
path = os.path.join(WORK, "attach-second.vmp")
rc, out, err = vmp("record", "--pid", str(demo.pid), "--duration", "1s", "-o", path)
one_line_error(rc, err, "recorded already", "being recorded already")
check(not os.path.exists(path), "recorded already: no second file")
rc, out, err = vmp("record", "--pid", str(demo.pid), "--stop")
check(rc == 0, "--stop ends the recording (%d): %s" % (rc, err.strip()))
_, err = first.communicate(timeout=60)
print(err, end="")
check(first.returncode == 0, "the recording ended by --stop exits 0 (%d)" % first.returncode)
rc, out, err = vmp("validate", os.path.join(WORK, "attach-first.vmp"))
check(rc == 0, "the recording ended by --stop validates: %s" % (out + err).strip())
rc, out, err = vmp("record", "--pid", str(demo.pid), "--stop")
one_line_error(rc, err, "--stop without a recording", "not being recorded")

# a JVM that exits during the recording (the demo ends after its work)
path = os.path.join(WORK, "attach-exit.vmp")
rc, out, err = vmp("record", "--pid", str(demo.pid), "-o", path)
print(err, end="")
lines = [l for l in err.splitlines() if l.strip()]
check(rc == 1, "JVM exits during the recording: exit status 1 (%d)" % rc)
check(lines and "exited during the recording" in lines[-1],
      "JVM exits during the recording: said in one line: %r" % (lines[-1:],))
demo.communicate(timeout=60)
check(demo.returncode == 0, "that JVM exited 0 (%d)" % demo.returncode)
rc, out, err = vmp("validate", path)
check(rc == 0, "its agent closed the file at the JVM's exit: %s" % (out + err).strip())
check(attach_files(demo.pid) == [], "no attach file left behind")
check(not os.path.exists("/tmp/.java_pid%d" % demo.pid), "no attach socket left behind")

print("%d failures" % failures)
sys.exit(1 if failures else 0)
