#!/usr/bin/env bash
# One measured FIX run: starts bin/fixvenue serve (demo config, throttles off,
# the given wait strategy and fsync policy, a fresh data directory), drives it
# with bin/fixvenue load (passive mix), prints the load generator's summary
# and the venue's round-trip and durability-wait metrics, and stops the venue.
#
#   scripts/fix-run.sh WAIT FSYNC RATE SESSIONS      e.g. scripts/fix-run.sh park batch 5000 4
#
# Environment: DUR (default 10s), WARMUP (2s), VBIN (venue binary, default
# bin/fixvenue), VGMP (the venue's GOMAXPROCS, default 2), EXTRA (more serve
# flags, e.g. --cpuprofile F), PORT_BASE (default 29000: FIX on +878, metrics
# on +464, market data on +500/+501, all on 127.0.0.1), VGODEBUG (the venue's
# GODEBUG, e.g. gctrace=1), KEEPLOG (copy the venue's log to this file),
# LOCK (false: the matcher goroutine is not locked to its OS thread).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 4 ] || { echo "usage: $0 WAIT FSYNC RATE SESSIONS" >&2; exit 2; }
wait=$1 fsync=$2 rate=$3 sessions=$4
base=${PORT_BASE:-29000}
vbin=${VBIN:-bin/fixvenue}
[ -x "$vbin" ] || make build >/dev/null
dir=$(mktemp -d)
trap 'kill -INT $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; [ -n "${KEEPLOG:-}" ] && cp "$dir/serve.log" "$KEEPLOG"; rm -rf "$dir"' EXIT
cat > "$dir/venue.toml" <<TOML
[journal]
fsync = "$fsync"
[engine]
wait_strategy = "$wait"
lock_os_thread = ${LOCK:-true}
[session_defaults]
orders_per_second_reject = 0
cancels_per_second_reject = 0
messages_per_second_logout = 0
TOML
GODEBUG=${VGODEBUG:-} GOMAXPROCS=${VGMP:-2} "$vbin" serve --config "$dir/venue.toml" --data "$dir/data" \
	--fix-addr 127.0.0.1:$((base + 878)) --metrics-addr 127.0.0.1:$((base + 464)) \
	--md-addr 127.0.0.1:$((base + 500)) --md-recovery-addr 127.0.0.1:$((base + 501)) ${EXTRA:-} > "$dir/serve.log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "fixvenue serving" "$dir/serve.log" && break; sleep 0.1; done
echo "== wait=$wait fsync=$fsync rate=$rate sessions=$sessions"
bin/fixvenue load --addr 127.0.0.1:$((base + 878)) --sessions "$sessions" --rate "$rate" \
	--duration "${DUR:-10s}" --warmup "${WARMUP:-2s}" --mix passive --quiet || true
curl -s "127.0.0.1:$((base + 464))/metrics" | grep -E "round_trip_seconds_(sum|count)|durable_wait_seconds_(sum|count)" || true
