#!/bin/sh
# SPDX-License-Identifier: MIT
# Every vmp command that writes output reports a write error on it (a full
# disk: /dev/full gives ENOSPC) with exit status 1 and one line on standard
# error, whether the output is -o FILE or standard output; and no command
# removes a device it was given as output (a partial regular file may go).
# Also: a reader that goes away (EPIPE, SIGPIPE ignored) is a write error.
# usage: cli_write_errors.sh VMP PROFILE PPROF_INPUT WORKDIR [VMP_SIMVM]
set -u
vmp=$1 prof=$2 pprof_in=$3 work=$4 simvm=${5:-}
mkdir -p "$work"
if [ ! -c /dev/full ]; then
  echo "no /dev/full character device here: skipped"
  exit 77
fi
fails=0
check() { # name, then the command; the command's output goes to /dev/full
  name=$1
  shift
  "$@" 2>"$work/err.txt"
  rc=$?
  lines=$(wc -l <"$work/err.txt")
  if [ "$rc" -ne 1 ] || [ "$lines" -ne 1 ]; then
    echo "FAIL $name: exit $rc, $lines lines on stderr:"
    cat "$work/err.txt"
    fails=$((fails + 1))
  elif ! grep -q -e "No space left on device" -e "i/o error" "$work/err.txt"; then
    echo "FAIL $name: message does not say why: $(cat "$work/err.txt")"
    fails=$((fails + 1))
  else
    echo "ok   $name: $(cat "$work/err.txt")"
  fi
  if [ ! -c /dev/full ]; then
    echo "FAIL $name: /dev/full is no longer a device"
    exit 1
  fi
}
for mode in file stdout; do
  run() { # command and arguments, output to /dev/full
    if [ $mode = file ]; then "$vmp" "$@" -o /dev/full; else "$vmp" "$@" -o - >/dev/full; fi
  }
  check "decode ($mode)" run decode "$prof"
  check "decode --json ($mode)" run decode --json "$prof"
  check "info ($mode)" run info "$prof"
  check "report ($mode)" run report "$prof"
  check "report --format json ($mode)" run report --format json "$prof"
  check "report --format csv ($mode)" run report --format csv "$prof"
  check "flame ($mode)" run flame "$prof"
  check "flame --format svg ($mode)" run flame --format svg "$prof"
  check "diff ($mode)" run diff "$prof" "$prof"
  check "diff --format folded ($mode)" run diff --format folded "$prof" "$prof"
  check "diff --format svg ($mode)" run diff --format svg "$prof" "$prof"
  check "pprof ($mode)" run pprof "$prof"
  check "speedscope ($mode)" run speedscope "$prof"
  check "filter ($mode)" run filter "$prof"
  check "merge ($mode)" run merge "$prof" "$prof"
  check "import ($mode)" run import "$pprof_in"
done
# A closed pipe: output larger than the pipe's buffer, a reader that reads
# one byte and leaves.
if [ -n "$simvm" ]; then
  "$simvm" -o "$work/big.vmp" --samples 30000 --threads 2 >/dev/null 2>&1
  for c in decode "decode --json"; do
    (
      trap '' PIPE
      {
        # shellcheck disable=SC2086
        "$vmp" $c "$work/big.vmp" 2>"$work/err.txt"
        echo $? >"$work/rc.txt"
      } | head -c 1 >/dev/null
    )
    rc=$(cat "$work/rc.txt")
    lines=$(wc -l <"$work/err.txt")
    if [ "$rc" -ne 1 ] || [ "$lines" -ne 1 ] || ! grep -q "Broken pipe" "$work/err.txt"; then
      echo "FAIL $c | head -c 1: exit $rc, $lines lines: $(cat "$work/err.txt")"
      fails=$((fails + 1))
    else
      echo "ok   $c | head -c 1: $(cat "$work/err.txt")"
    fi
  done
fi
echo "$fails failures"
[ "$fails" -eq 0 ]
