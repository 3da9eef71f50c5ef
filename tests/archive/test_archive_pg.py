#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# test_archive_pg.py - `vmp archive` on a PostgreSQL server (docs/archive.md),
# a private one this test starts (pg_server.py) and stops:
# - the same profiles added to an SQLite file and to the server: `ls`,
#   `diff`, `trend` (every format, --label, --kind, --ranges) print the same
#   bytes from both (test_archive.py checks the SQLite file's answers
#   against `vmp report` and `vmp diff` on the files);
# - the schema vmp creates is the one docs/archive.md documents, version 2;
# - two processes adding the same files at once: each file once; four adding
#   a quarter each: every run, none twice;
# - the server stopped in the middle of an add: exit 1 naming the file, the
#   runs committed whole, a second add completes the rest;
# - a wrong password, a database that does not exist, a server that is not
#   running, a database without the tables: one line, exit 1;
# - the PG* environment variables in place of the URI;
# - the team's queries use indexes.
#
# usage: test_archive_pg.py VMP VMP_SIMVM WORKDIR [N]   (N runs a side: 12)
import json
import os
import re
import shutil
import subprocess
import sys
import time

import pg_server
from archive_checks import check, finish, runner, two_sides

VMP, SIMVM, WORK = sys.argv[1:4]
N = int(sys.argv[4]) if len(sys.argv) > 4 else 12
HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(HERE, "..", "..", "docs", "archive.md")
KINDS = os.path.join(HERE, "..", "golden", "valid", "sample-kinds.vmp")
run = runner(VMP)


def rows_of(db):
    """Every run's columns but its id and time of adding, labels, kinds and
    weights, by content hash and function name, sorted: what an archive holds
    whatever order its runs were added in."""
    return {
        "runs": sorted(server.psql(
            "SELECT sha256, path, file_bytes, format_minor, producer, vm_name, vm_version, pid, "
            "start_ns, interval_ns, total_weight, complete, ranges FROM runs", db=db)),
        "labels": sorted(server.psql(
            "SELECT r.sha256, l.name, l.value FROM labels l JOIN runs r USING (run_id)", db=db)),
        "weights": sorted(server.psql(
            "SELECT r.sha256, f.name, f.is_range, w.self, w.total, w.executing FROM weights w "
            "JOIN runs r USING (run_id) JOIN functions f USING (function_id)", db=db)),
        "kinds": sorted(server.psql(
            "SELECT r.sha256, k.kind, f.name, k.self, k.total, k.executing FROM kind_weights k "
            "JOIN runs r USING (run_id) JOIN functions f USING (function_id)", db=db)),
    }


def last_line(err):
    lines = err.strip().splitlines()
    return lines[-1] if lines else ""


base, new = two_sides(SIMVM, WORK, N)
files = base + new
F = "String>>sortBlock"

server = pg_server.Server()
try:
    for db in ("vmp", "ranges", "kinds", "race", "quarters", "stop", "doc", "empty"):
        server.createdb(db)
    PG = server.uri()

    # ---- the same answers from both ------------------------------------------------------
    rc1, _, e1 = run("archive", "add", "a.db", *files)
    t0 = time.monotonic()
    rc2, _, e2 = run("archive", "add", PG, *files)
    secs = time.monotonic() - t0
    check(rc1 == 0 and rc2 == 0 and last_line(e1) == last_line(e2) and
          "%d added, 0 already indexed, 0 damaged" % (2 * N) in e2,
          "add: the same counts (%s | %s)" % (last_line(e1), last_line(e2)))
    print("add into the server: %d profiles in %.2f s" % (2 * N, secs))
    check(PG.split("@")[0] not in e2 and pg_server.PASSWORD not in e2,
          "the password is never printed")
    rows = server.psql("SELECT value FROM archive WHERE name = 'schema'")
    check(rows == [["2"]], "schema version 2 in table archive (%s)" % rows)

    queries = [
        ("ls",), ("ls", "--format", "csv"), ("ls", "--format", "json"),
        ("ls", "--label", "commit=b"), ("ls", "--label", "commit=zzz"),
        ("diff", "--base", "commit=a", "--new", "commit=b"),
        ("diff", "--base", "commit=a", "--new", "commit=b", "--format", "csv"),
        ("diff", "--base", "commit=a", "--new", "commit=b", "--format", "json"),
        ("trend",), ("trend", "--format", "csv"), ("trend", "--format", "json"),
        ("trend", "--format", "svg"), ("trend", "--label", "commit=a"),
    ]
    for q in queries:
        tail = [F] if q[0] == "trend" else []
        ra, oa, ea = run("archive", *q, "a.db", *tail)
        rp, op, ep = run("archive", *q, PG, *tail)
        check(ra == 0 and rp == 0 and oa == op and len(oa) > 0,
              "archive %s: the same %d bytes from SQLite and PostgreSQL (%s)" %
              (" ".join(q), len(oa), (ea + ep).strip()[:200]))
    _, out, _ = run("archive", "diff", "--base", "commit=a", "--new", "commit=b", "--format",
                    "json", PG)
    j = json.loads(out)
    check(j["functions"][0]["function"] == F and j["functions"][0]["significant"],
          "the slowed function is first and significant")

    rc, _, err = run("archive", "add", PG, *files)
    check(rc == 0 and "0 added, %d already indexed" % (2 * N) in err,
          "adding the same files again adds nothing (%s)" % last_line(err))
    shutil.copy(base[1], "copy.vmp")
    rc, _, err = run("archive", "add", PG, "copy.vmp")
    check(rc == 0 and "0 added, 1 already indexed" in err, "a copy under another name is known")

    # --ranges, sample kinds
    for db, args, q in (("ranges", ["--ranges", *base[:3], *new[:3]],
                         ("diff", "--ranges", "--base", "commit=a", "--new", "commit=b",
                          "--format", "json")),
                        ("kinds", [KINDS, base[0]], ("trend", "--kind", "alloc", "--format",
                                                     "csv"))):
        rc1, _, e1 = run("archive", "add", db + ".db", *args)
        rc2, _, e2 = run("archive", "add", server.uri(db), *args)
        tail = ["byte[]"] if q[0] == "trend" else []
        _, oa, _ = run("archive", *q, db + ".db", *tail)
        _, op, ep = run("archive", *q, server.uri(db), *tail)
        check(rc1 == 0 and rc2 == 0 and oa == op and len(oa) > 0,
              "%s: archive %s the same from both (%s)" % (db, " ".join(q), ep.strip()))
    _, oa, _ = run("archive", "ls", "--kind", "alloc", "--format", "csv", "kinds.db")
    _, op, _ = run("archive", "ls", "--kind", "alloc", "--format", "csv", server.uri("kinds"))
    check(oa == op and ",524288," in op, "ls --kind alloc the same from both")
    rk = server.psql("SELECT kind, unit, samples, total_weight FROM run_kinds ORDER BY kind",
                     db="kinds")
    check(rk == [["alloc", "bytes", "1", "524288"], ["lock", "nanoseconds", "1", "20000"]],
          "run_kinds on the server (%s)" % rk)

    # ---- the documented schema -----------------------------------------------------------
    doc = open(DOC).read()
    ddl = re.search(r"### PostgreSQL.*?```sql\n(.*?)```", doc, re.S)
    check(ddl is not None, "docs/archive.md documents the PostgreSQL schema")
    if ddl:
        server.psql(ddl.group(1) + "\nINSERT INTO archive VALUES ('schema', '2');", db="doc")
        made, documented = server.schema_dump("vmp"), server.schema_dump("doc")
        diff = [l for l in set(made.splitlines()) ^ set(documented.splitlines())]
        check(made == documented, "the schema vmp creates is docs/archive.md's (%s)" % diff[:4])

    # ---- the queries a team runs use indexes ---------------------------------------------
    commits = re.search(r"The runs of a range of commits.*?```sql\n(.*?);\n```", doc,
                        re.S).group(1).replace("1a2b", "a").replace("3c4d", "b")
    got = len(server.psql(commits))
    check(got == 2 * N, "the documented query of a range of commits: %d runs of %d" % (got, 2 * N))
    fid = server.psql("SELECT function_id FROM functions WHERE name = '%s'" % F)[0][0]
    for what, q in (
            ("a function's share over time",
             "SELECT r.start_ns, w.self, r.total_weight FROM runs r JOIN weights w ON "
             "w.run_id = r.run_id AND w.function_id = %s ORDER BY r.start_ns, r.run_id" % fid),
            ("a label's runs",
             "SELECT r.* FROM runs r WHERE r.run_id IN (SELECT run_id FROM labels WHERE "
             "name = 'commit' AND value = 'b') ORDER BY r.start_ns, r.run_id"),
            ("the runs of a time range",
             "SELECT * FROM runs WHERE start_ns BETWEEN 0 AND 9000000000000000000 "
             "ORDER BY start_ns, run_id"),
            ("the runs of a range of commits (docs/archive.md)", commits),
            ("a function by name",
             "SELECT function_id FROM functions WHERE md5(name) = md5('%s') AND name = '%s'"
             % (F, F))):
        plan = "\n".join(r[0] for r in server.psql("SET enable_seqscan = off; EXPLAIN " + q))
        check("Seq Scan" not in plan and "Index" in plan,
              "%s: an index, no sequential scan (%s)" % (what, " / ".join(
                  l.strip() for l in plan.splitlines() if "Scan" in l)[:160]))

    # ---- two processes, the same files at once -------------------------------------------
    race = server.uri("race")
    run("archive", "ls", race)  # not an archive yet: the schema comes with the first add
    ps = [subprocess.Popen([VMP, "archive", "add", race, *order], stderr=subprocess.PIPE)
          for order in (files, files[::-1])]
    errs = [p.communicate()[1].decode() for p in ps]
    added = [int(re.search(r"(\d+) added", e).group(1)) if re.search(r"(\d+) added", e) else -1
             for e in errs]
    runs = server.psql("SELECT count(*), count(DISTINCT sha256) FROM runs", db="race")
    check(all(p.returncode == 0 for p in ps) and sum(added) == 2 * N and
          runs == [[str(2 * N), str(2 * N)]],
          "two adds of the same %d files at once: each once (%s added; %s)" %
          (2 * N, added, [last_line(e) for e in errs]))
    # (its runs are in another order: a diff's sums would be taken in it)
    want = rows_of("vmp")
    check(rows_of("race") == want and len(want["weights"]) > 20 * N,
          "and the raced archive holds the rows of the archive added in order")

    # ---- four processes, a quarter each --------------------------------------------------
    q = server.uri("quarters")
    ps = [subprocess.Popen([VMP, "archive", "add", q, *files[i::4]], stderr=subprocess.PIPE)
          for i in range(4)]
    errs = [p.communicate()[1].decode() for p in ps]
    runs = server.psql("SELECT count(*), count(DISTINCT sha256), count(DISTINCT path) FROM runs",
                       db="quarters")
    check(all(p.returncode == 0 for p in ps) and runs == [[str(2 * N)] * 3],
          "four adds of a quarter each at once: %s runs, none twice (%s)" %
          (runs, [last_line(e) for e in errs]))
    check(rows_of("quarters") == want, "and it holds the rows of the archive added in order")

    # ---- the server goes away in the middle of an add -----------------------------------
    stop = server.uri("stop")
    many = files * 1  # each file once: the add takes long enough to be caught midway
    for attempt in range(3):
        server.psql("DROP TABLE IF EXISTS kind_weights, run_kinds, weights, functions, labels, "
                    "runs, archive", db="stop")
        p = subprocess.Popen([VMP, "archive", "add", stop, *many], stderr=subprocess.PIPE)
        n = 0
        deadline = time.monotonic() + 30
        while p.poll() is None and time.monotonic() < deadline:
            r = server.psql("SELECT count(*) FROM runs", db="stop", check=False)
            n = int(r[0][0]) if r and r[0][0].isdigit() else 0
            if n >= 2:
                server.stop("immediate")
                break
            time.sleep(0.002)
        err = p.communicate()[1].decode()
        if n >= 2 and p.returncode != 0:
            break
        server.start()
    msg = [l for l in err.splitlines() if not re.search(r"\d+ added", l)]
    check(p.returncode == 1 and len(msg) == 1 and
          re.match(r"vmp archive add: [ab]\d{3}\.vmp: postgresql://", msg[0]) is not None,
          "server stopped midway (after %d runs): exit %d, one line naming the file (%s)" %
          (n, p.returncode, msg))
    server.start()
    whole = server.psql(
        "SELECT count(*), count(*) FILTER (WHERE total_weight = (SELECT coalesce(sum(self), 0) "
        "FROM weights w WHERE w.run_id = r.run_id)) FROM runs r", db="stop")
    kept = int(whole[0][0])
    check(kept > 0 and whole[0][0] == whole[0][1],
          "the runs committed before are whole (%s runs, %s whole)" % tuple(whole[0]))
    rc, _, err = run("archive", "add", stop, *files)
    check(rc == 0 and ("%d added, %d already indexed" % (2 * N - kept, kept)) in err,
          "a second add completes it (%s)" % last_line(err))
    _, oa, _ = run("archive", "diff", "--base", "commit=a", "--new", "commit=b", "a.db")
    _, op, _ = run("archive", "diff", "--base", "commit=a", "--new", "commit=b", stop)
    check(oa == op and rows_of("stop") == want, "and it answers as the SQLite file")

    # ---- the PG* environment ------------------------------------------------------------
    _, oa, _ = run("archive", "ls", "a.db")
    rc, op, err = run("archive", "ls", "postgresql://", env=server.env("vmp"))
    check(rc == 0 and op == oa, "postgresql:// with PGHOST, PGUSER, PGPASSWORD, PGDATABASE "
          "(%s)" % err.strip())

    # ---- errors --------------------------------------------------------------------------
    for what, uri, want in (
            ("a wrong password", server.uri(password="wrong"), "password authentication failed"),
            ("a database that does not exist", server.uri(db="nosuchdb"), "does not exist"),
            ("a database without the tables", server.uri(db="empty"), "not a vmp archive")):
        rc, out, err = run("archive", "ls", uri)
        check(rc == 1 and len(err.strip().splitlines()) == 1 and want in err and
              "wrong" not in err.replace("wrong password", "") and
              pg_server.PASSWORD not in err,
              "%s: exit 1, one line (%s)" % (what, err.strip()))
    server.psql("UPDATE archive SET value = '3' WHERE name = 'schema'", db="kinds")
    rc, out, err = run("archive", "ls", server.uri("kinds"))
    check(rc == 1 and len(err.strip().splitlines()) == 1 and
          "archive schema 3, this vmp reads schema 2" in err,
          "an archive of a later schema: refused, exit 1, one line (%s)" % err.strip())
    server.stop()
    rc, out, err = run("archive", "ls", PG)
    check(rc == 1 and len(err.strip().splitlines()) == 1 and "cannot connect" in err,
          "no server: exit 1, one line (%s)" % err.strip())
    rc, out, err = run("archive", "add", PG, base[0])
    check(rc == 1 and len([l for l in err.splitlines() if "added" not in l]) == 1,
          "add with no server: exit 1, one line (%s)" % err.strip())
finally:
    server.close()

finish()
