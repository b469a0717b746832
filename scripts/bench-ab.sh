#!/usr/bin/env bash
# The microbenchmarks of `make bench` for an older commit against this tree,
# in one run: both builds' test binaries run each benchmark alternately, old
# and new back to back (which goes first flips every round), ROUNDS rounds of
# -count 1, so that the load of a shared machine falls on both sides alike;
# benchstat then gives old → new per benchmark. A benchmark only one side has
# is left out. Usage: scripts/bench-ab.sh REV [ROUNDS] [BENCHTIME]
#
# REV is checked out in a temporary git worktree that is removed at exit.
# The raw rounds and the benchstat table go to docs/bench/ab/ (ab-<REV>-<UTC
# stamp>.txt; BENCH_AB_DIR=DIR writes them elsewhere).
set -euo pipefail

REV=${1:?usage: scripts/bench-ab.sh REV [ROUNDS] [BENCHTIME]}
ROUNDS=${2:-6}
BENCHTIME=${3:-1s}
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
PKGS=(core core/ring sbe/venue journal marketdata gateway/edge)

cd "$(dirname "$0")/.."
here=$(pwd)
head=$(git rev-parse --short HEAD)
work=$(mktemp -d)
cleanup() {
	git worktree remove --force "$work/old" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
git worktree add --detach "$work/old" "$REV" >/dev/null

# build SIDE SRC: one test binary per package of PKGS, under $work/SIDE.
build() {
	local side=$1 src=$2 p
	mkdir -p "$work/$side"
	for p in "${PKGS[@]}"; do
		(cd "$src" && go test -c -o "$work/$side/${p//\//_}.test" "./$p")
	done
}
echo "bench-ab.sh: building $REV and $head (working tree)" >&2
build old "$work/old"
build new "$here"

# run SIDE SRC PKG BENCH: one benchmark (with its sub-benchmarks) once, in
# its package's folder.
run() {
	local side=$1 src=$2 p=$3 bench=$4
	# A benchmark that fails is said on stderr; the others still count.
	if ! (cd "$src/$p" && "$work/$side/${p//\//_}.test" -test.run '^$' -test.bench "^$bench\$" \
		-test.benchmem -test.count 1 -test.benchtime "$BENCHTIME" -test.timeout 20m) >"$work/run.txt" 2>&1; then
		echo "bench-ab.sh: $side $p $bench failed:" >&2
		grep -v '^Benchmark' "$work/run.txt" | tail -5 >&2
	fi
	grep -E '^(Benchmark|goos|goarch|pkg|cpu)' "$work/run.txt" >>"$work/$side.txt" || true
}
for round in $(seq 1 "$ROUNDS"); do
	echo "bench-ab.sh: round $round of $ROUNDS (load $(cut -d' ' -f1 /proc/loadavg))" >&2
	for p in "${PKGS[@]}"; do
		for bench in $(comm -12 <("$work/old/${p//\//_}.test" -test.list '^Benchmark' | sort) \
			<("$work/new/${p//\//_}.test" -test.list '^Benchmark' | sort)); do
			if ((round % 2)); then
				run old "$work/old" "$p" "$bench"
				run new "$here" "$p" "$bench"
			else
				run new "$here" "$p" "$bench"
				run old "$work/old" "$p" "$bench"
			fi
		done
	done
done

out=${BENCH_AB_DIR:-docs/bench/ab}
mkdir -p "$out"
report=$out/ab-$REV-$(date -u +%Y%m%dT%H%M%SZ).txt
{
	echo "# scripts/bench-ab.sh $REV $ROUNDS $BENCHTIME: old=$REV new=$head, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "# cpu: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), nproc $(nproc), $(go version)"
	go run "$BENCHSTAT" old="$work/old.txt" new="$work/new.txt"
	echo
	echo "# raw rounds, old then new"
	cat "$work/old.txt" "$work/new.txt"
} >"$report"
sed '/^# raw rounds/q' "$report"
echo "bench-ab.sh: report in $report" >&2
