#!/usr/bin/env bash
# make test's two passes: every package once, and the concurrent packages again under the race
# detector. Most of their time is spent waiting (real sockets, fsync, timers, browsers): one
# after the other they keep about half of two CPUs busy. With CPUs to spare (4 or more) they
# run side by side, the race pass's output after the first pass's (from a file, as it comes).
# On fewer they run as two streams of one test binary each: the longest package (LONGEST,
# ./server) in both passes, one after the other, and every other package's first pass, then
# their race pass, beside it. Two binaries run at a time, as when the passes run one after
# the other with go test's two, and in the same pairs (the longest's first pass beside
# cmd/fixvenue's, its race pass beside the others'), but neither stream waits for the other
# between the passes, where one binary ran alone for minutes: 2 to 3 minutes less of CI. Side by
# side on two CPUs (four binaries) the doubled load made the tests that bound a wait on a
# whole run of work (a catch-up, a slow reader's flood) fail run after run. go test prints a
# package's result once it and every package listed before it are done, and the longest are
# listed first, so a line a minute names the test binaries running.
#
# Environment: GO, TESTTIMEOUT (each test binary's bound), PKGS, RACE_PKGS (as the Makefile
# sets them), LONGEST (streams: the package of the stream of its own); TESTPASSES=serial,
# parallel or streams overrides the choice.
# Exit status 0 only when both passes passed.
set -uo pipefail

go=${GO:-go}
timeout=${TESTTIMEOUT:-30m}
read -r -a pkgs <<<"${PKGS:-./...}"
read -r -a race_pkgs <<<"${RACE_PKGS:?RACE_PKGS: the packages of the race pass}"
plain=(test -count=1 -timeout "$timeout" "${pkgs[@]}")
race=(test -count=1 -timeout "$timeout" -race "${race_pkgs[@]}")

passes=${TESTPASSES:-}
if [ -z "$passes" ]; then
  passes=streams
  [ "$(nproc)" -ge 4 ] && passes=parallel
fi

# running PID: the test binaries the go command PID runs now, by package name.
running() {
  local names
  names=$(ps -o args= --ppid "$1" 2>/dev/null | awk '{ n = $1; sub(/.*\//, "", n); if (sub(/\.test$/, "", n)) print n }' | paste -sd, - | sed 's/,/, /g')
  echo "${names:-no test binary (building)}"
}

# heartbeat NAME: a line a minute naming the test binaries of this script's go commands (the
# race pass's apart when it runs beside, race_pid); in streams, of each stream's go command,
# named by what it runs.
heartbeat() {
  local min=0 pid line
  while sleep 60; do
    min=$((min + 1))
    line="== make test, ${min} min:"
    if [ "$passes" = "streams" ]; then
      for pid in $(pgrep -P "$$" -x bash); do
        for pid in $(pgrep -P "$pid" -x go); do
          line+=" $(race_or_first "$pid") running $(running "$pid");"
        done
      done
    else
      for pid in $(pgrep -P "$$" -x go); do
        if [ "$pid" = "$race_pid" ]; then
          line+=" race pass running $(running "$pid");"
        else
          line+=" $1 running $(running "$pid");"
        fi
      done
    fi
    echo "${line%;}"
  done
}

# race_or_first PID: which pass the go command PID runs.
race_or_first() {
  if ps -o args= -p "$1" 2>/dev/null | grep -q -- ' -race '; then echo "race pass"; else echo "the first pass"; fi
}

log=
rcs=
race_pid=
beat_pid=
# stop_beat: ends the heartbeat and its sleep (which would hold the output open for up to a
# minute).
stop_beat() {
  [ -n "$beat_pid" ] || return 0
  local kids
  kids=$(pgrep -P "$beat_pid")
  kill "$beat_pid" 2>/dev/null
  # Its sleep, once the heartbeat is gone (killed first, the heartbeat would report it).
  [ -n "$kids" ] && kill $kids 2>/dev/null
  beat_pid=
}

cleanup() {
  stop_beat
  if [ -n "$race_pid" ] && kill -0 "$race_pid" 2>/dev/null; then
    kill -TERM -- "-$race_pid" 2>/dev/null
    wait "$race_pid" 2>/dev/null
  fi
  [ -n "$log" ] && rm -f "$log"
  [ -n "$rcs" ] && rm -f "$rcs"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# pass NAME ARGS...: one go test in the foreground, with the heartbeat.
pass() {
  local name=$1 rc
  shift
  heartbeat "$name" &
  beat_pid=$!
  "$go" "$@"
  rc=$?
  stop_beat
  return "$rc"
}

verdict() { if [ "$1" -eq 0 ]; then echo ok; else echo "FAILED (exit $1)"; fi; }

if [ "$passes" = "streams" ]; then
  longest=${LONGEST:-./server}
  longest_path=$("$go" list "$longest") || exit 1
  # The other packages, in the order given (the longest first), the longest left out.
  others=$("$go" list "${pkgs[@]}" | grep -vxF "$longest_path" | paste -sd' ' -)
  race_others=$("$go" list "${race_pkgs[@]}" | grep -vxF "$longest_path" | paste -sd' ' -)
  read -r -a others <<<"$others"
  read -r -a race_others <<<"$race_others"
  log=$(mktemp "${TMPDIR:-/tmp}/fixvenue-longest.XXXXXX")
  rcs=$(mktemp "${TMPDIR:-/tmp}/fixvenue-rcs.XXXXXX")
  echo "== two streams ($(nproc) CPUs; TESTPASSES=serial runs the passes one after the other): $longest, first pass then race pass, its output after the others'; beside it every other package's first pass, then race pass"
  # One binary at a time in each stream (-p 1); the first pass's status, then the race pass's, of
  # each stream into rcs. The longest's stream in a session of its own, so that a stop ends its
  # test binaries with it (cleanup).
  setsid bash -c '
    "$1" test -p 1 -count=1 -timeout "$2" "$3"
    echo "longest_plain=$?" >>"$4"
    "$1" test -p 1 -count=1 -timeout "$2" -race "$3"
    echo "longest_race=$?" >>"$4"
  ' stream "$go" "$timeout" "$longest" "$rcs" >"$log" 2>&1 &
  race_pid=$!
  heartbeat "" &
  beat_pid=$!
  (
    "$go" test -p 1 -count=1 -timeout "$timeout" "${others[@]}"
    echo "others_plain=$?" >>"$rcs"
    echo "== race pass (-race ${race_pkgs[*]}, $longest apart)"
    "$go" test -p 1 -count=1 -timeout "$timeout" -race "${race_others[@]}"
    echo "others_race=$?" >>"$rcs"
  )
  echo "== $longest, first pass and race pass"
  tail -n +1 -f --pid="$race_pid" "$log"
  wait "$race_pid"
  race_pid=
  stop_beat
  rc_of() { local v; v=$(sed -n "s/^$1=//p" "$rcs"); echo "${v:-1}"; }
  plain_rc=$(( $(rc_of longest_plain) | $(rc_of others_plain) ))
  race_rc=$(( $(rc_of longest_race) | $(rc_of others_race) ))
  rm -f "$rcs"
  rcs=
elif [ "$passes" = "serial" ]; then
  echo "== the first pass, then the race pass ($(nproc) CPUs; TESTPASSES=parallel runs them side by side)"
  pass "the first pass" "${plain[@]}"
  plain_rc=$?
  echo "== race pass (-race ${race_pkgs[*]})"
  pass "race pass" "${race[@]}"
  race_rc=$?
else
  log=$(mktemp "${TMPDIR:-/tmp}/fixvenue-race-pass.XXXXXX")
  echo "== the race pass runs alongside ($(nproc) CPUs); its output follows this pass's"
  # A session of its own, so that a stop ends its test binaries with it.
  setsid "$go" "${race[@]}" >"$log" 2>&1 &
  race_pid=$!
  pass "the first pass" "${plain[@]}"
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
