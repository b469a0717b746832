#!/usr/bin/env bash
# The whole path over FIX on loopback (make bench-fix-ladder): `fixvenue serve`
# driven by `fixvenue load` with 1, 4 and 16 sessions, passive and cross
# mixes, up a rate ladder, first with the journal's fsync "batch" (the
# default) and then with fsync "none" (benchmarks only: answers leave before
# the disk has them, and every report of such a run says so).
#
# Each (fsync, sessions, mix) ladder gets a fresh venue: its own temporary
# data directory and ports chosen by the OS, on 127.0.0.1 only. A ladder
# stops at the first rate that does not hold (answers lost, a session
# failed, or p99 over P99_MAX). Every run writes .hgrm, JSON and SVG; each
# ladder also gets one SVG with a line per rate; summary.md collects the
# table. Output: docs/bench/fix/<UTC stamp>/.
#
# Knobs (environment): SESSIONS, MIXES, RATES, FSYNCS, DURATION, WARMUP,
# DRAIN, P99_MAX, OUT. Each load run is bounded by DURATION+WARMUP+DRAIN
# plus RUN_GRACE seconds; the venue's start-up by START_TIMEOUT seconds
# (defaults of the bounds: bench_venue in scripts/lib/bench.sh).
set -euo pipefail

SESSIONS=${SESSIONS:-"1 4 16"}
MIXES=${MIXES:-"passive cross"}
RATES=${RATES:-"1000 2000 5000 10000 20000"}
FSYNCS=${FSYNCS:-"batch none"}
DURATION=${DURATION:-10s}
P99_MAX=${P99_MAX:-5ms}

cd "$(dirname "$0")/.."
. scripts/lib/bench.sh
bench_venue fix

# start_venue FSYNC NAME: a fresh venue; sets fix_addr.
start_venue() {
	local fsync=$1 name=$2
	local dir=$work/$name
	mkdir -p "$dir"
	# Throttles off (venue_throttles_off says why); everything else is the
	# demo configuration.
	{
		printf '[journal]\nfsync = "%s"\n' "$fsync"
		venue_throttles_off
	} > "$dir/venue.toml"
	venue_start "$dir/venue.log" --config "$dir/venue.toml" --data "$dir/data" --fix-addr 127.0.0.1:0 --metrics-addr 127.0.0.1:0 \
		--md-addr "127.0.0.1:$((20000 + RANDOM % 20000))" --md-recovery-addr 127.0.0.1:0 --log-level warn
	fix_addr=$venue_fix_addr
}

{
	echo "# fixvenue over FIX on loopback — $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo
	echo "- machine: $(bench_machine); venue and load generator share it"
	echo "- load average at start: $(bench_loadavg)"
	echo "- runs: sessions $SESSIONS, mixes $MIXES, rates $RATES (a ladder stops at the first rate not held), duration $DURATION, warm-up $WARMUP, drain $DRAIN, p99 bound $P99_MAX"
	echo "- latency: each order's due time → its first ExecutionReport; passive orders are each cancelled, so messages/s is twice the order rate"
	echo "- venue: demo configuration, throttles off, a fresh data directory per ladder"
	echo
} > "$OUT/summary.md"

for fsync in $FSYNCS; do
	jsons=()
	for sessions in $SESSIONS; do
		for mix in $MIXES; do
			ladder=fix-$fsync-${sessions}s-$mix
			start_venue "$fsync" "$ladder"
			echo "bench-fix.sh: $ladder: venue on $fix_addr (fsync $fsync)" >&2
			plot_args=()
			for rate in $RATES; do
				name=$ladder-$rate
				rc=0
				# --foreground, so that Ctrl-C reaches the load (bench-latency.sh).
				timeout --foreground "$limit" "$BIN" load --quiet --json --addr "$fix_addr" --sessions "$sessions" --mix "$mix" \
					--rate "$rate" --duration "$DURATION" --warmup "$WARMUP" --drain "$DRAIN" --p99-max "$P99_MAX" \
					--hgrm "$OUT/$name.hgrm" --svg "$OUT/$name.svg" > "$OUT/$name.json" || rc=$?
				if [ "$rc" != 0 ] && [ "$rc" != 3 ]; then
					echo "bench-fix.sh: $name: load failed (status $rc)" >&2
					break
				fi
				jsons+=("$OUT/$name.json")
				plot_args+=("$rate/s=$OUT/$name.hgrm")
				if [ "$rc" = 3 ]; then
					echo "bench-fix.sh: $name: not held; the ladder stops here" >&2
					break
				fi
			done
			venue_stop
			bench_plot "$OUT/$ladder.svg" "fixvenue over FIX: $sessions session(s), $mix, fsync $fsync" \
				"order due time → first ExecutionReport; venue and client on $(nproc) shared CPUs" "${plot_args[@]}"
		done
	done
	if [ ${#jsons[@]} -gt 0 ]; then
		{
			echo "## fsync $fsync"
			[ "$fsync" = none ] && echo && echo "fsync none: answers leave before the journal reaches the disk (benchmark only)."
			echo
			"$BIN" bench table "${jsons[@]}"
			echo
		} >> "$OUT/summary.md"
	fi
done
cat "$OUT/summary.md"
