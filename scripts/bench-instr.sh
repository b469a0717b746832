#!/usr/bin/env bash
# Instructions per iteration of the matcher's benchmarks, counted by
# valgrind's callgrind instead of timed. A count does not move with the
# machine's load, so two builds can be compared on a busy shared machine
# where ns/op swings by 50% from one run to the next.
#
# Usage: scripts/bench-instr.sh [SPEC...]        (make bench-instr [BENCH='SPEC ...'])
#   SPEC is Benchmark[/sub]:A:B, e.g. PassivePlaceCancel/depth=10:20000:60000.
#   Without a SPEC it counts the six matcher benchmarks of docs/benchmarks.md
#   ("Targets") and MixedFlow.
#
# Each benchmark runs twice under callgrind, for A and for B iterations
# (GOMAXPROCS=1 and asynchronous preemption off: callgrind serializes threads
# and does not survive Go's preemption signal). (B−A) iterations' worth of
# instructions, divided by B−A, is one iteration: setup, the first b.N=1
# round and process start-up cancel out. It prints, per benchmark, the
# matcher's instructions and the harness's, the share of each part of the
# order path and the costliest functions
# (code the compiler inlined counts in the function it was inlined into).
# The harness's own work (stamping ClOrdIDs, the event sink, the untimed
# checks after the loop, an EndOfDay if a count reaches one, the runtime) is
# shown apart: it is not the matcher's, and it is the one line that varies
# from run to run (the runtime's background work grows with wall time, which
# valgrind stretches on a busy machine). The matcher's counts repeat within
# about 0.5%. The collector is off: the timed loops do not allocate.
# BENCH_INSTR_TOP=N lists N functions instead of 12.
#
# The report goes to stdout and to docs/bench/instr/instr-<UTC stamp>.txt
# (latest.txt is a copy; BENCH_INSTR_DIR=DIR writes them elsewhere), with the
# commit and machine at the top. Ctrl-C stops it (exit 130), writing no
# report.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in valgrind callgrind_annotate; do
	if ! command -v "$tool" >/dev/null; then
		echo "bench-instr.sh: $tool not found; install valgrind (Debian: apt-get install valgrind)" >&2
		exit 2
	fi
done

specs=("$@")
if [ ${#specs[@]} -eq 0 ]; then
	# Neither count reaches the benchmarks' untimed EndOfDay (their day holds
	# 65,536 ClOrdIDs, less the book's: 1, 2 and 13 new ones per iteration)
	# or MixedFlow's untimed restart (its stream is 200,000 commands), so
	# only timed work is counted.
	specs=(
		PassivePlaceCancel/depth=10:20000:60000
		PassivePlaceCancel/depth=1000:10000:50000
		AggressiveFillRefill/depth=10:5000:30000
		AggressiveFillRefill/depth=1000:5000:25000
		MarketSweep3Levels/depth=10:1000:4500
		MarketSweep3Levels/depth=1000:1000:4000
		MixedFlow:50000:190000
	)
fi
for spec in "${specs[@]}"; do
	if ! [[ $spec =~ ^[A-Za-z0-9_]+(/[A-Za-z0-9_=.-]+)?:[0-9]+:[0-9]+$ ]]; then
		echo "bench-instr.sh: bad SPEC '$spec': want Benchmark[/sub]:A:B with A < B, e.g. PassivePlaceCancel/depth=10:20000:60000" >&2
		exit 2
	fi
	IFS=: read -r _ a b <<<"$spec"
	if [ "$a" -ge "$b" ]; then
		echo "bench-instr.sh: bad SPEC '$spec': A ($a) must be below B ($b)" >&2
		exit 2
	fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Ctrl-C: exit 130 (through the exit trap) once the command running
# returns, where the script went on to its next count.
trap 'exit 130' INT
bin=$work/core.test
echo "bench-instr.sh: building the core benchmarks" >&2
go test -c -o "$bin" ./core

# count SPEC_NAME N OUT: callgrind's per-function totals for N iterations,
# as "instructions function" lines.
count() {
	local name=$1 n=$2 out=$3 re
	re="^Benchmark${name%%/*}\$"
	if [[ $name == */* ]]; then
		re="$re/^${name#*/}\$"
	fi
	# --foreground: in a process group of its own (timeout's default)
	# valgrind never saw Ctrl-C and counted to the end, every benchmark's
	# runs after it too (bench-latency.sh).
	if ! GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 timeout --foreground 30m valgrind --tool=callgrind \
		--callgrind-out-file="$work/cg.out" "$bin" -test.run '^$' -test.bench "$re" \
		-test.benchtime "${n}x" >"$work/run.log" 2>&1; then
		echo "bench-instr.sh: $name with $n iterations failed under valgrind:" >&2
		tail -20 "$work/run.log" >&2
		exit 1
	fi
	if ! grep -q "^Benchmark${name%%/*}" "$work/run.log"; then
		echo "bench-instr.sh: no benchmark matched '$name'" >&2
		exit 1
	fi
	# Lines look like "1,234 ( 5.6%)  /path/file.go:pkg.(*T).method [/obj]";
	# inlined code has no " [obj]". Keep the count and the function.
	callgrind_annotate --auto=no --threshold=100 "$work/cg.out" |
		sed -nE '/PROGRAM TOTALS/d; s/^ *([0-9,]+) +\([^)]*\) +[^:]*:(.*)$/\1 \2/p' |
		sed -E "s/ \[[^]]*\]\$//; s#github.com/fixvenue/fixvenue/##; s/'[0-9]+\$//" |
		awk '{n=$1; gsub(",", "", n); $1=""; sub(/^ /, ""); gsub(/ /, "_"); s[$0]+=n} END {for (f in s) print s[f], f}' \
			>"$out"
	rm -f "$work/cg.out"
}

# part FUNCTION: which part of the order path a function belongs to.
part_awk='
function part(f) {
	if (f ~ /stampedCmd|^core\.Benchmark|ringSink|BufferSink|flowTracker|workload|[mM]ixedFlow|^math\/rand|endOfDay|clOrdIndex\)\.compact|newInstrument|CheckInvariants|Matcher\)\.check[A-Z]|^runtime\.|^testing\.|^gc|^go/) return "harness"
	if (f ~ /clOrdKey|clOrdIndex|locate|keepState/) return "ClOrdID keys, table and records"
	if (f ~ /listOrder|unlistOrder/) return "session and all-orders lists"
	if (f ~ /emit|putReport|putAccount|loadAccount/) return "events"
	if (f ~ /decode/) return "command decode"
	if (f ~ /bookSide|levelBitmap|match|trade|nextBest|fokFillable|wouldTake/) return "book and matching"
	return "validation, dispatch and order lifecycle"
}'

stamp=$(date -u +%Y%m%dT%H%M%SZ)
dir=${BENCH_INSTR_DIR:-docs/bench/instr}
mkdir -p "$dir"
report=$dir/instr-$stamp.txt
{
	echo "# fixvenue matcher instructions per iteration (callgrind), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- '*.go' go.mod go.sum 2>/dev/null || echo ' (with local changes to the Go code)'), $(go version), $(valgrind --version)"
	echo "# cpu: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), nproc $(nproc)"
} >"$work/report"

for spec in "${specs[@]}"; do
	IFS=: read -r name a b <<<"$spec"
	echo "bench-instr.sh: $name ($a and $b iterations)" >&2
	count "$name" "$a" "$work/a"
	count "$name" "$b" "$work/b"
	# Per function: (count at B − count at A) / (B − A).
	# Every function counts, even one that ran less in the longer run (the
	# runtime's background work, say), so the parts add up to the total.
	awk -v n=$((b - a)) 'NR==FNR {a[$2]=$1; next} {d[$2]=($1-a[$2])/n; delete a[$2]}
		END {for (f in a) d[f]=-a[f]/n; for (f in d) printf "%.2f %s\n", d[f], f}' \
		"$work/a" "$work/b" | sort -rn >"$work/per"
	{
		echo
		awk -v name="$name" "$part_awk"'{t+=$1; if (part($2) !~ /^harness/) m+=$1}
			END {printf "%s: %.0f instructions per iteration in the matcher (%.0f with the harness)\n", name, m, t}' "$work/per"
		awk "$part_awk"'{p=part($2); if (p !~ /^harness/) {s[p]+=$1; t+=$1}}
			END {for (k in s) printf "  %7.0f %5.1f%%  %s\n", s[k], 100*s[k]/t, k}' "$work/per" | sort -rn
		awk "$part_awk"'{if (part($2) ~ /^harness/) h+=$1} END {printf "  %7.0f         harness: stamping, sink, untimed checks, runtime (not the matcher'"'"'s)\n", h}' "$work/per"
		echo "  costliest functions:"
		head -${BENCH_INSTR_TOP:-12} "$work/per" | awk '{printf "  %7.1f  %s\n", $1, $2}'
	} | tee -a "$work/report"
done
cp "$work/report" "$report"
cp "$report" "$dir/latest.txt"
echo >&2
echo "bench-instr.sh: report in $report" >&2
