# Go durations for the scripts' bounds. Sourced, not run:
#
#   . scripts/lib/duration.sh
#   duration_s D
#       Prints D (10s, 1500ms, 1m, or a bare number of seconds) in whole seconds, rounded
#       up: 10s → 10, 1500ms → 2, 1m → 60.

duration_s() {
	local d=$1
	case $d in
	*ms) echo $(((${d%ms} + 999) / 1000)) ;;
	*m) echo $((${d%m} * 60)) ;;
	*s) echo "${d%s}" ;;
	*) echo "$d" ;;
	esac
}
