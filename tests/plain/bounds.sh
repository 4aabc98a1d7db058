#!/bin/sh
# Sizes that travel between coil and its worker in one frame are bounded
# at the start: --max-output and --max-request past their limits (the
# frame is at most 256M) are usage errors that name the option and the
# limit, never a worker killed later; sizes that are not sizes (NaN,
# infinity, negative) are refused.
. "${srcdir:-.}/tests/lib/tap.sh"

usage() {	# usage DESC WANT-REGEX ARGS...
	desc=$1 want=$2
	shift 2
	out=$("$COIL" --agent --sandbox none "$@" </dev/null 2>&1)
	rc=$?
	expect_eq "$desc: exit status 2" 2 "$rc"
	expect_match "$desc: says why" "$want" "$out"
}

usage "--max-output 17M" "^coil: --max-output 17M is over the limit of 16M .*256M" \
	--max-output 17M
usage "--max-output 1G" "^coil: --max-output 1G is over the limit of 16M" \
	--max-output 1G
usage "--max-request 129M" "^coil: --max-request 129M is over the limit of 128M" \
	--max-request 129M
usage "--max-request 300M" "--max-request 300M is over the limit of 128M .*256M" \
	--max-request 300M
for bad in nan inf -inf -5 1e400; do
	usage "--max-output $bad" "invalid size '$bad'" --max-output "$bad"
done
usage "--memory nan" "invalid size 'nan'" --memory nan

# At the limits, coil starts and serves.
out=$(printf '{"id": 1, "code": "6 * 7"}\n' |
	"$COIL" --agent --sandbox none --max-output 16M --max-request 128M 2>&1)
expect_match "--max-output 16M --max-request 128M: a cell runs" '"result":"42"' "$out"

done_testing
