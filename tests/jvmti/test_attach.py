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
#   loop:    --loop 1s for 5.5 s: 6 files (five seconds and a half), each
#            valid alone with the hot method on top; no sample in two files
#            and the files in time order; the hot thread's summed weight
#            against its CPU time from /proc as a single-file recording's;
#            --keep 3 leaves the newest 3.
#
# usage: test_attach.py VMP JAVA JAR WORKDIR attach|loop
# The environment variable VMP_TEST_JAVA_PRELOAD (sanitizer builds) is put
# into LD_PRELOAD of the JVMs only.
import glob
import os
import subprocess
import sys
import time

import json

VMP, JAVA, JAR, WORK, PART = sys.argv[1:6]
failures = 0
# a sanitizer runtime preloaded into java must leave HotSpot its signals
JAVA_ASAN_OPTIONS = ("detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:"
                     "allow_user_segv_handler=1:use_sigaltstack=0")


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
        env["ASAN_OPTIONS"] = JAVA_ASAN_OPTIONS
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


def part_attach():
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



def thread_cpu(pid):
    """{tid: CPU seconds (user + system)} of the process's threads, from /proc."""
    cpu = {}
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, task)) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu[int(task)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            pass
    return cpu


def samples_of(path):
    """(start_monotonic, [(thread, t, weight)]) of a file, by vmp decode."""
    rc, out, err = vmp("decode", "--json", path)
    check(rc == 0, "%s decodes" % os.path.basename(path))
    start, samples = 0, []
    for line in out.splitlines():
        r = json.loads(line)
        if r["type"] == "HEADER":
            start = r.get("start_monotonic", 0)
        elif r["type"] in ("SAMPLE", "FAILED_SAMPLE"):
            samples.append((r["thread"], r["t"], r.get("weight", 1)))
    return start, samples


def record_for(pid, name, *extra):
    """vmp record --pid for 5.5 s; each thread's CPU seconds meanwhile."""
    c0 = thread_cpu(pid)
    rc, out, err = vmp("record", "--pid", str(pid), "--duration", "5500ms", "-o",
                       os.path.join(WORK, name), *extra)
    c1 = thread_cpu(pid)
    print(err, end="")
    check(rc == 0, "%s: exit status 0 (%d)" % (name, rc))
    return {tid: c1[tid] - c0.get(tid, 0) for tid in c1}


def busy_thread_ratio(samples, cpu):
    """The weight of the thread with the most, against its CPU time from
    /proc (the demo's hot thread; the agent's own threads' CPU is not in it)."""
    per = {}
    for (th, _, w) in samples:
        per[th] = per.get(th, 0) + w
    if not per:
        return 0
    tid = max(per, key=per.get)
    return per[tid] / 1000.0 / cpu[tid] if cpu.get(tid) else 0


def part_loop():
    for old in glob.glob(os.path.join(WORK, "loop-*.vmp")) + glob.glob(
            os.path.join(WORK, "keep-*.vmp")):
        os.unlink(old)
    demo = start_demo("hot", 7)
    wait_started(demo)

    cpu = record_for(demo.pid, "loop.vmp", "--loop", "1s")
    files = sorted(glob.glob(os.path.join(WORK, "loop-*.vmp")))
    names = [os.path.basename(f) for f in files]
    check(names == ["loop-%06d.vmp" % n for n in range(1, len(files) + 1)] and
          5 <= len(files) <= 6, "loop: 6 files for 5.5 s at 1 s (%s)" % names)
    seen, all_samples, last_end = set(), [], None
    for f in files:
        rc, out, err = vmp("validate", f)
        check(rc == 0, "loop: %s valid alone: %s" % (os.path.basename(f), (out + err).strip()))
        if f != files[-1]:
            top = top_function(f)
            check(top == "Demo.hotLoop", "loop: %s: the hot method leads (%s)" %
                  (os.path.basename(f), top))
        start, samples = samples_of(f)
        times = [start + t for (_, t, _) in samples]
        keys = {(th, start + t) for (th, t, _) in samples}
        check(not (keys & seen), "loop: %s: no sample of an earlier file" % os.path.basename(f))
        seen |= keys
        all_samples += samples
        if times and last_end is not None:
            # a handler that read the old file just before the switch may
            # stamp its sample a few microseconds after the new file's first
            check(min(times) >= last_end - 1000000,
                  "loop: %s starts after the previous file ends (%.3f ms)" %
                  (os.path.basename(f), (min(times) - last_end) / 1e6))
        if times:
            last_end = max(times)
    loop_ratio = busy_thread_ratio(all_samples, cpu)

    cpu = record_for(demo.pid, "loop-single.vmp")
    start, samples = samples_of(os.path.join(WORK, "loop-single.vmp"))
    single_ratio = busy_thread_ratio(samples, cpu)
    print("loop: the hot thread's summed weight against its CPU time from /proc: "
          "loop files %.3f, one file %.3f" % (loop_ratio, single_ratio))
    # the /proc window also holds the attach and the stop, unsampled
    check(loop_ratio > 0.8 and abs(loop_ratio - single_ratio) < 0.1,
          "loop: the files sum to the hot thread's CPU time as one file does (%.3f vs %.3f)" %
          (loop_ratio, single_ratio))

    record_for(demo.pid, "keep.vmp", "--loop", "1s", "--keep", "3")
    kept = sorted(os.path.basename(f) for f in glob.glob(os.path.join(WORK, "keep-*.vmp")))
    last = int(kept[-1][5:11]) if kept else 0
    check(last >= 5 and kept == ["keep-%06d.vmp" % n for n in range(last - 2, last + 1)],
          "keep 3: the newest 3 files are left (%s)" % kept)
    for f in kept:
        rc, out, err = vmp("validate", os.path.join(WORK, f))
        check(rc == 0, "keep 3: %s valid: %s" % (f, (out + err).strip()))
    demo.terminate()
    demo.communicate(timeout=60)

    # started with the agent (vmp record -- java): the last file is closed
    # at the JVM's exit
    java = [JAVA]
    if os.environ.get("VMP_TEST_JAVA_PRELOAD"):  # into java only, not into vmp
        java = ["env", "LD_PRELOAD=" + os.environ["VMP_TEST_JAVA_PRELOAD"], "ASAN_OPTIONS=" +
                JAVA_ASAN_OPTIONS, JAVA]
    for old in glob.glob(os.path.join(WORK, "run-*.vmp")):
        os.unlink(old)
    p = subprocess.run([VMP, "record", "--loop", "1s", "--keep", "2", "-o", "run.vmp", "--",
                        *java, "-jar", JAR, "hot", "0.75"], cwd=WORK,
                       capture_output=True, text=True, timeout=120)
    kept = sorted(os.path.basename(f) for f in glob.glob(os.path.join(WORK, "run-*.vmp")))
    check(p.returncode == 0, "vmp record --loop -- java: exit status 0 (%d): %s" %
          (p.returncode, p.stderr.strip().replace("\n", " | ")))
    last = int(kept[-1][4:10]) if kept else 0
    check(last >= 3 and kept == ["run-%06d.vmp" % n for n in (last - 1, last)],
          "vmp record --loop --keep 2 -- java: the newest 2 files are left (%s)" % kept)
    for f in kept:
        rc, out, err = vmp("validate", os.path.join(WORK, f))
        check(rc == 0, "%s valid: %s" % (f, (out + err).strip()))


os.makedirs(WORK, exist_ok=True)
{"attach": part_attach, "loop": part_loop}[PART]()
print("%d failures" % failures)
sys.exit(1 if failures else 0)
