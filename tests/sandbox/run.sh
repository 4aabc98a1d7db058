#!/bin/sh
# Run the sandbox tests: each t-*.py in turn, under an outer timeout, and
# a summary.  Every coil a test starts also runs in a cgroup of the
# harness's own (see sbxlib.py).  COIL names the binary (default
# build/src/coil of this tree).  Exit 1 if any test failed.
#   tests/sandbox/run.sh [t-NAME.py ...]
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
: "${COIL:=$here/../../build/src/coil}"
export COIL
cd "$here" || exit 1
[ $# -gt 0 ] || set -- t-*.py
pass=0 fail=0 skip=0 checks=0 failed=
for t in "$@"; do
	out=$(timeout -k 10 900 "$py" "$t" 2>&1)
	rc=$?
	n=$(printf '%s\n' "$out" | grep -c '^ok ')
	bad=$(printf '%s\n' "$out" | grep -c '^not ok ')
	checks=$((checks + n + bad))
	case $rc in
	0) pass=$((pass + 1)); st=PASS ;;
	77) skip=$((skip + 1)); st=SKIP ;;
	*) fail=$((fail + 1)); st=FAIL; failed="$failed $t" ;;
	esac
	printf '%-4s %-24s %3d checks%s\n' "$st" "$t" $((n + bad)) \
	    "$([ "$bad" -gt 0 ] && echo ", $bad failed")"
	[ $rc -eq 0 ] || [ $rc -eq 77 ] || printf '%s\n' "$out" | sed 's/^/    /'
	printf '%s\n' "$out" | grep '# SKIP' | sed 's/^/    /'
done
echo "$pass passed, $fail failed, $skip skipped; $checks checks"
[ $fail -eq 0 ] || { echo "failed:$failed"; exit 1; }
