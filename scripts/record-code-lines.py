#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Count the lines written once per record type (issue 29's measure): the
registry's tables (format/vmp_record.c), the in-VM writer's hand-written
record bodies (vmp_rec__begin .. vmp_rec__end) and its helpers for them, the
writer's generic-encoder record set-ups (vmp_record rec = ... up to the
encode call), and what the tools' record writer still does per type.  The
reader, the generic encoder and `vmp decode` have no per-type code.
Run from the top of the tree: scripts/record-code-lines.py"""
import re


def lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")


def runs(path, start, end):
    n = blocks = 0
    on = False
    for line in lines(path):
        if not on and re.search(start, line):
            on, blocks = True, blocks + 1
        if on:
            n += 1
            if re.search(end, line):
                on = False
    return n, blocks


def main():
    parts = []
    s = lines("format/vmp_record.c")
    a = next(i for i, l in enumerate(s) if l.startswith("static const vmp_field header_fields"))
    b = next(i for i, l in enumerate(s) if l.startswith("/* clang-format on */"))
    parts.append(("format/vmp_record.c: the registry's tables", b - a))
    for f in ("writer/vmp_writer.c", "writer/vmp_modules.c"):
        n, k = runs(f, r"vmp_rec__begin\(", r"vmp_rec__end\(")
        parts.append((f"{f}: {k} hand-written record bodies", n))
        n, k = runs(f, r"vmp_record rec = \{\.type", r"vmp_writer__queue_record\(|vmp_record_encode\(")
        parts.append((f"{f}: {k} records set up for the generic encoder", n))
    for f, fn in (("writer/vmp_writer.c", "enc_code_maps"), ("writer/vmp_writer.c", "enc_str_array"),
                  ("analyze/vmp_record_writer.c", "generation_of")):
        n, _ = runs(f, r"^static \w+ \w*\s*\*?" + fn + r"\(", r"^}")
        parts.append((f"{f}: {fn}()", n))
    for name, n in parts:
        print(f"{n:5d}  {name}")
    print(f"{sum(n for _, n in parts):5d}  total")


if __name__ == "__main__":
    main()
