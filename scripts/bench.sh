#!/usr/bin/env bash
# Microbenchmarks of the venue's hot paths (codecs, matcher, rings, journal,
# market data, FIX edge) with -benchmem, COUNT runs each, summarized with
# benchstat. Usage: scripts/bench.sh [COUNT] [BENCHTIME]   (make bench)
#
# Raw output goes to docs/bench/micro/micro-<UTC stamp>.txt (with the
# machine's description at the top) and is copied to latest.txt; the
# benchstat summary goes next to it as .benchstat.txt. Packages run one at a
# time (-p 1) so that benchmarks never compete with each other for the CPU.
set -euo pipefail

COUNT=${1:-6}
BENCHTIME=${2:-1s}
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
# Bound the whole run: a hung benchmark must not hold the machine.
TIMEOUT=${BENCH_TIMEOUT:-60m}

cd "$(dirname "$0")/.."
out=docs/bench/micro
mkdir -p "$out"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw=$out/micro-$stamp.txt

pkgs=()
for p in ./core ./core/ring ./sbe/venue ./journal ./marketdata ./gateway/edge; do
	if [ -d "$p" ] && grep -qs '^func Benchmark' "$p"/*_test.go; then
		pkgs+=("$p")
	fi
done
if [ ${#pkgs[@]} -eq 0 ]; then
	echo "bench.sh: no package with benchmarks" >&2
	exit 1
fi

{
	echo "# fixvenue microbenchmarks, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "# count=$COUNT benchtime=$BENCHTIME packages: ${pkgs[*]}"
	echo "# cpu: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), nproc $(nproc), kernel $(uname -r), $(go version)"
	echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
	echo "# commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
} > "$raw"

echo "bench.sh: ${pkgs[*]} (count $COUNT, benchtime $BENCHTIME) → $raw" >&2
go test -p 1 -run '^$' -bench . -benchmem -count "$COUNT" -benchtime "$BENCHTIME" -timeout "$TIMEOUT" "${pkgs[@]}" | tee -a "$raw"

# benchstat compares with the previous run when there is one (same machine
# or not: the header of each raw file says which).
inputs=("$stamp=$raw")
if [ -f "$out/latest.txt" ]; then
	prev=$(mktemp)
	trap 'rm -f "$prev"' EXIT
	cp "$out/latest.txt" "$prev"
	inputs=("previous=$prev" "$stamp=$raw")
fi
cp "$raw" "$out/latest.txt"

summary=${raw%.txt}.benchstat.txt
if go run "$BENCHSTAT" "${inputs[@]}" > "$summary" 2> "$summary.err"; then
	rm -f "$summary.err"
	cp "$summary" "$out/latest.benchstat.txt"
	echo
	echo "benchstat summary ($summary):"
	cat "$summary"
else
	echo "bench.sh: benchstat could not run ($(head -c 300 "$summary.err")); the raw output above is the result" >&2
	rm -f "$summary" "$summary.err"
fi
