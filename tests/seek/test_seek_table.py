#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile and lying seek tables (spec.md §6, R-SEEK-1, R-SEEK-3).

usage: test_seek_table.py VMP SIMVM WORKDIR RSS_LIMIT_MB SECONDS_LIMIT

Makes a profile with vmp-simvm, strips its seek table (the reference: what a
sequential scan gives), and appends instead
  - a hostile table: 400 nested CBOR arrays, each claiming 2^31 items;
  - tables that lie: a time past every sample, an offset past the end of
    the file, a sample count that does not match, entries out of order.
For each, `vmp filter --from -0.5` and `vmp info` must finish within the
limits (peak RSS from wait4, wall time), print a warning naming the file and
the table's offset, and give the answers of the file without a table.
The real file's table must be used without a warning.
"""
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from vmp_measure import run_measured  # noqa: E402

vmp, simvm, work, rss_limit_mb, seconds_limit = sys.argv[1:6]
vmp, simvm, work = (os.path.abspath(p) for p in (vmp, simvm, work))
rss_limit_mb = int(rss_limit_mb)
seconds_limit = float(seconds_limit)
failures = 0
checks = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL: " + msg)


def run(args):
    """Run args; return (exit code, stdout, stderr, peak RSS in MB, seconds)."""
    status, rss, secs = run_measured(args, "out.txt", "err.txt")
    rc = os.waitstatus_to_exitcode(status)
    return rc, open("out.txt").read(), open("err.txt").read(), rss, secs


def cbor_head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    if n < 1 << 8:
        return bytes([major << 5 | 24, n])
    if n < 1 << 16:
        return bytes([major << 5 | 25]) + struct.pack(">H", n)
    if n < 1 << 32:
        return bytes([major << 5 | 26]) + struct.pack(">I", n)
    return bytes([major << 5 | 27]) + struct.pack(">Q", n)


def seek_frame(content):
    """The seek table frame (spec.md §6) around `content`."""
    size = len(content) + 8
    return struct.pack("<II", 0x184D2A57, size) + content + struct.pack("<I", size + 8) + b"VMPS"


def table(entries):
    out = cbor_head(4, len(entries))
    for e in entries:
        out += cbor_head(4, len(e)) + b"".join(cbor_head(0, v) for v in e)
    return out


def parse_table(data):
    """Entries of the real file's table (a minimal CBOR reader for uints)."""
    total = struct.unpack("<I", data[-8:-4])[0]
    body = data[len(data) - total + 8:-8]
    pos = 0

    def head():
        nonlocal pos
        b = body[pos]
        pos += 1
        ai = b & 31
        if ai < 24:
            return b >> 5, ai
        n = 1 << (ai - 24)
        v = int.from_bytes(body[pos:pos + n], "big")
        pos += n
        return b >> 5, v

    _, count = head()
    entries = []
    for _ in range(count):
        _, k = head()
        entries.append([head()[1] for _ in range(k)])
    return len(data) - total, entries


os.makedirs(work, exist_ok=True)
os.chdir(work)
subprocess.run([simvm, "--samples", "60000", "--stacks", "200", "-o", "real.vmp"],
               check=True, stdout=subprocess.DEVNULL)
data = open("real.vmp", "rb").read()
table_off, entries = parse_table(data)
body = data[:table_off]
open("none.vmp", "wb").write(body)
if len(entries) < 4:
    fail("the simulated profile has %d chunks; the test needs 4" % len(entries))

hostile = b"".join(cbor_head(4, 1 << 31) for _ in range(400))
hostile += bytes(3600 - len(hostile))
lie_time = [list(e) for e in entries]
last = max(i for i, e in enumerate(lie_time) if e[5])
lie_time[last][4] = max(e[4] for e in entries if e[5]) + 10**9
lie_offset = [list(e) for e in entries]
lie_offset[1][0] = len(data) + 4096
lie_count = [list(e) for e in entries]
lie_count[2][5] += 7
lie_order = [list(e) for e in entries]
lie_order[1], lie_order[2] = lie_order[2], lie_order[1]
cases = {
    "hostile": hostile,
    "lie-time": table(lie_time),
    "lie-offset": table(lie_offset),
    "lie-count": table(lie_count),
    "lie-order": table(lie_order),
}
for name, content in cases.items():
    open(name + ".vmp", "wb").write(body + seek_frame(content))


def filtered(path):
    out = path + ".filtered.vmp"
    rc, _, err, rss, secs = run([vmp, "filter", "--from", "-0.5", path, "-o", out])
    return rc, err, rss, secs, open(out, "rb").read() if rc == 0 else b""


def info_lines(text):
    # what differs between the files: their sizes
    return [l for l in text.splitlines() if not l.startswith(("file:", "file bytes:"))]


rc0, err0, _, _, ref_filtered = filtered("none.vmp")
ref_info = run([vmp, "info", "none.vmp"])
if rc0 != 0 or ref_info[0] != 0:
    fail("the file without a seek table: filter exit %d (%s), info exit %d" % (rc0, err0, ref_info[0]))

# The real table is used and believed: no warning, the same answers.
rc, err, rss, secs, out = filtered("real.vmp")
checks += 1
if rc != 0 or err or out != ref_filtered:
    fail("real.vmp: filter exit %d, stderr %r, output %s" %
         (rc, err, "equal" if out == ref_filtered else "differs"))
info = run([vmp, "info", "real.vmp"])
checks += 1
if info[0] != 0 or info[2] or "complete (END record, seek table)" not in info[1]:
    fail("real.vmp: info exit %d, stderr %r" % (info[0], info[2]))

for name in cases:
    path = name + ".vmp"
    where = "%s: offset %d: seek table" % (path, table_off)
    rc, err, rss, secs, out = filtered(path)
    print("%-10s filter: exit %d, %.0f MB peak RSS, %.2f s" % (name, rc, rss, secs))
    checks += 1
    if rc != 0:
        fail("%s: vmp filter exits %d: %s" % (path, rc, err))
    elif out != ref_filtered:
        fail("%s: vmp filter's output differs from the file without a table" % path)
    if where not in err or "warning" not in err:
        fail("%s: vmp filter does not warn with '%s': %r" % (path, where, err))
    if rss > rss_limit_mb or secs > seconds_limit:
        fail("%s: vmp filter took %.0f MB, %.2f s (limits %d MB, %.1f s)" %
             (path, rss, secs, rss_limit_mb, seconds_limit))
    rc, out, err, rss, secs = run([vmp, "info", path])
    print("%-10s info:   exit %d, %.0f MB peak RSS, %.2f s" % (name, rc, rss, secs))
    checks += 1
    if rc != 0 or info_lines(out) != info_lines(ref_info[1]):
        fail("%s: vmp info (exit %d) differs from the file without a table" % (path, rc))
    if where not in err or "treated as absent" not in err:
        fail("%s: vmp info does not warn with '%s': %r" % (path, where, err))
    if rss > rss_limit_mb or secs > seconds_limit:
        fail("%s: vmp info took %.0f MB, %.2f s (limits %d MB, %.1f s)" %
             (path, rss, secs, rss_limit_mb, seconds_limit))

print("%d checks, %d failed" % (checks, failures))
sys.exit(1 if failures else 0)
