#!/usr/bin/env bash
# The venue against its durable floor over FIX (make bench-fix): each cell
# runs `fixvenue serve` (scripts/fix-run.sh, the default engine settings,
# fsync batch) and `fixvenue bench echo --journal` (scripts/echo-run.sh with
# DURABLE=1: journal and fdatasync per order, no matching, no QuickFIX/Go)
# one after the other with the same load, round after round, the order
# swapped every round, so both see the same machine. The end prints, per
# cell, the medians over rounds and the venue's ratio to the floor, the CPU
# per order split into user and system time, and the targets of
# docs/benchmarks.md ("Targets", rows fix-floor).
#
#   scripts/bench-fix-floor.sh
#
# Environment: CELLS (RATE/SESSIONS pairs, default "5000/4 10000/4 10000/16
# 15000/16"), ROUNDS (default 2), DUR (8s), WARMUP (2s), WAIT (the venue's
# engine.wait_strategy, default auto), VENUES (NAME=BINARY pairs, default
# "venue=bin/fixvenue": give two or more to compare builds, e.g.
# "old=fixvenue-old new=bin/fixvenue"; each gets a row per cell with
# its ratio to the same floor, the floor and venues rotated every round;
# names without "-"), OUT (default docs/bench/fix-floor/<UTC stamp>), LBIN
# (the load generator's and the floor's binary, default bin/fixvenue). The
# 1-minute load average before each run is kept in OUT/load.txt. Ctrl-C
# stops it (exit 130).
set -euo pipefail
cd "$(dirname "$0")/.."
# Ctrl-C reaches every process of the group: each run's script exits 130,
# which is not a death by the signal, and without this trap the loop went on
# to the next run.
trap 'exit 130' INT
CELLS=${CELLS:-"5000/4 10000/4 10000/16 15000/16"}
ROUNDS=${ROUNDS:-2}
WAIT=${WAIT:-auto}
VENUES=${VENUES:-venue=bin/fixvenue}
export DUR=${DUR:-8s} WARMUP=${WARMUP:-2s}
. scripts/lib/bench.sh
bench_out fix-floor
export LBIN=${LBIN:-bin/fixvenue}
[ -x "$LBIN" ] || make build >/dev/null
echo "bench-fix-floor.sh: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), rounds $ROUNDS, cells $CELLS, $DUR each -> $OUT" >&2
declare -A vbin
sides=()
for v in $VENUES; do
	name=${v%%=*} vbin[${v%%=*}]=${v#*=}
	case $name in floor | *-* | "$v") echo "bench-fix-floor.sh: bad VENUES entry $v (NAME=BINARY, NAME not floor, no -)" >&2; exit 2 ;; esac
	[ -x "${vbin[$name]}" ] || { echo "bench-fix-floor.sh: ${vbin[$name]} not built" >&2; exit 1; }
	sides+=("$name")
done
sides+=(floor)
for round in $(seq "$ROUNDS"); do
	for cell in $CELLS; do
		rate=${cell%/*} sessions=${cell#*/}
		# The sides in turn, starting one further every round.
		for i in $(seq 0 $((${#sides[@]} - 1))); do
			who=${sides[$(((i + round - 1) % ${#sides[@]}))]}
			name=$who-$rate-$sessions-r$round
			echo "bench-fix-floor.sh: $name" >&2
			echo "$name $(cut -d' ' -f1 /proc/loadavg)" >> "$OUT/load.txt"
			if [ "$who" != floor ]; then
				VBIN=${vbin[$who]} JSON=$OUT/$name.json scripts/fix-run.sh "$WAIT" batch "$rate" "$sessions" > "$OUT/$name.txt" 2>&1
			else
				VBIN=$LBIN DURABLE=1 JSON=$OUT/$name.json scripts/echo-run.sh "$rate" "$sessions" > "$OUT/$name.txt" 2>&1
			fi || echo "bench-fix-floor.sh: $name failed (see $OUT/$name.txt)" >&2
		done
	done
done
# One row per run, then the tables: medians over rounds.
for f in "$OUT"/*.json; do
	jq -c --arg name "$(basename "$f" .json)" '($name | split("-")) as $k | {who: $k[0], cell: "\($k[1])/\($k[2])",
		p50: .latency.p50_us, p99: (.latency.p99_us / 1000), cpu: (.venue_cpu_s * 1e6 / ([.orders_sent, 1] | max)),
		sys: (if .venue_sys_s == null then null else .venue_sys_s * 1e6 / ([.orders_sent, 1] | max) end),
		lost: (.lost_orders + .lost_cancels + .orders_unsent), allocs: ((.venue_mallocs // 0) / ([.orders_sent, 1] | max))}' "$f"
done > "$OUT/rows.jsonl"
defs='
def med: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def f(n): if . == null then "-" else . * n | round / n | tostring end;
def ratio(a; b): if a == null or b == null or b == 0 then "-" else (a / b * 100 | round / 100 | tostring) + "×" end;
def cells: group_by(.cell) | sort_by(.[0].cell | split("/") | map(tonumber)) | .[];
def side(w): map(select(.who == w)) | {p50: (map(.p50) | med), p99: (map(.p99) | med), cpu: (map(.cpu) | med),
	allocs: (map(.allocs) | med), lost: (map(.lost) | add), sys: (map(.sys) | map(select(. != null)) | med),
	user: (map(select(.sys != null) | .cpu - .sys) | med)};'
{
	echo "# fixvenue against its durable floor — $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo
	echo "$(nproc) CPUs, load at the end $(cut -d' ' -f1-3 /proc/loadavg), 1-minute load before the runs $(sort -k2 -g "$OUT/load.txt" | awk 'NR == 1 { lo = $2 } { hi = $2 } END { print lo "-" hi }'); $ROUNDS rounds of $DUR (+ $WARMUP warm-up) per cell and side, rotated; medians over rounds; venues $(for v in $VENUES; do printf '%s=%s ' "${v%%=*}" "$(basename "${v#*=}")"; done)(binaries by name), wait_strategy $WAIT, fsync batch; floor: \`fixvenue bench echo --journal\`."
	echo
	jq -rs "$defs"'
	"| orders/s / sessions | venue | venue p50 µs | floor p50 µs | p50 ratio | venue p99 ms | floor p99 ms | venue CPU µs/order | floor CPU µs/order | CPU ratio | venue allocs/order | lost venue / floor |",
	"|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
	(cells | side("floor") as $e | (map(select(.who != "floor")) | group_by(.who) | .[]) as $r | $r[0] as $k | ($r | side($k.who)) as $v |
		"| \($k.cell) | \($k.who) | \($v.p50 | f(1)) | \($e.p50 | f(1)) | \(ratio($v.p50; $e.p50)) | \($v.p99 | f(100)) | \($e.p99 | f(100)) | \($v.cpu | f(1)) | \($e.cpu | f(1)) | \(ratio($v.cpu; $e.cpu)) | \($v.allocs | f(1)) | \($v.lost) / \($e.lost) |")' "$OUT/rows.jsonl"
	echo
	echo "CPU per order in user space (the process's own code) and in the kernel (system calls, faults), medians over rounds:"
	echo
	jq -rs "$defs"'
	"| orders/s / sessions | venue | venue user µs | floor user µs | user ratio | venue system µs | floor system µs |", "|---|---|---:|---:|---:|---:|---:|",
	(cells | side("floor") as $e | (map(select(.who != "floor")) | group_by(.who) | .[]) as $r | $r[0] as $k | ($r | side($k.who)) as $v |
		"| \($k.cell) | \($k.who) | \($v.user | f(1)) | \($e.user | f(1)) | \(ratio($v.user; $e.user)) | \($v.sys | f(1)) | \($e.sys | f(1)) |")' "$OUT/rows.jsonl"
	if [ ${#sides[@]} -gt 2 ]; then
		echo
		echo "Each venue against ${sides[0]} (the first of VENUES), medians over rounds:"
		echo
		jq -rs --arg first "${sides[0]}" "$defs"'
		"| orders/s / sessions | venue | p50 | p99 | CPU per order | allocations per order |", "|---|---|---:|---:|---:|---:|",
		(cells | side($first) as $a | (map(select(.who != "floor" and .who != $first)) | group_by(.who) | .[]) as $r | $r[0] as $k | ($r | side($k.who)) as $b |
			"| \($k.cell) | \($k.who) / \($first) | \(ratio($b.p50; $a.p50)) | \(ratio($b.p99; $a.p99)) | \(ratio($b.cpu; $a.cpu)) | \(ratio($b.allocs; $a.allocs)) |")' "$OUT/rows.jsonl"
	fi
	echo
	echo "Targets: p50 ≤ 1.5× the floor at 5000/4; CPU per order ≤ 1.5× at 10000/16; venue p99 ≤ 2 ms at 10000/4, 10000/16 and 15000/16; nothing lost."
} | tee "$OUT/summary.md"
