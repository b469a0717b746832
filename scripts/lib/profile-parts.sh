#!/usr/bin/env bash
# Splits a CPU profile of the venue by part of the order path: the share of
# all samples whose stack passes through each part (a sample can pass through
# two parts, e.g. the sender calling into QuickFIX/Go's send path, so the
# column does not add up to 100%).
#
#   scripts/lib/profile-parts.sh BINARY PROFILE [SAMPLE_INDEX]
#
# SAMPLE_INDEX (e.g. alloc_objects) reads an allocation profile instead
# (fixvenue serve --memprofile).
set -euo pipefail
bin=$1 prof=$2
idx=()
[ -n "${3:-}" ] && idx=(-sample_index="$3" -ignore 'buildSessions|server\.New|doInit')
parts=(
	"QuickFIX/Go session loop (validation, parsing, FromApp)|quickfix\.\(\*session\)\.run$"
	"  of which data-dictionary validation|quickfix\.validateFIX"
	"  of which parsing|quickfix\.ParseMessageWithDataDictionary"
	"  of which the gateway's FromApp (checks, encode, publish)|gateway\.\(\*application\)\.FromApp"
	"QuickFIX/Go send path (on the gateway's senders)|quickfix\.SendToTarget"
	"QuickFIX/Go reader|quickfix\.readLoop"
	"QuickFIX/Go writer|quickfix\.writeLoop"
	"gateway sender goroutines (pacing, hand-off)|gateway\.\(\*sender\)\.run"
	"gateway outbound (ExecutionReports)|gateway\.\(\*Gateway\)\.RunOutbound"
	"FIX edge (framing, socket reads and writes)|gateway/edge\."
	"matcher goroutine|pipeline\.\(\*Pipeline\)\.runMatcher"
	"journal goroutine (append, fdatasync)|pipeline\.\(\*Pipeline\)\.runJournal"
	"FIX store (records, fdatasync)|gateway/fixstore\."
	"market data feed|fixvenue/marketdata\."
	"garbage collector|runtime\.gcBgMarkWorker"
	"scheduler (find work, park, wake threads)|runtime\.schedule$"
	"fdatasync, all callers|syscall\.Fdatasync|unix\.Fdatasync"
)
total=$(go tool pprof -top -nodecount=1 "$bin" "$prof" 2>/dev/null | sed -n 's/.*Total samples = \([^ ]*\).*/\1/p' | head -1)
echo "| part | share of ${3:-CPU} samples |"
echo "|---|---:|"
for p in "${parts[@]}"; do
	name=${p%%|*} re=${p#*|}
	# With a focus, the first row of -top -cum is the stacks' root: its cum% is the part's share.
	share=$(go tool pprof "${idx[@]}" -top -cum -nodecount=1 -focus "$re" "$bin" "$prof" 2>/dev/null | awk '$5 ~ /^[0-9.]+%$/ { print $5; exit }')
	echo "| $name | ${share:-0%} |"
done
echo
echo "Total samples: $total"
