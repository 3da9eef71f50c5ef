#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# run_pprof_tests.py - checks `vmp pprof` with the real pprof client and
# `vmp import` (pprof -> vmp), on files from the simulated VM (tests/simvm).
#
#   run_pprof_tests.py go|import VMP SIMVM WORKDIR
#
# go:     `go tool pprof -raw` and `-top` on `vmp pprof`'s output agree with
#         `vmp report --format csv` (sample total, flat counts per function
#         and per bytecode range) and with the simulator's ground truth (per
#         thread, with -tagfocus).  Exit 77 (skipped) when `go` is absent.
# import: the round trip vmp -> pprof -> vmp keeps `vmp report --no-ranges`'s
#         function rows; bad inputs fail with one line naming the file.
import collections
import csv
import gzip
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


def run(args, env=None, ok=True):
    p = subprocess.run(args, capture_output=True, env=env)
    if ok and p.returncode != 0:
        print("command failed (%d): %s\n%s" % (p.returncode, " ".join(args),
                                               p.stderr.decode(errors="replace")))
        sys.exit(1)
    return p


def report_rows(vmp, path, ranges):
    args = [vmp, "report", "--format", "csv", "--top", "0", path]
    if not ranges:
        args.insert(4, "--no-ranges")
    out = run(args).stdout.decode()
    rows = list(csv.DictReader(io.StringIO(out)))
    return rows


def by_function(rows):
    """function name -> summed samples (names may repeat across kinds)."""
    d = collections.Counter()
    for r in rows:
        if r["range"] == "":
            d[r["function"]] += int(r["samples"])
    return d


def by_range(rows):
    """'function A->B' -> samples for the rows that have a range."""
    d = collections.Counter()
    for r in rows:
        if r["range"] != "":
            d[r["function"] + " " + r["range"]] += int(r["samples"])
    return d


def simvm(simvm_bin, work, name, samples, seed, threads=3):
    path = os.path.join(work, name)
    truth = path + ".truth"
    run([simvm_bin, "--samples", str(samples), "--seed", str(seed), "--threads", str(threads),
         "-o", path, "--truth", truth])
    return path, truth


# ---- go tool pprof ---------------------------------------------------------------------------

def go_env(work):
    env = dict(os.environ)
    for k, d in (("HOME", "home"), ("GOCACHE", "gocache"), ("GOPATH", "gopath"),
                 ("PPROF_TMPDIR", "pprof-tmp")):
        env[k] = os.path.join(work, d)
        os.makedirs(env[k], exist_ok=True)
    env.update(GOFLAGS="-mod=mod", GOTOOLCHAIN="local", GOPROXY="off", GONOSUMDB="*",
               GOFLAGS_EXTRA="", PPROF_BINARY_PATH=os.path.join(work, "no-binaries"))
    return env


def pprof(env, *args):
    p = run(["go", "tool", "pprof"] + list(args), env=env)
    return p.stdout.decode(errors="replace")


def raw_total(text):
    """Sum of the first value of every sample in `-raw` output."""
    total, on = 0, False
    for line in text.splitlines():
        if line.startswith("Samples:"):
            on = True
            continue
        if on and (line.startswith("Locations") or line.startswith("Mappings")):
            break
        parts = line.split()
        if on and len(parts) >= 2 and parts[0].isdigit() and parts[1].rstrip(":").isdigit() \
                and parts[1].endswith(":"):
            total += int(parts[0])
    return total


def top_rows(text):
    """name -> flat from `-top` output."""
    rows, on = {}, False
    for line in text.splitlines():
        if line.strip().startswith("flat"):
            on = True
            continue
        if not on or not line.strip():
            continue
        parts = line.split(None, 5)
        if len(parts) < 6:
            continue
        name = parts[5]
        if name.endswith(" (inline)"):  # pprof's mark of an inlined Line: our range Lines
            name = name[: -len(" (inline)")]
        rows[name] = rows.get(name, 0) + int(parts[0].replace(",", ""))
    return rows


def truth_threads(truth):
    c = collections.Counter()
    with open(truth) as f:
        for line in f:
            c[line.split("\t", 1)[0]] += 1
    return c


def test_go(vmp, simvm_bin, work):
    if shutil.which("go") is None:
        print("SKIP: go is not installed (install golang-go: scripts/setup)")
        return SKIP
    env = go_env(work)
    path, truth = simvm(simvm_bin, work, "sim.vmp", 30000, 11)
    out = os.path.join(work, "sim.pb.gz")
    run([vmp, "pprof", "-o", out, path])
    with open(out, "rb") as f:
        head = f.read(2)
    check(head == b"\x1f\x8b", "output starts with the gzip magic")

    info = json.loads(run([vmp, "info", "--json", path]).stdout)
    total = info["sample_weight"]
    raw = pprof(env, "-raw", out)
    check(raw_total(raw) == total, "-raw sample total %d == vmp info's %d" % (raw_total(raw), total))
    # spec R-VIEW-5: sample types, period, labels (R-VIEW-1: the same total)
    check("PeriodType: cpu nanoseconds" in raw, "-raw shows the period type cpu/nanoseconds")
    check("Period: %d" % info["interval_ns"] in raw, "-raw shows the period = the interval")
    for label in ("thread:[", "thread_id:[", "state:[", "code_kind:[", "jit_unit:[", "failed:["):
        check(label in raw, "-raw shows the label " + label)
    failed = json.loads(run([vmp, "report", "--format", "json", path]).stdout)["failed"]
    t = raw_total(pprof(env, "-raw", "-tagfocus=failed=.", out))
    check(t == failed and failed > 0,
          "-tagfocus=failed: %d samples == vmp report's failed %d" % (t, failed))
    # the JIT units: the label's totals are vmp report --by unit's
    rows = list(csv.reader(io.StringIO(
        run([vmp, "report", "--by", "unit", "--format", "csv", path]).stdout.decode())))[1:]
    units = [(name, int(n)) for name, n in rows if not name.startswith("[")]
    check(len(units) >= 3, "the file has JIT units (%d)" % len(units))
    for name, n in units[:3]:
        rx = "".join("\\" + ch if ch in "[](){}.*+?^$|\\" else ch for ch in name)
        t = raw_total(pprof(env, "-raw", "-tagfocus=jit_unit=^%s$" % rx, out))
        check(t == n, "-tagfocus=jit_unit=%s: %d samples == vmp report --by unit's %d" %
              (name, t, n))

    # spec R-VIEW-6: every kind its two sample types, as go tool pprof names them
    kinds = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "valid",
                         "sample-kinds.vmp")
    kout = os.path.join(work, "kinds.pb.gz")
    run([vmp, "pprof", "-o", kout, kinds])
    raw = pprof(env, "-raw", kout)
    check("samples/count cpu/nanoseconds[dflt] alloc_objects/count alloc_space/bytes "
          "contentions/count delay/nanoseconds" in raw,
          "-raw lists the sample types of cpu (the default), alloc and lock")
    top = pprof(env, "-top", "-sample_index=alloc_space", kout)
    check("byte[]" in top and "512kB" in top, "-sample_index=alloc_space: byte[] 512kB on top")
    top = pprof(env, "-top", "-sample_index=alloc_objects", kout)
    check("Total samples = 1" in top or "of 1 total" in top, "-sample_index=alloc_objects: 1")
    top = pprof(env, "-top", "-sample_index=delay", kout)
    check("20us" in top, "-sample_index=delay: 20us waited")
    top = pprof(env, "-top", "-sample_index=samples", kout)
    check("Total samples = 2" in top or "of 2 total" in top, "-sample_index=samples: the 2 CPU samples")

    # function level: -noinlines drops the bytecode-range Lines
    fun = by_function(report_rows(vmp, path, False))
    top = pprof(env, "-top", "-noinlines", "-nodecount=25", "-nodefraction=0", "-edgefraction=0",
               "-sample_index=samples", out)
    check("Total samples = %d" % total in top, "-top total == %d" % total)
    rows = top_rows(top)
    check(len(rows) == 25, "-top -nodecount=25 lists 25 functions (got %d)" % len(rows))
    for name, flat in rows.items():
        check(fun.get(name) == flat,
              "function %r: pprof flat %d == vmp report %s" % (name, flat, fun.get(name)))
    best = sorted(fun.values(), reverse=True)[:25]
    check(sorted(rows.values(), reverse=True) == best,
          "pprof's top 25 flat counts are vmp report's top 25")
    # every function, not just the top
    allrows = top_rows(pprof(env, "-top", "-noinlines", "-nodecount=1000000", "-nodefraction=0",
                             "-sample_index=samples", out))
    for name, w in fun.items():
        if allrows.get(name, 0) != w:
            check(False, "function %r: pprof flat %s == vmp report %d" % (name, allrows.get(name), w))
            break
    else:
        check(True, "all functions agree")
    check(sum(allrows.values()) == total, "flat counts add up to the total")

    # range level: the default view lists "<function> A->B" pseudo-functions
    rng = by_range(report_rows(vmp, path, True))
    deflt = top_rows(pprof(env, "-top", "-nodecount=1000000", "-nodefraction=0",
                           "-sample_index=samples", out))
    bad = [k for k, v in rng.items() if deflt.get(k) != v]
    check(len(rng) > 0 and not bad, "every bytecode range's flat count agrees (%d ranges, %d off: %s)"
          % (len(rng), len(bad), bad[:3]))

    # per thread, against the simulator's ground truth
    for name, n in truth_threads(truth).items():
        t = raw_total(pprof(env, "-raw", "-tagfocus=thread=^%s$" % name, out))
        check(t == n, "-tagfocus=thread=%s: %d samples == truth %d" % (name, t, n))
        top_t = top_rows(pprof(env, "-top", "-nodecount=1000000", "-nodefraction=0",
                               "-sample_index=samples", "-tagfocus=thread=^%s$" % name, out))
        check(sum(top_t.values()) == n, "-top -tagfocus=thread=%s flat sum == %d" % (name, n))

    # --no-ranges: functions only, same totals by default
    out2 = os.path.join(work, "sim-noranges.pb.gz")
    run([vmp, "pprof", "--no-ranges", "-o", out2, path])
    nr = top_rows(pprof(env, "-top", "-nodecount=1000000", "-nodefraction=0",
                        "-sample_index=samples", out2))
    want = {k: v for k, v in fun.items() if v}
    nr = {k: v for k, v in nr.items() if v}  # callers only: flat 0
    diff = sorted((k, nr.get(k), want.get(k)) for k in set(nr) | set(want) if nr.get(k) != want.get(k))
    check(not diff, "--no-ranges: -top == function rows (differences: %s)" % diff[:4])
    # --inlines: inlined functions become Lines of their code object's Location;
    # -noinlines folds them back into the function rows of vmp report
    out3 = os.path.join(work, "sim-inlines.pb.gz")
    run([vmp, "pprof", "--inlines", "-o", out3, path])
    raw3 = pprof(env, "-raw", out3)
    locs = raw3.split("Locations", 1)[1].split("Mappings", 1)[0]
    chains, cur = 0, []
    for line in locs.splitlines() + ["     0: end"]:
        if line.split(":")[0].strip().isdigit():
            if len([l for l in cur if "->" not in l.split(" ", 2)[-1].split(":")[0]]) >= 2:
                chains += 1
            cur = [line.split(None, 3)[-1] if len(line.split(None, 3)) > 3 else ""]
        elif line.strip():
            cur.append(line.strip())
    check(chains > 0, "--inlines: some Locations hold an inline chain (%d)" % chains)
    ni = top_rows(pprof(env, "-top", "-noinlines", "-nodecount=1000000", "-nodefraction=0",
                        "-sample_index=samples", out3))
    ni = {k: v for k, v in ni.items() if v}
    diff = sorted((k, ni.get(k), want.get(k)) for k in set(ni) | set(want) if ni.get(k) != want.get(k))
    check(not diff, "--inlines with -noinlines == vmp report's function rows (off: %s)" % diff[:4])
    check(raw_total(raw3) == total, "--inlines keeps the total")

    # a profile written by Go's runtime/pprof imports, and vmp report's
    # function rows equal go tool pprof's flat counts (each Line is a frame)
    prog = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goprog", "main.go")
    gopb = os.path.join(work, "go-cpu.pb.gz")
    run(["go", "run", prog, gopb], env=env)
    gov = os.path.join(work, "go-cpu.vmp")
    p = run([vmp, "import", "-o", gov, gopb], ok=False)
    check(p.returncode == 0, "a Go CPU profile imports: " + p.stderr.decode(errors="replace"))
    if p.returncode == 0:
        gtop = top_rows(pprof(env, "-top", "-nodecount=1000000", "-nodefraction=0",
                              "-sample_index=samples", gopb))
        gtop = {k: v for k, v in gtop.items() if v}
        gfun = {k: v for k, v in by_function(report_rows(vmp, gov, False)).items() if v}
        diff = sorted((k, gtop.get(k), gfun.get(k)) for k in set(gtop) | set(gfun)
                      if gtop.get(k) != gfun.get(k))
        check(sum(gtop.values()) > 20 and not diff,
              "Go profile: vmp report rows == go tool pprof flat (%d samples; off: %s)"
              % (sum(gtop.values()), diff[:4]))
        gi = json.loads(run([vmp, "info", "--json", gov]).stdout)
        check(any(t["name"] == "worker" for t in gi["threads"]),
              "Go's 'thread' label (pprof.Do) names a thread: %s" % gi["threads"])

    # cpu/nanoseconds = samples x interval
    cpu = pprof(env, "-raw", out)
    lines = [l.split() for l in cpu.splitlines() if l.strip() and l.split()[0].isdigit()
             and len(l.split()) > 1 and l.split()[1].rstrip(":").isdigit()]
    check(all(int(p[1].rstrip(":")) == int(p[0]) * info["interval_ns"] for p in lines),
          "cpu/nanoseconds == samples x interval in every sample")
    return 0


# ---- vmp import ------------------------------------------------------------------------------

def varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def fld(num, value):
    """A protobuf field: int -> varint, bytes/str -> length-delimited."""
    if isinstance(value, int):
        return varint(num << 3) + varint(value)
    if isinstance(value, str):
        value = value.encode()
    return varint(num << 3 | 2) + varint(len(value)) + value


def msg(*fields):
    return b"".join(fields)


def small_profile(value=5, loc_id=1, fn_id=1, line_fn=1, strings=None, extra=b""):
    strings = strings or ["", "samples", "count", "main", "thread", "f.c", "cpu", "nanoseconds"]
    p = fld(1, msg(fld(1, 1), fld(2, 2)))                                  # sample_type
    p += fld(2, msg(fld(1, msg(varint(loc_id))), fld(2, msg(varint(value))),
                    fld(3, msg(fld(1, 4), fld(2, 3)))))                     # sample
    p += fld(4, msg(fld(1, 1), fld(4, msg(fld(1, line_fn), fld(2, 7)))))    # location
    p += fld(5, msg(fld(1, fn_id), fld(2, 3), fld(3, 3), fld(4, 5)))         # function
    for s in strings:
        p += fld(6, s)
    p += fld(11, msg(fld(1, 6), fld(2, 7))) + fld(12, 1000000)
    return p + extra


def test_import(vmp, simvm_bin, work):
    path, _ = simvm(simvm_bin, work, "sim.vmp", 20000, 5)
    pb = os.path.join(work, "sim.pb.gz")
    run([vmp, "pprof", "-o", pb, path])
    back = os.path.join(work, "back.vmp")
    run([vmp, "import", "-o", back, pb])
    a, b = report_rows(vmp, path, False), report_rows(vmp, back, False)
    fa = sorted((r["function"], int(r["samples"])) for r in a)
    fb = sorted((r["function"], int(r["samples"])) for r in b)
    check(len(fa) > 50 and fa == fb,
          "round trip keeps vmp report --no-ranges's function rows (%d rows)" % len(fa))
    check(run([vmp, "validate", back], ok=False).returncode == 0, "the imported file validates")
    ia = json.loads(run([vmp, "info", "--json", path]).stdout)
    ib = json.loads(run([vmp, "info", "--json", back]).stdout)
    check(ia["sample_weight"] == ib["sample_weight"], "round trip keeps the total weight")
    check(sorted(t["name"] for t in ia["threads"]) == sorted(t["name"] for t in ib["threads"]),
          "round trip keeps the thread names")
    check(ib["interval_ns"] == ia["interval_ns"], "the period becomes the sampling interval")
    # deterministic
    back2 = os.path.join(work, "back2.vmp")
    run([vmp, "import", "-o", back2, pb])
    check(open(back, "rb").read() == open(back2, "rb").read(), "import is deterministic")
    # raw protobuf input, from standard input
    raw = os.path.join(work, "sim.pb")
    run([vmp, "pprof", "--raw", "-o", raw, path])
    with open(raw, "rb") as f:
        p = subprocess.run([vmp, "import", "-o", os.path.join(work, "raw.vmp"), "-"], stdin=f,
                           capture_output=True)
    check(p.returncode == 0, "raw protobuf from standard input imports")
    check(sorted((r["function"], int(r["samples"]))
                 for r in report_rows(vmp, os.path.join(work, "raw.vmp"), False)) == fa,
          "raw protobuf input gives the same function rows")
    # --sample-index 1 (cpu/nanoseconds) makes weights of interval ns
    p = run([vmp, "import", "--sample-index", "1", "-o", os.path.join(work, "cpu.vmp"), pb])
    ic = json.loads(run([vmp, "info", "--json", os.path.join(work, "cpu.vmp")]).stdout)
    check(ic["sample_weight"] == ia["sample_weight"] * ia["interval_ns"],
          "--sample-index 1 sums cpu/nanoseconds")

    # a small hand-made profile; a value above 2^32 is split
    good = os.path.join(work, "small.pb")
    with open(good, "wb") as f:
        f.write(small_profile(value=(1 << 33) + 7))
    out = os.path.join(work, "small.vmp")
    p = run([vmp, "import", "-o", out, good], ok=False)
    check(p.returncode == 0, "hand-made profile imports: " + p.stderr.decode(errors="replace"))
    if p.returncode == 0:
        i = json.loads(run([vmp, "info", "--json", out]).stdout)
        check(i["sample_weight"] == (1 << 33) + 7 and i["samples"] == 3,
              "a value of 2^33+7 becomes 3 samples of that total weight (%d, %d)"
              % (i["sample_weight"], i["samples"]))

    # bad inputs: exit 1, one line on stderr naming the file, no output file
    blob = open(pb, "rb").read()
    bad = {
        "truncated.pb.gz": blob[: len(blob) // 2],
        "corrupt.pb.gz": blob[:20] + bytes(b ^ 0x55 for b in blob[20:60]) + blob[60:],
        "wrongtype.pb": fld(1, 7) + fld(6, ""),                  # sample_type as a varint
        "wrongtype2.pb": small_profile() + varint(5 << 3 | 0) + varint(1),  # function as varint
        "truncatedmsg.pb": small_profile()[:-5],
        "badloc.pb": small_profile(loc_id=99),
        "badfunc.pb": small_profile(line_fn=42),
        "badstring.pb": small_profile(strings=["", "samples", "count"]),
        "huge.pb": small_profile(value=1 << 50),
        "negative.pb": small_profile(value=-3),
        "notpprof.txt": b"hello, this is not a profile\n" * 3,
        "empty.pb": b"",
        "zeroid.pb": small_profile(fn_id=0, line_fn=0),
    }
    for name, data in bad.items():
        f = os.path.join(work, name)
        with open(f, "wb") as h:
            h.write(data)
        o = os.path.join(work, name + ".vmp")
        p = run([vmp, "import", "-o", o, f], ok=False)
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 1, "%s: exit 1 (got %d)" % (name, p.returncode))
        check(err.count("\n") == 1 and f in err, "%s: one line naming the file: %r" % (name, err))
        check(not os.path.exists(o), "%s: no output file left" % name)
    p = run([vmp, "import", "--sample-index", "2", "-o", os.path.join(work, "x.vmp"), pb], ok=False)
    check(p.returncode == 1 and "sample index" in p.stderr.decode(),
          "--sample-index past the sample types fails")
    p = run([vmp, "import", pb], ok=False)
    check(p.returncode == 2, "import without -o is a usage error")
    return 0


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("go", "import"):
        print(__doc__ or "usage: run_pprof_tests.py go|import VMP SIMVM WORKDIR")
        return 2
    part, vmp, simvm_bin, work = sys.argv[1:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rc = test_go(vmp, simvm_bin, work) if part == "go" else test_import(vmp, simvm_bin, work)
    if rc == SKIP:
        return SKIP
    print("%d passed, %d failed" % (checks - failures, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
