#!/bin/sh
# SPDX-License-Identifier: MIT
# The compatibility promise (spec.md §7): every golden file of format 1.x
# reads the same forever.
#   valid/NAME.vmp     `vmp decode NAME.vmp` prints NAME.decode.txt exactly
#                      and exits with 0 (or with the status in NAME.exit: a
#                      truncated file); `vmp validate` accepts it (a
#                      truncated file: exit 1 naming R-CHK-3).
#   invalid/NAME.vmp   `vmp validate` exits with 1 and names the rule of the
#                      file's name (r-hdr-1-... -> R-HDR-1), and prints every
#                      line of NAME.expect when there is one.
# The files are never regenerated here (see gen_golden.sh).
# usage: run_golden.sh VMP GOLDEN_DIR WORKDIR
set -u
vmp=$1 golden=$2 work=$3
mkdir -p "$work"
fails=0
fail() {
  echo "FAIL $*"
  fails=$((fails + 1))
}

cd "$golden/valid" || exit 1
for f in *.vmp; do
  n=${f%.vmp}
  before=$fails
  want_rc=0
  [ -f "$n.exit" ] && want_rc=$(cat "$n.exit")
  "$vmp" decode "$f" >"$work/$n.decode.txt" 2>"$work/$n.decode.err"
  rc=$?
  [ "$rc" -eq "$want_rc" ] || fail "$f: vmp decode exits with $rc, expected $want_rc"
  if ! cmp -s "$n.decode.txt" "$work/$n.decode.txt"; then
    fail "$f: vmp decode output differs from $n.decode.txt:"
    diff "$n.decode.txt" "$work/$n.decode.txt" | head -20
  fi
  "$vmp" validate "$f" >"$work/$n.validate.txt" 2>&1
  rc=$?
  case $n in
  truncated*) want_valid=1 ;; # spec R-CHK-6: truncated even when decode exits 0
  *) want_valid=$want_rc ;;
  esac
  if [ "$want_valid" -eq 0 ]; then
    [ "$rc" -eq 0 ] || fail "$f: vmp validate exits with $rc: $(cat "$work/$n.validate.txt")"
  else
    [ "$rc" -eq 1 ] && grep -q "R-CHK-3" "$work/$n.validate.txt" ||
      fail "$f: vmp validate should report truncation: $(cat "$work/$n.validate.txt")"
  fi
  [ "$fails" -eq "$before" ] && echo "ok   valid/$f"
done
# R-ID-4: vocabulary indexes past the header's arrays show as numbers.
"$vmp" report ids-late-vocab.vmp >"$work/ids.report.txt" 2>&1 ||
  fail "ids-late-vocab.vmp: vmp report failed"
grep -q "state#5" "$work/ids.report.txt" || fail "ids-late-vocab.vmp: no state#5 in the report"
# R-ID-3: the latest THREAD record names the thread.
grep -q "main (renamed)" "$work/ids.report.txt" ||
  fail "ids-late-vocab.vmp: the renamed thread is not in the report"
# R-RES-9: the forms of unknowns: function#ID (R-ID-2: a FUNCTION written
# after the samples does not apply to them), thread#ID, "first (latest)".
for want in "function#7" "function#8" "thread#9" "main (main (renamed))"; do
  grep -qF "$want" "$work/ids.report.txt" || fail "ids-late-vocab.vmp: no '$want' in the report"
done
# R-RES-9: a merge keeps an unknown function's label, so the merged report is
# the sum of its inputs' (here twice each row).
"$vmp" merge ids-late-vocab.vmp ids-late-vocab.vmp -o "$work/ids2.vmp" >/dev/null 2>&1 &&
  "$vmp" report --by function --format csv "$work/ids2.vmp" >"$work/ids2.csv" 2>&1 ||
  fail "ids-late-vocab.vmp: merging it with itself failed"
for want in "symbolic,function,function#7,3->3,2" "symbolic,function,function#8,1->1,2"; do
  grep -qF "$want" "$work/ids2.csv" || fail "merged ids-late-vocab.vmp: no '$want': $(cat "$work/ids2.csv")"
done

# R-SNAP-2: code written after a snapshot is not freed by it.
"$vmp" report --by function --format csv snapshot-later-code.vmp >"$work/snap.csv" 2>&1 ||
  fail "snapshot-later-code.vmp: vmp report failed"
for want in "code#1,,1" "code#2,,1" "code#3,,1"; do
  grep -qF "$want" "$work/snap.csv" || fail "snapshot-later-code.vmp: no '$want': $(cat "$work/snap.csv")"
done
# R-CHK-6: a file cut inside chunk 0 is truncated, not unreadable.
"$vmp" info truncated-in-chunk0.vmp >"$work/c0.info.txt" 2>&1 &&
  grep -q "^format:           1.0" "$work/c0.info.txt" &&
  grep -q "truncated, no complete chunk" "$work/c0.info.txt" ||
  fail "truncated-in-chunk0.vmp: vmp info: $(cat "$work/c0.info.txt")"
"$vmp" info truncated-no-end.vmp >"$work/ne.info.txt" 2>&1 &&
  grep -q "status:           truncated: no END record" "$work/ne.info.txt" ||
  fail "truncated-no-end.vmp: vmp info: $(cat "$work/ne.info.txt")"

cd "$golden/invalid" || exit 1
for f in *.vmp; do
  n=${f%.vmp}
  before=$fails
  rule=$(echo "$n" | sed -E 's/^(r-[a-z]+-[0-9]+).*/\1/' | tr a-z A-Z)
  "$vmp" validate "$f" >"$work/$n.validate.txt" 2>&1
  rc=$?
  [ "$rc" -eq 1 ] || fail "$f: vmp validate exits with $rc, expected 1"
  grep -q "\[$rule\]" "$work/$n.validate.txt" ||
    fail "$f: vmp validate does not name $rule: $(cat "$work/$n.validate.txt")"
  if [ -f "$n.expect" ]; then
    while IFS= read -r line; do
      grep -qF -- "$line" "$work/$n.validate.txt" ||
        fail "$f: vmp validate does not say '$line': $(cat "$work/$n.validate.txt")"
    done <"$n.expect"
  fi
  [ "$fails" -eq "$before" ] && echo "ok   invalid/$f: $(head -1 "$work/$n.validate.txt")"
done
echo "$fails failures"
[ "$fails" -eq 0 ]
