#!/usr/bin/env bash
# One measured FIX run: starts bin/fixvenue serve (demo config, throttles off,
# the given wait strategy and fsync policy, a fresh data directory), drives it
# with bin/fixvenue load (passive mix), prints the load generator's summary
# and the venue's round-trip and durability-wait metrics, and stops the venue.
#
#   scripts/fix-run.sh WAIT FSYNC RATE SESSIONS      e.g. scripts/fix-run.sh auto batch 5000 4
#
# WAIT is engine.wait_strategy: auto (the venue's default, chosen by CPU
# count), spin, yield, park or spinpark.
#
# Environment: DUR (default 10s), WARMUP (2s), VBIN (venue binary, default
# bin/fixvenue), VGMP (the venue's GOMAXPROCS, default 2), EXTRA (more serve
# flags, e.g. --cpuprofile F), PORT_BASE (default 29000: the market data feed
# is sent to 127.0.0.1:PORT_BASE+500; FIX, metrics and recovery listen on
# loopback ports the OS chooses, read from the venue's ready file), VGODEBUG (the venue's
# GODEBUG, e.g. gctrace=1), VGOGC (the venue's GOGC; unset: the venue's own heap goal, engine.gc_headroom_bytes), KEEPLOG (copy the venue's log to this file),
# LOCK (true or false: lock the matcher goroutine to its OS thread; unset: the
# venue's default, locked), JSON (write the load generator's result
# as JSON to this file, with the venue's CPU (its system part), allocations and GC cycles over
# the run added as venue_cpu_s, venue_sys_s, venue_mallocs, venue_alloc_bytes, venue_gcs,
# venue_voluntary_switches), LOADTIME (a
# command prefix for the load generator, e.g. "/usr/bin/time -f %U+%S" for its CPU),
# LBIN (the load generator's binary, default bin/fixvenue),
# ENGINE_EXTRA (more lines for the [engine] table, e.g. "event_ring_slots = 1024").
# Exits 1 when the venue does not start or the load generator cannot run (its
# status 1 or 2; a run that did not hold, 3, is a measurement like any other).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 4 ] || { echo "usage: $0 WAIT FSYNC RATE SESSIONS" >&2; exit 2; }
wait=$1 fsync=$2 rate=$3 sessions=$4
base=${PORT_BASE:-29000}
vbin=${VBIN:-bin/fixvenue} lbin=${LBIN:-bin/fixvenue}
[ -x "$vbin" ] && [ -x "$lbin" ] || make build >/dev/null
VENUE_BIN=$vbin
. scripts/lib/venue.sh
dir=$(mktemp -d)
trap 'venue_stop; [ -n "${KEEPLOG:-}" ] && cp "$dir/serve.log" "$KEEPLOG"; rm -rf "$dir"' EXIT
# Ctrl-C: exit 130 (through the exit trap) once the command running returns.
# The load generator handles the signal and ends normally, and the script
# went on (and its caller, bench-fix-floor.sh, on to the next cell).
trap 'exit 130' INT
cat > "$dir/venue.toml" <<TOML
[journal]
fsync = "$fsync"
[engine]
wait_strategy = "$wait"
${LOCK:+lock_os_thread = $LOCK}
${ENGINE_EXTRA:-}
$(venue_throttles_off)
TOML
# The venue's GOGC: VGOGC, else none, so that the venue sets its own (README, "Memory").
saved_gogc=${GOGC-}
if [ -n "${VGOGC:-}" ]; then export GOGC=$VGOGC; else unset GOGC; fi
# shellcheck disable=SC2086 # EXTRA is a list of flags
GODEBUG=${VGODEBUG:-} GOMAXPROCS=${VGMP:-2} venue_start "$dir/serve.log" --config "$dir/venue.toml" --data "$dir/data" \
	--fix-addr 127.0.0.1:0 --metrics-addr 127.0.0.1:0 \
	--md-addr 127.0.0.1:$((base + 500)) --md-recovery-addr 127.0.0.1:0 ${EXTRA:-}
if [ -n "$saved_gogc" ]; then export GOGC=$saved_gogc; else unset GOGC; fi
metrics=$venue_metrics_addr
# scrape NAME...: the values of unlabelled metrics, space-separated, in order.
scrape() {
	curl -s "$metrics/metrics" | awk -v names="$*" '
	BEGIN { n = split(names, want, " ") } { v[$1] = $2 }
	END { for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? " " : ""), (want[i] in v ? v[want[i]] : 0); print "" }'
}
mem=(go_memstats_mallocs_total go_memstats_alloc_bytes_total go_gc_duration_seconds_count)
read -r mallocs0 bytes0 gcs0 < <(scrape "${mem[@]}")
parks0=$(scrape fixvenue_matcher_parks_total)
cpu0=$(proc_cpu_s "$venue_pid")
read -r vsw0 isw0 < <(proc_ctxsw "$venue_pid")
read -r flt0 sys0 < <(proc_faults "$venue_pid")
echo "== wait=$wait fsync=$fsync rate=$rate sessions=$sessions lock=${LOCK:-default} (venue CPU at start $cpu0 s)"
load=("$lbin" load --addr "$venue_fix_addr" --sessions "$sessions" --rate "$rate"
	--duration "${DUR:-10s}" --warmup "${WARMUP:-2s}" --mix passive --quiet)
rc=0
if [ -n "${JSON:-}" ]; then
	${LOADTIME:-} "${load[@]}" --json > "$JSON.load" || rc=$?
else
	${LOADTIME:-} "${load[@]}" || rc=$?
fi
# A run that held (0) or not (3) measured the venue; any other status is a
# run that could not run, whose empty result the figures after it hid (and
# JSON was left empty, the script exiting 0).
[ "$rc" = 0 ] || [ "$rc" = 3 ] || { echo "fix-run.sh: the load generator failed (status $rc)" >&2; exit 1; }
cpu1=$(proc_cpu_s "$venue_pid")
read -r vsw1 isw1 < <(proc_ctxsw "$venue_pid")
read -r flt1 sys1 < <(proc_faults "$venue_pid")
read -r mallocs1 bytes1 gcs1 < <(scrape "${mem[@]}")
read -r orders cancels < <(scrape fixvenue_orders_total fixvenue_cancels_total)
parks1=$(scrape fixvenue_matcher_parks_total)
# The venue's CPU and allocations per order, from the start of the load to its
# end (robust to a noisy machine, unlike latency; allocations are exact).
awk -v c0="$cpu0" -v c1="$cpu1" -v m0="$mallocs0" -v m1="$mallocs1" -v b0="$bytes0" -v b1="$bytes1" -v g0="$gcs0" -v g1="$gcs1" -v o="$orders" -v x="$cancels" '
BEGIN { if (o > 0) printf "venue CPU %.2f s for %d orders + %d cancels: %.1f µs per order; %.1f allocations, %.0f bytes per order; %d GC cycles\n",
	c1 - c0, o, x, (c1 - c0) * 1e6 / o, (m1 - m0) / o, (b1 - b0) / o, g1 - g0 }'
# Threads blocking and woken again (voluntary switches) per order: the
# hand-offs that cost a thread wake-up, counted by the kernel; and the
# matcher's parks (each ended by a wake-up of its thread), where the build
# counts them.
awk -v v0="$vsw0" -v v1="$vsw1" -v i0="$isw0" -v i1="$isw1" -v o="$orders" -v p0="$parks0" -v p1="$parks1" '
BEGIN { if (o > 0) printf "venue threads: %.2f voluntary, %.2f involuntary context switches per order%s\n", (v1 - v0) / o, (i1 - i0) / o,
	(p1 > 0 ? sprintf("; matcher parks %.2f per order", (p1 - p0) / o) : "") }'
# Minor page faults (fresh memory touched, mostly the allocator's) and the
# kernel's share of the CPU per order.
awk -v f0="$flt0" -v f1="$flt1" -v s0="$sys0" -v s1="$sys1" -v o="$orders" '
BEGIN { if (o > 0) printf "venue memory: %.2f minor page faults per order; system CPU %.1f µs per order\n", (f1 - f0) / o, (s1 - s0) * 1e6 / o }'
if [ -n "${JSON:-}" ]; then
	jq --argjson cpu "$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { printf "%.3f", b - a }')" \
		--argjson m "$(awk -v a="$mallocs0" -v b="$mallocs1" 'BEGIN { printf "%d", b - a }')" \
		--argjson b "$(awk -v a="$bytes0" -v b="$bytes1" 'BEGIN { printf "%d", b - a }')" \
		--argjson g "$(awk -v a="$gcs0" -v b="$gcs1" 'BEGIN { printf "%d", b - a }')" \
		--argjson sw "$((vsw1 - vsw0))" \
		--argjson sys "$(awk -v a="$sys0" -v b="$sys1" 'BEGIN { printf "%.3f", b - a }')" \
		'. + {venue_cpu_s: $cpu, venue_sys_s: $sys, venue_mallocs: $m, venue_alloc_bytes: $b, venue_gcs: $g, venue_voluntary_switches: $sw}' "$JSON.load" > "$JSON" && rm -f "$JSON.load"
	jq -r '"load: p50 \(.latency.p50_us) µs, p99 \(.latency.p99_us) µs, \(.orders_sent) orders sent, lost \(.lost_orders) orders and \(.lost_cancels) cancels"' "$JSON"
fi
# The venue's own histograms: count, mean and bucket-estimated p50/p99.
curl -s "$metrics/metrics" | awk '
/^fixvenue_[a-z_]*_bucket\{/ {
	name = $1; sub(/_bucket\{.*/, "", name); le = $1; sub(/.*le="/, "", le); sub(/".*/, "", le)
	n[name]++; bound[name, n[name]] = le; cum[name, n[name]] = $2 }
/^fixvenue_[a-z_]*_sum / { s = $1; sub(/_sum$/, "", s); sum[s] = $2 }
/^fixvenue_[a-z_]*_count / { c = $1; sub(/_count$/, "", c); count[c] = $2 }
function q(name, p,   i, t) { t = p * count[name]; for (i = 1; i <= n[name]; i++) if (cum[name, i] >= t) return bound[name, i]; return "inf" }
END { for (h in count) if (count[h] > 0 && (h, 1) in bound)
	printf "%-44s n %-9d mean %-12.6g p50<= %-10s p99<= %s\n", h, count[h], sum[h] / count[h], q(h, 0.5), q(h, 0.99) }' | sort || true
