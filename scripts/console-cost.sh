#!/usr/bin/env bash
# What open console browsers cost the order path (docs/benchmarks.md, "The web
# console's cost"): one venue (demo config, throttles off), then ROUNDS pairs of
# load runs at RATE orders/s, each pair once without and once with STREAMS
# console event streams open (as that many browsers on the ACME ladder), and
# for each run the load generator's latency line and the venue's CPU per order.
#
#   scripts/console-cost.sh [RATE] [SESSIONS] [STREAMS] [ROUNDS]   default 5000 4 20 3
#
# Environment: DUR (default 20s), WARMUP (3s), MIX (passive: the ladder
# changes, nothing trades; mixed: half the orders trade, so the streams also
# carry the trades list and the chart, the heaviest update).
set -euo pipefail
cd "$(dirname "$0")/.."
rate=${1:-5000} sessions=${2:-4} streams=${3:-20} rounds=${4:-3}
[ -x bin/fixvenue ] || make build >/dev/null
VENUE_BIN=bin/fixvenue
. scripts/lib/venue.sh
venue_workdir console-cost
dir=$venue_work
venue_throttles_off > "$dir/venue.toml"
venue_start "$dir/serve.log" --config "$dir/venue.toml" --data "$dir/data" --fix-addr 127.0.0.1:0 --metrics-addr 127.0.0.1:0 \
	--md-addr 127.0.0.1:0 --md-recovery-addr 127.0.0.1:0
cpu_orders() {
	curl -s "$venue_metrics_addr/metrics" | awk '/^process_cpu_seconds_total / { c = $2 } /^fixvenue_orders_total / { o = $2 } END { print c, o }'
}
run() {
	local label=$1
	shift
	read -r c0 o0 < <(cpu_orders)
	echo "== $label"
	bin/fixvenue load --addr "$venue_fix_addr" --sessions "$sessions" --rate "$rate" --duration "${DUR:-20s}" \
		--warmup "${WARMUP:-3s}" --mix "${MIX:-passive}" --quiet "$@" 2>&1 | grep -E '^(latency|         p50|answers|console)' || true
	read -r c1 o1 < <(cpu_orders)
	awk -v c="$c1" -v c0="$c0" -v o="$o1" -v o0="$o0" 'BEGIN { if (o > o0) printf "venue CPU per order: %.1f µs\n", (c - c0) * 1e6 / (o - o0) }'
}
for ((r = 1; r <= rounds; r++)); do
	run "round $r: no console stream"
	run "round $r: $streams console streams" --console-streams "$streams" --console-url "http://$venue_admin_addr/stream/book-ACME"
done
