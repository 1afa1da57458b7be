#!/bin/sh
# tests/engine/load.sh: `hotrow sim`'s table measures the offered load as
# the likes that arrived over the rows' ceiling, beside its prediction,
# and the row's utilisation (the lock's busy share, at most 1) on a line
# of its own: past the ceiling the two part (4.000 against 1.000).
# Prints cmocka-style summary lines. HOTROW_BIN overrides the binary.
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd -P)
bin=${HOTROW_BIN:-$root/build/hotrow}
. "$root/tests/harness/check.sh"

# row LABEL ARGS...: "measured predicted" of the table's row LABEL.
row() {
	label=$1
	shift
	"$bin" sim "$@" | awk -v l="$label" 'index($0, "  " l " ") == 1 {
		$0 = substr($0, length(l) + 3); print $1, $2; exit }'
}

# sim__offered_load_measured_past_the_ceiling: 2000/s on a 500/s row.
got=$(row "offered load (arrivals/ceiling)" --scenario viral-post --seconds 3)
use=$(row "row utilisation" --scenario viral-post --seconds 3)
if [ "$got" != "4.000 4.000" ]; then bad sim__offered_load_measured_past_the_ceiling "offered load '$got', want '4.000 4.000'"
elif [ "$use" != "1.000 1.000" ]; then bad sim__offered_load_measured_past_the_ceiling "utilisation '$use', want '1.000 1.000'"
else ok sim__offered_load_measured_past_the_ceiling; fi

# sim__offered_load_under_the_ceiling: the two agree when the row keeps up.
got=$(row "offered load (arrivals/ceiling)" --rps 300 --seconds 5)
use=$(row "row utilisation" --rps 300 --seconds 5)
if [ "$got" != "0.600 0.600" ] || [ "$use" != "0.600 0.600" ]; then
	bad sim__offered_load_under_the_ceiling "offered load '$got', utilisation '$use', want 0.600 both"
else ok sim__offered_load_under_the_ceiling; fi

# sim__offered_load_of_the_peak: a schedule's measured load is its peak
# step's arrivals, as the prediction is.
got=$(row "offered load (arrivals/ceiling)" --schedule 200@0,2000@5 --seconds 10 --pool 0)
case "$got" in
"4.000 4.000") ok sim__offered_load_of_the_peak ;;
*) bad sim__offered_load_of_the_peak "offered load '$got', want '4.000 4.000'" ;;
esac
summary
