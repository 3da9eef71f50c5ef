#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run_cli_tests.sh - the `vmp` command's contract: exit codes (0 ok, 1 bad
# input or write error, 2 usage), --help on every command, info on complete
# and truncated files, decode --json is JSON Lines, -o and '-' (stdin), write
# errors detected, validate names the broken rule (spec.md rule ids).
#
# usage: run_cli_tests.sh VMP SELFPROF ALLRECORDS TEST_VALIDATE WORKDIR
set -u
vmp=$1 selfprof=$2 allrecords=$3 test_validate=$4 work=$5
golden=$(cd "$(dirname "$0")/../golden/valid" && pwd) || exit 1
rm -rf "$work" && mkdir -p "$work/cases" || exit 1
cd "$work" || exit 1
failures=0 checks=0

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# expect CODE CMD...: run CMD, stdout to out.txt, stderr to err.txt, check the exit code.
expect() {
    want=$1
    shift
    checks=$((checks + 1))
    "$@" >out.txt 2>err.txt
    got=$?
    if [ "$got" != "$want" ]; then
        fail "'$*' exited $got, expected $want; stderr: $(head -c 300 err.txt)"
        return 1
    fi
    return 0
}

# contains FILE TEXT: FILE holds TEXT (fixed string).
contains() {
    checks=$((checks + 1))
    if ! grep -qF -- "$2" "$1"; then
        fail "$1 does not contain '$2': $(head -c 300 "$1")"
    fi
}

# lines FILE N: FILE has exactly N lines.
lines() {
    checks=$((checks + 1))
    n=$(wc -l <"$1")
    [ "$n" -eq "$2" ] || fail "$1 has $n lines, expected $2: $(head -c 300 "$1")"
}

# ---- inputs -------------------------------------------------------------------
"$selfprof" selfprof.vmp 1 >/dev/null || { echo "FAIL: vmp-example-selfprof"; exit 1; }
"$allrecords" all.vmp >/dev/null || { echo "FAIL: vmp-test-allrecords"; exit 1; }
"$test_validate" cases 2>/dev/null || { echo "FAIL: test_validate (building the cases)"; exit 1; }
size=$(wc -c <all.vmp)
head -c $((size / 2)) all.vmp >truncated.vmp
printf 'this is not a profile, just some text\n' >garbage.vmp
noend=cases/r-chk-3-no-end-record.vmp

# ---- the command table, --help, --version, usage errors -----------------------
expect 0 "$vmp" --help && for c in info decode validate; do contains out.txt "  $c "; done
expect 0 "$vmp" help
expect 0 "$vmp" --version && contains out.txt "vmp " && contains out.txt "file format 1."
expect 2 "$vmp"
expect 2 "$vmp" frobnicate && contains err.txt "vmp: unknown command 'frobnicate'"
expect 2 "$vmp" --frobnicate
for c in info decode validate; do
    expect 0 "$vmp" "$c" --help && contains out.txt "usage: vmp $c" && [ ! -s err.txt ] ||
        fail "vmp $c --help wrote to stderr"
    expect 0 "$vmp" "$c" -h && contains out.txt "usage: vmp $c"
    expect 0 "$vmp" help "$c" && contains out.txt "usage: vmp $c"
    expect 2 "$vmp" "$c" --bogus all.vmp && contains err.txt "vmp $c: unknown option '--bogus'" &&
        contains err.txt "try 'vmp $c --help'" && lines err.txt 2
    expect 2 "$vmp" "$c" -Z all.vmp && contains err.txt "vmp $c: unknown option '-Z'"
    expect 2 "$vmp" "$c" && contains err.txt "vmp $c: missing FILE"
    expect 2 "$vmp" "$c" all.vmp all.vmp && contains err.txt "too many arguments"
    # bad input: exit 1 with one line naming the file
    expect 1 "$vmp" "$c" garbage.vmp && contains err.txt "garbage.vmp" && lines err.txt 1
    expect 1 "$vmp" "$c" does-not-exist.vmp && contains err.txt "does-not-exist.vmp" &&
        lines err.txt 1
done
expect 2 "$vmp" decode all.vmp -o && contains err.txt "needs a value"

# ---- the option tables: each command parses every option its help lists, and
# a usage error names the option as the user typed it
for c in "archive diff" decode diff filter flame import info merge pprof recompress record report \
    speedscope validate; do
    # shellcheck disable=SC2086 # "archive diff" is two words
    "$vmp" $c --help >help.txt || fail "vmp $c --help"
    for opt in $(sed -n 's/^ \{2,8\}\(-[a-z0-9-]*\( [A-Z][^ ,]*\)\{0,1\}\(, -[a-z0-9-]*\( [A-Z][^ ,]*\)\{0,1\}\)*\).*/\1/p' \
        help.txt | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
        checks=$((checks + 1))
        # shellcheck disable=SC2086
        "$vmp" $c "$opt" </dev/null >out.txt 2>err.txt
        if grep -q "unknown option" err.txt; then
            fail "vmp $c --help lists $opt, which it does not parse: $(cat err.txt)"
        fi
    done
done
expect 2 "$vmp" record --pid && contains err.txt "vmp record: option '--pid' needs a value"
expect 2 "$vmp" report --top && contains err.txt "vmp report: option '--top' needs a value"
expect 2 "$vmp" pprof --stats=1 all.vmp &&
    contains err.txt "vmp pprof: option '--stats' takes no value" && lines err.txt 2
expect 2 "$vmp" recompress -l && contains err.txt "vmp recompress: option '-l' needs a value"
expect 2 "$vmp" archive diff --label a=b x.db &&
    contains err.txt "vmp archive diff: --label does not apply to archive diff"

# ---- info -----------------------------------------------------------------------
for f in all.vmp selfprof.vmp; do
    expect 0 "$vmp" info "$f" && contains out.txt "status:           complete (END record, seek table)"
done
expect 0 "$vmp" info all.vmp && contains out.txt 'vm:               "testvm" "0.0"' &&
    contains out.txt "samples:          41 (failed 1, weight 41)" &&
    contains out.txt "threads:          2" && contains out.txt 'thread 2 "worker ✓"' &&
    contains out.txt "code objects:     5 (4 changes, final generation 4)" &&
    contains out.txt "modules:          1 (2 symbols)" && contains out.txt "pid:              4242"
expect 0 "$vmp" info selfprof.vmp && contains out.txt '"worker-1"' &&
    contains out.txt '"worker-2"' && contains out.txt "start:            20"
expect 0 "$vmp" info truncated.vmp && contains out.txt "status:           truncated: " &&
    contains out.txt "truncated.vmp: offset "
expect 0 "$vmp" info "$noend" && contains out.txt "status:           truncated: no END record"
# the HEADER's labels (the HotSpot agent records its sampling clock there)
expect 0 "$vmp" info all.vmp && contains out.txt 'labels:           2' &&
    contains out.txt '  "benchmark"="fib \"30\""' && contains out.txt '  "host"="test"'
expect 0 "$vmp" info --json all.vmp && contains out.txt '"labels":{"benchmark":"fib \"30\"","host":"test"}'
expect 0 "$vmp" info --json all.vmp && contains out.txt '"complete":true' && lines out.txt 1
expect 0 "$vmp" info --json truncated.vmp && contains out.txt '"complete":false' &&
    contains out.txt '"status":"truncated"'
# vmp --limit NAME=N: the analysis's limits (usage errors exit 2; a limit
# reached is a one-line error naming the file and offset, exit 1)
expect 2 "$vmp" --limit nosuch=1 report all.vmp && contains err.txt "bad --limit 'nosuch=1'"
expect 2 "$vmp" --limit history=x report all.vmp
expect 2 "$vmp" --limit=depth=1 report all.vmp
expect 0 "$vmp" --limit history=1M --limit=stacks=64K report all.vmp
expect 1 "$vmp" --limit stack-nodes=2 report all.vmp && lines err.txt 1 &&
    contains err.txt "all.vmp: offset " && contains err.txt "analysis limit 'stack-nodes' reached"
# spec R-SMP-4: weight 0 counts 0 samples (weights 3, 0, 1: 4 samples) in info,
# report and every csv view; the samples have neither pc nor stack and still
# count under [unknown] so that the csv rows sum to the total.
w0=cases/valid-weight-zero.vmp
expect 0 "$vmp" info "$w0" && contains out.txt "samples:          3 (failed 0, weight 4)"
expect 0 "$vmp" report "$w0" && contains out.txt "samples: 4 total;"
expect 0 "$vmp" report --by function --format csv "$w0" &&
    contains out.txt "unknown,unknown,[unknown],,4" && lines out.txt 2
# spec R-RES-6: the smallest covering symbol; past a nested symbol, the outer
# one; a size-0 last symbol runs to the module's end.
expect 0 "$vmp" report --by function --format csv cases/valid-nested-symbols.vmp &&
    contains out.txt "vanilla,C,inner,,1" && contains out.txt "vanilla,C,outer,,1" &&
    contains out.txt "vanilla,C,last,,1"
# every csv view sums to the total, samples with neither pc nor stack included
for by in function module thread state; do
    expect 0 "$vmp" report --by "$by" --format csv "$golden/non-shortest.vmp" &&
        sum=$(awk -F, 'NR > 1 { s += $NF } END { print s + 0 }' out.txt) &&
        [ "$sum" -eq 4 ] || fail "report --by $by --format csv non-shortest.vmp sums to $sum, not 4"
done
# spec R-KND-3: sample kinds (2.1) stay apart: info lists each in its unit,
# the report counts the CPU samples alone, merge matches kinds by name and
# filter applies its criteria to every kind
expect 0 "$vmp" info "$golden/sample-kinds.vmp" &&
    contains out.txt '"alloc": 1 samples, 524288 "bytes"' &&
    contains out.txt '"lock": 1 samples, 20000 "nanoseconds"' &&
    contains out.txt "samples:          2 (failed 0, weight 2)"
expect 0 "$vmp" info --json "$golden/sample-kinds.vmp" &&
    contains out.txt '"kinds":[{"name":"alloc","unit":"bytes","samples":1,"weight":524288}'
expect 0 "$vmp" report --format csv "$golden/sample-kinds.vmp" &&
    sum=$(awk -F, 'NR > 1 { s += $NF } END { print s + 0 }' out.txt) &&
    [ "$sum" -eq 2 ] || fail "report of sample-kinds.vmp sums to $sum, not the 2 CPU samples"
# spec R-VIEW-6: one kind per view, in its unit; the class frame on top
expect 0 "$vmp" report --kind alloc --format csv "$golden/sample-kinds.vmp" &&
    contains out.txt "symbolic,class,byte[],,524288" && lines out.txt 2
expect 0 "$vmp" report "$golden/sample-kinds.vmp" &&
    contains out.txt "kinds: cpu 2 samples; alloc 1 samples = 524288 bytes; lock 1 samples = 20000 nanoseconds"
expect 0 "$vmp" report --kind lock --format json "$golden/sample-kinds.vmp" &&
    contains out.txt '"samples":20000,' && contains out.txt '"kind":"lock","unit":"nanoseconds"'
expect 0 "$vmp" flame --kind alloc "$golden/sample-kinds.vmp" &&
    contains out.txt "[unknown];byte[] 524288" && lines out.txt 1
expect 0 "$vmp" flame --tiers --kind alloc "$golden/sample-kinds.vmp" &&
    contains out.txt "[unknown];byte[]_[i] 524288"
expect 0 "$vmp" flame --kind alloc -o kinds.svg "$golden/sample-kinds.vmp" &&
    grep -q 'class (allocated, locked)' kinds.svg || fail "the SVG's legend names the class colour"
expect 0 "$vmp" speedscope --kind alloc -o kinds.json "$golden/sample-kinds.vmp" &&
    grep -q '"unit":"bytes","startValue":0,"endValue":524288' kinds.json ||
    fail "speedscope --kind alloc: not in bytes: $(head -c 300 kinds.json)"
expect 1 "$vmp" flame --kind heap "$golden/sample-kinds.vmp" &&
    contains err.txt "no samples of kind 'heap'" && contains err.txt "cpu, alloc, lock" &&
    lines err.txt 1
expect 1 "$vmp" report --kind alloc "$golden/major-2.vmp" && contains err.txt "major-2.vmp" &&
    lines err.txt 1
expect 0 "$vmp" merge -o merged.vmp "$golden/major-2.vmp" "$golden/sample-kinds.vmp" \
    "$golden/sample-kinds.vmp" && expect 0 "$vmp" validate merged.vmp &&
    expect 0 "$vmp" info merged.vmp &&
    contains out.txt '"alloc": 2 samples, 1048576 "bytes"' &&
    contains out.txt '"lock": 2 samples, 40000 "nanoseconds"' &&
    contains out.txt "samples:          6 (failed 0, weight 6)"
expect 0 "$vmp" report --kind alloc --format csv merged.vmp &&
    contains out.txt "symbolic,class,byte[],,1048576"
expect 0 "$vmp" filter --thread 1 -o filtered.vmp "$golden/sample-kinds.vmp" &&
    expect 0 "$vmp" info filtered.vmp && contains out.txt '"alloc": 1 samples, 524288 "bytes"'
expect 0 "$vmp" filter --thread 2 -o filtered2.vmp "$golden/sample-kinds.vmp" &&
    expect 0 "$vmp" info filtered2.vmp && contains out.txt '"alloc": 0 samples'
expect 0 "$vmp" filter --from 0.004 -o late.vmp "$golden/sample-kinds.vmp" &&
    expect 0 "$vmp" info late.vmp && contains out.txt '"alloc": 1 samples' &&
    contains out.txt '"lock": 0 samples'
# spec R-SEEK-1: a seek table that contradicts the chunks is treated as absent
expect 0 "$vmp" info "$golden/seek-table-lies.vmp" &&
    contains out.txt "status:           complete (END record)" &&
    ! grep -q "seek table" out.txt || fail "info shows the lying seek table as present"
expect 0 "$vmp" info --json "$golden/seek-table-lies.vmp" && contains out.txt '"seek_table":false'
expect 0 "$vmp" info "$golden/writer-all-records.vmp" &&
    contains out.txt "status:           complete (END record, seek table)"
# spec R-ID-5: a FUNCTION defined twice keeps its first definition entirely
# (name "first" and bytecode_size 10, so the last range ends at 9); R-RES-2:
# scope>>name; R-RES-4: a pc before the first pc-map entry has no range, equal
# mcpc offsets: the last entry wins, B = next bcpc - 1 clamped to A.
expect 0 "$vmp" report --by function --format csv cases/valid-pc-map-edges.vmp &&
    contains out.txt "generated,kind#0,Obj>>first,3->9,1" &&
    contains out.txt "generated,kind#0,Obj>>first,5->5,1" &&
    contains out.txt "generated,kind#0,Obj>>first,,1" && lines out.txt 4
# spec R-SNAP-2: a snapshot frees only the objects written before it; code
# written after it, even at an older generation, stays.
expect 0 "$vmp" report --by function --format csv cases/valid-snapshot-then-later-code.vmp &&
    contains out.txt "generated,kind#0,code#1,,1" && contains out.txt "generated,kind#0,code#2,,1" &&
    contains out.txt "generated,kind#0,code#3,,1"
# spec R-CHK-6: a file cut inside chunk 0 is truncated with no complete chunk:
# info shows the file header's version, report an empty profile, both exit 0.
c0=cases/r-chk-3-cut-inside-chunk-0.vmp
expect 0 "$vmp" info "$c0" && contains out.txt "format:           1.0" &&
    contains out.txt "status:           truncated, no complete chunk: "
expect 0 "$vmp" info --json "$c0" && contains out.txt '"status":"truncated"'
expect 0 "$vmp" report "$c0" && contains out.txt "samples: 0 total;" &&
    contains out.txt "note: the input is damaged"


# ---- decode -----------------------------------------------------------------------
expect 0 "$vmp" decode all.vmp && cp out.txt decode1.txt &&
    contains out.txt "chunk 0 @0 HEADER producer=" && contains out.txt " END time=" &&
    contains out.txt 'labels={"benchmark":"fib \"30\"", "host":"test"}'
expect 0 "$vmp" decode all.vmp && cmp -s out.txt decode1.txt || fail "decode is not deterministic"
records=$(wc -l <decode1.txt)
[ "$records" -eq 98 ] || fail "decode all.vmp printed $records lines, expected 98"
expect 0 "$vmp" decode cases/valid-every-record-type.vmp && contains out.txt "UNKNOWN type=99"
# format 1.2 CODE_MAP (spec R-CODE-3): decoded as CODE_OBJECT's maps, counted by info
expect 0 "$vmp" decode cases/valid-code-map.vmp &&
    contains out.txt " CODE_MAP id=1 pc_map=[32:7] inline=[40:[1:7]]"
expect 0 "$vmp" decode --json cases/valid-code-map.vmp &&
    contains out.txt '"type":"CODE_MAP","id":1,"pc_map":[[32,7]],"inline":[[40,[[1,7]]]]}'
expect 0 "$vmp" info cases/valid-code-map.vmp && contains out.txt "format:           1.2" &&
    contains out.txt "; 2 code maps)"
expect 1 "$vmp" decode truncated.vmp && contains err.txt "truncated.vmp: offset " &&
    lines err.txt 1 && [ -s out.txt ] || fail "decode of a truncated file printed nothing"
expect 0 "$vmp" decode "$noend"
if command -v python3 >/dev/null 2>&1; then
    for f in all.vmp selfprof.vmp cases/valid-every-record-type.vmp cases/valid-code-map.vmp; do
        expect 0 "$vmp" decode --json "$f" &&
            python3 -c 'import json,sys; [json.loads(l) for l in sys.stdin]' <out.txt ||
            fail "decode --json $f is not JSON Lines"
        n=$(wc -l <out.txt)
        m=$("$vmp" decode "$f" | wc -l)
        [ "$n" -eq "$m" ] || fail "decode --json $f: $n lines, text has $m"
    done
    for f in all.vmp truncated.vmp; do
        expect 0 "$vmp" info --json "$f" && python3 -c 'import json,sys; json.load(sys.stdin)' \
            <out.txt || fail "info --json $f is not JSON"
    done
else
    echo "SKIP: python3 not found, JSON syntax not checked"
fi

# ---- -o FILE, -o -, stdin, write errors ---------------------------------------
expect 0 "$vmp" decode -o decode2.txt all.vmp && [ ! -s out.txt ] && cmp -s decode1.txt decode2.txt ||
    fail "decode -o FILE differs from standard output"
expect 0 "$vmp" decode -o - all.vmp && cmp -s out.txt decode1.txt || fail "decode -o - differs"
checks=$((checks + 1))
"$vmp" decode - <all.vmp >stdin.txt 2>err.txt && cmp -s stdin.txt decode1.txt ||
    fail "decode - (stdin) differs from decode FILE: $(cat err.txt)"
checks=$((checks + 1))
cat all.vmp | "$vmp" info - >out.txt 2>err.txt && grep -qF "complete (END record" out.txt ||
    fail "info - from a pipe failed: $(cat err.txt)"
checks=$((checks + 1))
"$vmp" validate - <all.vmp >out.txt 2>err.txt || fail "validate - failed: $(cat err.txt)"
if [ -w /dev/full ]; then
    expect 1 "$vmp" decode -o /dev/full selfprof.vmp && contains err.txt "write error" && lines err.txt 1
    expect 1 "$vmp" decode --json -o /dev/full all.vmp && contains err.txt "write error"
    expect 1 "$vmp" info -o /dev/full all.vmp && contains err.txt "write error"
    checks=$((checks + 1))
    "$vmp" decode all.vmp >/dev/full 2>err.txt
    [ $? -eq 1 ] && grep -qF "write error" err.txt || fail "decode >/dev/full did not fail"
else
    echo "SKIP: /dev/full not writable"
fi
expect 1 "$vmp" decode -o no-such-dir/x.txt all.vmp && contains err.txt "no-such-dir/x.txt"

# ---- validate -------------------------------------------------------------------
expect 0 "$vmp" validate all.vmp && contains out.txt "all.vmp: valid: 98 records, 41 samples"
expect 0 "$vmp" validate selfprof.vmp
expect 0 "$vmp" validate -q all.vmp && [ ! -s out.txt ] || fail "validate -q printed something"
expect 1 "$vmp" validate truncated.vmp && contains err.txt "[R-CHK-3]" && contains err.txt "readable"
for f in cases/valid-*.vmp; do
    expect 0 "$vmp" validate "$f"
done
for f in cases/r-*.vmp; do
    # r-gen-4-overlap-after-move.vmp -> [R-GEN-4]
    rule=$(basename "$f" | sed 's/^\(r-[a-z]*-[0-9]*\)-.*/\1/' | tr 'a-z' 'A-Z')
    expect 1 "$vmp" validate "$f" && contains err.txt "[$rule]" && lines err.txt 1 &&
        contains err.txt "$f"
done

echo "$checks checks, $failures failed"
[ "$failures" -eq 0 ]
