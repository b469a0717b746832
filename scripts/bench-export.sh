#!/usr/bin/env bash
# ExecutionReport latency with the event export on against off
# (make bench-export): the same `fixvenue load` run, RATE orders/s over
# SESSIONS sessions, against a fresh venue with [export] off and one with
# the export on to its embedded NATS server (JetStream on loopback), in
# PAIRS interleaved pairs (off/on, then on/off, …) so that drift in the
# machine's load falls on both. After each export-on run, `fixvenue events
# verify` checks the stream against that venue's journal. The target is a
# p99 within 5% of export off; only a quiet machine can show that, so the
# summary records the load average before and after each run.
#
# Output: docs/bench/export/<UTC stamp>/ (.hgrm, JSON and SVG per run,
# summary.md). The summary also gives the venue process's CPU seconds
# (user+system, the embedded NATS server included) over each run: less
# sensitive to a busy machine than latency. Knobs (environment): RATE,
# SESSIONS, MIX, PAIRS, DURATION, WARMUP, DRAIN, OUT, and PROFILE=1 for a
# CPU profile of each venue (<run>.cpu.pprof). Each load run is bounded by DURATION+WARMUP+DRAIN
# plus RUN_GRACE seconds, the venue's start-up by START_TIMEOUT seconds
# (defaults of the bounds: bench_venue in scripts/lib/bench.sh).
set -euo pipefail

RATE=${RATE:-5000}
SESSIONS=${SESSIONS:-4}
MIX=${MIX:-cross}
PAIRS=${PAIRS:-3}
DURATION=${DURATION:-20s}

cd "$(dirname "$0")/.."
. scripts/lib/bench.sh
bench_venue export

{
	echo "# ExecutionReport latency, event export off and on — $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo
	echo "- machine: $(bench_machine); venue, NATS and load generator share it"
	echo "- runs: $PAIRS interleaved pairs; $RATE orders/s, $SESSIONS sessions, mix $MIX, duration $DURATION, warm-up $WARMUP, fsync batch, throttles off"
	echo "- latency: each order's due time → its first ExecutionReport"
	echo
} > "$OUT/summary.md"

# run EXPORT NAME: a fresh venue (export on or off), one load run, and with
# the export on a verify of the stream.
run() {
	local export=$1 name=$2
	local dir=$work/$name
	mkdir -p "$dir"
	{
		venue_throttles_off
		cat <<TOML
[export]
enabled = $export
embedded_addr = "127.0.0.1:0"
TOML
	} > "$dir/venue.toml"
	local profile=()
	[ "${PROFILE:-0}" = 1 ] && profile=(--cpuprofile "$OUT/$name.cpu.pprof")
	venue_start "$dir/venue.log" --config "$dir/venue.toml" --data "$dir/data" --fix-addr 127.0.0.1:0 --metrics-addr 127.0.0.1:0 \
		--md-addr "127.0.0.1:$((20000 + RANDOM % 20000))" --md-recovery-addr 127.0.0.1:0 --log-level warn "${profile[@]}"
	local nats_url
	nats_url=$(venue_ready_field "$dir/venue.log.ready" nats_url)
	local before cpu0
	before=$(bench_loadavg)
	cpu0=$(proc_cpu_s "$venue_pid")
	local rc=0
	# --foreground, so that Ctrl-C reaches the load (bench-latency.sh).
	timeout --foreground "$limit" "$BIN" load --quiet --json --addr "$venue_fix_addr" --sessions "$SESSIONS" --mix "$MIX" \
		--rate "$RATE" --duration "$DURATION" --warmup "$WARMUP" --drain "$DRAIN" --p99-max 1m \
		--hgrm "$OUT/$name.hgrm" --svg "$OUT/$name.svg" > "$OUT/$name.json" || rc=$?
	echo "- $name: load average $before before, $(bench_loadavg) after; load status $rc; venue CPU $(awk -v a="$cpu0" -v b="$(proc_cpu_s "$venue_pid")" 'BEGIN { printf "%.2f", b - a }') s" >> "$OUT/summary.md"
	if [ "$export" = true ]; then
		local i
		for ((i = 0; i < 60; i++)); do
			if "$BIN" events verify --config "$dir/venue.toml" --data "$dir/data" --nats "$nats_url" > "$OUT/$name.verify" 2>&1; then
				break
			fi
			sleep 1
		done
		echo "  - verify: $(tail -1 "$OUT/$name.verify")" >> "$OUT/summary.md"
	fi
	venue_stop
	jsons+=("$OUT/$name.json")
}

jsons=()
for ((p = 1; p <= PAIRS; p++)); do
	if ((p % 2)); then order="false true"; else order="true false"; fi
	for export in $order; do
		label=off
		[ "$export" = true ] && label=on
		echo "bench-export.sh: pair $p, export $label" >&2
		run "$export" "export-$label-$p"
	done
done
{
	echo
	echo "Rows in run order: $(for j in "${jsons[@]}"; do basename "$j" .json; done | paste -sd, -)."
	echo
	"$BIN" bench table "${jsons[@]}"
} >> "$OUT/summary.md"
cat "$OUT/summary.md"
