#!/usr/bin/env bash
# make test's two passes: every package once, and the concurrent packages again under the race
# detector. Most of their time is spent waiting (real sockets, fsync, timers, browsers): one
# after the other they keep about half of two CPUs busy. With CPUs to spare (4 or more) they
# run side by side, the race pass's output after the first pass's (from a file, as it comes);
# on fewer they run one after the other: side by side on two CPUs (12 minutes of CI instead of
# 18) the doubled load made the tests that bound a wait on a whole run of work (a catch-up, a
# slow reader's flood) fail run after run. go test prints a package's result once it and every
# package listed before it are done, and the longest are listed first, so a line a minute names
# the test binaries running.
#
# The server package, whose tests set the length of both passes (seven minutes each on two CPUs),
# runs in the first pass only the tests that skip themselves under the race detector (load runs,
# allocation counts: server/unraced_test.go), and every other test in the race pass alone, which
# checks all the first pass would and more.
#
# Each test binary runs up to TESTPARALLEL of its parallel tests (t.Parallel) at once: by default
# 4, or the CPU count where that is more. go test's own default is the CPU count, 2 on the CI's
# machine, and those tests spend most of their time waiting, so two at a time left the CPUs idle:
# on two CPUs the race pass alone kept 1.35 of them busy at 4 (docs/benchmarks.md, "Test time").
#
# Environment: GO, TESTTIMEOUT (each test binary's bound), PKGS, RACE_PKGS (as the Makefile
# sets them), TESTPARALLEL; TESTPASSES=serial or parallel overrides the choice.
# Exit status 0 only when both passes passed.
set -uo pipefail

go=${GO:-go}
timeout=${TESTTIMEOUT:-30m}
parallel=${TESTPARALLEL:-$(($(nproc) > 4 ? $(nproc) : 4))}
read -r -a pkgs <<<"${PKGS:-./...}"
read -r -a race_pkgs <<<"${RACE_PKGS:?RACE_PKGS: the packages of the race pass}"
plain=(test -count=1 -timeout "$timeout" -parallel "$parallel" "${pkgs[@]}")
# The first pass runs the server package's unraced tests only when the race pass runs the rest.
unraced_only=0
for p in "${race_pkgs[@]}"; do
  case $p in ./server | ./server/...) unraced_only=1 ;; esac
done
race=(test -count=1 -timeout "$timeout" -parallel "$parallel" -race "${race_pkgs[@]}")

passes=${TESTPASSES:-}
if [ -z "$passes" ]; then
  passes=serial
  [ "$(nproc)" -ge 4 ] && passes=parallel
fi

# running PID: the test binaries the go command PID runs now, by package name.
running() {
  local names
  names=$(ps -o args= --ppid "$1" 2>/dev/null | awk '{ n = $1; sub(/.*\//, "", n); if (sub(/\.test$/, "", n)) print n }' | paste -sd, - | sed 's/,/, /g')
  echo "${names:-no test binary (building)}"
}

# heartbeat NAME: a line a minute naming the test binaries of this script's go commands (the
# race pass's apart when it runs beside, race_pid).
heartbeat() {
  local min=0 pid line
  while sleep 60; do
    min=$((min + 1))
    line="== make test, ${min} min:"
    for pid in $(pgrep -P "$$" -x go); do
      if [ "$pid" = "$race_pid" ]; then
        line+=" race pass running $(running "$pid");"
      else
        line+=" $1 running $(running "$pid");"
      fi
    done
    echo "${line%;}"
  done
}

log=
race_pid=
beat_pid=
cleanup() {
  [ -n "$beat_pid" ] && kill "$beat_pid" 2>/dev/null
  if [ -n "$race_pid" ] && kill -0 "$race_pid" 2>/dev/null; then
    kill -TERM -- "-$race_pid" 2>/dev/null
    wait "$race_pid" 2>/dev/null
  fi
  [ -n "$log" ] && rm -f "$log"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# pass NAME COMMAND...: one go test in the foreground, with the heartbeat.
pass() {
  local name=$1 rc
  shift
  heartbeat "$name" &
  beat_pid=$!
  "$@"
  rc=$?
  kill "$beat_pid" 2>/dev/null
  beat_pid=
  return "$rc"
}

verdict() { if [ "$1" -eq 0 ]; then echo ok; else echo "FAILED (exit $1)"; fi; }

if [ "$passes" = "serial" ]; then
  echo "== the first pass, then the race pass ($(nproc) CPUs, -parallel $parallel; TESTPASSES=parallel runs them side by side)"
  pass "the first pass" env "FIXVENUE_TEST_UNRACED_ONLY=$unraced_only" "$go" "${plain[@]}"
  plain_rc=$?
  echo "== race pass (-race ${race_pkgs[*]})"
  pass "race pass" env -u FIXVENUE_TEST_UNRACED_ONLY "$go" "${race[@]}"
  race_rc=$?
else
  log=$(mktemp "${TMPDIR:-/tmp}/fixvenue-race-pass.XXXXXX")
  echo "== the race pass runs alongside ($(nproc) CPUs, -parallel $parallel); its output follows this pass's"
  # A session of its own, so that a stop ends its test binaries with it.
  setsid env -u FIXVENUE_TEST_UNRACED_ONLY "$go" "${race[@]}" >"$log" 2>&1 &
  race_pid=$!
  pass "the first pass" env "FIXVENUE_TEST_UNRACED_ONLY=$unraced_only" "$go" "${plain[@]}"
  plain_rc=$?
  echo "== race pass (-race ${race_pkgs[*]})"
  # What it has printed so far, then the rest as it comes, until it exits.
  tail -n +1 -f --pid="$race_pid" "$log"
  wait "$race_pid"
  race_rc=$?
  race_pid=
fi

echo "== make test: pass $(verdict "$plain_rc"), race pass $(verdict "$race_rc")"
[ "$plain_rc" -eq 0 ] && [ "$race_rc" -eq 0 ]
