#!/usr/bin/env bash
# How the matcher thread should wait, measured over FIX: every combination of
# a locked or unlocked matcher thread and a wait strategy (spin, yield, park,
# spinpark), at each rate, in interleaved rounds (round 1 runs every cell
# once, then round 2, ...) so that the machine's load drifts over all cells
# alike. Each cell is one scripts/fix-run.sh run (fresh venue, fsync batch,
# passive mix); its JSON (with the venue's CPU) goes to OUT, and the end
# prints a table per rate: median and range over rounds of p50, p99 and CPU
# per order, and lost answers. docs/benchmarks.md, "Locked matcher thread".
#
#   scripts/bench-matcher-thread.sh
#
# Environment: RATES (default "5000 10000"), SESSIONS (4), ROUNDS (3),
# WAITS ("spin yield park spinpark"), LOCKS ("true false"), DUR (8s),
# WARMUP (2s), OUT (default docs/bench/matcher-thread/<UTC stamp>).
set -euo pipefail
cd "$(dirname "$0")/.."
trap 'exit 130' INT # as in bench-fix-floor.sh
RATES=${RATES:-"5000 10000"}
SESSIONS=${SESSIONS:-4}
ROUNDS=${ROUNDS:-3}
WAITS=${WAITS:-"spin yield park spinpark"}
LOCKS=${LOCKS:-"true false"}
export DUR=${DUR:-8s} WARMUP=${WARMUP:-2s}
. scripts/lib/bench.sh
bench_out matcher-thread
make build >/dev/null
# A copy of the venue, so that a rebuild during the run changes no cell.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp bin/fixvenue "$work/fixvenue"
export VBIN=$work/fixvenue
echo "bench-matcher-thread.sh: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), rounds $ROUNDS, rates $RATES, $SESSIONS sessions, $DUR each -> $OUT" >&2
for round in $(seq "$ROUNDS"); do
	for rate in $RATES; do
		for lock in $LOCKS; do
			for wait in $WAITS; do
				name=$rate-$lock-$wait-r$round
				echo "bench-matcher-thread.sh: $name" >&2
				LOCK=$lock JSON=$OUT/$name.json scripts/fix-run.sh "$wait" batch "$rate" "$SESSIONS" > "$OUT/$name.txt" 2>&1 ||
					echo "bench-matcher-thread.sh: $name failed (see $OUT/$name.txt)" >&2
			done
		done
	done
done
scripts/lib/cells.sh "$OUT" | tee "$OUT/summary.md"
