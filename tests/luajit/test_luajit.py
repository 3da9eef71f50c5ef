#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# test_luajit.py - the LuaJIT agent against the real luajit, through
# `vmp record -- luajit ...`.
#
#   hot:    examples/luajit/hot.lua: the file validates, the hot function's
#           trace leads the generated code, the Lua stacks put it under the
#           main chunk, blame and the VM-state shares agree
#           with luajit's own profiler (-jp=v) on the same workload (a floor
#           of 15 points here; bench/run prints the figure).
#   flush:  jit.flush() after every round, so trace numbers are reused at new
#           addresses: every compiled-code sample resolves to the trace that
#           covered its pc at its generation (the two functions split the
#           time as the workload does); prints how many samples a single
#           end-of-run trace listing would have misattributed.
#   units:  traces ranked as JIT units, named as luajit -jv names them; with
#           -jv on the command line both the agent and -jv see the traces;
#           no probe handler stays attached.
#   start:  20 short runs at 100 us: the clock never stops after its first
#           signal, and luajit never crashes at lua_close().
#   exits:  a Lua error and os.exit close the file (it validates); kill -9
#           mid-run leaves a file the report reads.
#   coroutines: work run inside coroutine.wrap producers, inside a
#           coroutine resumed by another one, and inside a coroutine that
#           then errors: each sample has the coroutine's stack (the work
#           function under the coroutine's body) above the main thread's;
#           the innermost function's share against -jp=f's; and a
#           coroutine resumed from C (lua_resume in vmp_test_resumer.so).
#   names:  a local function, a table field T.f, a method obj:m, a function
#           named by its local, one no code names, one called under two
#           names: each named as -jp=f names it (spec R-VIEW-7's view).
#   hot also checks the VM's view (report --by vm-function, flame and
#   pprof --vm-frames): shares against -jp=f, sums, C and GC time under
#   the Lua caller, no module+offset frame.
#
# usage: test_luajit.py VMP LUAJIT EXAMPLES_DIR WORKDIR [RESUMER_DIR]
import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import time

VMP, LUAJIT, EXAMPLES, WORK = sys.argv[1:5]
# the directory of vmp_test_resumer.so (a coroutine resumed from C), if given
RESUMER_DIR = sys.argv[5] if len(sys.argv) > 5 else None
failures = 0


def check(cond, what):
    global failures
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures += 1


def vmp(*args, timeout=120):
    p = subprocess.run([VMP, *args], cwd=WORK, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def record(name, script, *args, opts=()):
    path = os.path.join(WORK, name)
    if os.path.exists(path):
        os.unlink(path)
    p = subprocess.run([VMP, "record", "-o", path, *opts, "--", LUAJIT, script, *args], cwd=WORK,
                       capture_output=True, text=True, timeout=120)
    print(p.stderr, end="")
    return p.returncode, path


def write_script(name, text):
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def table(out, title):
    """Rows (share %, name) of the report table under the line starting with `title`."""
    rows, lines = [], out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(title):
            for row in lines[i + 1:]:
                parts = row.split()
                if not parts or not parts[0].endswith("%") or parts[0] == "%":
                    if rows or (parts and parts[0] != "%"):
                        break
                    continue
                # the name: the last column, or all after the four numbers
                # ("hot (hot.lua:10)") but a last "[kind]"
                name = parts[4:]
                if len(name) > 1 and name[-1].startswith("[") and name[-1].endswith("]"):
                    name = name[:-1]
                rows.append((float(parts[0][:-1]), parts[-1] if title.startswith("samples by")
                             else " ".join(name)))
            break
    return rows


def jp_functions(script, *args):
    """luajit -jp=f's shares by function name, {name: %}."""
    p = subprocess.run([LUAJIT, "-jp=f", script, *args], cwd=WORK, capture_output=True,
                       text=True, timeout=120)
    return {m.group(2): float(m.group(1))
            for m in re.finditer(r"^\s*(\d+)%\s+(\S+)\s*$", p.stdout, re.M)}


def vm_functions(path):
    """vmp report --by vm-function (spec R-VIEW-7): the total, and per row
    name: (kind, samples, own)."""
    rc, out, err = vmp("report", "--by", "vm-function", "--format", "csv", path)
    rows = {}
    for row in list(csv.reader(io.StringIO(out)))[1:]:
        rows[row[1]] = (row[0], int(row[2]), int(row[3]))
    rc, out, err = vmp("report", "--by", "vm-function", "--format", "json", path)
    return json.loads(out)["samples"], rows


def short(name):
    """'hot (hot.lua:10)' -> 'hot' (the name -jp=f prints); 'co.lua:0' stays."""
    return name.split(" (")[0]


def states_of(path):
    rc, out, err = vmp("report", "--by", "state", path)
    return {name: share for (share, name) in table(out, "samples by state")}


os.makedirs(WORK, exist_ok=True)
hot_lua = os.path.join(EXAMPLES, "hot.lua")
with open(hot_lua) as f:
    defined = {m.group(1): n for n, line in enumerate(f, 1)
               for m in [re.match(r"local function (\w+)\(", line)] if m}
# Lua functions are named as the caller knows them, then the short chunk
# name and the line they are defined on
HOT = "hot (hot.lua:%d)" % defined["hot"]
TABLES = "tables (hot.lua:%d)" % defined["tables"]

# ---- hot -----------------------------------------------------------------------
rc, path = record("hot.vmp", hot_lua)
check(rc == 0, "hot: vmp record exits 0 (%d)" % rc)
rc, out, err = vmp("validate", path)
check(rc == 0, "hot: the file validates: %s" % (out + err).strip())
rc, out, err = vmp("report", path)
top = table(out, "% of generated vm code: methods")
check(top and top[0][1].endswith(HOT), "hot: the hot function's trace leads (%s)" %
      (top[:2],))
ours = states_of(path)
p = subprocess.run([LUAJIT, "-jp=v", hot_lua], cwd=WORK, capture_output=True, text=True,
                   timeout=120)
jp = {m.group(2): float(m.group(1)) for m in re.finditer(r"(\d+)%\s+(\w[\w ]*)", p.stdout)}
print("hot: vmp states %s; luajit -jp=v %s" % (ours, jp))
for mine, theirs in (("trace", "Compiled"), ("gc", "Garbage Collector"),
                     ("interp", "Interpreted")):
    a, b = ours.get(mine, 0.0), jp.get(theirs, 0.0)
    check(abs(a - b) <= 15, "hot: state %s %.1f%% against -jp's %s %.0f%%" % (mine, a, theirs, b))

# Lua stacks: the main chunk calls the hot function (folded stacks)
rc, out, err = vmp("flame", path)
folded = [(line.rsplit(" ", 1)[0].split(";"), int(line.rsplit(" ", 1)[1]))
          for line in out.splitlines() if " " in line]
total_w = sum(w for (_, w) in folded) or 1
under_hot = sum(w for (fr, w) in folded if len(fr) >= 2 and fr[0].endswith("hot.lua:0") and
                fr[1].endswith(HOT))
under_tables = sum(w for (fr, w) in folded if len(fr) >= 2 and fr[1].endswith(TABLES))
print("hot: folded stacks: %.1f%% main chunk > %s, %.1f%% main chunk > %s" %
      (under_hot * 100.0 / total_w, HOT, under_tables * 100.0 / total_w, TABLES))
check(under_hot > 0.5 * total_w, "hot: Lua stacks: most weight under main chunk > hot function")
check(under_tables > 0.1 * total_w, "hot: Lua stacks: the GC's time under the tables function")

# The VM's view (spec R-VIEW-7): each sample under its innermost Lua
# function, C and GC time included, against luajit -jp=f on the same
# workload.  One -jp run is not a reference to 5 points: it counts a batch
# of signals under the first one's stack, so its share of the table
# builder (whose time is mostly GC) moves from run to run (24% to 34% here
# under ctest -j2, as its GC share does: bench/NOTES.md).  So a floor of 15
# points, as for the states above; bench/run section 10 prints the medians
# of alternating runs (within 2 points).
jp = jp_functions(hot_lua)
total, rows = vm_functions(path)
print("hot: vm-function view %s of %d; luajit -jp=f %s" % (rows, total, jp))
check(sum(w for (_, w, _) in rows.values()) == total and total > 0,
      "hot: the vm-function rows sum to the total (R-VIEW-1)")
for name in (HOT, TABLES, "strings (hot.lua:%d)" % defined["strings"]):
    kind, w, own = rows.get(name, ("", 0, 0))
    theirs = jp.get(short(name), 0.0)
    check(kind == "function" and abs(100.0 * w / total - theirs) <= 15,
          "hot: %s %.1f%% of the samples, -jp=f's %s %.0f%%" %
          (name, 100.0 * w / total, short(name), theirs))
# the table builder's time is mostly the GC and C helpers it calls
kind, w, own = rows.get(TABLES, ("", 0, 0))
check(w > 0 and w - own >= 0.5 * w,
      "hot: C and GC time counts under the Lua caller (%s: %d samples, %d in its own code)" %
      (TABLES, w, own))
rc, out, err = vmp("flame", "--vm-frames", path)
view = [(line.rsplit(" ", 1)[0].split(";"), int(line.rsplit(" ", 1)[1]))
        for line in out.splitlines() if " " in line]
unnamed = sum(w for (fr, w) in view if any("+0x" in f for f in fr))
labelled = sum(w for (fr, w) in view
               if fr[-1].startswith("[LuaJIT ") and len(fr) >= 2 and fr[-2] == TABLES)
check(rc == 0 and unnamed == 0, "hot: flame --vm-frames has no module+offset frame (%d)" % unnamed)
check(labelled >= 0.5 * w, "hot: flame --vm-frames puts [LuaJIT <state>] under %s (%d of %d)" %
      (TABLES, labelled, w))
rc, out, err = vmp("pprof", "--vm-frames", "--raw", "-o", os.path.join(WORK, "hot-vm.pb"), path)
check(rc == 0, "hot: pprof --vm-frames writes the view: %s" % err.strip())

# GC cycles as events
rc, out, err = vmp("report", path)
m = re.search(r"^\s+gc\s+(\d+) events", out, re.M)
check(m and int(m.group(1)) > 10, "hot: GC cycles as events (%s)" % (m.group(0).strip() if m else "none"))

# blame: samples outside compiled code carry the trace that last ran
rc, out, err = vmp("report", path)
heading = re.search(r"samples: (\d+) total; (\d+) \([\d.]+%\) in generated vm code", out)
lines = out.splitlines()
matrix, total_row = [], None
for i, line in enumerate(lines):
    if line.startswith("time blamed on JIT units"):
        states = lines[i + 1].split()[2:-2]  # %, samples, STATES..., JIT unit
        for row in lines[i + 2:]:
            parts = row.split()
            if len(parts) < 3 + len(states) or not parts[0].endswith("%"):
                break
            cells = dict(zip(states, map(int, parts[2:2 + len(states)])))
            name = " ".join(parts[2 + len(states):])
            entry = (name, int(parts[1]), cells)
            if name == "total":
                total_row = entry
            else:
                matrix.append(entry)
        break
print("hot: blame matrix %s" % matrix)
check(heading and total_row, "hot: the report has the blame matrix")
if heading and total_row:
    unblamed = sum(n for (name, n, _) in matrix if name == "[no blame]")
    check(sum(n for (_, n, _) in matrix) == total_row[1] and
          total_row[1] + int(heading.group(2)) == int(heading.group(1)),
          "hot: the state x trace matrix and the generated code add up to the total")
    check(unblamed <= 0.05 * total_row[1],
          "hot: interpreter, GC and C samples carry a trace's blame (%d of %d without)" %
          (unblamed, total_row[1]))
    rc, out, err = vmp("report", "--format", "json", "--top", "0", path)
    blame = json.loads(out)["blame"]
    gc = blame["states"].index("gc") if "gc" in blame["states"] else -1
    gc_top = max(blame["units"], key=lambda u: u["by_state"][gc] if gc >= 0 else 0)
    check(gc_top["function"].endswith(TABLES) and gc_top["kind"] == "trace",
          "hot: GC time is blamed on a trace of the table-building function (%s in %s)" %
          (gc_top["name"], gc_top["function"]))

# traces as JIT units, named as luajit -jv names them
units = json.loads(out)["jit_units"]["units"]
p = subprocess.run([LUAJIT, "-jv", hot_lua, "1", "3"], cwd=WORK, capture_output=True,
                   text=True, timeout=120)
jv = {re.sub(r"\s+", " ", m.group(1)) for m in re.finditer(r"\[(TRACE\s+\d+ [^\]]*)\]",
                                                            p.stdout + p.stderr)}
print("hot: JIT units %s; luajit -jv: %s" % ([(u["name"], u["samples"]) for u in units[:4]],
                                             sorted(jv)))
check(units and re.match(r"TRACE \d+ hot\.lua:\d+ loop$", units[0]["name"]) and
      units[0]["function"].endswith(HOT),
      "hot: the hot loop's trace leads the JIT units (%s)" % (units[:1],))
check(units and units[0]["name"] in jv, "hot: its name is the one luajit -jv prints")
rc, text, err = vmp("report", path)
check("% of generated vm code by JIT unit" in text and units[0]["name"] in text,
      "hot: the text report ranks the JIT units")
rc, out, err = vmp("flame", "--units", path)
leaf = "[%s]" % units[0]["name"] if units else "?"
w = sum(int(line.rsplit(" ", 1)[1]) for line in out.splitlines()
        if units and line.rsplit(" ", 1)[0].split(";")[-2:] == [units[0]["function"], leaf])
check(units and units[0]["samples"] >= w >= 0.95 * units[0]["samples"],
      "hot: flame --units puts the trace below its function (%s: %d of %d)" %
      (leaf, w, units[0]["samples"] if units else 0))

# luajit -jv runs after the agent (LUA_INIT) and attaches its own trace
# handler: both see the traces
path_jv = os.path.join(WORK, "hot-jv.vmp")
p = subprocess.run([VMP, "record", "-o", path_jv, "--", LUAJIT, "-jv", hot_lua, "1", "3"],
                   cwd=WORK, capture_output=True, text=True, timeout=120)
rc, out, err = vmp("report", "--format", "json", path_jv)
jv_units = json.loads(out)["jit_units"]["units"] if rc == 0 else []
check(p.returncode == 0 and "[TRACE" in p.stderr, "-jv: luajit -jv still prints its traces")
check(rc == 0 and jv_units and re.match(r"TRACE \d+ hot\.lua:\d+ loop$", jv_units[0]["name"])
      and jv_units[0]["function"].endswith(HOT),
      "-jv: the profile still has its traces: the hot loop's leads (%s)" % (jv_units[:1],))

# the agent leaves no handler of its probes attached (a trace-exit handler
# would run at every exit of every trace)
script = write_script("handlers.lua", """
local n = 0
for _ in pairs(debug.getregistry()._VMEVENTS or {}) do n = n + 1 end
print("handlers=" .. n)
""")
p = subprocess.run([VMP, "record", "-o", os.path.join(WORK, "handlers.vmp"), "--", LUAJIT,
                    script], cwd=WORK, capture_output=True, text=True, timeout=120)
check("handlers=1" in p.stdout, "handlers: only the agent's trace handler is attached (%s)" %
      p.stdout.strip())

# ---- flush: trace numbers reused ---------------------------------------------------
flush_lua = write_script("flush.lua", """
-- jit.flush() after every round: trace numbers are reused at new addresses
local function a(n) local s = 0 for i = 1, n do s = s + (i * 3) % 7 end return s end
local function b(n) local s = 0 for i = 1, n do s = s + (i * 5) % 11 end return s end
local t0, k = os.clock(), 0
while os.clock() - t0 < 1.5 do
  k = k + 1
  if k % 2 == 0 then a(3000000) else b(3000000) end
  jit.flush()
end
""")
# format 2.0 (spec.md §5.14), the default: the program's samples in blocks, valid
rc, path2 = record("flush-2.0.vmp", flush_lua)
check(rc == 0, "format 2.0: vmp record exits 0 (%d)" % rc)
rc, out, err = vmp("validate", path2)
check(rc == 0, "format 2.0: the file validates: %s" % (out + err).strip())
rc, out, err = vmp("info", path2)
check(rc == 0 and "format:           2.0" in out, "format 2.0: vmp info says 2.0: %s" % out[:200])
# format 1.2, whose SAMPLE records `vmp decode` shows as they are, pc and all
rc, path = record("flush.vmp", flush_lua, opts=("--format", "1.2"))
check(rc == 0, "flush: vmp record exits 0 (%d)" % rc)
rc, out, err = vmp("validate", path)
check(rc == 0, "flush: the file validates: %s" % (out + err).strip())
rc, out, err = vmp("decode", "--json", path)
objects, freed, samples, functions = {}, {}, [], {}
for line in out.splitlines():
    r = json.loads(line)
    if r["type"] == "CODE_OBJECT":
        objects[r["id"]] = (r["start"], r["size"], r["gen"], r.get("function", 0), r["name"])
    elif r["type"] == "CODE_FREE":
        freed[r["id"]] = r["gen"]
    elif r["type"] == "FUNCTION":
        functions[r["id"]] = r["name"]
    elif r["type"] == "SAMPLE":
        samples.append((r["pc"], r["gen"], r.get("weight", 1), r["state"]))


def at_generation(pc, gen):
    for oid, (start, size, added, fn, name) in objects.items():
        if start <= pc < start + size and added <= gen and freed.get(oid, 1 << 62) > gen:
            return oid
    return None


def end_of_run(pc):
    """The trace an end-of-run listing shows at pc: the last one placed there."""
    last = None
    for oid, (start, size, added, fn, name) in objects.items():
        if start <= pc < start + size:
            last = oid
    return last


def end_of_run_by_number(oid):
    """The trace an end-of-run listing shows under the number of trace `oid`
    (what a profiler that keeps the running trace's number would report)."""
    last = None
    for other, (start, size, added, fn, name) in objects.items():
        if name.split(" (")[0] == objects[oid][4].split(" (")[0]:
            last = other
    return last


in_trace = [s for s in samples if s[3] == 0]
resolved = [s for s in in_trace if at_generation(s[0], s[1]) is not None]
wrong = [s for s in resolved if end_of_run(s[0]) is None or
         objects[end_of_run(s[0])][3] != objects[at_generation(s[0], s[1])][3]]
wrong_number = [s for s in resolved if objects[end_of_run_by_number(
    at_generation(s[0], s[1]))][3] != objects[at_generation(s[0], s[1])][3]]
print("flush: %d traces, %d frees, %d samples in compiled code, %d resolved at their "
      "generation; an end-of-run trace listing would misattribute %d of them by address "
      "(LuaJIT moves its machine code area after a flush) and %d by trace number" %
      (len(objects), len(freed), len(in_trace), len(resolved), len(wrong), len(wrong_number)))
check(len(objects) >= 10 and len(freed) >= 9, "flush: traces given again after flushes")
check(in_trace and len(resolved) >= 0.95 * len(in_trace),
      "flush: compiled-code samples resolve to a trace at their generation (%d of %d)" %
      (len(resolved), len(in_trace)))
per_fn = {}
for s in resolved:
    name = functions.get(objects[at_generation(s[0], s[1])][3], "?")
    per_fn[name] = per_fn.get(name, 0) + s[2]
total = sum(per_fn.values()) or 1
shares = {k: v * 100.0 / total for k, v in per_fn.items()}
print("flush: weight by the traces' start function: %s" % shares)
check(len(shares) == 2 and all(30 <= v <= 70 for v in shares.values()),
      "flush: the two alternating functions split the compiled time (%s)" % shares)

# ---- start and end: the clock's first signal can come before the agent's
# start-up has returned (a first overflow not re-armed stopped the clock for
# good: one run in about 60 at 100 us had 1 sample), and signals go on while
# lua_close() has already stopped LuaJIT's profiler (its handler, called then,
# crashed luajit in 14 of 80 short runs at 100 us).  Many short runs at 100 us.
script = write_script("short.lua", """
local t0, x = os.clock(), 0
while os.clock() - t0 < 0.1 do for i = 1, 10000 do x = x + i % 3 end end
""")
counts = []
for i in range(20):
    path = os.path.join(WORK, "short.vmp")
    p = subprocess.run([VMP, "record", "-o", path, "--interval", "100us", "--", LUAJIT, script],
                       cwd=WORK, capture_output=True, text=True, timeout=120)
    m = re.search(r": (\d+) samples", p.stderr)
    counts.append(int(m.group(1)) if m else 0)
print("start: samples of 20 runs of 0.1 s CPU at 100 us: %s" % counts)
check(min(counts) >= 200, "start: every run keeps sampling (fewest %d of about 1,000)" %
      min(counts))

# ---- exits ---------------------------------------------------------------------------
for name, tail, want in (("error", 'error("boom")', 1), ("exit", "os.exit(3)", 3)):
    script = write_script(name + ".lua", """
local function f(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end
local t0 = os.clock()
while os.clock() - t0 < 0.3 do f(100000) end
""" + tail + "\n")
    rc, path = record(name + ".vmp", script)
    check(rc == want, "%s: the script's exit status %d (%d)" % (name, want, rc))
    rc, out, err = vmp("validate", path)
    check(rc == 0 and "complete" in out, "%s: the file is closed: %s" % (name, (out + err).strip()))

# ---- coroutines -------------------------------------------------------------------
CO_TEXT = """local function spin(n)
  local s = 0
  for i = 1, n do s = s + (i * 7) % 13 end
  return s
end

local function work_wrap(n) local r = spin(n) return r end
local function work_nested(n) local r = spin(n) return r end
local function work_err(n) local r = spin(n) return r end

local function phase(seconds, f)
  local t0 = os.clock()
  while os.clock() - t0 < seconds do f() end
end

local total = 0
phase(0.5, function()
  local p = coroutine.wrap(function()
    for _ = 1, 20 do coroutine.yield(work_wrap(20000)) end
  end)
  for _ = 1, 20 do total = total + p() end
end)
phase(0.5, function()
  local outer = coroutine.create(function()
    local inner = coroutine.create(function()
      for _ = 1, 20 do coroutine.yield(work_nested(20000)) end
    end)
    for _ = 1, 20 do
      local _, v = coroutine.resume(inner)
      coroutine.yield(v)
    end
  end)
  for _ = 1, 20 do
    local _, v = coroutine.resume(outer)
    total = total + v
  end
end)
phase(0.5, function()
  local co = coroutine.create(function()
    local v = work_err(200000)
    error("failed after " .. v)
  end)
  local ok = coroutine.resume(co)
  if not ok then total = total + 1 end
end)
print(total)
"""
co_lua = write_script("co.lua", CO_TEXT)


def co_line(text):
    """The name of the function of co.lua defined on the line holding `text`."""
    return "co.lua:%d" % next(i + 1 for i, l in enumerate(CO_TEXT.splitlines()) if text in l)


rc, path = record("co.vmp", co_lua)
check(rc == 0, "coroutines: vmp record exits 0 (%d)" % rc)
rc, out, err = vmp("info", path)
check('"coroutine"="running"' in out, "coroutines: the running coroutine's word was found")
rc, out, err = vmp("flame", path)
# a frame's name is "work_wrap (co.lua:7)", or "co.lua:18" for a function
# seen without a name (a coroutine's body): compared as "co.lua:LINE"
folded = [([re.sub(r"^.*(co\.lua:\d+)\)?$", r"\1", f) for f in line.rsplit(" ", 1)[0].split(";")],
           int(line.rsplit(" ", 1)[1])) for line in out.splitlines() if " " in line]
total_w = sum(w for (_, w) in folded) or 1
# root first: main chunk, phase, the phase's function, the coroutine's
# body, the work function, spin
for work, body in ((co_line("function work_wrap"), co_line("coroutine.wrap(function()")),
                   (co_line("function work_nested"), co_line("local inner = coroutine.create")),
                   (co_line("function work_err"), co_line("local co = coroutine.create"))):
    w = sum(w for (fr, w) in folded
            if fr[0] == "co.lua:0" and work in fr and fr.index(work) > 0 and
            fr[fr.index(work) - 1] == body and fr[fr.index(work) + 1:fr.index(work) + 2] == ["co.lua:1"])
    print("coroutines: %.1f%% of the weight in main chunk > ... > %s > %s > co.lua:1" %
          (w * 100.0 / total_w, body, work))
    check(w > 0.2 * total_w, "coroutines: %s's time under the coroutine body %s" % (work, body))
alone = sum(w for (fr, w) in folded if all(f in ("co.lua:0", co_line("function phase")) for f in fr))
check(alone < 0.1 * total_w, "coroutines: %.1f%% on the main thread's frames alone" %
      (alone * 100.0 / total_w))
# the VM's view: the work's innermost function (spin) against -jp=f
jp = jp_functions(co_lua)
total, rows = vm_functions(path)
spin = "spin (%s)" % co_line("local function spin")
mine = 100.0 * rows.get(spin, ("", 0, 0))[1] / (total or 1)
print("coroutines: vm-function view %s; luajit -jp=f %s" % (rows, jp))
check(abs(mine - jp.get("spin", 0.0)) <= 5,
      "coroutines: %s %.1f%% of the samples, -jp=f's spin %.0f%%" % (spin, mine, jp.get("spin", 0.0)))

# a coroutine that C code resumes (lua_resume, as a C library or an
# embedding program does): its samples have its frames above the main chunk
if RESUMER_DIR:
    CO_C_TEXT = """package.cpath = %r .. "/?.so;" .. package.cpath
local resume = require("vmp_test_resumer")
local function spin(n) local s = 0 for i = 1, n do s = s + (i * 7) %% 13 end return s end
local function work_c(n) local r = spin(n) return r end
local co = coroutine.create(function()
  while true do coroutine.yield(work_c(20000)) end
end)
local t0, total = os.clock(), 0
while os.clock() - t0 < 0.8 do total = total + resume(co) end
print(total)
""" % RESUMER_DIR
    co_c_lua = write_script("co_c.lua", CO_C_TEXT)
    rc, path = record("co_c.vmp", co_c_lua)
    check(rc == 0, "coroutines: resumed from C: vmp record exits 0 (%d)" % rc)
    rc, out, err = vmp("flame", path)
    lines = [(line.rsplit(" ", 1)[0].split(";"), int(line.rsplit(" ", 1)[1]))
             for line in out.splitlines() if " " in line]
    body = "co_c.lua:%d" % next(i + 1 for i, l in enumerate(CO_C_TEXT.splitlines())
                                if "coroutine.create" in l)
    total_c = sum(w for (_, w) in lines) or 1
    under = sum(w for (fr, w) in lines if fr[0] == "co_c.lua:0" and body in fr and
                any(f.startswith("work_c (") for f in fr[fr.index(body):]))
    print("coroutines: resumed from C: %.1f%% of the weight in main chunk > %s > work_c" %
          (under * 100.0 / total_c, body))
    check(under > 0.6 * total_c, "coroutines: resumed from C: the work under the coroutine's "
          "body under the main chunk (%.1f%%)" % (under * 100.0 / total_c))

# ---- names ------------------------------------------------------------------------
NAMES_TEXT = """local function spin(n) local s = 0 for i = 1, n do s = s + (i * 7) % 13 end return s end
local function plain(n) return spin(n) + 1 end
local T = {}
function T.field(n) local s = 0 for i = 1, n do s = s + (i * 7) % 13 end return s end
local Obj = {}
Obj.__index = Obj
function Obj:method(n) local s = 0 for i = 1, n do s = s + (i * 5) % 11 end return s end
local obj = setmetatable({}, Obj)
local anon = (function() return function(n) local s = 0 for i = 1, n do s = s + (i * 3) % 7 end return s end end)()
local function twice(n) local s = 0 for i = 1, n do s = s + (i * 9) % 17 end return s end
local first, second = twice, twice
local lam = {function(n) local s = 0 for i = 1, n do s = s + (i * 3) % 7 end return s end}
local t0, total = os.clock(), 0
while os.clock() - t0 < 1.0 do
  total = total + plain(100000) + T.field(100000) + obj:method(100000) + anon(100000)
  total = total + first(50000) + second(50000) + lam[1](100000)
end
print(total)
"""
names_lua = write_script("names.lua", NAMES_TEXT)


def names_line(text):
    return next(i + 1 for i, l in enumerate(NAMES_TEXT.splitlines()) if text in l)


rc, path = record("names.vmp", names_lua)
total, rows = vm_functions(path)
jp = jp_functions(names_lua)
print("names: vm-function view %s; luajit -jp=f %s" % (rows, jp))
# a local function, a table field T.f, a method obj:m, an anonymous
# function's local name; a function called under two names is one function
# (one FUNCTION per prototype) named by the first name it was seen with
for name, line in (("spin", "local function spin"), ("field", "function T.field"),
                   ("method", "function Obj:method"), ("anon", "local anon ="),
                   ("first", "local function twice")):
    want = "%s (names.lua:%d)" % (name, names_line(line))
    check(rows.get(want, ("", 0))[1] >= 0.05 * total and name in jp,
          "names: %s named as -jp=f names it (%s: %d samples)" %
          (want, name, rows.get(want, ("", 0))[1]))
# a function no code names (called as lam[1]): its chunk and line, as -jp=f
unnamed = "names.lua:%d" % names_line("local lam =")
check(rows.get(unnamed, ("", 0))[1] >= 0.05 * total and unnamed in jp,
      "names: an unnamed function is %s, as -jp=f names it (%d samples)" %
      (unnamed, rows.get(unnamed, ("", 0))[1]))
check(not any(n.startswith("second") or n.startswith("twice") for n in rows),
      "names: the function called as first and as second is listed once")
check(not any(n.startswith("plain") for n in rows) or
      rows.get("plain (names.lua:%d)" % names_line("local function plain"), ("", 0))[1] <
      0.05 * total, "names: plain's time is spin's, the innermost function")

path = os.path.join(WORK, "kill.vmp")
if os.path.exists(path):
    os.unlink(path)
p = subprocess.Popen([VMP, "record", "-o", path, "--", LUAJIT, hot_lua, "3"], cwd=WORK,
                     stderr=subprocess.DEVNULL, start_new_session=True)
time.sleep(2.0)
for task in os.listdir("/proc"):  # the luajit that vmp record started
    try:
        with open("/proc/%s/stat" % task) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        if int(fields[1]) == p.pid:
            os.kill(int(task), signal.SIGKILL)
    except (OSError, ValueError, IndexError):
        pass
p.wait(timeout=60)
check(p.returncode == 128 + signal.SIGKILL, "kill: vmp record reports the kill (%d)" % p.returncode)
rc, out, err = vmp("report", path)
m = re.search(r"samples: (\d+) total", out)
check(rc == 0 and m and int(m.group(1)) > 100,
      "kill -9: the report reads what was written (%s)" % (m.group(0) if m else err.strip()))

print("%d failures" % failures)
sys.exit(1 if failures else 0)
