# Start and stop `fixvenue serve` for the scripts. Sourced, not run:
#
#   . scripts/lib/venue.sh
#   venue_start LOG ARGS...
#       Starts "$VENUE_BIN serve --ready-file LOG.ready --admin-addr 127.0.0.1:0 ARGS..." in
#       the background (ARGS may give another --admin-addr, or off), its stdout and stderr
#       to LOG, and waits for the ready file the venue writes once it serves (at most
#       VENUE_START_TIMEOUT seconds, default 60). Then venue_pid, venue_fix_addr,
#       venue_metrics_addr, venue_admin_addr, venue_feed_addr and venue_recovery_addr hold
#       what the venue bound ("" for what is off). When the venue exits or the time runs
#       out, it prints LOG on stderr, stops the venue and returns 1.
#       Environment assignments before the call (GOMAXPROCS=2 venue_start ...) reach the venue.
#   venue_stop
#       Sends SIGTERM, waits up to VENUE_STOP_TIMEOUT seconds (default 10) for a clean
#       stop, then sends SIGKILL; waits for the process. Does nothing when none runs.
#
#   proc_cpu_s PID
#       Prints the process's CPU time so far (user + system, seconds) from /proc.
#   proc_stat PID
#       Prints the process's CPU seconds (user + system), system CPU seconds and
#       minor page faults so far (first touches of fresh memory, the allocator's
#       among them), from /proc; proc_faults prints the faults and the system
#       seconds.
#   proc_ctxsw PID
#       Prints the context switches of all the process's threads so far (voluntary:
#       a thread blocked, i.e. each later wake-up; then involuntary), from /proc.
#
#   venue_workdir NAME
#       Makes a temporary directory $TMPDIR/fixvenue-NAME.XXXXXX, its path in venue_work,
#       and sets the script's traps: at exit the venue stops and the directory goes;
#       SIGINT and SIGTERM exit 130 (through the exit trap).
#   venue_throttles_off
#       Prints the [session_defaults] table that turns the per-session throttles off, for a
#       venue configuration: a load generator offers more than the demo's limits (5,000
#       orders/s per session) allow, and a throttle reject is not what a benchmark measures.
#
# VENUE_BIN is the binary (default bin/fixvenue). The caller sets its own traps and calls
# venue_stop from them; one venue at a time per script.

VENUE_BIN=${VENUE_BIN:-bin/fixvenue}
VENUE_START_TIMEOUT=${VENUE_START_TIMEOUT:-60}
VENUE_STOP_TIMEOUT=${VENUE_STOP_TIMEOUT:-10}
venue_pid=

# venue_ready_field FILE KEY prints one value of the ready file (one line of JSON
# written by encoding/json: no spaces, addresses and the pid only).
venue_ready_field() {
	sed -n "s/.*\"$2\":\"\{0,1\}\([^\",}]*\).*/\1/p" "$1"
}

venue_start() {
	local log=$1
	shift
	local ready=$log.ready
	rm -f "$ready"
	# The admin listener (API and console) on an OS-chosen port unless "$@" says otherwise.
	"$VENUE_BIN" serve --ready-file "$ready" --admin-addr 127.0.0.1:0 "$@" >"$log" 2>&1 &
	venue_pid=$!
	local i
	for ((i = 0; i < VENUE_START_TIMEOUT * 10; i++)); do
		if [ -f "$ready" ]; then
			if [ "$(venue_ready_field "$ready" pid)" != "$venue_pid" ]; then
				echo "venue.sh: $ready names another process than $venue_pid" >&2
				break
			fi
			venue_fix_addr=$(venue_ready_field "$ready" fix_addr)
			venue_metrics_addr=$(venue_ready_field "$ready" metrics_addr)
			venue_feed_addr=$(venue_ready_field "$ready" feed_addr)
			venue_recovery_addr=$(venue_ready_field "$ready" recovery_addr)
			venue_admin_addr=$(venue_ready_field "$ready" admin_addr)
			return 0
		fi
		if ! kill -0 "$venue_pid" 2>/dev/null; then
			echo "venue.sh: the venue exited before serving; its log ($log):" >&2
			break
		fi
		sleep 0.1
	done
	((i < VENUE_START_TIMEOUT * 10)) || echo "venue.sh: the venue did not start serving within ${VENUE_START_TIMEOUT} s; its log ($log):" >&2
	cat "$log" >&2
	venue_stop
	return 1
}

venue_stop() {
	[ -n "$venue_pid" ] || return 0
	if kill -TERM "$venue_pid" 2>/dev/null; then
		local i
		for ((i = 0; i < VENUE_STOP_TIMEOUT * 10; i++)); do
			kill -0 "$venue_pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$venue_pid" 2>/dev/null; then
			echo "venue.sh: the venue did not stop within ${VENUE_STOP_TIMEOUT} s of SIGTERM; killing it" >&2
			kill -KILL "$venue_pid" 2>/dev/null || true
		fi
	fi
	wait "$venue_pid" 2>/dev/null || true # its status is the venue's, not ours
	venue_pid=
	return 0
}

proc_ctxsw() {
	cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ { v += $2 } /^nonvoluntary_ctxt_switches/ { n += $2 } END { print v + 0, n + 0 }'
}

# proc_stat PID: user + system CPU seconds, system CPU seconds and minor page
# faults, from /proc/PID/stat (after the parenthesised name, fields 10, 14 and
# 15 are $8, $12 and $13; times in clock ticks).
proc_stat() {
	local hz
	hz=$(getconf CLK_TCK)
	sed 's/.*) //' "/proc/$1/stat" | awk -v hz="$hz" '{ printf "%.3f %.3f %d\n", ($12 + $13) / hz, $13 / hz, $8 }'
}

proc_faults() { proc_stat "$1" | awk '{ print $3, $2 }'; }

proc_cpu_s() { proc_stat "$1" | awk '{ print $1 }'; }

venue_workdir() {
	venue_work=$(mktemp -d "${TMPDIR:-/tmp}/fixvenue-$1.XXXXXX")
	trap 'venue_stop; rm -rf "$venue_work"' EXIT
	trap 'exit 130' INT TERM
}

venue_throttles_off() {
	cat <<'TOML'
[session_defaults]
orders_per_second_reject = 0
cancels_per_second_reject = 0
messages_per_second_logout = 0
TOML
}
