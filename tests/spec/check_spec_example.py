#!/usr/bin/env python3
"""Check spec.md's worked example (Appendix B) against the real reader.

The appendix holds three blocks, each after an HTML comment marker:
  <!-- example:file -->     the file's bytes as offset-prefixed hex lines
  <!-- example:content -->  the decompressed chunk, one record a line:
                           "@OFFSET  HEX...  ; note"
  <!-- example:decode -->   what `vmp decode` prints for the file

The test rebuilds the file from the first block, checks that its chunk
decompresses (zstd, as RFC 8878 says) to exactly the bytes of the second
block, and that `vmp decode` prints exactly the third.

Usage: check_spec_example.py SPEC.md VMP WORKDIR
       check_spec_example.py --emit FILE.vmp VMP   (print the three blocks)
"""
import os
import re
import subprocess
import sys


def blocks(spec_text):
    out = {}
    for name in ("file", "content", "decode"):
        m = re.search(r"<!-- example:%s -->\s*```[a-z]*\n(.*?)```" % name, spec_text, re.S)
        if not m:
            sys.exit("spec.md: Appendix B has no example:%s block" % name)
        out[name] = m.group(1)
    return out


def parse_file_hex(text):
    data = bytearray()
    for line in text.splitlines():
        line = line.split(";")[0].strip()
        if not line:
            continue
        _off, hexpart = line.split(":", 1)
        data += bytes.fromhex(hexpart)
    return bytes(data)


def parse_content_hex(text):
    data = bytearray()
    for line in text.splitlines():
        line = line.split(";")[0].strip()
        if not line:
            continue
        off, hexpart = line.split(None, 1)
        if int(off.lstrip("@")) != len(data):
            sys.exit("spec.md: content line %s starts at %d" % (off, len(data)))
        data += bytes.fromhex(hexpart)
    return bytes(data)


def decompress(path):
    return subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout


def decode(vmp, path):
    return subprocess.run([vmp, "decode", path], check=True, capture_output=True,
                          text=True).stdout


def emit(path, vmp):
    raw = open(path, "rb").read()
    print("<!-- example:file -->\n```")
    for off in range(0, len(raw), 16):
        print("%04x: %s" % (off, " ".join("%02x" % b for b in raw[off:off + 16])))
    print("```")
    content = decompress(path)
    text = decode(vmp, path)
    offsets = [int(m) for m in re.findall(r"^chunk \d+ @(\d+) ", text, re.M)]
    print("<!-- example:content -->\n```")
    for i, off in enumerate(offsets):
        end = offsets[i + 1] if i + 1 < len(offsets) else len(content)
        rec = content[off:end]
        for j in range(0, len(rec), 24):
            print("@%-4d %s" % (off + j, " ".join("%02x" % b for b in rec[j:j + 24])))
    print("```")
    print("<!-- example:decode -->\n```")
    sys.stdout.write(text.replace(path, "example.vmp"))
    print("```")


def main():
    if sys.argv[1] == "--emit":
        emit(sys.argv[2], sys.argv[3])
        return
    spec, vmp, work = sys.argv[1:4]
    b = blocks(open(spec, encoding="utf-8").read())
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "example.vmp")
    with open(path, "wb") as f:
        f.write(parse_file_hex(b["file"]))
    failures = 0
    if decompress(path) != parse_content_hex(b["content"]):
        print("FAIL: the example's chunk does not decompress to the listed content")
        failures += 1
    got = decode(vmp, path)
    if got != b["decode"]:
        print("FAIL: vmp decode differs from the listed records:\n" + got)
        failures += 1
    print("%d passed, %d failed" % (2 - failures, failures))
    sys.exit(1 if failures else 0)


main()
