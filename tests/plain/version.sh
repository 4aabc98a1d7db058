#!/bin/sh
# --version and --help are the GNU texts, -V and -h their short forms, and
# the manual carries the version configure gave: all three agree with the
# config.h of the build under test.
. "${srcdir:-.}/tests/lib/tap.sh"

top=$(dirname "$(dirname "$COIL")")
[ -f "$top/config.h" ] || skip_all "no config.h in '$top': COIL is not a build tree's"
define() {	# define NAME: the string config.h defines NAME as
	sed -n "s/^#define $1 \"\(.*\)\"\$/\1/p" "$top/config.h"
}
version=$(define PACKAGE_VERSION)
bugs=$(define PACKAGE_BUGREPORT)
copyright=$(define COIL_COPYRIGHT)
expect_match "config.h: a version" '^[0-9]+(\.[0-9]+)+$' "$version"
expect_match "config.h: a bug address" '^https?://' "$bugs"
expect_match "config.h: a copyright holder and year" \
	'^Copyright \(C\) [0-9]{4} [^ ]' "$copyright"

# run NAME ARGS...: coil's stdout in $T/NAME.out, stderr in $T/NAME.err,
# exit status in $rc.
run() {
	name=$1
	shift
	"$COIL" "$@" >"$T/$name.out" 2>"$T/$name.err" </dev/null
	rc=$?
}

for opt in --version -V; do
	run version "$opt"
	expect_eq "coil $opt exits 0" 0 "$rc"
	expect_eq "coil $opt: nothing on stderr" "" "$(cat "$T/version.err")"
	expect_eq "coil $opt: first line" "coil $version" "$(head -n 1 "$T/version.out")"
	expect_eq "coil $opt: the copyright line" "$copyright." \
		"$(sed -n 2p "$T/version.out")"
	expect_match "coil $opt: the licence" '^License MIT: ' "$(cat "$T/version.out")"
	expect_match "coil $opt: no warranty" '^There is NO WARRANTY' \
		"$(cat "$T/version.out")"
done
run version2 --version
run version1 -V
expect_eq "-V prints what --version does" "$(cat "$T/version2.out")" \
	"$(cat "$T/version1.out")"

for opt in --help -h; do
	run help "$opt"
	expect_eq "coil $opt exits 0" 0 "$rc"
	expect_eq "coil $opt: nothing on stderr" "" "$(cat "$T/help.err")"
	expect_eq "coil $opt: first line" "Usage: coil [OPTION]..." \
		"$(head -n 1 "$T/help.out")"
	expect_eq "coil $opt: last line" "Report bugs to: $bugs" \
		"$(tail -n 1 "$T/help.out")"
	expect_match "coil $opt: lists -h" '^  -h, --help  ' "$(cat "$T/help.out")"
	expect_match "coil $opt: lists -V" '^  -V, --version  ' "$(cat "$T/help.out")"
	expect_eq "coil $opt: every line fits in 79 columns" "" \
		"$(awk 'length($0) > 79' "$T/help.out")"
done
run help2 --help
run help1 -h
expect_eq "-h prints what --help does" "$(cat "$T/help2.out")" \
	"$(cat "$T/help1.out")"

# An unknown letter is named, even in a group with one coil knows.
for args in -x -xV; do
	run bad "$args"
	expect_eq "coil $args exits 2" 2 "$rc"
	expect_eq "coil $args: nothing on stdout" "" "$(cat "$T/bad.out")"
	expect_eq "coil $args: the message" \
		"coil: unknown option '-x' (try 'coil --help')" "$(cat "$T/bad.err")"
done

man=$top/man/coil.1
if [ -f "$man" ]; then
	expect_match "coil(1): .TH has the version and a date" \
		"^\\.TH COIL 1 \"[A-Z][a-z]+ [0-9]{4}\" \"coil $version\" " \
		"$(grep '^\.TH' "$man")"
	expect_eq "coil(1): nothing left unsubstituted" "" \
		"$(grep -n '@[A-Za-z_]*@' "$man")"
	expect_eq "coil(1): REPORTING BUGS names the address" \
		"Report bugs to: $bugs" \
		"$(sed -n '/^\.SH REPORTING BUGS/{n;p;}' "$man")"
	expect_eq "coil(1): the copyright line" "$copyright." \
		"$(sed -n '/^\.SH COPYRIGHT/{n;p;}' "$man")"
else
	not_ok "coil(1) is built" "no '$man'"
fi
done_testing
