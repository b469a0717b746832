#!/usr/bin/env bash
# The venue against its durable floor over FIX (make bench-fix): each cell
# runs `fixvenue serve` (scripts/fix-run.sh, the default engine settings,
# fsync batch) and `fixvenue bench echo --journal` (scripts/echo-run.sh with
# DURABLE=1: journal and fdatasync per order, no matching, no QuickFIX/Go)
# one after the other with the same load, round after round, the order
# swapped every round, so both see the same machine. The end prints, per
# cell, the medians over rounds and the venue's ratio to the floor, and the
# targets of docs/benchmarks.md ("Targets", rows fix-floor).
#
#   scripts/bench-fix-floor.sh
#
# Environment: CELLS (RATE/SESSIONS pairs, default "5000/4 10000/4 10000/16
# 15000/16"), ROUNDS (default 2), DUR (8s), WARMUP (2s), WAIT (the venue's
# engine.wait_strategy, default auto), OUT (default
# docs/bench/fix-floor/<UTC stamp>).
set -euo pipefail
cd "$(dirname "$0")/.."
CELLS=${CELLS:-"5000/4 10000/4 10000/16 15000/16"}
ROUNDS=${ROUNDS:-2}
WAIT=${WAIT:-auto}
export DUR=${DUR:-8s} WARMUP=${WARMUP:-2s}
. scripts/lib/bench.sh
bench_out fix-floor
[ -x bin/fixvenue ] || make build >/dev/null
echo "bench-fix-floor.sh: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), rounds $ROUNDS, cells $CELLS, $DUR each -> $OUT" >&2
for round in $(seq "$ROUNDS"); do
	for cell in $CELLS; do
		rate=${cell%/*} sessions=${cell#*/}
		order="venue floor"
		[ $((round % 2)) = 0 ] && order="floor venue"
		for who in $order; do
			name=$who-$rate-$sessions-r$round
			echo "bench-fix-floor.sh: $name" >&2
			if [ "$who" = venue ]; then
				JSON=$OUT/$name.json scripts/fix-run.sh "$WAIT" batch "$rate" "$sessions" > "$OUT/$name.txt" 2>&1
			else
				DURABLE=1 JSON=$OUT/$name.json scripts/echo-run.sh "$rate" "$sessions" > "$OUT/$name.txt" 2>&1
			fi || echo "bench-fix-floor.sh: $name failed (see $OUT/$name.txt)" >&2
		done
	done
done
{
	echo "# fixvenue against its durable floor — $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo
	echo "$(nproc) CPUs, load at the end $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds of $DUR (+ $WARMUP warm-up) per cell and side, alternated; medians over rounds; venue wait_strategy $WAIT, fsync batch; floor: \`fixvenue bench echo --journal\`."
	echo
	for f in "$OUT"/*.json; do
		jq -c --arg name "$(basename "$f" .json)" '($name | split("-")) as $k | {who: $k[0], cell: "\($k[1])/\($k[2])",
			p50: .latency.p50_us, p99: (.latency.p99_us / 1000), cpu: (.venue_cpu_s * 1e6 / ([.orders_sent, 1] | max)),
			lost: (.lost_orders + .lost_cancels + .orders_unsent), allocs: ((.venue_mallocs // 0) / ([.orders_sent, 1] | max))}' "$f"
	done | jq -rs '
	def med: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	def f(n): if . == null then "-" else . * n | round / n | tostring end;
	def ratio(a; b): if a == null or b == null or b == 0 then "-" else (a / b * 100 | round / 100 | tostring) + "×" end;
	group_by(.cell) | sort_by(.[0].cell | split("/") | map(tonumber)) |
	"| orders/s / sessions | venue p50 µs | floor p50 µs | p50 ratio | venue p99 ms | floor p99 ms | venue CPU µs/order | floor CPU µs/order | CPU ratio | venue allocs/order | lost venue / floor |",
	"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
	(.[] | (map(select(.who == "venue"))) as $v | (map(select(.who == "floor"))) as $e |
		($v | map(.p50) | med) as $vp50 | ($e | map(.p50) | med) as $ep50 | ($v | map(.p99) | med) as $vp99 | ($e | map(.p99) | med) as $ep99 |
		($v | map(.cpu) | med) as $vcpu | ($e | map(.cpu) | med) as $ecpu |
		"| \(.[0].cell) | \($vp50 | f(1)) | \($ep50 | f(1)) | \(ratio($vp50; $ep50)) | \($vp99 | f(100)) | \($ep99 | f(100)) | \($vcpu | f(1)) | \($ecpu | f(1)) | \(ratio($vcpu; $ecpu)) | \($v | map(.allocs) | med | f(1)) | \($v | map(.lost) | add) / \($e | map(.lost) | add) |")'
	echo
	echo "Targets: p50 ≤ 1.5× the floor at 5000/4; CPU per order ≤ 1.5× at 10000/16; venue p99 ≤ 2 ms at 10000/4, 10000/16 and 15000/16; nothing lost."
} | tee "$OUT/summary.md"
