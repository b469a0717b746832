#!/usr/bin/env bash
# One load run against the echo venue, the floor under every FIX figure:
# bin/fixvenue bench echo (DURABLE=1: with --journal, so every order is
# answered only once an fdatasync has made it durable, as in the venue),
# driven by bin/fixvenue load (passive mix) like scripts/fix-run.sh drives
# the venue, so the two can be alternated in one session.
#
#   scripts/echo-run.sh RATE SESSIONS        e.g. DURABLE=1 scripts/echo-run.sh 5000 4
#
# Prints the echo's CPU (and its system part) and minor page faults over the run.
# Exits 1 when the echo does not start or the load generator cannot run (its
# status 1 or 2; a run that did not hold, 3, is a measurement like any other).
# Environment: DURABLE (1: journal in a fresh directory), DUR (default 10s),
# WARMUP (2s), PORT (on 127.0.0.1; default: one the OS chooses), EGMP (the echo's
# GOMAXPROCS, default 2), JSON (write the load generator's result as JSON to
# this file, with the echo's CPU over the run added as venue_cpu_s, its system part as
# venue_sys_s), VBIN (the echo's binary) and LBIN (the load generator's), both
# bin/fixvenue by default.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: $0 RATE SESSIONS" >&2; exit 2; }
rate=$1 sessions=$2
vbin=${VBIN:-bin/fixvenue} lbin=${LBIN:-bin/fixvenue}
[ -x "$vbin" ] && [ -x "$lbin" ] || make build >/dev/null
. scripts/lib/venue.sh # proc_cpu_s
dir=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || { kill -INT "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; } || true; rm -rf "$dir"' EXIT
trap 'exit 130' INT # as in fix-run.sh
journal=()
[ "${DURABLE:-0}" = 1 ] && journal=(--journal "$dir/journal")
# On a port the OS chooses unless PORT says one: a fixed one made two runs at
# once (or anything else listening there) collide, the second measuring the
# first's echo.
GOMAXPROCS=${EGMP:-2} "$vbin" bench echo --addr "127.0.0.1:${PORT:-0}" "${journal[@]}" 2> "$dir/echo.log" &
pid=$!
addr=
for _ in $(seq 100); do
	addr=$(sed -n 's/.*echo venue on \([^ ]*\) .*/\1/p' "$dir/echo.log")
	[ -n "$addr" ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$addr" ]; then
	echo "echo-run.sh: the echo venue did not start; its log:" >&2
	cat "$dir/echo.log" >&2
	exit 1
fi
echo "== echo durable=${DURABLE:-0} rate=$rate sessions=$sessions"
cpu0=$(proc_cpu_s "$pid")
read -r flt0 sys0 < <(proc_faults "$pid")
load=("$lbin" load --addr "$addr" --sessions "$sessions" --rate "$rate"
	--duration "${DUR:-10s}" --warmup "${WARMUP:-2s}" --mix passive --quiet)
# load_status STATUS: a run that held (0) or not (3) measured the echo; any
# other status is a run that could not run, whose empty result the figures
# after it would have hidden.
load_status() {
	[ "$1" = 0 ] || [ "$1" = 3 ] || { echo "echo-run.sh: the load generator failed (status $1)" >&2; exit 1; }
}
if [ -n "${JSON:-}" ]; then
	rc=0
	"${load[@]}" --json > "$JSON.load" || rc=$?
	load_status "$rc"
	cpu=$(awk -v a="$cpu0" -v b="$(proc_cpu_s "$pid")" 'BEGIN { printf "%.3f", b - a }')
	read -r _ sys1 < <(proc_faults "$pid")
	sys=$(awk -v a="$sys0" -v b="$sys1" 'BEGIN { printf "%.3f", b - a }')
	jq --argjson cpu "$cpu" --argjson sys "$sys" '. + {venue_cpu_s: $cpu, venue_sys_s: $sys}' "$JSON.load" > "$JSON" && rm -f "$JSON.load"
	jq -r '"load: p50 \(.latency.p50_us) µs, p99 \(.latency.p99_us) µs, \(.orders_sent) orders sent, lost \(.lost_orders) orders and \(.lost_cancels) cancels; echo CPU \(.venue_cpu_s) s"' "$JSON"
else
	rc=0
	"${load[@]}" || rc=$?
	load_status "$rc"
	read -r flt1 sys1 < <(proc_faults "$pid")
	awk -v a="$cpu0" -v b="$(proc_cpu_s "$pid")" -v f="$((flt1 - flt0))" -v s0="$sys0" -v s1="$sys1" \
		'BEGIN { printf "echo CPU %.2f s over the run (system %.2f s); %d minor page faults\n", b - a, s1 - s0, f }'
fi
