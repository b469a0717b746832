#!/usr/bin/env bash
# Interoperability with an independent FIX engine: QuickFIX/C++ (Debian
# package libquickfix-dev) logs on to `fixvenue serve`, trades, cancels and
# logs out (interop/quickfixcpp/initiator.cpp says what it checks).
#
# Steps: install libquickfix-dev and g++ with apt-get when they are missing
# (needs root or sudo; nothing happens when they are there), compile the
# initiator into bin/fixvenue-qfcpp when its source is newer, build
# bin/fixvenue when it is missing, start the venue on a port the OS chooses
# with a fresh temporary data directory, run the initiator against it, stop
# the venue. The exit status is the initiator's (0: every expectation held).
#
# Bounds: the venue's start-up waits START_TIMEOUT seconds, the initiator
# RUN_TIMEOUT seconds (it has its own 30 s deadline), the venue's stop 10 s.
# Knobs (environment): BIN (the fixvenue binary), START_TIMEOUT, RUN_TIMEOUT.
set -euo pipefail

START_TIMEOUT=${START_TIMEOUT:-60}
RUN_TIMEOUT=${RUN_TIMEOUT:-60}

cd "$(dirname "$0")/.."
BIN=${BIN:-bin/fixvenue}
QF_SRC=interop/quickfixcpp/initiator.cpp
QF_BIN=bin/fixvenue-qfcpp

say() { echo "interop.sh: $*" >&2; }

# install_quickfix installs the library and a C++ compiler if either is absent.
install_quickfix() {
	if [ -f /usr/include/quickfix/Application.h ] && command -v g++ >/dev/null 2>&1; then
		return
	fi
	local sudo=
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null 2>&1 || { say "libquickfix-dev is missing and installing it needs root (apt-get install libquickfix-dev g++)"; exit 2; }
		sudo="sudo -n"
	fi
	say "installing libquickfix-dev and g++ (apt-get)"
	# env after sudo: sudo drops the caller's environment.
	apt() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get -y -qq "$@"; }
	local log
	log=$(mktemp "${TMPDIR:-/tmp}/fixvenue-interop-apt.XXXXXX")
	# Try with the package lists the machine has; refresh them only if that fails.
	if ! apt install --no-install-recommends libquickfix-dev g++ >"$log" 2>&1; then
		if ! { apt update && apt install --no-install-recommends libquickfix-dev g++; } >"$log" 2>&1; then
			say "apt-get could not install libquickfix-dev g++:"
			cat "$log" >&2
			rm -f "$log"
			exit 2
		fi
	fi
	rm -f "$log"
}

install_quickfix

mkdir -p bin
if [ ! -x "$QF_BIN" ] || [ "$QF_SRC" -nt "$QF_BIN" ]; then
	say "compiling $QF_BIN"
	# gnu++14: the QuickFIX/C++ 1.15 headers use dynamic exception
	# specifications, which C++17 removed.
	g++ -std=gnu++14 -O1 -Wall -Wno-deprecated -o "$QF_BIN.tmp" "$QF_SRC" -lquickfix -lpthread
	mv "$QF_BIN.tmp" "$QF_BIN"
fi
if [ ! -x "$BIN" ]; then
	say "building $BIN"
	go build -o "$BIN" ./cmd/fixvenue
fi

VENUE_BIN=$BIN
VENUE_START_TIMEOUT=$START_TIMEOUT
. scripts/lib/venue.sh
venue_workdir interop
work=$venue_work

venue_start "$work/venue.log" --config interop/quickfixcpp/venue.toml --data "$work/data" --metrics-addr off || exit 2
addr=$venue_fix_addr
say "venue serving FIX on $addr"

status=0
timeout --kill-after=5 "$RUN_TIMEOUT" "$QF_BIN" interop/quickfixcpp/initiator.cfg \
	--connect "$addr" --dictionary gateway/spec/FIX44.xml || status=$?
if [ "$status" != 0 ]; then
	say "the QuickFIX/C++ initiator failed (status $status); the venue's log:"
	cat "$work/venue.log" >&2
fi
exit "$status"
