#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# test_archive.py - `vmp archive` (docs/archive.md): 2 x N small profiles
# indexed (N runs of a program, then N with one function slowed); each run's rows equal what `vmp report` and `vmp diff` compute
# from the file; `archive diff` prints exactly what `vmp diff BASE... --
# NEW...` prints on the files; adding the same files again changes nothing;
# a truncated and a corrupt file are reported and skipped; an `add` killed
# midway leaves a consistent database that a second `add` completes; the
# documented schema is the one vmp creates, and the rows load into it with
# the sqlite3 shell; usage errors.
#
# usage: test_archive.py VMP VMP_SIMVM WORKDIR [N]
# N: 100 by default; the sanitizer build runs 30 (the same checks: what it
# adds is memory checking, and 200 instrumented runs took two minutes).
import csv
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

from archive_checks import check, finish, runner, two_sides

VMP, SIMVM, WORK = sys.argv[1:4]
N = int(sys.argv[4]) if len(sys.argv) > 4 else 100
HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(HERE, "..", "..", "docs", "archive.md")
run = runner(VMP)


def dump(db):
    """Every row of every table but the time of adding, sorted."""
    con = sqlite3.connect(db)
    out = {}
    for (t,) in con.execute("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"):
        rows = con.execute("SELECT * FROM %s" % t).fetchall()
        if t == "runs":
            cols = [d[0] for d in con.execute("SELECT * FROM runs LIMIT 0").description]
            i = cols.index("added_ns")
            rows = [r[:i] + r[i + 1:] for r in rows]
        out[t] = sorted(rows)
    con.close()
    return out


base, new = two_sides(SIMVM, WORK, N)
files = base + new
with open(base[0], "rb") as f:
    data = f.read()
with open("truncated.vmp", "wb") as f:
    f.write(data[:len(data) // 2])
with open("corrupt.vmp", "wb") as f:
    f.write(data[:200] + bytes(b ^ 0x5A for b in data[200:400]) + data[400:])

# ---- add ----------------------------------------------------------------------------
t0 = time.monotonic()
os.makedirs("adir")
rc, out, err = run("archive", "add", "a.db", *files, "truncated.vmp", "corrupt.vmp", "adir",
                   "missing.vmp")
secs = time.monotonic() - t0
check(rc == 1, "add with damaged files exits 1 (%d)" % rc)
check("%d added, 0 already indexed, 4 damaged" % (2 * N) in err, "add counts: %s" % err.strip().splitlines()[-1])
check("adir: not a regular file (skipped)" in err and
      "missing.vmp: No such file or directory (skipped)" in err,
      "a directory and a missing file are named and skipped")
trunc_line = [l for l in err.splitlines() if "truncated.vmp" in l]
check(len(trunc_line) == 1 and re.search(r"truncated\.vmp: offset \d+", trunc_line[0]) and
      "skipped" in trunc_line[0], "the truncated file is named with its offset: %s" % trunc_line)
check(any("corrupt.vmp: offset" in l for l in err.splitlines()),
      "the corrupt file is named with its offset")
print("add: %d profiles in %.2f s (%.0f profiles/s)" % (2 * N, secs, 2 * N / secs))

con = sqlite3.connect("a.db")
check(con.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "integrity_check ok")
check(con.execute("SELECT count(*) FROM runs").fetchone()[0] == 2 * N, "%d runs" % (2 * N))
check(con.execute("SELECT value FROM archive WHERE name = 'schema'").fetchone()[0] == "2",
      "schema 2")
paths = [r[0] for r in con.execute("SELECT path FROM runs ORDER BY run_id")]
check(paths == files, "runs in the order added, with their paths")
sha = con.execute("SELECT sha256 FROM runs WHERE path = ?", (base[0],)).fetchone()[0]
import hashlib
check(sha == hashlib.sha256(data).hexdigest(), "sha256 is the file's SHA-256")

# Each run's weights are what `vmp report` (executing) and `vmp diff` (self,
# total) compute from the file.
for path in (base[0], base[N * 57 // 100], new[3]):
    rid, total = con.execute("SELECT run_id, total_weight FROM runs WHERE path = ?",
                             (path,)).fetchone()
    rows = {n: (s, t, e) for n, s, t, e in con.execute(
        "SELECT f.name, w.self, w.total, w.executing FROM weights w JOIN functions f "
        "USING (function_id) WHERE w.run_id = ? AND f.is_range = 0", (rid,))}
    _, rep, _ = run("report", "--format", "json", "--top", "100000", path)
    j = json.loads(rep)
    check(j["samples"] == total, "%s: total weight %d is the report's samples" % (path, total))
    funcs = j["generated_code"]["functions"] + j["vanilla_code"]["functions"]
    bad = [f["name"] for f in funcs if rows.get(f["name"], (0, 0, 0))[2] != f["samples"]]
    check(not bad and len(funcs) > 10,
          "%s: executing weight = vmp report's samples for %d functions (%s)" %
          (path, len(funcs), bad[:3]))
    _, d, _ = run("diff", path, path)
    diffrows = {}
    for line in d.splitlines():
        if not line.startswith("#"):
            f = line.split(None, 10)
            diffrows[f[10]] = (int(f[6]), int(f[8]))
    want = {n: v for n, v in diffrows.items()}
    got = {n: (s, t) for n, (s, t, e) in rows.items() if t}
    check(want == got, "%s: self and total = vmp diff's for all %d functions" % (path, len(want)))
con.close()

# ---- ls ------------------------------------------------------------------------------
rc, out, _ = run("archive", "ls", "a.db")
lines = [l for l in out.splitlines() if not l.startswith("#")]
check(rc == 0 and len(lines) == 2 * N, "ls lists %d runs" % (2 * N))
rc, out, _ = run("archive", "ls", "--label", "commit=b", "--format", "json", "a.db")
j = json.loads(out)
check(rc == 0 and [r["path"] for r in j] == new and all("commit=b" in r["labels"] for r in j),
      "ls --label commit=b: the %d new runs in order" % N)
rc, out, _ = run("archive", "ls", "--label", "commit=b", "--label", "mode=test", "--format",
                 "csv", "a.db")
check(rc == 0 and len(list(csv.reader(out.splitlines()))) == N + 1, "two labels, csv")
rc, out, _ = run("archive", "ls", "--label", "commit=zzz", "a.db")
check(rc == 0 and not [l for l in out.splitlines() if not l.startswith("#")],
      "ls of a label nobody has: no run")

# ---- diff: the same output as vmp diff on the files -----------------------------------
for fmt in ("json", "text", "csv"):
    rc1, a_out, a_err = run("archive", "diff", "--base", "commit=a", "--new", "commit=b",
                            "--format", fmt, "a.db")
    rc2, f_out, _ = run("diff", "--format", fmt, *base, "--", *new)
    check(rc1 == 0 and rc2 == 0 and a_out == f_out,
          "archive diff --format %s = vmp diff on the %d files (%s)" % (fmt, 2 * N, a_err.strip()))
j = json.loads(a_out) if False else json.loads(run("archive", "diff", "--base", "commit=a",
                                                    "--new", "commit=b", "--format", "json",
                                                    "a.db")[1])
check(j["functions"][0]["function"] == "String>>sortBlock" and j["functions"][0]["significant"],
      "the slowed function is first and significant")

# ---- trend: the shares of vmp report and vmp diff, and where the change begins ---------
F = "String>>sortBlock"
t0 = time.monotonic()
rc, out, err = run("archive", "trend", "--format", "json", "a.db", F)
print("trend over %d runs: %.3f s" % (2 * N, time.monotonic() - t0))
check(rc == 0, "trend --format json exits 0 (%s)" % err.strip())
j = json.loads(out)
check([r["path"] for r in j["runs"]] == files, "trend: every run, in time order")
check(len(j["changes"]) == 1 and j["changes"][0]["index"] == N and
      j["changes"][0]["self_after_pct"] > j["changes"][0]["self_before_pct"] + 3,
      "trend: one change, beginning at the first slowed run (%s)" %
      [(c["index"], round(c["self_before_pct"], 2), round(c["self_after_pct"], 2))
       for c in j["changes"]])
check([r["change"] for r in j["runs"]].count(True) == 1 and j["runs"][N]["change"],
      "trend: the run where it begins is marked")
for i in (0, N * 57 // 100, N + 3):
    path = files[i]
    _, rep, _ = run("report", "--format", "json", "--top", "100000", path)
    rj = json.loads(rep)
    want = [f for f in rj["generated_code"]["functions"] if f["name"] == F][0]
    got = j["runs"][i]
    _, d, _ = run("diff", path, path)
    drow = [l.split(None, 10) for l in d.splitlines()
            if not l.startswith("#") and l.endswith(" " + F)][0]
    check(abs(got["self_pct"] - 100.0 * want["samples"] / rj["samples"]) < 0.00006 and
          abs(got["self_pct"] - want["percent_total"]) < 0.006,
          "%s: trend self %.4f%% = vmp report's %.4f%%" % (path, got["self_pct"],
                                                            want["percent_total"]))
    check(abs(got["total_pct"] - float(drow[4])) < 0.006 and
          abs(got["innermost_pct"] - float(drow[2])) < 0.006,
          "%s: trend total %.3f%%, innermost %.3f%% = vmp diff's %s, %s" %
          (path, got["total_pct"], got["innermost_pct"], drow[4], drow[2]))
rc, out, _ = run("archive", "trend", "--label", "commit=a", "--format", "json", "a.db", F)
j = json.loads(out)
check(rc == 0 and len(j["runs"]) == N and not j["changes"],
      "trend of %d runs of one program: no change (A/A)" % N)
rc, out, _ = run("archive", "trend", "a.db", F)
marked = [l for l in out.splitlines() if not l.startswith("#") and "<<" in l]
check(rc == 0 and len(marked) == 1 and marked[0].split()[0] == str(N + 1) and
      "from run %d" % (N + 1) in out, "trend text: run %d marked" % (N + 1))
rc, out, _ = run("archive", "trend", "--format", "csv", "a.db", F)
rows = list(csv.DictReader(out.splitlines()))
check(rc == 0 and len(rows) == 2 * N and rows[N]["change"] == "1", "trend csv")
rc, _, err = run("archive", "trend", "-o", "trend.svg", "a.db", F)
check(rc == 0, "trend -o trend.svg (%s)" % err.strip())
import xml.etree.ElementTree as ET
svg = ET.parse("trend.svg").getroot()
NS = "{http://www.w3.org/2000/svg}"
changes = [g for g in svg.iter(NS + "g") if g.get("class") == "change"]
runs = [g for g in svg.iter(NS + "g") if g.get("class") == "run"]
lines = {p.get("class"): p.get("points").split() for p in svg.iter(NS + "polyline")}
check(len(runs) == 2 * N and len(lines.get("self", [])) == 2 * N and
      len(lines.get("total", [])) == 2 * N, "svg: %d runs, a self and a total line" % (2 * N))
check(len(changes) == 1 and changes[0].get("data-run") == str(N + 1),
      "svg: the change at run %d" % (N + 1))
rc, _, err = run("archive", "trend", "a.db", "NoSuch>>function")
check(rc == 1 and "NoSuch>>function" in err, "trend of an unknown function: exit 1 (%s)" %
      err.strip())

# ---- idempotent add -------------------------------------------------------------------
before = dump("a.db")
rc, out, err = run("archive", "add", "a.db", *files)
check(rc == 0 and "0 added, %d already indexed, 0 damaged" % (2 * N) in err,
      "adding the same files again adds nothing (%s)" % err.strip())
shutil.copy(base[5], "copy-of-a005.vmp")
rc, out, err = run("archive", "add", "a.db", "copy-of-a005.vmp")
check(rc == 0 and "0 added, 1 already indexed" in err, "a copy under another name is known")
check(dump("a.db") == before, "the database is unchanged")

# ---- --ranges ----------------------------------------------------------------------------
rc, _, err = run("archive", "add", "--ranges", "r.db", *base[:3], *new[:3])
check(rc == 0, "add --ranges")
rc1, a_out, a_err = run("archive", "diff", "--ranges", "--base", "commit=a", "--new", "commit=b",
                        "--format", "json", "r.db")
rc2, f_out, _ = run("diff", "--ranges", "--format", "json", *base[:3], "--", *new[:3])
check(rc1 == 0 and a_out == f_out and "->" in a_out,
      "archive diff --ranges = vmp diff --ranges (%s)" % a_err.strip())
rc, _, err = run("archive", "diff", "--ranges", "--base", "commit=a", "--new", "commit=b", "a.db")
check(rc == 1 and "without --ranges" in err, "--ranges on runs added without: %s" % err.strip())

# ---- kill midway ------------------------------------------------------------------------
for attempt in range(3):
    for f in ("k.db", "k.db-wal", "k.db-shm"):
        if os.path.exists(f):
            os.remove(f)
    p = subprocess.Popen([VMP, "archive", "add", "k.db", *files], stderr=subprocess.DEVNULL)
    n = 0
    deadline = time.monotonic() + 30
    while p.poll() is None and time.monotonic() < deadline:
        try:
            c = sqlite3.connect("file:k.db?mode=ro", uri=True, timeout=0.05)
            n = c.execute("SELECT count(*) FROM runs").fetchone()[0]
            c.close()
        except sqlite3.Error:
            n = 0
        if n >= 10:
            p.send_signal(signal.SIGKILL)
            break
        time.sleep(0.005)
    p.wait()
    if p.returncode == -signal.SIGKILL:
        break
check(p.returncode == -signal.SIGKILL, "add killed midway (after %d runs)" % n)
con = sqlite3.connect("k.db")
check(con.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "killed: integrity_check ok")
check(not con.execute("PRAGMA foreign_key_check").fetchall(), "killed: foreign keys hold")
partial = con.execute(
    "SELECT count(*) FROM runs r WHERE total_weight != "
    "(SELECT coalesce(sum(self), 0) FROM weights w WHERE w.run_id = r.run_id)").fetchone()[0]
kept = con.execute("SELECT count(*) FROM runs").fetchone()[0]
check(partial == 0 and 0 < kept < 2 * N,
      "killed: %d whole runs (each run's self weights sum to its total), none partial" % kept)
con.close()
rc, _, err = run("archive", "add", "k.db", *files)
check(rc == 0 and ("%d added, %d already indexed" % (2 * N - kept, kept)) in err,
      "a second add completes it: %s" % err.strip())
check(dump("k.db")["weights"] == before["weights"] and
      dump("k.db")["functions"] == before["functions"], "and it holds the same rows as a.db")

# ---- the documented schema, loaded with the sqlite3 shell ---------------------------------
doc = open(DOC).read()
schema = re.search(r"## Schema 2.*?```sql\n(.*?)```", doc, re.S).group(1)


def normal(sql):
    return re.sub(r"\s+", " ", sql).strip()


con = sqlite3.connect("a.db")
made = {n: normal(s) for n, s in con.execute(
    "SELECT name, sql FROM sqlite_schema WHERE sql IS NOT NULL")}
con.close()
documented = {}
for stmt in schema.split(";"):
    if stmt.strip():
        name = re.search(r"CREATE (?:TABLE|INDEX) (\w+)", stmt).group(1)
        documented[name] = normal(stmt)
check(made == documented, "docs/archive.md's schema is the one vmp creates (%s)" %
      sorted(set(made.items()) ^ set(documented.items()))[:2])

shell = shutil.which("sqlite3")
check(shell is not None, "the sqlite3 shell is installed")
if shell:
    with open("schema.sql", "w") as f:
        f.write(schema)
    script = ".read schema.sql\n"
    for t in ("archive", "runs", "labels", "functions", "weights", "run_kinds", "kind_weights"):
        with open(t + ".csv", "w") as f:
            subprocess.run([shell, "-csv", "-header", "a.db", "SELECT * FROM %s" % t], stdout=f,
                           check=True)
        script += ".import --csv --skip 1 %s.csv %s\n" % (t, t)
    if os.path.exists("loaded.db"):
        os.remove("loaded.db")
    p = subprocess.run([shell, "loaded.db"], input=script.encode(), stderr=subprocess.PIPE)
    check(p.returncode == 0 and not p.stderr, "the sqlite3 shell loads the exported rows into the "
          "documented schema (%s)" % p.stderr.decode().strip())
    check(dump("loaded.db") == dump("a.db"), "the loaded rows are the archive's")
    # the trend query of docs/archive.md
    q = re.search(r"## Queries.*?```sql\n(.*?)```", doc, re.S).group(1)
    con = sqlite3.connect("loaded.db")
    trend = con.execute(q).fetchall()
    con.close()
    _, rep, _ = run("diff", base[0], base[0])
    self0 = [l.split(None, 10) for l in rep.splitlines()
             if not l.startswith("#") and l.endswith(" String>>sortBlock")][0]
    check(len(trend) == 2 * N and abs(trend[0][2] - float(self0[2])) < 0.005,
          "the documented trend query: %d runs, run 1's self share %.3f = vmp diff's %s" %
          (2 * N, trend[0][2], self0[2]))

# ---- sample kinds (spec.md §5.15) --------------------------------------------------------
KINDS = os.path.join(HERE, "..", "golden", "valid", "sample-kinds.vmp")
rc, _, err = run("archive", "add", "kinds.db", KINDS, base[0])
check(rc == 0, "add a file with sample kinds (%s)" % err.strip())
con = sqlite3.connect("kinds.db")
rk = con.execute("SELECT kind, unit, samples, total_weight FROM run_kinds ORDER BY kind").fetchall()
check(rk == [("alloc", "bytes", 1, 524288), ("lock", "nanoseconds", 1, 20000)],
      "run_kinds: alloc and lock with their units and totals (%s)" % rk)
kw = con.execute("SELECT w.kind, f.name, w.self, w.executing FROM kind_weights w "
                 "JOIN functions f USING (function_id) WHERE f.name = 'byte[]'").fetchall()
check(kw == [("alloc", "byte[]", 524288, 524288)], "kind_weights: byte[] under alloc (%s)" % kw)
con.close()
rc, out, _ = run("archive", "ls", "--kind", "alloc", "--format", "csv", "kinds.db")
check(rc == 0 and ",524288," in out, "ls --kind alloc: the alloc total (%s)" % out.strip())
rc, out, _ = run("archive", "trend", "--kind", "alloc", "--format", "csv", "kinds.db", "byte[]")
check(rc == 0 and "100.0" in out, "trend --kind alloc byte[]: 100%% of the bytes (%s)" % out.strip())
rc, out, _ = run("archive", "trend", "--format", "csv", "kinds.db", "byte[]")
check(rc == 0, "trend of the CPU samples of byte[] (%s)" % out.strip())
# schema 1 (an archive of an earlier vmp) gains the tables of kinds when opened
shutil.copy("kinds.db", "old.db")
con = sqlite3.connect("old.db")
con.execute("DROP TABLE kind_weights")
con.execute("DROP TABLE run_kinds")
con.execute("UPDATE archive SET value = '1' WHERE name = 'schema'")
con.commit()
con.close()
rc, out, err = run("archive", "ls", "old.db")
con = sqlite3.connect("old.db")
v = con.execute("SELECT value FROM archive WHERE name = 'schema'").fetchone()[0]
n = con.execute("SELECT count(*) FROM runs").fetchone()[0]
con.close()
check(rc == 0 and v == "2" and n == 2, "a schema 1 archive opens as schema 2, its runs kept (%s)"
      % err.strip())

# ---- errors ------------------------------------------------------------------------------
rc, _, err = run("archive", "ls", "missing.db")
check(rc == 1 and "missing.db" in err, "ls of a missing archive: exit 1 (%s)" % err.strip())
rc, _, err = run("archive", "ls", base[0])
check(rc == 1 and base[0] in err, "ls of a profile, not an archive: exit 1 (%s)" % err.strip())
for args in (["archive"], ["archive", "frob"], ["archive", "add", "a.db"],
             ["archive", "diff", "--base", "commit=a", "a.db"],
             ["archive", "ls", "--label", "nokey", "a.db"],
             ["archive", "ls", "--format", "xml", "a.db"],
             ["archive", "diff", "--base", "commit=a", "--new", "commit=b", "--alpha", "2", "a.db"],
             ["archive", "ls", "--alpha", "0.1", "a.db"],
             ["archive", "trend", "a.db"],
             ["archive", "trend", "--base", "commit=a", "a.db", "f"],
             ["archive", "trend", "--format", "xml", "a.db", "f"]):
    rc, _, err = run(*args)
    check(rc == 2, "usage error, exit 2: %s (%s)" % (" ".join(args[1:]), err.strip().splitlines()[0]))
rc, out, _ = run("archive", "--help")
check(rc == 0 and "vmp archive add" in out, "archive --help")
rc, _, err = run("archive", "diff", "--base", "commit=zzz", "--new", "commit=b", "a.db")
check(rc == 1 and "no run" in err, "a side without runs: exit 1 (%s)" % err.strip())

finish()
