#!/bin/sh
# Run the sandbox tests by hand: each t-*.py in turn, under an outer
# timeout, and a summary of their TAP.  Every coil they start runs
# contained by the harness (contain.py; see README.md).  COIL names the
# binary (default build/src/coil of this tree), COIL_HOOKED the build with
# the test hooks (default build/tests/coil-hooked).  Exit 1 if a test
# failed.  `make check TESTS='tests/sandbox/t-net.py ...'` does the same
# through automake.
#   tests/sandbox/run.sh [t-NAME.py ...]      every test, or those named
#   tests/sandbox/run.sh t-GROUP.py ROW...    some rows of the table
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
: "${COIL:=$here/../../build/src/coil}"
: "${COIL_HOOKED:=$here/../../build/tests/coil-hooked}"
export COIL COIL_HOOKED
cd "$here" || exit 1
[ $# -gt 0 ] || set -- t-*.py
pass=0 fail=0 checks=0 skips=0 failed=
start=$(date +%s)

one() {
	t0=$(date +%s)
	out=$(timeout -k 10 900 "$py" "$@" 2>&1)
	rc=$?
	n=$(printf '%s\n' "$out" | grep -c '^ok ')
	bad=$(printf '%s\n' "$out" | grep -c '^not ok ')
	sk=$(printf '%s\n' "$out" | grep -c '# SKIP')
	checks=$((checks + n + bad)); skips=$((skips + sk))
	if [ $rc -eq 0 ] && [ "$bad" -eq 0 ]; then
		pass=$((pass + 1)); st=PASS
	else
		fail=$((fail + 1)); st=FAIL; failed="$failed $1"
	fi
	printf '%-4s %-18s %4d checks, %d skipped, %ds%s\n' "$st" "$*" \
	    $((n + bad)) "$sk" $(($(date +%s) - t0)) \
	    "$([ "$bad" -gt 0 ] && echo ", $bad failed")"
	[ "$st" = PASS ] || printf '%s\n' "$out" | sed 's/^/    /'
	printf '%s\n' "$out" | grep '# SKIP' | sed 's/^/    /'
}

case $2 in
'' | t-*.py) for t in "$@"; do one "$t"; done ;;
*) one "$@" ;;
esac
echo "$pass passed, $fail failed; $checks checks ($skips skipped)" \
    "in $(($(date +%s) - start))s"
[ $fail -eq 0 ] || { echo "failed:$failed"; exit 1; }
