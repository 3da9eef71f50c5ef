#!/usr/bin/env python3
"""One small file per rule of spec.md that a reader could read two ways.

Each case below builds a vmp file from records written as spec.md writes
them (CBOR maps with integer keys, §5), then runs the reference `vmp` on it
and compares what it prints with the expected text, which states the rule:
a reader written from spec.md alone shows the same.  The file is made
here, byte by byte, from the spec: the file header frame (§3), one chunk
compressed by the zstd command (with checksum and content size, R-CHK-1),
and an END record with the counts of R-END-1.

Usage: check_spec_rules.py VMP WORKDIR [CASE...]
"""
import json
import os
import re
import struct
import subprocess
import sys

# ---- the file, from spec.md ----------------------------------------------

def cbor_head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    for size, code in ((1, 24), (2, 25), (4, 26), (8, 27)):
        if n < 1 << (8 * size):
            return bytes([major << 5 | code]) + n.to_bytes(size, "big")
    raise ValueError(n)


class Raw(bytes):
    """Bytes written as they are: a CBOR item the encoder would not make."""


def cbor(v):
    if isinstance(v, Raw):
        return bytes(v)
    if isinstance(v, bool):
        raise TypeError("no booleans in vmp records")
    if isinstance(v, int):
        return cbor_head(0, v) if v >= 0 else cbor_head(1, -1 - v)
    if isinstance(v, str):
        b = v.encode()
        return cbor_head(3, len(b)) + b
    if isinstance(v, bytes):
        return cbor_head(2, len(v)) + v
    if isinstance(v, (list, tuple)):
        return cbor_head(4, len(v)) + b"".join(cbor(x) for x in v)
    if isinstance(v, dict):
        return cbor_head(5, len(v)) + b"".join(cbor(k) + cbor(x) for k, x in v.items())
    raise TypeError(type(v))


# record types (Appendix A) and the keys used below (§5.1-§5.13)
HEADER, END, MODULE, SYMBOLS, THREAD, FUNCTION = 1, 2, 3, 4, 5, 6
ZONE, CODE, SNAPSHOT, COMPACTION, FREE, MOVE = 7, 8, 9, 10, 11, 12
NODE, SAMPLE, FAILED, CODE_MAP, BLOCK = 13, 14, 15, 18, 19


def rec(rtype, **fields):
    """A record; fields by the spec's key names."""
    keys = {
        HEADER: dict(vm_name=2, states=10, code_kinds=11, failure_reasons=15, name_separator=18,
                     interval=8, sample_time_unit=19),
        MODULE: dict(id=1, path=2, bias=4, start=5, end=6),
        SYMBOLS: dict(module=1, symbols=2),
        THREAD: dict(id=1, name=2, time=3, end_time=4),
        FUNCTION: dict(id=1, name=2, scope=3, lines=7, bytecode_size=8),
        ZONE: dict(id=1, name=2, start=3, end=4),
        CODE: dict(id=1, zone=2, kind=3, name=4, function=5, start=6, size=7,
                   generation=8, pc_map=10, inline=11),
        NODE: dict(id=1, parent=2, pc=3, function=4, bcpc=5),
        SAMPLE: dict(time_delta=1, thread=2, state=3, pc=4, generation=5, stack=6, weight=7,
                     blame=8),
        FAILED: dict(time_delta=1, thread=2, state=3, pc=4, generation=5, weight=7, reason=9),
        BLOCK: dict(times=1, threads=2, thread=3, stacks=4, stack=5, state=6, generation=7,
                    weight=8, blame=9, pcs=10, failed=11, time_base=12, contexts=13,
                    context_base=14, context=15),
    }[rtype]
    m = {0: rtype}
    for name, value in fields.items():
        m[keys[name]] = value
    return m


def header(**extra):
    f = dict(states=["jit", "interp"], code_kinds=["method", "interpreter"],
             failure_reasons=["walk failed"], name_separator=".", interval=1000000)
    f.update(extra)
    return rec(HEADER, **f)


def write_file(path, records, major=1):
    """The file header frame, one chunk of the records and END."""
    samples = sum(1 for r in records if r[0] in (SAMPLE, FAILED))
    samples += sum(len(r[1]) if isinstance(r[1], list) else packed_count(r[1])
                   for r in records if r[0] == BLOCK and not isinstance(r[1], Raw))
    failed = sum(1 for r in records if r[0] == FAILED)
    failed += sum(len(r.get(11, [])) // 2 for r in records if r[0] == BLOCK)
    gens = [r[1] for r in records if r[0] in (SNAPSHOT, COMPACTION, FREE, MOVE)]
    end = {0: END, 1: 10 ** 9, 2: samples, 5: failed, 6: 0, 8: max(gens, default=0)}
    content = b"".join(cbor(r) for r in records) + cbor(end)
    raw = path + ".chunk"
    with open(raw, "wb") as f:
        f.write(content)
    chunk = subprocess.run(["zstd", "-q", "--check", "-c", raw], check=True,
                           capture_output=True).stdout
    os.unlink(raw)
    frame = struct.pack("<II", 0x184D2A56, 16) + b"\x89VMP\r\n\x1a\n" + \
        struct.pack("<HHI", major, 2 if major == 1 else 0, 0)
    with open(path, "wb") as f:
        f.write(frame + chunk)


def packed(values):
    """A packed column (§5.14): the width, then the values' bytes in planes."""
    w = max(1, max((v.bit_length() + 7) // 8 for v in values))
    return bytes([w]) + bytes((v >> (8 * k)) & 0xFF for k in range(w) for v in values)


def packed_count(b):
    return (len(b) - 1) // b[0] if len(b) > 1 and 1 <= b[0] <= 8 else 0


def sample(stack=0, pc=None, thread=1, weight=1, **kw):
    f = dict(time_delta=1000, thread=thread, stack=stack, weight=weight, **kw)
    if pc is not None:
        f["pc"] = pc
    return rec(SAMPLE, **f)


# ---- the cases ---------------------------------------------------------------

CASES = []


def case(name, rules, records, checks, major=1):
    """checks: (vmp arguments before the file, expected) pairs; expected is
    the text vmp prints (exit 0), a function of the finished process that
    returns what is wrong (or None), or SameAs: what vmp prints for another
    file."""
    CASES.append((name, rules, records, checks, major))


class SameAs:
    def __init__(self, records, major=1, normalize=None):
        self.records, self.major, self.normalize = records, major, normalize


def samples_only(text):
    """`vmp decode` of samples, without the offsets that differ with the
    bytes a form takes."""
    return "".join(re.sub(r" @\d+ ", " ", line) + "\n" for line in text.splitlines()
                   if " SAMPLE " in line or " FAILED_SAMPLE " in line)


CSV = ["report", "--format", "csv"]
FOLDED = ["flame"]

# Code used by several cases: functions C.F (1) and C.G (2); code objects in
# zone 1: C.F's compiled code at 0x1000 (bytecode range 5->19 from 0x1020),
# C.G's at 0x2000 with a one-pair chain naming C.F, C.G's at 0x3000 with
# C.F inlined at bcpc 9, and an interpreter at 0x4000.
BASE = [
    header(),
    rec(FUNCTION, id=1, name="F", scope="C", bytecode_size=20),
    rec(FUNCTION, id=2, name="G", scope="C", bytecode_size=20),
    rec(ZONE, id=1, name="zone", start=0x1000, end=0x10000),
    rec(CODE, id=1, zone=1, kind=0, function=1, start=0x1000, size=0x100,
        pc_map=[0, 0, 0x20, 5], inline=[[0, 1, 3]]),
    rec(CODE, id=2, zone=1, kind=0, function=2, start=0x2000, size=0x100,
        inline=[[0, 1, 7]]),
    rec(CODE, id=3, zone=1, kind=0, function=2, start=0x3000, size=0x100,
        inline=[[0, 1, 9, 2, 0], [0x80, 1, 0xFFFFFFFF, 2, 1]]),
    rec(CODE, id=4, zone=1, kind=1, name="interpreter", start=0x4000, size=0x100),
]

# R-RES-5: a pc and a symbolic innermost frame C.F at bcpc 4 are one frame.
case("pc-and-symbolic-frame", ["R-RES-5", "R-RES-11"], BASE + [
    rec(NODE, id=1, function=1, bcpc=4),
    sample(1, pc=0x1030, weight=5),  # case 3: C.F's own code, range of its pc_map
    sample(1, pc=0x2010, weight=4),  # one-pair chain (C.F, 7) in C.G's code: no inlining, case 5
    sample(1, pc=0x3010, weight=3),  # case 2: C.F inlined at 9 in C.G's code
    sample(1, pc=0x3090, weight=2),  # case 2, the chain's bcpc unknown: no range
    sample(1, pc=0x9000, weight=1),  # case 1: the pc in no code object
], [(CSV, """\
class,kind,function,range,samples
generated,inlined,C.F,9->9,3
generated,inlined,C.F,,2
generated,method,C.F,5->19,5
symbolic,function,C.F,4->4,5
""")])

# R-RES-11: the range of an interpreted frame is its source line's run.
case("interpreted-line-runs", ["R-RES-11"], BASE + [
    rec(FUNCTION, id=3, name="loop", scope="C", lines=[0, 10, 4, 10, 9, 11, 14, 10],
        bytecode_size=20),
    rec(FUNCTION, id=4, name="nolines", scope="C", bytecode_size=20),
    rec(FUNCTION, id=5, name="late", scope="C", lines=[3, 1, 6, 2]),
    # read in order: (4, 3) is below (8, 2) and ignored; (8, 4) replaces (8, 2)
    rec(FUNCTION, id=6, name="unsorted", scope="C", lines=[0, 1, 8, 2, 4, 3, 8, 4, 12, 4],
        bytecode_size=16),
    # (3, 11) is below (5, 10), the last pair kept: ignored, not a new line
    rec(FUNCTION, id=7, name="backwards", scope="C", lines=[0, 10, 5, 10, 3, 11],
        bytecode_size=8),
    rec(NODE, id=1, function=3, bcpc=6),
    rec(NODE, id=2, function=3, bcpc=9),
    rec(NODE, id=3, function=3, bcpc=15),
    rec(NODE, id=4, function=4, bcpc=5),
    rec(NODE, id=5, function=5, bcpc=1),   # below the table's first bcpc
    rec(NODE, id=6, function=5, bcpc=8),   # last run, bytecode_size 0: start->b
    rec(NODE, id=7, function=6, bcpc=5),
    rec(NODE, id=8, function=6, bcpc=13),
    rec(NODE, id=9, function=3),           # no bcpc: no range
    rec(NODE, id=10, function=7, bcpc=4),
] + [sample(n, pc=0x4010, weight=20 - n) for n in range(1, 11)], [(CSV, """\
class,kind,function,range,samples
generated,interpreted,C.loop,0->8,19
generated,interpreted,C.loop,9->13,18
generated,interpreted,C.loop,14->19,17
generated,interpreted,C.loop,,11
generated,interpreted,C.late,1->1,15
generated,interpreted,C.late,6->8,14
generated,interpreted,C.unsorted,0->7,13
generated,interpreted,C.unsorted,8->15,12
generated,interpreted,C.nolines,5->5,16
generated,interpreted,C.backwards,0->7,10
""")])

# R-RES-6: the end of a size-0 symbol.
case("size-0-symbols", ["R-RES-6"], [
    header(),
    # liba: mapped [0x10000, 0x14000); z2 lies past the module's end
    rec(MODULE, id=1, path="/lib/liba.so", bias=0x10000, start=0x10000, end=0x14000),
    rec(SYMBOLS, module=1, symbols=[0x100, 0, "z1", 0x8000, 0, "z2"]),
    # libb: end unknown (0)
    rec(MODULE, id=2, path="/lib/libb.so", bias=0x30000, start=0x30000, end=0),
    rec(SYMBOLS, module=2, symbols=[0x10, 0, "b1", 0x80, 0, "b2"]),
    sample(pc=0x13fff, weight=9),  # z1: up to the module's end, below z2
    sample(pc=0x14000, weight=1),  # past liba's end: nothing
    sample(pc=0x18000, weight=8),  # z2: its own address only
    sample(pc=0x18001, weight=1),
    sample(pc=0x3007f, weight=7),  # b1: up to b2 (libb's end unknown)
    sample(pc=0x30080, weight=6),  # b2: the last symbol, its own address only
    sample(pc=0x30081, weight=1),
], [(CSV, """\
class,kind,function,range,samples
vanilla,C,z1,,9
vanilla,C,z2,,8
vanilla,C,b1,,7
vanilla,C,b2,,6
unknown,unknown,[unknown],,3
""")])

# R-GEN-5: overlapping code objects of two zones, and one of size 0.
case("overlapping-code", ["R-GEN-4", "R-GEN-5"], [
    header(),
    rec(ZONE, id=1, name="one", start=0x5000, end=0x7000),
    rec(ZONE, id=2, name="two", start=0x5000, end=0x7000),
    rec(CODE, id=10, zone=1, name="big", start=0x5000, size=0x100),
    rec(CODE, id=11, zone=2, name="small", start=0x5080, size=0x10),
    rec(CODE, id=12, zone=2, name="empty", start=0x5020, size=0),
    rec(CODE, id=13, zone=2, name="first", start=0x6000, size=0x10),
    rec(CODE, id=14, zone=1, name="second", start=0x6000, size=0x20),
    sample(pc=0x5030, weight=9),   # big: the size-0 object at 0x5020 hides nothing
    sample(pc=0x5088, weight=8),   # small: the greatest start <= pc
    sample(pc=0x50a0, weight=2),   # small does not cover it: no code object
    sample(pc=0x6004, weight=7),   # second: placed last of two at 0x6000
], [(CSV, """\
class,kind,function,range,samples
generated,method,big,,9
generated,method,small,,8
generated,method,second,,7
unknown,unknown,[unknown],,2
""")])

# R-RES-12: the innermost frame, and return addresses at address - 1.
case("innermost-and-return-addresses", ["R-RES-12", "R-RES-1"], BASE + [
    rec(MODULE, id=1, path="/lib/liba.so", bias=0x10000, start=0x10000, end=0x14000),
    rec(NODE, id=1, pc=0x10051),             # a return address: liba.so+0x50
    rec(NODE, id=2, parent=1, pc=0x10051),   # the innermost: liba.so+0x51
    rec(NODE, id=3, pc=0x1020),              # return address: 0x101f, C.F 0->4
    rec(NODE, id=4, parent=3, pc=0x2000),    # innermost at its own address: C.G
    rec(NODE, id=5, parent=3, pc=0x1020),    # innermost: C.F 5->19
    sample(2, weight=3),
    sample(4, pc=0x1030, weight=2),          # the node, not the sample's pc, is the frame
    sample(5, weight=1),
    sample(0, pc=0x3000, weight=1),          # no stack: the pc alone
    sample(0, weight=1),                     # no stack, no pc
], [(FOLDED + ["--ranges"], """\
C.F;C.F 0->4;C.F;C.F 5->19 1
C.F;C.F 0->4;C.G 2
C.G 1
[unknown] 1
liba.so+0x50;liba.so+0x51 3
""")])

# R-ID-6: stacks that name nodes not defined before the sample.
case("undefined-stack-nodes", ["R-ID-6", "R-ID-1"], BASE + [
    rec(NODE, id=20, parent=77, pc=0x2010),  # parent 77 is never defined
    rec(NODE, id=21, parent=20, pc=0x1011),
    sample(99, pc=0x1010, weight=3),         # stack 99 undefined: the pc alone
    sample(98, weight=2),                    # neither: no frame
    sample(21, weight=1),                    # the walk ends at node 20
    rec(NODE, id=99, pc=0x2010),             # too late for the samples above
], [(FOLDED, """\
C.F 3
C.G;C.F 1
[unknown] 2
""")])

# R-ID-3: THREAD records with empty names rename nothing; names are the
# thread's, from the whole file.
case("thread-names", ["R-ID-3", "R-RES-9"], [
    header(),
    rec(THREAD, id=1, name="main"),
    rec(THREAD, id=2, name="a"),
    rec(THREAD, id=2, name="b"),
    rec(THREAD, id=2, name="a"),
    rec(THREAD, id=3, name="x"),
    sample(thread=1, weight=4),
    sample(thread=2, weight=3),
    sample(thread=3, weight=2),
    sample(thread=4, weight=1),
    rec(THREAD, id=1, name="", end_time=5),
    rec(THREAD, id=3, name="y"),
], [(["report", "--by", "thread", "--format", "csv"], """\
thread,samples
main,4
a,3
x (y),2
thread#4,1
"""), (["info", "--json", "--threads"], lambda p: None if p.returncode == 0 and {
    t["id"]: t["name"] for t in json.loads(p.stdout)["threads"]}.get(1) == "main"
    else "info: thread 1 is not 'main' after a THREAD record without a name: " + p.stdout)])

# R-RES-10: grouped names of hidden classes and their counts.
GROUPS = [
    header(),
    rec(FUNCTION, id=32, name="run", scope="Churn"),
    rec(NODE, id=32, function=32),
    sample(32),                      # counted although named before the group's others
    rec(FUNCTION, id=30, name="run", scope="Churn.0x00007f3c0c01e800"),
    rec(FUNCTION, id=31, name="run", scope="Churn/0x00007F3C0C01E900"),
    rec(FUNCTION, id=33, name="run", scope="Churn.0x00007f3c0c01ea00"),  # never framed
    rec(FUNCTION, id=34, name="m", scope="J.0x1234/0x5678"),
    rec(FUNCTION, id=35, name="m", scope="J.0x123"),
    rec(FUNCTION, id=36, name="apply", scope="Outer$$Lambda$14/0x0000000801001a00"),
    rec(FUNCTION, id=37, name="apply", scope="Outer$$Lambda$15/0x0000000801001b00"),
    rec(FUNCTION, id=38, name="apply", scope="Outer$$Lambda$16"),
    rec(FUNCTION, id=39, name="k", scope="K"),
    rec(FUNCTION, id=40, name="only", scope=".0x00007f3c0c01e800"),
] + [rec(NODE, id=n, function=n) for n in (30, 31, 34, 35, 36, 37, 38, 39, 40)] + [
    sample(30, weight=2), sample(31, weight=2),
    sample(34, weight=7), sample(35, weight=6),
    sample(36, weight=3), sample(37, weight=2),
    sample(38, weight=4), sample(39, weight=3), sample(40, weight=1),
]
case("hidden-class-groups", ["R-RES-10", "R-RES-2"], GROUPS, [(CSV + ["--no-ranges"], """\
class,kind,function,range,samples
symbolic,function,J.0x1234.m [x1],,7
symbolic,function,J.0x123.m,,6
symbolic,function,Churn.run [x3],,5
symbolic,function,Outer$$Lambda.apply [x2],,5
symbolic,function,Outer$$Lambda$16.apply,,4
symbolic,function,K.k,,3
symbolic,function,only [x1],,1
"""), (CSV + ["--no-ranges", "--no-group-hidden"], """\
class,kind,function,range,samples
symbolic,function,J.0x1234/0x5678.m,,7
symbolic,function,J.0x123.m,,6
symbolic,function,Outer$$Lambda$16.apply,,4
symbolic,function,K.k,,3
symbolic,function,Outer$$Lambda$14/0x0000000801001a00.apply,,3
symbolic,function,Churn.0x00007f3c0c01e800.run,,2
symbolic,function,Churn/0x00007F3C0C01E900.run,,2
symbolic,function,Outer$$Lambda$15/0x0000000801001b00.apply,,2
symbolic,function,.0x00007f3c0c01e800.only,,1
symbolic,function,Churn.run,,1
""")])


# ---- the views (Appendix D) ---------------------------------------------------

# A profile of every class: C.F's code (with a failed sample in it), C code,
# a symbolic frame, a code kind past the header's, names to quote and
# escape, samples with no frame, a weight of 0.
VIEWS = BASE + [
    rec(MODULE, id=1, path="/lib/liba.so", bias=0x10000, start=0x10000, end=0x14000),
    rec(SYMBOLS, module=1, symbols=[0x100, 0x100, "memcpy"]),
    rec(FUNCTION, id=8, name='say "hi", then;\x01go', scope="C"),
    rec(CODE, id=5, zone=1, kind=7, name="stub", start=0x6000, size=0x10),
    rec(THREAD, id=1, name="main"),
    rec(NODE, id=1, pc=0x10110),                  # memcpy, a return address
    rec(NODE, id=2, parent=1, pc=0x1030),         # C.F 5->19
    rec(NODE, id=3, parent=1, function=8, bcpc=2),
    rec(NODE, id=4, pc=0x1050),                   # C.F, only at weight 0
    sample(2, weight=6),
    sample(3, weight=2),
    sample(0, pc=0x6004, weight=2),               # kind 7: kind#7
    sample(4, weight=0),                          # counts 0: no line of its own
    rec(FAILED, time_delta=10, thread=1, pc=0x1010, reason=0, weight=3),   # for C.F 0->4
    rec(FAILED, time_delta=10, thread=1, reason=0, weight=1),              # no pc: unknown
    sample(0, pc=0x10180, weight=4),              # memcpy
    sample(0, weight=1),                          # no frame
    sample(0, pc=0x9000, weight=1),               # a pc that resolves to nothing
    rec(FAILED, time_delta=10, thread=1, pc=0x9000, reason=0, weight=2),   # the same, failed
]


def json_views(out):
    import json
    r = json.loads(out)
    want = dict(samples=22, generated=11, native=4, symbolic=2, unknown=5, failed=6)
    got = {k: r[k] for k in want}
    if got != want:
        return "totals %r, want %r" % (got, want)
    gen = r["generated_code"]
    if gen["samples"] != 11 or [(f["name"], f["kind"], f["samples"]) for f in gen["functions"]] \
            != [("C.F", "method", 9), ("stub", "kind#7", 2)]:
        return "generated_code %r" % gen
    f = gen["functions"][0]
    if f["percent"] != round(100 * 9 / 11, 4) or f["percent_total"] != round(100 * 9 / 22, 4):
        return "percent %r, percent_total %r" % (f["percent"], f["percent_total"])
    if f["ranges"] != [{"first": 5, "last": 19, "samples": 6}, {"first": 0, "last": 4, "samples": 3}]:
        return "ranges %r" % f["ranges"]
    if r["failures"] != [{"reason": "walk failed", "samples": 6}]:
        return "failures %r" % r["failures"]
    if r["threads"] != [{"id": 1, "name": "main", "samples": 22}]:
        return "threads %r" % r["threads"]
    return None


case("views", ["R-VIEW-1", "R-VIEW-2", "R-VIEW-3", "R-VIEW-4", "R-RES-7"], VIEWS, [
    (CSV, """\
class,kind,function,range,samples
generated,method,C.F,5->19,6
generated,method,C.F,0->4,3
generated,kind#7,stub,,2
vanilla,C,memcpy,,4
symbolic,function,"C.say ""hi"", then;\x01go",2->2,2
unknown,unknown,[unknown],,5
"""),
    (CSV + ["--no-ranges"], """\
class,kind,function,range,samples
generated,method,C.F,,9
generated,kind#7,stub,,2
vanilla,C,memcpy,,4
symbolic,function,"C.say ""hi"", then;\x01go",,2
unknown,unknown,[unknown],,5
"""),
    (["report", "--format", "json"], lambda p: json_views(p.stdout) if p.returncode == 0
     else "exit %d" % p.returncode),
    (FOLDED, """\
[failed: walk failed] 3
[failed: walk failed];C.F 3
[unknown] 2
memcpy 4
memcpy;C.F 6
memcpy;C.say "hi", then:?go 2
stub 2
"""),
])


# R-VIEW-7: the VM's view.  liba.so is mapped at [0x10000, 0x14000) with one
# symbol, memcpy at [0x10100, 0x10200); its other addresses have no name.
VM_VIEW = BASE + [
    rec(MODULE, id=1, path="/lib/liba.so", bias=0x10000, start=0x10000, end=0x14000),
    rec(SYMBOLS, module=1, symbols=[0x100, 0x100, "memcpy"]),
    rec(CODE, id=5, zone=1, kind=0, name="stub", start=0x6000, size=0x10),  # no function
    rec(NODE, id=1, function=1, bcpc=4),        # C.F
    rec(NODE, id=2, parent=1, pc=0x10051),      # liba.so+0x50 as a caller, +0x51 innermost
    rec(NODE, id=3, parent=2, function=2, bcpc=1),  # C.G, called through liba.so
    rec(NODE, id=4, parent=3, pc=0x10111),      # memcpy
    rec(NODE, id=5, parent=4, pc=0x10051),      # liba.so+0x50
    rec(NODE, id=6, parent=5, pc=0x10061),      # liba.so+0x61, innermost
    rec(NODE, id=7, pc=0x10061),                # no VM frame, no name
    rec(NODE, id=8, pc=0x10110),                # no VM frame: memcpy
    rec(NODE, id=9, parent=1, pc=0x6004),       # a code object without a function
    sample(6, weight=5),
    sample(3, weight=2),
    sample(2, state=1, weight=3),
    sample(7, state=1, weight=1),
    sample(8, weight=1),
    sample(9, weight=1),
    rec(FAILED, time_delta=10, thread=1, pc=0x1010, reason=0, weight=2),   # C.F's own code
    rec(FAILED, time_delta=10, thread=1, pc=0x10061, reason=0, weight=1),  # no name
    sample(0, weight=1),                        # no frame
]
VM_VIEW[0] = header(vm_name="Sim")
case("vm-view", ["R-VIEW-7"], VM_VIEW, [
    (FOLDED + ["--vm-frames"], """\
C.F;C.G 2
C.F;C.G;memcpy;[Sim jit] 5
C.F;[Sim interp] 3
C.F;stub 1
[Sim interp] 1
[failed: walk failed];C.F 2
[failed: walk failed];[Sim jit] 1
[unknown] 1
memcpy 1
"""),
    (["report", "--by", "vm-function", "--format", "csv"], """\
kind,vm-function,samples,own
function,C.G,7,2
function,C.F,6,2
state,[Sim jit],2,0
state,[Sim interp],1,0
failed,[failed: walk failed],1,0
"""),
])


# ---- sample blocks (format 2.0, §5.14) -----------------------------------------

# Samples as (delta in us, thread, state, innermost node, pc, weight, blame).
NODES = [rec(THREAD, id=7, name="main"), rec(THREAD, id=9, name="worker"),
         rec(NODE, id=1, pc=0x1030), rec(NODE, id=2, parent=1, pc=0x2010),
         rec(NODE, id=3, function=1, bcpc=4), rec(NODE, id=4, parent=1, function=2, bcpc=1)]
NODE_PC = {1: 0x1030, 2: 0x2010}
RUN1 = [(5, 7, 0, 1, 0x1030, 1, 0),    # the pc is its node's: not stored (R-BLK-3)
        (1, 9, 1, 2, 0x2010, 2, 0),
        (2, 7, 0, 3, 0x3010, 1, 0),    # a symbolic node and a pc: stored
        (1, 7, 0, 1, 0x1010, 3, 0)]    # a pc other than its node's: stored
RUN2 = [(3, 9, 1, 0, 0x4010, 1, 0),    # no stack, the pc alone
        (1, 9, 0, 4, None, 1, 0),      # a symbolic node, no pc
        (2, 7, 0, 2, 0x2010, 1, 2)]    # blamed on code 2


def as_records(run):
    out = []
    for d, t, st, node, pc, w, blame in run:
        f = dict(time_delta=d * 1000, thread=t, state=st, stack=node, weight=w, blame=blame)
        if pc is not None:
            f["pc"] = pc
        out.append(rec(SAMPLE, **f))
    return out


def as_block(run, tables=True, pack=False):
    threads = sorted({x[1] for x in run})
    stacks = sorted({x[3] for x in run})
    f = dict(times=[x[0] for x in run], state=[x[2] for x in run],
             weight=[x[5] for x in run], blame=[x[6] for x in run])
    if tables:
        f.update(threads=threads, thread=[threads.index(x[1]) for x in run],
                 stacks=stacks, stack=[stacks.index(x[3]) for x in run])
    else:
        f.update(thread=[x[1] for x in run], stack=[x[3] for x in run])
    if pack:  # every column packed, the times above their least
        base = min(f["times"])
        f["times"] = [t - base for t in f["times"]]
        f = {k: packed(v) if k in ("times", "thread", "stack", "state", "weight", "blame")
             else v for k, v in f.items()}
        f["time_base"] = base
    pcs = []
    for i, x in enumerate(run):
        if x[4] is not None and NODE_PC.get(x[3]) != x[4]:
            pcs += [i, x[4]]
    if pcs:
        f["pcs"] = pcs
    return rec(BLOCK, **f)


FAIL_BETWEEN = rec(FAILED, time_delta=1000, thread=7, pc=0x1010, reason=0)
AS_SAMPLES = BASE + NODES + as_records(RUN1) + [FAIL_BETWEEN] + as_records(RUN2)
# the failed sample as a block of its own (R-BLK-1: key 11), 1 us after
FAIL_BLOCK = rec(BLOCK, times=[1], thread=[7], pcs=[0, 0x1010], failed=[0, 0])
AS_BLOCKS = [header(sample_time_unit=1000)] + BASE[1:] + NODES + [
    as_block(RUN1), FAIL_BLOCK, as_block(RUN2, tables=False)]
SAME = SameAs(AS_SAMPLES)
case("sample-blocks", ["R-BLK-1", "R-BLK-3", "R-HDR-3"], AS_BLOCKS, [
    (["report", "--format", "json", "--top", "0"], SAME),
    (["report", "--by", "unit", "--format", "csv"], SAME),
    (["report", "--by", "thread", "--format", "csv"], SAME),
    (["report", "--by", "state", "--format", "csv"], SAME),
    (["flame", "--thread-root", "--state", "--units", "--ranges"], SAME),
    (["speedscope", "-o", "-"], SAME),
    (["validate"], lambda p: None if p.returncode == 0 else "validate: " + p.stdout + p.stderr),
], major=2)


def fails_with(rule, text):
    """vmp validate: exit 1, the rule and the message."""
    def check(p):
        if p.returncode != 1 or text not in p.stderr + p.stdout or rule not in p.stderr + p.stdout:
            return "exit %d, stderr %r: want exit 1 with %r (%s)" % (
                p.returncode, p.stderr.strip(), text, rule)
        return None
    return check


def warns(text):
    """vmp report: what comes before the damage, and one line naming the file
    and the offset (exit 0, as for a truncated file: R-CHK-3)."""
    def check(p):
        if "offset " not in p.stderr or text not in p.stderr or len(p.stderr.splitlines()) != 1:
            return "stderr %r: want one line with %r" % (p.stderr.strip(), text)
        return None
    return check


# The same samples with packed columns, with and without tables (R-BLK-2).
case("sample-blocks-packed", ["R-BLK-1", "R-BLK-2"], [header(sample_time_unit=1000)] + BASE[1:] +
     NODES + [as_block(RUN1, pack=True), FAIL_BLOCK, as_block(RUN2, tables=False, pack=True)], [
    (["report", "--format", "json", "--top", "0"], SAME),
    (["flame", "--thread-root", "--state", "--units", "--ranges"], SAME),
    (["validate"], lambda p: None if p.returncode == 0 else "validate: " + p.stdout + p.stderr),
], major=2)


def spec_block_examples():
    """The SAMPLE_BLOCK examples of spec.md §5.14, in CBOR diagnostic
    notation: the array form, the packed form, and the packed form with the
    thread and stack columns it gives without tables."""
    text = open(os.path.join(os.path.dirname(__file__), "..", "..", "spec.md")).read()
    start = text.index("### 5.14 SAMPLE_BLOCK")
    text = text[start:text.index("[R-BLK-1] A SAMPLE_BLOCK", start)]
    text = re.sub(r"\s+", " ", text)
    diag = re.findall(r"`(\{0: 19,[^`]*\})`", text)
    cols = re.findall(r"`(h'[0-9A-F ]+')`", text)

    def parse(d):
        return eval(re.sub(r"h'([0-9A-F ]*)'", lambda m: repr(bytes.fromhex(m.group(1))), d))
    forms = [parse(d) for d in diag]
    untabled = dict(forms[1])
    del untabled[2], untabled[4]
    untabled[3], untabled[5] = parse(cols[-3]), parse(cols[-2])
    wide = dict(untabled)
    wide[5] = parse(cols[-1])
    return forms + [untabled], wide


SPEC_FORMS, SPEC_WIDE = spec_block_examples()
SPEC_NODES = [rec(THREAD, id=7, name="main"), rec(THREAD, id=9, name="worker"),
              rec(NODE, id=12, pc=0x1010), rec(NODE, id=40, pc=0x2010),
              rec(NODE, id=300, pc=0x3010)]
for i, form in enumerate(SPEC_FORMS):
    case("spec-block-example-%d" % i, ["R-BLK-1", "R-BLK-2"],
         [header(sample_time_unit=1000)] + BASE[1:] + SPEC_NODES + [form], [
        (["decode"], SameAs([header(sample_time_unit=1000)] + BASE[1:] + SPEC_NODES +
                            [SPEC_FORMS[0]], major=2, normalize=samples_only)),
        (["validate"], lambda p: None if p.returncode == 0 else "validate: " + p.stdout + p.stderr),
    ], major=2)
# node 300 in place of 40: the array form with that stack table
case("spec-block-example-wide", ["R-BLK-2"],
     [header(sample_time_unit=1000)] + BASE[1:] + SPEC_NODES + [SPEC_WIDE], [
    (["decode"], SameAs([header(sample_time_unit=1000)] + BASE[1:] + SPEC_NODES +
                        [{**SPEC_FORMS[0], 4: [12, 300]}], major=2,
                        normalize=samples_only)),
], major=2)

# R-BLK-2 and R-SMP-1: blocks a reader rejects, with the file and offset.
BAD_BLOCKS = [
    ("block-no-times", rec(BLOCK, times=[]), "R-BLK-2", "times has no item"),
    ("block-column-length", rec(BLOCK, times=[1, 1, 1], thread=[1, 2]), "R-BLK-2",
     "column thread has 2 items for 3 samples"),
    ("block-index-past-table", rec(BLOCK, times=[1, 1], stacks=[1, 2], stack=[0, 2]), "R-BLK-2",
     "stack index 2 is past its table of 2"),
    ("block-pcs-order", rec(BLOCK, times=[1, 1, 1], pcs=[1, 0x1010, 1, 0x1020]), "R-BLK-2",
     "pcs pair 1 names sample 1"),
    ("block-pcs-past-end", rec(BLOCK, times=[1], pcs=[1, 0x1010]), "R-BLK-2",
     "pcs pair 0 names sample 1"),
    ("block-failed-order", rec(BLOCK, times=[1, 1], failed=[1, 0, 0, 0]), "R-BLK-2",
     "failed pair 1 names sample 0"),
    ("block-time-overflow", rec(BLOCK, times=[1, 2 ** 62]), "R-SMP-1",
     "time delta of sample 1 overflows"),
    ("block-time-negative", rec(BLOCK, times=[1, -2]), "R-SMP-1", "sample 1: time is negative"),
    ("block-packed-width-0", rec(BLOCK, times=bytes([0, 1])), "R-BLK-2",
     "the width must be 1 to 8"),
    ("block-packed-width-9", rec(BLOCK, times=bytes([9]) + bytes(9)), "R-BLK-2",
     "with width 9: the width must be 1 to 8"),
    ("block-packed-ragged", rec(BLOCK, times=bytes([2, 1, 2, 3])), "R-BLK-2",
     "packed column of 4 bytes with width 2"),
    ("block-packed-empty", rec(BLOCK, times=bytes([1])), "R-BLK-2", "times has no item"),
    ("block-packed-column-length", rec(BLOCK, times=[1, 1, 1], thread=packed([7, 9])),
     "R-BLK-2", "column thread has 2 items for 3 samples"),
    ("block-packed-time-2-63", rec(BLOCK, times=bytes([8]) + (2 ** 63).to_bytes(8, "little")),
     "R-BLK-2", "packed value 0 is 2^63 or more"),
    ("block-time-base-overflow", rec(BLOCK, times=[1 - 2 ** 63, 5], time_base=2 ** 63 - 1),
     "R-BLK-2", "time_base plus the time of sample 1 overflows"),
    ("block-contexts-not-triples", rec(BLOCK, times=[1], contexts=[1, 0], context=[1]),
     "R-BLK-5", "contexts has 2 items: not (stack, state, pc) triples"),
    ("block-context-base-0", rec(BLOCK, times=[1], contexts=[1, 0, 0], context_base=0,
                                 context=[1]),
     "R-BLK-5", "context_base 0 is not above the contexts defined before it (0)"),
    ("block-context-past-limit", rec(BLOCK, times=[1], contexts=[1, 0, 0],
                                     context_base=4 * 2 ** 20 + 1, context=[1]),
     "R-LIM-1", "context 4194305 is past the contexts limit 4194304"),
    ("block-of-a-billion", rec(BLOCK, times=Raw(cbor_head(4, 10 ** 9))), "R-LIM-1",
     "array of 1000000000 items exceeds the items limit"),
]
for name, block, rule, text in BAD_BLOCKS:
    case(name, [rule], [header(sample_time_unit=1000), rec(NODE, id=1, pc=0x1010), block],
         [(["report"], warns(text)), (["validate"], fails_with(rule, text))], major=2)

# R-BLK-5: contexts are defined once, in increasing order; a block may
# skip ids (a chunk lost); a sample naming an undefined context has no stack
# and no pc, and the validator reports it.
CTX1 = rec(BLOCK, times=[1, 1], contexts=[1, 1, 0, 1, 0, 0x1234], context=[1, 2])
case("block-context-redefined", ["R-BLK-5"], [header(sample_time_unit=1000),
     rec(NODE, id=1, pc=0x1010), CTX1,
     rec(BLOCK, times=[1], contexts=[1, 0, 0], context_base=2, context=[2])], [
    (["validate"], fails_with("R-BLK-5", "context_base 2 is not above the contexts defined "
                                         "before it (2)")),
], major=2)
case("block-context-gap", ["R-BLK-5"], [header(sample_time_unit=1000),
     rec(NODE, id=1, pc=0x1010), CTX1,
     rec(BLOCK, times=[1, 1], contexts=[1, 1, 0x1010], context_base=9, context=[9, 1])], [
    (["decode"], SameAs([header(sample_time_unit=1000), rec(NODE, id=1, pc=0x1010)] +
                        [sample(stack=1, state=1, thread=0),
                         sample(stack=1, pc=0x1234, thread=0),
                         sample(stack=1, state=1, pc=0x1010, thread=0),
                         sample(stack=1, state=1, thread=0)], major=2,
                        normalize=samples_only)),
    (["validate"], lambda p: None if p.returncode == 0 else "validate: " + p.stdout + p.stderr),
], major=2)
case("block-context-undefined", ["R-BLK-5", "R-ID-6"], [header(sample_time_unit=1000),
     rec(NODE, id=1, pc=0x1010), CTX1, rec(BLOCK, times=[1, 1], context=[5, 2])], [
    (["validate"], fails_with("R-BLK-5", "names a sample context that is not defined")),
    (["flame", "--state"], SameAs([header(sample_time_unit=1000), rec(NODE, id=1, pc=0x1010),
                                   sample(stack=1, state=1, thread=0),
                                   sample(stack=1, pc=0x1234, thread=0),
                                   sample(thread=0), sample(stack=1, pc=0x1234, thread=0)],
                                  major=2)),
], major=2)
# an id skipped below a later block's context_base is as undefined as one
# past the last (the reader keeps contexts in pages: a skipped id can lie on
# a page that holds defined ones)
case("block-context-skipped", ["R-BLK-5", "R-ID-6"], [header(sample_time_unit=1000),
     rec(NODE, id=1, pc=0x1010), CTX1,
     rec(BLOCK, times=[1, 1], contexts=[1, 1, 0x1010], context_base=9, context=[5, 9])], [
    (["validate"], fails_with("R-BLK-5", "names a sample context that is not defined")),
    (["flame", "--state"], SameAs([header(sample_time_unit=1000), rec(NODE, id=1, pc=0x1010),
                                   sample(stack=1, state=1, thread=0),
                                   sample(stack=1, pc=0x1234, thread=0),
                                   sample(thread=0), sample(stack=1, state=1, pc=0x1010, thread=0)],
                                  major=2)),
], major=2)

# R-HDR-3: a 1.x file and a 2.0 file of the same records read alike.
case("major-2-reads-as-1", ["R-HDR-3", "R-BLK-4"], AS_SAMPLES, [
    (["report", "--format", "json", "--top", "0"], SameAs(AS_SAMPLES, major=1)),
], major=2)


# ---- running them -------------------------------------------------------------

def main():
    if len(sys.argv) < 3:
        sys.exit("usage: check_spec_rules.py VMP WORKDIR [CASE...]")
    vmp, work = sys.argv[1], sys.argv[2]
    only = set(sys.argv[3:])
    os.makedirs(work, exist_ok=True)
    failures = 0
    for name, rules, records, checks, major in CASES:
        if only and name not in only:
            continue
        path = os.path.join(work, name + ".vmp")
        write_file(path, records, major)
        for args, expected in checks:
            p = subprocess.run([vmp] + args + [path], capture_output=True, text=True)
            what = "%s (%s): vmp %s" % (name, ", ".join(rules), " ".join(args))
            if isinstance(expected, SameAs):
                same = expected
                other = os.path.join(work, name + ".same.vmp")
                write_file(other, expected.records, expected.major)
                q = subprocess.run([vmp] + args + [other], capture_output=True, text=True)
                expected = q.stdout if q.returncode == 0 else "(exit %d: %s)" % (
                    q.returncode, q.stderr.strip())
                p.stdout = p.stdout.replace(path, "FILE")
                expected = expected.replace(other, "FILE")
                if same.normalize:
                    p.stdout, expected = same.normalize(p.stdout), same.normalize(expected)
            if callable(expected):
                err = expected(p)
                if err:
                    failures += 1
                    print("FAIL %s\n  %s" % (what, err))
                else:
                    print("ok   " + what)
                continue
            if p.returncode != 0 or p.stdout != expected:
                failures += 1
                print("FAIL %s\n  exit %d, stderr: %s\n  expected:\n%s  got:\n%s" % (
                    what, p.returncode, p.stderr.strip(), expected, p.stdout))
            else:
                print("ok   " + what)
    if failures:
        sys.exit("%d check(s) failed" % failures)


if __name__ == "__main__":
    main()
