#!/usr/bin/env bash
# Summarises a directory of run JSONs named RATE-LOCK-WAIT-rROUND.json (as
# written by scripts/bench-matcher-thread.sh): one Markdown row per
# (rate, lock, wait) with the median [min-max] over rounds of p50, p99 and
# the venue's CPU per order sent, and the answers lost in all rounds.
#
#   scripts/lib/cells.sh DIR
set -euo pipefail
dir=$1
echo "| orders/s | locked | wait | rounds | p50 µs median [range] | p99 ms median [range] | CPU µs/order median [range] | lost |"
echo "|---:|---|---|---:|---|---|---|---:|"
for f in "$dir"/*.json; do
	jq -c --arg name "$(basename "$f" .json)" '{cell: ($name | sub("-r[0-9]+$"; "")), p50: .latency.p50_us, p99: (.latency.p99_us / 1000),
		cpu: (.venue_cpu_s * 1e6 / ([.orders_sent, 1] | max)), lost: (.lost_orders + .lost_cancels)}' "$f"
done | jq -rs '
def med: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def r(f): "\(f | med | . * 100 | round / 100) [\(f | min | . * 100 | round / 100)-\(f | max | . * 100 | round / 100)]";
group_by(.cell) | sort_by(.[0].cell | split("-") | [(.[0] | tonumber), .[1], .[2]]) | .[] |
(.[0].cell | split("-")) as $k |
"| \($k[0]) | \($k[1]) | \($k[2]) | \(length) | \(r(map(.p50))) | \(r(map(.p99))) | \(r(map(.cpu))) | \(map(.lost) | add) |"'
