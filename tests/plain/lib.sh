# lib.sh - helpers for the shell tests; sourced with $srcdir set by make.
COIL=${COIL:-./src/coil}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
fail() { echo "not ok - $*"; exit 1; }
expect_eq() {
	n=$((n + 1))
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
	echo "ok $n - $1"
}
expect_file() {
	n=$((n + 1))
	[ "$(cat "$2")" = "$3" ] || fail "$1: expected
$3
got
$(cat "$2")"
	echo "ok $n - $1"
}
pass() { echo "all $n checks passed"; exit 0; }
