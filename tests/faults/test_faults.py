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
#   crash:  a JVM recorded at 1 ms crashes after 1.5 s: a JNI write through
#           NULL, a write to address 0 through sun.misc.Unsafe, abort() from
#           JNI.  Each exits with the status it has without the agent, the
#           JVM writes its hs_err file (not for abort(), as without the
#           agent) and does not blame the agent, and the profile reads (it
#           ends without END: truncated).  What was lost is printed: with
#           flush=10s, the JVM's crash handling (held 1 s by -XX:OnError)
#           leaves the agent time to write what it sampled: at most 100 ms
#           lost (10 s without that); abort() kills at once: at most the
#           flush period (200 ms) and the writer's wake-up.
#   disk:   the disk fills during a recording: a JVM recorded with --loop
#           500ms into a 4 MB tmpfs (its own mount namespace; root only,
#           else skipped with a line) that a filler leaves 8 KB of, for 4 s;
#           after 1.5 s the filler goes.  The JVM's work rate against the
#           same recording on the normal disk (printed; at least 70% of it),
#           the agent says "No space left on device" once, the files written
#           before and after read, and at least one file after the space
#           returned is complete (END) with samples.
#   profilers: another profiler in the same process.  A JVM whose program
#           installs its own SIGPROF handler mid-recording: it runs to its
#           end, the agent says once that it takes no more samples, the file
#           is complete.  JFR's sampler (-XX:StartFlightRecording) together
#           with vmp: both files hold samples, nothing said.  luajit -jp
#           together with the agent: -jp prints its profile, the agent says
#           once that it lost the samples to it, the file is complete.
#   soak:   continuous recording, `vmp record --pid P --loop 500ms --keep 5`
#           for --soak seconds (12 here; bench/run section 13: 600 with a
#           1 s loop) on a JVM with a fixed, pre-touched 64 MB heap: its
#           fewest descriptors and threads of the last third against the
#           middle third's, the
#           highest RSS of the last third against the middle third's (within
#           8 MB from 300 s on, 32 MB in shorter runs, where glibc's malloc
#           arenas still fill; a writer's ring is touched when a file
#           opens), 5 files kept, each valid and complete, no
#           sample in two of them, and the hot thread's samples continue
#           from one file to the next (the gap printed; at most 100 ms).
#   threads: a JVM with --java-threads (4,200 here; bench/run section 13:
#           10,000) waiting Java threads and --native-threads (600; 2,000)
#           native ones, past the 4,096 slots the agent's table held at
#           first, recorded at 100 us; then each burns 300 us of its CPU
#           time: every one of them is in the profile with samples (printed:
#           threads sampled of those that ran, the JVM's RSS), nothing said
#           about unsampled threads.
#   attach: N cycles (--cycles, 30 here; bench/run section 13 runs 200) of
#           `vmp record --pid P --duration 200ms` on one running JVM: every
#           file valid with samples, and the JVM's open descriptors, threads
#           and RSS after the last cycle against after the fifth (printed:
#           the growth per cycle, and per cycle over the last half):
#           descriptors and threads the same; RSS (a fixed, pre-touched
#           64 MB heap, as in the soak) at most 48 MB above, and with
#           --cycles 100 or more at most 64 KB a cycle over the last half
#           (200 cycles: +45 KB; it rises fastest over the first 70 or so
#           recordings, each with its own threads); the JVM runs on.
#
# usage: test_faults.py --vmp VMP --java JAVA --jar JAR [--luajit LUAJIT]
#                       --examples DIR --work DIR PART
import argparse
import glob
import json
import re
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
ap.add_argument("--classes")
ap.add_argument("--lib")
ap.add_argument("--cycles", type=int, default=30)
ap.add_argument("--soak", type=int, default=12)
ap.add_argument("--java-threads", type=int, default=4200)
ap.add_argument("--native-threads", type=int, default=600)
ap.add_argument("--soak-loop", default="500ms")
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


def start_demo(mode, scale, cwd=None, flags=()):
    return subprocess.Popen([A.java, *flags, "-jar", A.jar, mode, str(scale)], cwd=cwd or A.work,
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
    rc, out, err = vmp("record", "--pid", str(demo.pid), "--duration", "2s", "--loop", "300ms",
                       "-o", os.path.join(A.work, "attloop.vmp"))
    print(err, end="")
    files = sorted(f for f in glob.glob(os.path.join(A.work, "attloop-*.vmp"))
                   if not os.path.islink(f))
    check(rc == 0 and len(files) >= 2 and
          files[-1] >= os.path.join(A.work, "attloop-000003.vmp"),
          "attach --loop past a skipped number: exit 0, files %s (%d)" %
          ([os.path.basename(f) for f in files], rc))
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


# ---- crash ----------------------------------------------------------------------

# mode: (the agent's flush= in ms, what may be lost in ms)
CRASH_MODES = {"jni": (10000, 100), "unsafe": (10000, 100), "abort": (200, 450)}


def crash_run(mode, record):
    """Run Crash.java in its own directory; (exit status as vmp record gives
    it, stdout, stderr, the directory)."""
    d = os.path.join(A.work, "%s-%s" % (mode, "agent" if record else "plain"))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    java = [A.java, "-XX:-CreateCoredumpOnCrash", "-XX:OnError=sleep 1", "-cp", A.classes,
            "Faults", mode, "1500", A.lib]
    cmd = ([A.vmp, "record", "-o", os.path.join(d, "crash.vmp"), "--flush",
            "%dms" % CRASH_MODES[mode][0], "--"] if record else []) + java
    p = subprocess.run(cmd, cwd=d, env=java_env(), capture_output=True, text=True, timeout=180)
    rc = p.returncode if p.returncode >= 0 else 128 - p.returncode
    return rc, p.stdout, p.stderr, d


def hs_err(d):
    logs = glob.glob(os.path.join(d, "hs_err_pid*.log"))
    return open(logs[0], errors="replace").read() if logs else None


def problematic_frame(text):
    lines = (text or "").splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# Problematic frame:") and i + 1 < len(lines):
            return lines[i + 1]
    return ""


def lost_ms(path, crash_ns):
    """ns between the crash and the latest time in the profile, in ms."""
    head = subprocess.run("%s decode %s | head -1" % (A.vmp, path), shell=True,
                          capture_output=True, text=True).stdout
    start = int(head.split("start_monotonic=")[1].split()[0])
    rc, out, err = vmp("info", "--json", path)
    info = json.loads(out)
    return (crash_ns - (start + info["duration_ns"])) / 1e6, info


def part_crash():
    for mode, (flush_ms, bound_ms) in CRASH_MODES.items():
        rc0, out0, err0, d0 = crash_run(mode, False)
        rc1, out1, err1, d1 = crash_run(mode, True)
        check(rc0 != 0 and rc1 == rc0,
              "%s: exit status %d, as without the agent (%d)" % (mode, rc1, rc0))
        check("not crashed" not in out1 and "crash_ns=" in out1, "%s: the JVM crashed" % mode)
        if mode != "abort":
            plain, agent = hs_err(d0), hs_err(d1)
            check(plain is not None and agent is not None,
                  "%s: the JVM wrote its hs_err file, as without the agent" % mode)
            frame = problematic_frame(agent)
            check(frame == problematic_frame(plain) and "libvmp-jvmti" not in frame,
                  "%s: the problematic frame is the program's: %s" % (mode, frame.strip()))
        path = os.path.join(d1, "crash.vmp")
        rc, out, err = vmp("report", path)
        check(rc == 0 and os.path.getsize(path) > 0,
              "%s: vmp report reads the profile (%d): %s" % (mode, rc, err.strip()[:200]))
        crash_ns = int(out1.split("crash_ns=")[1].split()[0])
        lost, info = lost_ms(path, crash_ns)
        print("%s: %d samples, %s; lost: %.0f ms before the crash (flush=%dms)" %
              (mode, info["samples"], info["status"], lost, flush_ms))
        check(info["samples"] > 300 and info["status"].startswith("truncated"),
              "%s: the samples up to the crash (%d), no END record" % (mode, info["samples"]))
        check(lost <= bound_ms, "%s: at most %d ms lost: %.0f ms" % (mode, bound_ms, lost))


# ---- disk -----------------------------------------------------------------------

def rounds_per_s(out):
    """The demo's hot-mode work rate from its last line."""
    f = dict(kv.split("=") for kv in out.split() if "=" in kv)
    return int(f["rounds"]) / (int(f["elapsed_ms"]) / 1000.0)


def can_mount_tmpfs():
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = os.path.join(A.work, "probe")
    os.makedirs(probe, exist_ok=True)
    return subprocess.run(["unshare", "-m", "mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs",
                           probe], capture_output=True).returncode == 0


def disk_deleted():
    """The profile deleted while it is written (a cleaner of /tmp): said
    once, the program runs on; with --loop the next files are whole."""
    d = os.path.join(A.work, "deleted")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    demo = [A.java, "-jar", A.jar, "hot", "1"]   # 4 s
    runs = [("one file", [], demo), ("loop", ["--loop", "500ms"], demo)]
    if A.luajit:  # about 2 s of CPU
        runs.append(("luajit", [], [A.luajit, os.path.join(A.examples, "luajit", "hot.lua"), "1"]))
    for what, loop, program in runs:
        path = os.path.join(d, "gone-%s.vmp" % what.replace(" ", "-"))
        p = subprocess.Popen([A.vmp, "record", "-o", path, *loop, "--"] + program, cwd=A.work,
                             env=java_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        victim = path if not loop else path[:-4] + "-000001.vmp"
        deadline = time.monotonic() + 60
        while not os.path.exists(victim) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        removed = os.path.exists(victim)
        if removed:
            os.unlink(victim)
        stdout, stderr = p.communicate(timeout=180)
        said = [l for l in stderr.splitlines() if "was deleted or replaced" in l]
        check(removed and p.returncode == 0 and (what == "luajit" or rounds_per_s(stdout) > 0),
              "deleted (%s): the file removed as it was written, the program finished, exit 0 (%d)" %
              (what, p.returncode))
        check(len(said) == 1 and os.path.basename(victim) in said[0],
              "deleted (%s): said once: %r" % (what, said or stderr[-300:]))
        if loop:
            rest = sorted(glob.glob(path[:-4] + "-*.vmp"))
            whole = [f for f in rest if vmp("info", f)[0] == 0]
            check(len(rest) >= 2 and whole == rest,
                  "deleted (loop): the next files are written and read (%s)" %
                  [os.path.basename(f) for f in rest])


def part_disk():
    disk_deleted()
    if not can_mount_tmpfs():
        print("skip  disk: cannot mount a tmpfs in a mount namespace (needs root)")
        return
    mnt, out = os.path.join(A.work, "mnt"), os.path.join(A.work, "out")
    for d in (mnt, out):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    demo = [A.java, "-jar", A.jar, "hot", "1"]   # 4 s

    # the work rate on the normal disk, with the agent
    p = subprocess.run([A.vmp, "record", "-o", os.path.join(out, "normal.vmp"), "--loop",
                        "500ms", "--"] + demo,
                       cwd=A.work, env=java_env(), capture_output=True, text=True, timeout=180)
    check(p.returncode == 0, "normal disk: exit 0 (%d)" % p.returncode)
    normal = rounds_per_s(p.stdout)

    # a 4 MB tmpfs that a filler leaves 8 KB of; the recording's files are
    # copied out before the namespace goes
    script = ('mount -t tmpfs -o size=4m tmpfs "$1" && '
              'dd if=/dev/zero of="$1/filler" bs=1k count=%d 2>/dev/null; '
              'echo ready >&2; shift; "$@"; rc=$?; cp "%s"/full-*.vmp "%s"/ 2>/dev/null; '
              'exit $rc' % (4096 - 8, mnt, out))
    cmd = ["unshare", "-m", "sh", "-c", script, "sh", mnt, A.vmp, "record", "-o",
           os.path.join(mnt, "full.vmp"), "--loop", "500ms", "--"] + demo
    p = subprocess.Popen(cmd, cwd=A.work, env=java_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    filler = "/proc/%d/root%s/filler" % (p.pid, mnt)
    try:
        os.unlink(filler)
        freed = True
    except OSError as e:
        freed = False
        print("cannot remove the filler: %s" % e)
    stdout, stderr = p.communicate(timeout=180)
    print(stderr, end="")
    check(freed, "the filler was removed after 1.5 s")
    check(p.returncode == 0, "full disk: the JVM finished its work, exit 0 (%d)" % p.returncode)
    full = rounds_per_s(stdout)
    print("disk: work rate %.1f rounds/s with the disk full for 1.5 s, %.1f on the normal disk "
          "(%.0f%%)" % (full, normal, 100.0 * full / normal))
    check(full >= 0.7 * normal, "the work rate stays (%.0f%% of the normal disk's)" %
          (100.0 * full / normal))
    said = [l for l in stderr.splitlines() if "No space left on device" in l]
    check(len(said) == 1, "the full disk is said once: %r" % said)
    files = sorted(glob.glob(os.path.join(out, "full-*.vmp")))
    readable = [f for f in files if vmp("info", f)[0] == 0]
    check(len(files) >= 4 and readable == files,
          "every file reads (%d files, %d readable)" % (len(files), len(readable)))
    complete = []
    for f in files:
        rc, o, e = vmp("info", "--json", f)
        info = json.loads(o) if rc == 0 else {}
        if info.get("status") == "complete" and info.get("samples", 0) > 0:
            complete.append(os.path.basename(f))
    check(len(complete) >= 2, "files after the space returned are complete with samples: %s" %
          complete)


# ---- profilers --------------------------------------------------------------------

def part_profilers():
    path = os.path.join(A.work, "sigprof.vmp")
    p = subprocess.run([A.vmp, "record", "-o", path, "--", A.java, "-cp", A.classes, "Faults",
                        "sigprof", "1000", A.lib], cwd=A.work, env=java_env(),
                       capture_output=True, text=True, timeout=180)
    print(p.stderr, end="")
    said = [l for l in p.stderr.splitlines() if "another SIGPROF handler replaced" in l]
    check(p.returncode == 0 and "sigprof: done" in p.stdout,
          "program's own SIGPROF handler: the JVM ran to its end (%d)" % p.returncode)
    check(len(said) == 1, "the agent says once that it takes no more samples: %r" % said)
    rc, out, err = vmp("info", "--json", path)
    info = json.loads(out) if rc == 0 else {}
    check(info.get("status") == "complete" and info.get("samples", 0) > 100,
          "the file is complete with the samples before (%s, %s)" %
          (info.get("status"), info.get("samples")))

    jfr = os.path.join(A.work, "together.jfr")
    path = os.path.join(A.work, "together.vmp")
    p = subprocess.run([A.vmp, "record", "-o", path, "--", A.java,
                        "-XX:StartFlightRecording=filename=%s,settings=profile" % jfr,
                        "-jar", A.jar, "hot", "0.5"], cwd=A.work, env=java_env(),
                       capture_output=True, text=True, timeout=180)
    check(p.returncode == 0 and "another" not in p.stderr,
          "JFR together with vmp: exit 0, nothing said (%d)" % p.returncode)
    rc, out, err = vmp("info", "--json", path)
    info = json.loads(out) if rc == 0 else {}
    jfr_tool = os.path.join(os.path.dirname(os.path.realpath(A.java)), "jfr")
    s = subprocess.run([jfr_tool, "summary", jfr], capture_output=True, text=True)
    m = re.search(r"jdk\.ExecutionSample\s+(\d+)", s.stdout)
    print("JFR together with vmp: vmp %s samples; JFR %s execution samples" %
          (info.get("samples"), m.group(1) if m else "?"))
    check(info.get("status") == "complete" and info.get("samples", 0) > 500,
          "JFR together with vmp: vmp's file is complete with samples")
    check(m is not None and int(m.group(1)) > 0, "JFR together with vmp: JFR's has samples")

    if not A.luajit:
        print("skip  luajit: not built")
        return
    path = os.path.join(A.work, "jp.vmp")
    hot = os.path.join(A.examples, "luajit", "hot.lua")
    p = subprocess.run([A.vmp, "record", "-o", path, "--", A.luajit, "-jp=f", hot, "1", "20"],
                       cwd=A.work, capture_output=True, text=True, timeout=180)
    print(p.stderr, end="")
    said = [l for l in p.stderr.splitlines() if "another profiler took SIGPROF" in l]
    check(p.returncode == 0 and re.search(r"^\s*\d+%\s+hot", p.stdout, re.M),
          "luajit -jp with the agent: -jp printed its profile (%d)" % p.returncode)
    check(len(said) == 1, "the agent says once that -jp took its samples: %r" % said)
    rc, out, err = vmp("info", "--json", path)
    info = json.loads(out) if rc == 0 else {}
    check(info.get("status") == "complete", "the file is complete (%s)" % info.get("status"))


# ---- soak -------------------------------------------------------------------------

def hot_samples(path):
    """{(thread, time)} of a file's samples, and the busiest thread's times."""
    rc, out, err = vmp("decode", "--json", path)
    start, keys, per = 0, set(), {}
    for line in out.splitlines():
        r = json.loads(line)
        if r["type"] == "HEADER":
            start = r.get("start_monotonic", 0)
        elif r["type"] == "SAMPLE":
            keys.add((r["thread"], start + r["t"]))
            per.setdefault(r["thread"], []).append(start + r["t"])
    hot = max(per.values(), key=len) if per else []
    return keys, sorted(hot)


def part_soak():
    for old in glob.glob(os.path.join(A.work, "soak-*.vmp")):
        os.unlink(old)
    # a heap of fixed size, touched at start: its RSS does not grow with
    # the garbage JVMTI calls leave
    demo = start_demo("hot", A.soak / 4.0 + 5,
                      flags=("-Xms64m", "-Xmx64m", "-XX:+AlwaysPreTouch"))
    time.sleep(1.0)
    rec = subprocess.Popen([A.vmp, "record", "--pid", str(demo.pid), "--duration", "%ds" % A.soak,
                            "--loop", A.soak_loop, "--keep", "5", "--format", "1.2", "-o",
                            os.path.join(A.work, "soak.vmp")], cwd=A.work,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    trace = []
    for i in range(A.soak - 1):
        time.sleep(1.0)
        trace.append(proc_figures(demo.pid))
    # RSS rises by a writer's ring while the next file opens (its pages are
    # touched up front): the highest of each third of the run
    third = max(1, len(trace) // 3)
    early = max(trace[third:2 * third], key=lambda t: t[2], default=trace[0])
    late = max(trace[-third:], key=lambda t: t[2])
    # descriptors and threads: the fewest of each third (a file opening
    # holds one more for a moment)
    early = (min(t[0] for t in trace[third:2 * third] or trace),
             min(t[1] for t in trace[third:2 * third] or trace), early[2])
    late = (min(t[0] for t in trace[-third:]), min(t[1] for t in trace[-third:]), late[2])
    print("soak: RSS each second (MB): %s" % " ".join(str(t[2] // 1024) for t in trace))
    out, err = rec.communicate(timeout=120)
    check(rec.returncode == 0, "soak: vmp record exits 0 (%d): %s" % (rec.returncode, err[-300:]))
    print("soak: %d s, loop %s: descriptors %d -> %d, threads %d -> %d, RSS %d -> %d KB" %
          (A.soak, A.soak_loop, early[0], late[0], early[1], late[1], early[2], late[2]))
    check(late[0] <= early[0] + 1, "soak: descriptors flat (%d -> %d)" % (early[0], late[0]))
    check(late[1] <= early[1] + 2, "soak: threads flat (%d -> %d)" % (early[1], late[1]))
    # short runs still fill glibc's malloc arenas (each file's writer has
    # its own thread), which the attach part shows levelling off after some
    # 70 recordings
    bound_mb = 8 if A.soak >= 300 else 32
    check(late[2] <= early[2] + bound_mb * 1024,
          "soak: the highest RSS of the last third within %d MB of the middle third's "
          "(%d -> %d KB)" % (bound_mb, early[2], late[2]))
    files = sorted(glob.glob(os.path.join(A.work, "soak-*.vmp")))
    check(len(files) == 5, "soak: 5 files kept (%s)" % [os.path.basename(f) for f in files])
    seen, prev_last, gaps = set(), None, []
    for f in files:
        rc, o, e = vmp("info", "--json", f)
        info = json.loads(o) if rc == 0 else {}
        check(info.get("status") == "complete" and valid(f),
              "soak: %s valid and complete" % os.path.basename(f))
        keys, hot = hot_samples(f)
        check(not (keys & seen), "soak: %s: no sample of an earlier file" % os.path.basename(f))
        seen |= keys
        if hot and prev_last is not None:
            gaps.append((hot[0] - prev_last) / 1e6)
        if hot:
            prev_last = hot[-1]
    print("soak: the hot thread's gap between consecutive files: %s ms" %
          ", ".join("%.1f" % g for g in gaps))
    check(gaps and all(-1.0 <= g <= 100.0 for g in gaps),
          "soak: the hot thread's samples continue from file to file (gaps %s ms)" %
          ["%.1f" % g for g in gaps])
    check(demo.poll() is None, "soak: the JVM runs on")
    demo.kill()
    demo.communicate(timeout=60)


# ---- threads ----------------------------------------------------------------------

def part_threads():
    path = os.path.join(A.work, "many.vmp")
    java = [A.java, "-Xss256k", "-cp", A.classes, "Faults", "threads", "300", A.lib,
            str(A.java_threads), str(A.native_threads)]
    t0 = time.monotonic()
    p = subprocess.Popen([A.vmp, "record", "--interval", "100us", "-o", path, "--"] + java,
                         cwd=A.work, env=java_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    peak = 0
    while p.poll() is None:
        for pid in [c for c in os.listdir("/proc") if c.isdigit()]:
            try:
                if open("/proc/%s/stat" % pid).read().split()[3] == str(p.pid):
                    peak = max(peak, proc_figures(int(pid))[2])
            except (OSError, IndexError, KeyError, ValueError):
                pass
        time.sleep(0.5)
    out, err = p.communicate(timeout=300)
    took = time.monotonic() - t0
    print(err[-2000:], end="")
    check(p.returncode == 0 and "threads: java=%d native=%d" %
          (A.java_threads, A.native_threads) in out,
          "the JVM started and ran every thread (%d): %s" % (p.returncode, out.strip()))
    check("not sampled" not in err, "no thread left unsampled is said")
    rc, o, e = vmp("info", "--json", "--threads", path)
    threads = json.loads(o)["threads"] if rc == 0 else []
    jv = [t for t in threads if t["name"].startswith("vmp-many-")]
    nat = [t for t in threads if t["name"].startswith("vmp-nat-")]
    js, ns = sum(1 for t in jv if t["samples"] > 0), sum(1 for t in nat if t["samples"] > 0)
    print("threads: %d of %d Java threads and %d of %d native threads sampled; the JVM's RSS "
          "at most %d MB; %.1f s" % (js, A.java_threads, ns, A.native_threads, peak // 1024, took))
    check(js == A.java_threads, "every Java thread that ran is sampled (%d of %d)" %
          (js, A.java_threads))
    check(ns == A.native_threads, "every native thread that ran is sampled (%d of %d)" %
          (ns, A.native_threads))


# ---- attach ---------------------------------------------------------------------

def proc_figures(pid):
    """(open descriptors, threads, RSS in KB) of process `pid`."""
    fds = len(os.listdir("/proc/%d/fd" % pid))
    status = dict(l.split(":", 1) for l in open("/proc/%d/status" % pid).read().splitlines()
                  if ":" in l)
    return fds, int(status["Threads"]), int(status["VmRSS"].split()[0])


def part_attach():
    n = A.cycles
    # a heap of fixed size, touched at start (as in the soak): the garbage
    # each attach leaves does not grow RSS
    demo = start_demo("hot", max(10, n * 0.5),
                      flags=("-Xms64m", "-Xmx64m", "-XX:+AlwaysPreTouch"))
    time.sleep(1.0)
    check(demo.poll() is None, "the demo runs")
    figures, bad = [], []
    t0 = time.monotonic()
    for i in range(1, n + 1):
        path = os.path.join(A.work, "cycle.vmp")
        rc, out, err = vmp("record", "--pid", str(demo.pid), "--duration", "200ms", "-o", path)
        rc_v, out_v, err_v = vmp("info", "--json", path)
        samples = json.loads(out_v)["samples"] if rc_v == 0 else 0
        if rc != 0 or rc_v != 0 or samples == 0 or not valid(path):
            bad.append((i, rc, err.strip()[-200:]))
        time.sleep(0.05)
        figures.append(proc_figures(demo.pid))
    took = time.monotonic() - t0
    check(not bad, "%d cycles: every one recorded a valid file with samples %s" % (n, bad[:3]))
    first, last = figures[4], figures[-1]
    k = n - 5
    print("attach: %d cycles in %.1f s; after cycle 5 -> %d: descriptors %d -> %d, threads %d -> %d, "
          "RSS %d -> %d KB (%+.1f KB a cycle)" %
          (n, took, n, first[0], last[0], first[1], last[1], first[2], last[2],
           (last[2] - first[2]) / k))
    check(last[0] <= first[0], "descriptors do not grow (%d -> %d)" % (first[0], last[0]))
    check(last[1] <= first[1] + 2, "threads do not grow (%d -> %d; the JVM's compiler threads "
          "come and go)" % (first[1], last[1]))
    half = figures[n // 2 - 1]
    late = (last[2] - half[2]) / (n - n // 2)
    print("attach: RSS over the last %d cycles: %+.1f KB a cycle" % (n - n // 2, late))
    check(last[2] - first[2] <= 48 * 1024, "RSS at most 48 MB above cycle 5's (%+d KB)" %
          (last[2] - first[2]))
    if n >= 100:
        check(late <= 64, "RSS flat over the last half: at most 64 KB a cycle (%+.1f)" % late)
    check(demo.poll() is None, "the JVM runs on after %d cycles" % n)
    demo.kill()
    demo.communicate(timeout=60)


PARTS = {"files": part_files, "crash": part_crash, "disk": part_disk, "profilers": part_profilers,
         "soak": part_soak, "threads": part_threads, "attach": part_attach}

if __name__ == "__main__":
    os.makedirs(A.work, exist_ok=True)
    PARTS[A.part]()
    print("%s: %s" % (A.part, "FAILED (%d)" % failures if failures else "passed"))
    sys.exit(1 if failures else 0)
