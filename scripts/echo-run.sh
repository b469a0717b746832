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
# Environment: DURABLE (1: journal in a fresh directory), DUR (default 10s),
# WARMUP (2s), PORT (default 29879, on 127.0.0.1), EGMP (the echo's
# GOMAXPROCS, default 2), JSON (write the load generator's result as JSON to
# this file, with the echo's CPU over the run added as venue_cpu_s, its system part as
# venue_sys_s).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: $0 RATE SESSIONS" >&2; exit 2; }
rate=$1 sessions=$2
port=${PORT:-29879}
[ -x bin/fixvenue ] || make build >/dev/null
. scripts/lib/venue.sh # proc_cpu_s
dir=$(mktemp -d)
trap 'kill -INT $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
journal=()
[ "${DURABLE:-0}" = 1 ] && journal=(--journal "$dir/journal")
GOMAXPROCS=${EGMP:-2} bin/fixvenue bench echo --addr 127.0.0.1:$port "${journal[@]}" 2> "$dir/echo.log" &
pid=$!
for _ in $(seq 100); do grep -q "echo venue on" "$dir/echo.log" && break; sleep 0.1; done
echo "== echo durable=${DURABLE:-0} rate=$rate sessions=$sessions"
cpu0=$(proc_cpu_s "$pid")
read -r flt0 sys0 < <(proc_faults "$pid")
load=(bin/fixvenue load --addr 127.0.0.1:$port --sessions "$sessions" --rate "$rate"
	--duration "${DUR:-10s}" --warmup "${WARMUP:-2s}" --mix passive --quiet)
if [ -n "${JSON:-}" ]; then
	"${load[@]}" --json > "$JSON.load" || true
	cpu=$(awk -v a="$cpu0" -v b="$(proc_cpu_s "$pid")" 'BEGIN { printf "%.3f", b - a }')
	read -r _ sys1 < <(proc_faults "$pid")
	sys=$(awk -v a="$sys0" -v b="$sys1" 'BEGIN { printf "%.3f", b - a }')
	jq --argjson cpu "$cpu" --argjson sys "$sys" '. + {venue_cpu_s: $cpu, venue_sys_s: $sys}' "$JSON.load" > "$JSON" && rm -f "$JSON.load"
	jq -r '"load: p50 \(.latency.p50_us) µs, p99 \(.latency.p99_us) µs, \(.orders_sent) orders sent, lost \(.lost_orders) orders and \(.lost_cancels) cancels; echo CPU \(.venue_cpu_s) s"' "$JSON"
else
	"${load[@]}" || true
	read -r flt1 sys1 < <(proc_faults "$pid")
	awk -v a="$cpu0" -v b="$(proc_cpu_s "$pid")" -v f="$((flt1 - flt0))" -v s0="$sys0" -v s1="$sys1" \
		'BEGIN { printf "echo CPU %.2f s over the run (system %.2f s); %d minor page faults\n", b - a, s1 - s0, f }'
fi
