# tap.sh - the shell tests' TAP helper, for automake's tap-driver.
# Sourced by tests/*/*.sh with $srcdir set by make.  Gives:
#   COIL                 the binary under test ($COIL, else build/src/coil)
#   T                    a private temp dir, removed at exit
#   ok DESC / not_ok DESC [DETAIL]   one check
#   expect_eq DESC WANT GOT          a check that two strings are equal
#   expect_match DESC REGEX TEXT     a check that grep -E finds REGEX
#   expect_grep DESC PATTERN FILE    a check that grep finds PATTERN in FILE
#   expect_file DESC FILE WANT       a check that FILE holds WANT
#   skip DESC WHY                    one skipped check
#   skip_all WHY                     plan none, say why, exit 0
#   done_testing                     the plan; exit 1 if a check failed
# Checks go on after a failure, so one run reports every one.
: "${srcdir:=.}"
COIL=${COIL:-$srcdir/build/src/coil}
T=$(mktemp -d "${TEST_WORKDIR:-${TMPDIR:-/tmp}}/sh.XXXXXX")
trap 'rm -rf "$T"' EXIT
tap_n=0
tap_failed=0
ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1"
}
not_ok() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $1"
	[ $# -gt 1 ] && printf '%s\n' "$2" | head -n 60 | sed 's/^/# /'
	return 0
}
expect_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "expected '$2', got '$3'"; fi
}
expect_match() {
	if printf '%s\n' "$3" | grep -Eq -- "$2"; then
		ok "$1"
	else
		not_ok "$1" "no match for /$2/ in:
$3"
	fi
}
expect_grep() {
	if grep -q -- "$2" "$3"; then
		ok "$1"
	else
		not_ok "$1" "no match for /$2/ in $(basename "$3"):
$(cat "$3")"
	fi
}
expect_file() {
	if [ "$(cat "$2")" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1" "expected:
$3
got:
$(cat "$2")"
	fi
}
skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1 # SKIP $2"
}
skip_all() {
	if [ "$tap_n" -gt 0 ]; then
		skip "the rest of this file" "$1"
		done_testing
	fi
	echo "1..0 # SKIP $1"
	exit 0
}
done_testing() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ] || exit 1
	exit 0
}
