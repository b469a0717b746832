#!/usr/bin/env bash
# Open-loop latency of the venue's core, in process (make bench-latency):
# `fixvenue bench pipeline` at each rate, for each wait strategy, with the
# journal off and on (fsync batch), plus a throughput run (rate 0) of each.
#
# Every run writes its percentile distribution (.hgrm), its JSON result and
# an SVG plot; each (wait, journal) pair also gets one SVG with a line per
# rate, and summary.md collects every run as a Markdown table. Output:
# docs/bench/pipeline/<UTC stamp>/.
#
# Knobs (environment): RATES, WAITS, JOURNALS, PROCS, DURATION, WARMUP, MIX,
# PACE, OUT. PROCS lists the GOMAXPROCS values to run (0: the runtime's
# default, one P per CPU); the default runs each cell at both 0 and 1. Each
# run is bounded by DURATION+WARMUP plus RUN_GRACE seconds.
set -euo pipefail

RATES=${RATES:-"10000 100000 500000"}
WAITS=${WAITS:-"spin yield park"}
JOURNALS=${JOURNALS:-"off on"}
PROCS=${PROCS:-"0 1"}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
MIX=${MIX:-passive}
PACE=${PACE:-yield}
RUN_GRACE=${RUN_GRACE:-120}

cd "$(dirname "$0")/.."
trap 'exit 130' INT # Ctrl-C: stop here, once the run under way has stopped
. scripts/lib/bench.sh
bench_bin bench-latency.sh
bench_out pipeline
bench_limit "$DURATION" "$WARMUP"

{
	echo "# fixvenue pipeline harness — $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo
	echo "- machine: $(bench_machine)"
	echo "- load average at start: $(bench_loadavg)"
	echo "- runs: rates $RATES (and max), waits $WAITS, journal $JOURNALS, GOMAXPROCS $PROCS (0: one per CPU), duration $DURATION, warm-up $WARMUP, mix $MIX, pace $PACE"
	echo "- latency: due time → last event seen by the outbound stand-in (journal on: after the command is durable)"
	echo
} > "$OUT/summary.md"

jsons=()
for procs in $PROCS; do
	ps=procs-$procs
	[ "$procs" = 0 ] && ps=procs-default
	for wait in $WAITS; do
		for journal in $JOURNALS; do
			plot_args=()
			for rate in $RATES 0; do
				name=pipeline-$wait-journal-$journal-$ps-${rate/#0/max}
				echo "bench-latency.sh: $name" >&2
				# --foreground: in a process group of its own (timeout's
				# default) the run never saw Ctrl-C and ended normally, and
				# the script, which had seen it, went on to the next run.
				if ! timeout --foreground "$limit" "$BIN" bench pipeline --quiet --json --rate "$rate" --duration "$DURATION" --warmup "$WARMUP" \
					--wait "$wait" --journal "$journal" --mix "$MIX" --pace "$PACE" --procs "$procs" \
					--hgrm "$OUT/$name.hgrm" --svg "$OUT/$name.svg" > "$OUT/$name.json"; then
					echo "bench-latency.sh: $name failed or timed out (see $OUT/$name.json)" >&2
					continue
				fi
				jsons+=("$OUT/$name.json")
				if [ "$rate" != 0 ]; then
					plot_args+=("$rate/s=$OUT/$name.hgrm")
				fi
			done
			bench_plot "$OUT/pipeline-$wait-journal-$journal-$ps.svg" "fixvenue pipeline: wait $wait, journal $journal, $ps, $MIX" \
				"due time → last event at the outbound stand-in; $(nproc) CPUs" "${plot_args[@]}"
		done
	done
done

if [ ${#jsons[@]} -gt 0 ]; then
	"$BIN" bench table "${jsons[@]}" >> "$OUT/summary.md"
fi
cat "$OUT/summary.md"
