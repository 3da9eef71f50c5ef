#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# test_recompress.py - `vmp recompress [--level N] IN -o OUT` (spec.md
# §3-§6): on profiles of vmp-simvm (one and many chunks), of the writer
# library (vmp-test-allrecords), of the tools' record writer (vmp merge) and
# on golden files (a later minor's longer header frame and unknown frames,
# non-shortest encodings, a lying seek table, no END): `vmp decode` prints
# the same for IN and OUT, the decompressed bytes are the same (zstd -dc,
# when installed), OUT validates when IN does, OUT's seek table has one
# entry per chunk at OUT's offsets with IN's content sizes, sample counts
# and times, OUT is no larger at level 19, and level 3 (the writer's
# default) gives back the writer's own file byte for byte; one line reports
# the sizes and the ratio.  Failures: a file cut inside a chunk and a
# corrupt chunk fail with exit 1 naming the file and the chunk's offset and
# leave no OUT; a write error; OUT the same file as IN; bad levels and
# usage errors exit 2.  `-` reads standard input and `-o -` writes
# standard output.
#
# usage: test_recompress.py VMP VMP_SIMVM VMP_TEST_ALLRECORDS GOLDEN_VALID_DIR WORKDIR
import os
import re
import shutil
import struct
import subprocess
import sys

VMP, SIMVM, ALLRECORDS, GOLDEN, WORK = sys.argv[1:6]
HEADER_FRAME = 24  # spec.md §3: 8-byte frame header and 16 bytes of content (1.0 to 1.2)
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def run(*args, cmd=None, stdin=None):
    p = subprocess.run([cmd or VMP, *args], stdin=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def decode(path):
    rc, out, err = run("decode", path)
    return rc, out


def first_line(text):
    return (text.strip().splitlines() or [""])[0]


def read(path):
    with open(path, "rb") as f:
        return f.read()


# ---- the seek table (spec.md §6), read with a minimal CBOR decoder -------

def cbor_head(b, i):
    """(major type, value, next index) of the CBOR item head at b[i]."""
    major, ai = b[i] >> 5, b[i] & 31
    i += 1
    if ai < 24:
        return major, ai, i
    n = {24: 1, 25: 2, 26: 4, 27: 8}[ai]
    return major, int.from_bytes(b[i:i + n], "big"), i + n


def seek_table(data):
    """The entries [offset, compressed_size, content_size, first_time,
    last_time, samples] and the table's frame offset, or (None, None)."""
    if len(data) < 16 or data[-4:] != b"VMPS":
        return None, None
    size = struct.unpack("<I", data[-8:-4])[0]
    start = len(data) - size
    if struct.unpack("<I", data[start:start + 4])[0] != 0x184D2A57:
        return None, None
    content, i = data[start + 8:len(data) - 8], 0
    major, n, i = cbor_head(content, i)
    entries = []
    for _ in range(n):
        major, k, i = cbor_head(content, i)
        entry = []
        for _ in range(k):
            major, v, i = cbor_head(content, i)
            entry.append(v)
        entries.append(entry[:6])
    return entries, start


def check_seek_table(name, inp, out):
    """OUT's table: one entry per chunk, frames back to back from the header
    frame to the table, each a zstd frame; sizes, samples and times as IN's
    (when IN has a table that tells them)."""
    data = read(out)
    entries, table_off = seek_table(data)
    if entries is None:
        check(False, "%s: OUT ends with a seek table" % name)
        return None
    pos, ok = len(header_frame(data)), True
    for e in entries:
        ok = ok and e[0] == pos and data[pos:pos + 4] == b"\x28\xb5\x2f\xfd"
        pos = e[0] + e[1]
    ok = ok and pos == table_off
    check(ok, "%s: OUT's seek table: %d frame(s) back to back at its offsets, up to the table"
          % (name, len(entries)))
    in_entries, _ = seek_table(read(inp))
    if in_entries is not None and len(in_entries) == len(entries):
        same = all(a[2:] == b[2:] for a, b in zip(in_entries, entries))
        check(same, "%s: content sizes, times and samples of OUT's entries are IN's" % name)
    return entries


def header_frame(data):
    return data[:8 + struct.unpack("<I", data[4:8])[0]]


# ---- one recompression ----------------------------------------------------

RATIO = re.compile(r"^vmp recompress: (.+) ([0-9,]+) -> ([0-9,]+) bytes \((\d\.\d{3}), level (\d+)\)$")


def recompress(name, inp, out, level, valid=True, smaller=False):
    """Recompress and check what every run must hold; returns (IN, OUT) bytes."""
    args = ["recompress", inp, "-o", out] if level is None else \
        ["recompress", "--level", str(level), inp, "-o", out]
    rc, _, err = run(*args)
    lines = err.splitlines()
    m = RATIO.match(lines[-1]) if lines else None
    check(rc == 0 and m is not None, "%s at level %s: exit 0 and the ratio line: %r" %
          (name, level, err.strip()))
    if rc != 0 or m is None:
        return None
    n_in, n_out = int(m.group(2).replace(",", "")), int(m.group(3).replace(",", ""))
    check(n_in == os.path.getsize(inp) and n_out == os.path.getsize(out) and
          abs(float(m.group(4)) - n_out / n_in) < 0.0006 and
          m.group(5) == str(level or 19),
          "%s at level %s: the line gives both sizes, their ratio and the level" % (name, level))
    rc_in, d_in = decode(inp)
    rc_out, d_out = decode(out)
    check(d_in == d_out and rc_in == rc_out and len(d_in) > 0,
          "%s at level %s: vmp decode prints the same for IN and OUT (%d bytes)" %
          (name, level, len(d_in)))
    if shutil.which("zstd"):
        a = subprocess.run(["zstd", "-dcq", inp], stdout=subprocess.PIPE).stdout
        b = subprocess.run(["zstd", "-dcq", out], stdout=subprocess.PIPE).stdout
        check(a == b and len(a) > 0, "%s at level %s: the same decompressed bytes (zstd -dc)" %
              (name, level))
    check(header_frame(read(out)) == header_frame(read(inp)),
          "%s at level %s: the file header frame copied as IN holds it" % (name, level))
    if valid:
        rc, _, err = run("validate", out)
        check(rc == 0, "%s at level %s: vmp validate OUT passes (%s)" % (name, level,
                                                                         err.strip()[:200]))
        rc, info, _ = run("info", out)
        check(b"complete (END record, seek table)" in info,
              "%s at level %s: vmp info: complete, with a seek table it accepts" % (name, level))
        check_seek_table("%s at level %s" % (name, level), inp, out)
    if smaller:
        check(n_out <= n_in, "%s at level %s: OUT no larger than IN (%d <= %d)" %
              (name, level, n_out, n_in))
    return n_in, n_out


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
os.chdir(WORK)

rc, _, err = run("--samples", "20000", "--stacks", "200", "-o", "s20k.vmp", cmd=SIMVM)
check(rc == 0, "simvm writes a 20000-sample profile (%s)" % err.strip())
rc, _, err = run("--samples", "200000", "--stacks", "2000", "--seed", "3", "-o", "s200k.vmp",
                 cmd=SIMVM)
check(rc == 0, "simvm writes a 200000-sample profile (%s)" % err.strip())
rc, _, err = run("all.vmp", cmd=ALLRECORDS)
check(rc == 0, "vmp-test-allrecords writes every record type (%s)" % err.strip())
rc, _, err = run("merge", "s20k.vmp", "all.vmp", "-o", "merged.vmp")
check(rc == 0, "vmp merge writes a profile with the record writer (%s)" % err.strip())

sizes = {}
for name in ("s20k", "s200k", "all", "merged"):
    for level in (None, 19, 3):
        out = "%s.%s.vmp" % (name, level or "default")
        sizes[(name, level)] = recompress(name, name + ".vmp", out, level,
                                          smaller=level in (None, 19))
    check(read("%s.default.vmp" % name) == read("%s.19.vmp" % name),
          "%s: the default level is 19" % name)
chunks = len(seek_table(read("s200k.vmp"))[0] or [])
check(chunks > 10, "the 200000-sample profile has many chunks (%d)" % chunks)
# The writer library and the record writer compress at level 3 by default
# (vmp_writer.h, vmp_record_writer.h): at level 3 the frames and the seek
# table come out exactly as they wrote them.
for name in ("s20k", "s200k", "all", "merged"):
    check(read(name + ".vmp") == read(name + ".3.vmp"),
          "%s: level 3 gives back the writer's file byte for byte" % name)
for name in ("s20k", "s200k"):
    (n_in, n19), (_, n3) = sizes[(name, 19)] or (0, 0), sizes[(name, 3)] or (0, 0)
    print("sizes: %s IN %d, OUT %d at level 19 (%.3f), %d at level 3" %
          (name, n_in, n19, n19 / max(n_in, 1), n3))
recompress("s20k.19", "s20k.19.vmp", "s20k.back1.vmp", 1)
recompress("s20k", "s20k.vmp", "s20k.22.vmp", 22)

# ---- golden files ---------------------------------------------------------
g = lambda name: os.path.join(GOLDEN, name + ".vmp")
recompress("future-minor", g("future-minor"), "future.vmp", 19)
future = read(g("future-minor"))
check(len(header_frame(future)) > HEADER_FRAME and read("future.vmp").startswith(
      header_frame(future)), "future-minor: the longer header frame of a later minor is copied")
recompress("non-shortest", g("non-shortest"), "nonshort.vmp", 19)
rc, _, err = run("recompress", g("seek-table-lies"), "-o", "lies.vmp")
check(rc == 0 and "warning:" in err and "seek table" in err and "the output has a correct one"
      in err, "seek-table-lies: the lying table is reported: %r" % err.strip())
recompress("seek-table-lies", g("seek-table-lies"), "lies.vmp", 19)
rc, _, err = run("recompress", g("truncated-no-end"), "-o", "noend.vmp")
check(rc == 0 and re.search(r"warning: .*truncated-no-end\.vmp: offset \d+: no END record", err)
      and decode(g("truncated-no-end")) == decode("noend.vmp")
      and seek_table(read("noend.vmp"))[0] is None,
      "truncated-no-end: copied without END and without seek table, with a warning: %r"
      % err.strip())

# ---- bad input: one line naming the file and the offset, exit 1, no OUT --
s200k = read("s200k.vmp")
entries, _ = seek_table(s200k)
k = len(entries) // 2
off, size = entries[k][0], entries[k][1]
with open("cut.vmp", "wb") as f:
    f.write(s200k[:off + size // 2])
rc, _, err = run("recompress", "cut.vmp", "-o", "cut.out.vmp")
check(rc == 1 and len(err.splitlines()) == 1 and
      ("cut.vmp: offset %d: chunk %d:" % (off, k)) in err and not os.path.exists("cut.out.vmp"),
      "a file cut inside chunk %d: exit 1, one line naming the file and offset %d, no OUT: %r"
      % (k, off, err.strip()))
bad = bytearray(s200k)
bad[off + size // 2] ^= 0x5A
with open("corrupt.vmp", "wb") as f:
    f.write(bad)
rc, _, err = run("recompress", "corrupt.vmp", "-o", "corrupt.out.vmp")
check(rc == 1 and len(err.splitlines()) == 1 and ("corrupt.vmp: offset %d:" % off) in err
      and not os.path.exists("corrupt.out.vmp"),
      "a corrupt chunk: exit 1, one line naming the file and offset, no OUT: %r" % err.strip())
rc, _, err = run("recompress", g("truncated"), "-o", "trunc.out.vmp")
check(rc == 1 and "truncated.vmp: offset" in err and not os.path.exists("trunc.out.vmp"),
      "golden truncated: exit 1, no OUT: %r" % err.strip())
rc, _, err = run("recompress", "nonexistent.vmp", "-o", "x.vmp")
check(rc == 1 and "nonexistent.vmp" in err and not os.path.exists("x.vmp"),
      "a missing input: exit 1, no OUT")
if os.path.exists("/dev/full"):
    rc, _, err = run("recompress", "s20k.vmp", "-o", "/dev/full")
    check(rc == 1 and "/dev/full: write" in err and len(err.splitlines()) == 1,
          "a write error: exit 1, one line naming the output: %r" % err.strip())
    with open("/dev/full", "wb") as full:
        p = subprocess.run([VMP, "recompress", "s20k.vmp", "-o", "-"], stdout=full,
                           stderr=subprocess.PIPE)
    err = p.stderr.decode("utf-8", "replace")
    check(p.returncode == 1 and "standard output: write" in err and len(err.splitlines()) == 1,
          "a write error on standard output: exit 1, one line: %r" % err.strip())

# ---- standard input and output --------------------------------------------
with open("s20k.vmp", "rb") as f:
    rc, out, err = run("recompress", "-", "-o", "-", stdin=f)
check(rc == 0 and out == read("s20k.19.vmp") and "standard input" in err,
      "'-' reads standard input and '-o -' writes standard output: %r" % err.strip())
rc, out, err = run("recompress", "--level", "3", "s20k.vmp", "-o", "-")
check(rc == 0 and out == read("s20k.3.vmp"), "-o - writes the same bytes as -o FILE")

# ---- OUT the same file as IN -----------------------------------------------
shutil.copy("s20k.vmp", "same.vmp")
os.link("same.vmp", "same-link.vmp")
for out in ("same.vmp", "same-link.vmp", "./same.vmp"):
    rc, _, err = run("recompress", "same.vmp", "-o", out)
    check(rc == 2 and "input file itself" in err and read("same.vmp") == read("s20k.vmp"),
          "OUT %s is IN itself: exit 2, IN untouched: %r" % (out, first_line(err)))

# ---- usage ----------------------------------------------------------------
for level in ("0", "23", "abc", "-1", "", "3x"):
    rc, _, err = run("recompress", "--level", level, "s20k.vmp", "-o", "lvl.vmp")
    check(rc == 2 and "--level" in err and "try 'vmp recompress --help'" in err and
          not os.path.exists("lvl.vmp"), "--level %r is a usage error" % level)
for args, what in ((["s20k.vmp"], "missing -o OUT"), (["-o", "x.vmp"], "missing FILE"),
                   (["a.vmp", "b.vmp", "-o", "x.vmp"], "too many arguments"),
                   (["--bogus", "s20k.vmp", "-o", "x.vmp"], "unknown option")):
    rc, _, err = run("recompress", *args)
    check(rc == 2 and what in err, "%s: exit 2 (%r)" % (what, first_line(err)))
rc, out, _ = run("recompress", "--help")
check(rc == 0 and out.startswith(b"usage: vmp recompress [--level N] FILE -o OUT"),
      "--help prints the usage and exits 0")
rc, out, _ = run("--help")
check(rc == 0 and b"\n  recompress " in out, "vmp --help lists recompress")

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("all recompress checks passed")
