#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerate the golden files for inspection.  The committed files are the
# reference and the tests never run this; a regenerated file that differs
# from the committed one means the writer's output changed (allowed: the
# reader must still read the old bytes) or a hand-made file changed (look
# hard: the old bytes stay the reference).
# usage: gen_golden.sh BUILD_DIR [OUT_DIR]   (OUT_DIR defaults to this directory)
set -eu
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-$here}
mkdir -p "$out/valid" "$out/invalid"
"$build/tests/golden/vmp-gen-golden" "$out"
# Writer-made files: every record type (deterministic clock), a simulated VM
# with compactions, and the first file cut inside its fourth frame.
"$build/tests/validate/vmp-test-allrecords" "$out/valid/writer-all-records.vmp" >/dev/null
"$build/tests/simvm/vmp-simvm" -o "$out/valid/simvm-compactions.vmp" --seed 3 --samples 40 \
  --threads 2 --compactions 3 --zone-size 16384 --depth 4 >/dev/null
head -c 900 "$out/valid/writer-all-records.vmp" >"$out/valid/truncated.vmp"
# Expected `vmp decode` output (and exit status when not 0) of each valid file.
cd "$out/valid"
for f in *.vmp; do
  n=${f%.vmp}
  rc=0
  "$build/cli/vmp" decode "$f" >"$n.decode.txt" 2>/dev/null || rc=$?
  if [ "$rc" -ne 0 ]; then echo "$rc" >"$n.exit"; else rm -f "$n.exit"; fi
done
