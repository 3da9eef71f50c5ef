#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run_writer_files.sh - `vmp validate` accepts every file the writer makes:
# a file with every record type and the self-profiling example's output
# (spec.md §5).
#
# usage: run_writer_files.sh VMP ALLRECORDS SELFPROF WORKDIR
set -u
vmp=$1 allrecords=$2 selfprof=$3 work=$4
rm -rf "$work" && mkdir -p "$work" || exit 1
fail=0
"$allrecords" "$work/all.vmp" >/dev/null || { echo "FAIL: writing all.vmp"; exit 1; }
"$selfprof" "$work/selfprof.vmp" 1 >/dev/null || { echo "FAIL: writing selfprof.vmp"; exit 1; }
for f in "$work/all.vmp" "$work/selfprof.vmp"; do
    if out=$("$vmp" validate "$f" 2>&1); then
        echo "ok   $out"
    else
        echo "FAIL vmp validate $f: $out"
        fail=1
    fi
done
# every record type is present in all.vmp
types=$("$vmp" decode "$f" >/dev/null; "$vmp" decode "$work/all.vmp" | awk '{print $4}' | sort -u | tr '\n' ' ')
for t in HEADER END MODULE MODULE_SYMBOLS THREAD FUNCTION CODE_ZONE CODE_OBJECT CODE_SNAPSHOT \
         CODE_COMPACTION CODE_FREE CODE_MOVE STACK_NODE SAMPLE FAILED_SAMPLE EVENT COUNTER; do
    case " $types " in
    *" $t "*) ;;
    *) echo "FAIL all.vmp has no $t record (has: $types)"; fail=1 ;;
    esac
done
exit $fail
