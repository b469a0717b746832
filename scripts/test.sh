#!/usr/bin/env bash
# make test's two passes, side by side: every package once (its output as it comes), and the
# concurrent packages again under the race detector (its output after the first pass's, from a
# file, as it comes). Most of their time is spent waiting (real sockets, fsync, timers,
# browsers): run one after the other they kept half of two CPUs busy. While the first pass runs,
# a line a minute names the test binaries each pass is running.
#
# Environment: GO, TESTTIMEOUT (each test binary's bound), PKGS, RACE_PKGS (as the Makefile
# sets them); TESTPASSES=serial runs the race pass after the first, as before.
# Exit status 0 only when both passes passed.
set -uo pipefail

go=${GO:-go}
timeout=${TESTTIMEOUT:-30m}
read -r -a pkgs <<<"${PKGS:-./...}"
read -r -a race_pkgs <<<"${RACE_PKGS:?RACE_PKGS: the packages of the race pass}"
plain=(test -count=1 -timeout "$timeout" "${pkgs[@]}")
race=(test -count=1 -timeout "$timeout" -race "${race_pkgs[@]}")

if [ "${TESTPASSES:-}" = "serial" ]; then
  "$go" "${plain[@]}" && "$go" "${race[@]}"
  exit
fi

# running PID: the test binaries the go command PID runs now, by package name.
running() {
  local names
  names=$(ps -o args= --ppid "$1" 2>/dev/null | awk '{ n = $1; sub(/.*\//, "", n); if (sub(/\.test$/, "", n)) print n }' | paste -sd, - | sed 's/,/, /g')
  echo "${names:-no test binary (building)}"
}

# A line a minute while the first pass runs: go test prints a package's result when it and every
# package listed before it are done, so the longest, listed first, leave minutes without a line.
heartbeat() {
  local min=0 plain_pid race
  while sleep 60; do
    min=$((min + 1))
    plain_pid=$(pgrep -P "$$" -x go | grep -vx "$race_pid" | head -n 1)
    race=done
    kill -0 "$race_pid" 2>/dev/null && race=$(running "$race_pid")
    echo "== make test, ${min} min: tests running $(running "${plain_pid:-0}"); race pass: $race"
  done
}

log=$(mktemp "${TMPDIR:-/tmp}/fixvenue-race-pass.XXXXXX")
race_pid=
beat_pid=
cleanup() {
  [ -n "$beat_pid" ] && kill "$beat_pid" 2>/dev/null
  if [ -n "$race_pid" ] && kill -0 "$race_pid" 2>/dev/null; then
    kill -TERM -- "-$race_pid" 2>/dev/null
    wait "$race_pid" 2>/dev/null
  fi
  rm -f "$log"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== the race pass runs alongside; its output follows this pass's"
# A session of its own, so that a stop ends its test binaries with it.
setsid "$go" "${race[@]}" >"$log" 2>&1 &
race_pid=$!

heartbeat &
beat_pid=$!

"$go" "${plain[@]}"
plain_rc=$?
kill "$beat_pid" 2>/dev/null
beat_pid=

echo "== race pass (-race ${race_pkgs[*]})"
# What it has printed so far, then the rest as it comes, until it exits.
tail -n +1 -f --pid="$race_pid" "$log"
wait "$race_pid"
race_rc=$?
race_pid=

verdict() { if [ "$1" -eq 0 ]; then echo ok; else echo "FAILED (exit $1)"; fi; }
echo "== make test: pass $(verdict "$plain_rc"), race pass $(verdict "$race_rc")"
[ "$plain_rc" -eq 0 ] && [ "$race_rc" -eq 0 ]
