#!/usr/bin/env python3
"""Fail when a rule of spec.md is tested nowhere.

Every normative rule in spec.md carries an id like [R-HDR-1].  A rule counts
as tested when its id appears in a file under tests/ (a comment in the test
that checks it, or the name of a golden file that breaks it, e.g.
tests/golden/invalid/r-hdr-1-bad-magic.vmp).
"""
import os
import re
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
spec = open(os.path.join(root, "spec.md"), encoding="utf-8").read()
rules = sorted(set(re.findall(r"\[(R-[A-Z]+-\d+)\]", spec)))

cited = set()
for dirpath, _dirs, files in os.walk(os.path.join(root, "tests")):
    for name in files:
        lname = name.lower()
        for rule in rules:
            if rule.lower() in lname:
                cited.add(rule)
        path = os.path.join(dirpath, name)
        try:
            text = open(path, encoding="utf-8", errors="ignore").read()
        except OSError:
            continue
        for rule in rules:
            if rule in text:
                cited.add(rule)

missing = [r for r in rules if r not in cited]
print(f"spec rules: {len(rules)}, cited by tests: {len(rules) - len(missing)}")
if missing:
    print("not cited by any test: " + ", ".join(missing), file=sys.stderr)
    sys.exit(1)
