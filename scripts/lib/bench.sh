# The set-up the benchmark scripts share. Sourced, not run, from the
# repository root:
#
#   . scripts/lib/bench.sh
#   bench_bin SCRIPT
#       Sets BIN (default bin/fixvenue); when it is not built, says so on
#       stderr, naming SCRIPT, and exits 1.
#   bench_out NAME
#       Sets stamp (the UTC time, e.g. 20260102T030405Z) and OUT (default
#       docs/bench/NAME/$stamp), and makes the directory OUT.
#   bench_machine
#       Prints the CPU model, the CPU count, the kernel and the Go version.
#   bench_loadavg
#       Prints the 1, 5 and 15 minute load averages ("unknown" without /proc).
#   bench_limit D...
#       Sources duration.sh and sets limit, the bound in seconds of one run:
#       the sum of the durations D plus RUN_GRACE seconds.
#   bench_venue NAME
#       For a script bench-NAME.sh that runs venues and load against them:
#       bench_bin and bench_out NAME first; then gives the knobs of a load run's bounds their defaults when unset
#       (WARMUP 2s, DRAIN 5s, RUN_GRACE 60, START_TIMEOUT 60; the script sets
#       DURATION); sources venue.sh, with VENUE_BIN=$BIN and
#       VENUE_START_TIMEOUT=$START_TIMEOUT; makes the work directory and the
#       traps (venue_workdir bench-NAME), its path in work; sets limit (bench_limit)
#       for DURATION+WARMUP+DRAIN.
#   bench_plot SVG TITLE SUBTITLE RUNG...
#       Plots the rungs of a rate ladder (RATE/s=HGRM, as `fixvenue bench plot`
#       takes them) into SVG, the date appended to SUBTITLE; nothing when no
#       rung ran.

bench_bin() {
	BIN=${BIN:-bin/fixvenue}
	[ -x "$BIN" ] || { echo "$1: $BIN not built (make build)" >&2; exit 1; }
}

bench_out() {
	stamp=$(date -u +%Y%m%dT%H%M%SZ)
	OUT=${OUT:-docs/bench/$1/$stamp}
	mkdir -p "$OUT"
}

bench_machine() {
	echo "$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), nproc $(nproc), kernel $(uname -r), $(go version | cut -d' ' -f3)"
}

bench_loadavg() {
	cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown
}

bench_limit() {
	. scripts/lib/duration.sh
	limit=$(($(duration_sum_s "$@") + RUN_GRACE))
}

bench_venue() {
	bench_bin "bench-$1.sh"
	bench_out "$1"
	WARMUP=${WARMUP:-2s}
	DRAIN=${DRAIN:-5s}
	RUN_GRACE=${RUN_GRACE:-60}
	START_TIMEOUT=${START_TIMEOUT:-60}
	VENUE_BIN=$BIN
	VENUE_START_TIMEOUT=$START_TIMEOUT
	. scripts/lib/venue.sh
	venue_workdir "bench-$1"
	work=$venue_work
	bench_limit "$DURATION" "$WARMUP" "$DRAIN"
}

bench_plot() {
	local svg=$1 title=$2 subtitle=$3
	shift 3
	[ $# -gt 0 ] || return 0
	"$BIN" bench plot --out "$svg" --title "$title" --subtitle "$subtitle; $(date -u +%Y-%m-%d)" "$@"
}
