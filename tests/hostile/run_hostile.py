#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run every vmp command on hostile but well-formed profiles.

usage: run_hostile.py VMP GEN_HOSTILE WORKDIR RSS_LIMIT_MB SECONDS_LIMIT [--render]
                      [--only=CMD,...] [--vmp-args=ARG,...] [--expect-limit | --expect-ok] CASE...
       CASE: deep:DEPTH | compactions:OBJECTS:COUNT | oldgens:OBJECTS:COUNT:SAMPLES |
             stacks:N | symbols:MODULES:SYMBOLS | aliases:MODULES:SYMBOLS
       --only: run only these commands (info, validate, report, ...)
       --vmp-args: global arguments of vmp (--limit,stacks=1000)
       --expect-limit: the analysis commands must stop at a limit: exit 1
                 with "analysis limit '...' reached" naming the file
       --expect-ok: every command must complete: exit 0
       --render: also render the first case's flame graph SVG in headless
                 Chromium (when installed) to a PNG that must not be blank

Each case's file is made by gen_hostile.  Every command (info, validate,
report, flame folded and svg, pprof, speedscope, diff text and svg, merge,
filter with a function regex) must exit 0 or 1, never by a signal, and
within the peak RSS (from wait4) and wall-time ceilings; exit 1 must come
with a one-line message naming the file.  An SVG must be well-formed XML.
Prints a table of exit status, peak RSS and time per command: the figures
of the issue note.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.parsers.expat

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from vmp_measure import run_measured  # noqa: E402

vmp, gen, work = (os.path.abspath(p) for p in sys.argv[1:4])
rss_limit = float(sys.argv[4])
secs_limit = float(sys.argv[5])
cases = sys.argv[6:]
render = bool(cases) and cases[0] == "--render"
if render:
    cases = cases[1:]
only = None
if cases and cases[0].startswith("--only="):
    only = cases[0][len("--only="):].split(",")
    cases = cases[1:]
global_args = []
if cases and cases[0].startswith("--vmp-args="):
    global_args = cases[0][len("--vmp-args="):].split(",")
    cases = cases[1:]
expect_limit = expect_ok = False
if cases and cases[0] == "--expect-limit":
    expect_limit = True
    cases = cases[1:]
elif cases and cases[0] == "--expect-ok":
    expect_ok = True
    cases = cases[1:]
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL: " + msg, flush=True)


def run(args, out_name):
    status, rss, secs = run_measured(args, out_name + ".stdout", out_name + ".stderr")
    err = open(out_name + ".stderr", errors="replace").read()
    return status, rss, secs, err


def well_formed_xml(path):
    p = xml.parsers.expat.ParserCreate()
    try:
        with open(path, "rb") as f:
            p.ParseFile(f)
        return True
    except xml.parsers.expat.ExpatError as ex:
        print("  %s: %s" % (path, ex))
        return False


os.makedirs(work, exist_ok=True)
os.chdir(work)
for case in cases:
    parts = case.split(":")
    name = "-".join(parts)
    path = name + ".vmp"
    subprocess.run([gen, *parts, path], check=True)
    print("%s: %d bytes" % (path, os.path.getsize(path)), flush=True)
    commands = {
        "info": [vmp, "info", path],
        "validate": [vmp, "validate", path],
        "report": [vmp, "report", path],
        "flame": [vmp, "flame", "-o", name + ".folded", path],
        "flame-svg": [vmp, "flame", "--format", "svg", "-o", name + ".svg", path],
        "pprof": [vmp, "pprof", "-o", name + ".pb.gz", path],
        "speedscope": [vmp, "speedscope", "-o", name + ".json", path],
        "diff": [vmp, "diff", "-o", name + ".diff.txt", path, path],
        "diff-svg": [vmp, "diff", "--format", "svg", "-o", name + ".diff.svg", path, path],
        "merge": [vmp, "merge", path, path, "-o", name + ".merged.vmp"],
        "filter": [vmp, "filter", "--include", "Rec>>odd|Obj>>m|f1_", path, "-o",
                   name + ".filtered.vmp"],
    }
    for cmd, args in commands.items():
        if only and cmd not in only:
            continue
        args = [args[0]] + global_args + args[1:]
        status, rss, secs, err = run(args, name + "." + cmd)
        signal = os.WIFSIGNALED(status)
        rc = os.WEXITSTATUS(status) if not signal else -os.WTERMSIG(status)
        print("  %-11s exit %3d  %7.1f MB  %6.2f s  %s" %
              (cmd, rc, rss, secs, err.strip().splitlines()[0][:90] if err.strip() else ""),
              flush=True)
        if signal or rc not in (0, 1):
            fail("%s %s: %s" % (cmd, path, "signal %d" % -rc if signal else "exit %d" % rc))
        elif rc == 1 and (len(err.strip().splitlines()) != 1 or path not in err):
            fail("%s %s: exit 1 without a one-line message naming the file: %r" %
                 (cmd, path, err[:300]))
        if rss > rss_limit or secs > secs_limit:
            fail("%s %s: %.0f MB, %.2f s (limits %.0f MB, %.1f s)" %
                 (cmd, path, rss, secs, rss_limit, secs_limit))
        analysis = cmd not in ("info", "validate")
        if expect_limit and analysis and (rc != 1 or "analysis limit '" not in err):
            fail("%s %s: does not stop at the analysis limit: exit %d, %r" %
                 (cmd, path, rc, err[:200]))
        if expect_ok and rc != 0:
            fail("%s %s: does not complete within the default limits: exit %d, %r" %
                 (cmd, path, rc, err[:200]))
        if cmd.endswith("svg") and rc == 0:
            svg = name + (".svg" if cmd == "flame-svg" else ".diff.svg")
            if not well_formed_xml(svg):
                fail("%s %s: the SVG is not well-formed XML" % (cmd, path))

def render_svg(svg):
    """Render `svg` in headless Chromium; False when the PNG is missing or tiny."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("  chromium not found: the SVG is not rendered")
        return True
    profile = tempfile.mkdtemp(prefix="vmp-chromium-")
    png = os.path.abspath(svg + ".png")
    try:
        t0 = time.monotonic()
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update",
                        "--user-data-dir=" + profile, "--window-size=1200,800",
                        "--screenshot=" + png, "file://" + os.path.abspath(svg)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        print("  chromium rendered %s in %.1f s: %d bytes of PNG" %
              (svg, time.monotonic() - t0, os.path.getsize(png) if os.path.exists(png) else 0))
        return os.path.exists(png) and os.path.getsize(png) > 2000
    finally:
        shutil.rmtree(profile, ignore_errors=True)


if render and cases:
    first = "-".join(cases[0].split(":")) + ".svg"
    if os.path.exists(first) and not render_svg(first):
        fail("%s: Chromium did not render it" % first)

print("%d failed" % failures)
sys.exit(1 if failures else 0)
