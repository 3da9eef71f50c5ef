#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fail when a source file reaches above its layer (ARCHITECTURE.md).

The layers, bottom up; a folder's files may include the headers of the
folders listed for it and of no other:

  format/    the bytes on disk: records, CBOR encoding, status codes
  writer/    on format: what a VM links (never the reader or the analysis)
  reader/    on format: streaming, seeking and validating files
  analyze/   on reader: resolution, profiles, filter, merge
  convert/   on analyze (and the writer, to write a vmp file): the report,
             flame graphs, pprof, speedscope, diff statistics
  archive/   on convert: the index of benchmark profiles (SQLite)
  agents/    on writer: the VMs' agents
  cli/       on everything below, and the agents' attach protocol header

With --writer-lib LIB (the built writer library) it also checks that the
library defines and needs no function of the reader or the analysis.

usage: check-layers.py SOURCE_ROOT [--writer-lib LIB]
"""
import os
import re
import subprocess
import sys

ALLOWED = {
    "format": {"format"},
    "writer": {"format", "writer"},
    "reader": {"format", "reader"},
    "analyze": {"format", "reader", "analyze"},
    "convert": {"format", "reader", "writer", "analyze", "convert"},
    "archive": {"format", "reader", "analyze", "convert", "archive"},
    "agents": {"format", "writer", "agents"},
    "cli": {"format", "reader", "writer", "analyze", "convert", "archive", "cli"},
}
# single headers a folder may include from a folder otherwise above or beside it
EXCEPTIONS = {
    ("cli", "agents/jvmti/vmp_jvmti_attach.h"),  # the attach protocol `vmp record --pid` speaks
}
# prefixes of the functions of the reader and analysis libraries
NOT_IN_WRITER = ("vmp_reader_", "vmp_analysis_", "vmp_profile_", "vmp_validate", "vmp_seek_",
                 "vmp_flame_", "vmp_pprof_", "vmp_merge", "vmp_filter")


def headers(root):
    """{header file name: its path relative to root} of the layered folders."""
    found = {}
    for top in ALLOWED:
        for dirpath, _dirs, files in os.walk(os.path.join(root, top)):
            for name in files:
                if name.endswith(".h"):
                    found.setdefault(name, []).append(
                        os.path.relpath(os.path.join(dirpath, name), root))
    return found


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    root, lib = args[0], None
    if "--writer-lib" in args:
        lib = args[args.index("--writer-lib") + 1]
    by_name = headers(root)
    problems, files = [], 0
    for top, allowed in ALLOWED.items():
        for dirpath, _dirs, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                files += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                        if not m:
                            continue
                        base = os.path.basename(m.group(1))
                        for target in by_name.get(base, []):
                            layer = target.split(os.sep)[0]
                            if layer not in allowed and (top, target) not in EXCEPTIONS:
                                problems.append("%s:%d: includes %s: %s/ may not use %s/" %
                                                (rel, n, target, top, layer))
    if lib:
        out = subprocess.run(["nm", "-D", lib], capture_output=True, text=True)
        if out.returncode != 0:
            problems.append("%s: nm failed: %s" % (lib, out.stderr.strip()))
        for line in out.stdout.splitlines():
            parts = line.split()
            sym = parts[-1] if parts else ""
            if sym.startswith(NOT_IN_WRITER):
                problems.append("%s: the writer library %s %s" % (
                    lib, "needs" if parts[0] == "U" else "defines", sym))
    for p in problems:
        print(p)
    print("layers: %d files checked%s, %d problems" %
          (files, " and the writer library" if lib else "", len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
