# Go durations for the scripts' bounds. Sourced, not run:
#
#   . scripts/lib/duration.sh
#   duration_s D
#       Prints D (10s, 1500ms, 1m, or a bare number of seconds) in whole seconds, rounded
#       up: 10s → 10, 1500ms → 2, 1m → 60.
#   duration_sum_s D...
#       Prints the sum of the Ds, each in whole seconds as duration_s gives it.

duration_s() {
	local d=$1
	case $d in
	*ms) echo $(((${d%ms} + 999) / 1000)) ;;
	*m) echo $((${d%m} * 60)) ;;
	*s) echo "${d%s}" ;;
	*) echo "$d" ;;
	esac
}

duration_sum_s() {
	local d sum=0
	for d in "$@"; do
		sum=$((sum + $(duration_s "$d")))
	done
	echo "$sum"
}
