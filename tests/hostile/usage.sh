#!/bin/sh
# Usage errors exit 2 with one line on stderr; --help and --version
# exit 0 on stdout, as GNU programs do.
. "${srcdir:-.}/tests/lib/tap.sh"

for args in "--frobnicate" "--timeout" "--timeout -3" "--max-output 0" \
    "--sandbox lax" "--workdir /nonexistent" "--checkpoints many" extra; do
	# shellcheck disable=SC2086
	"$COIL" $args >"$T/out" 2>"$T/err" </dev/null
	expect_eq "coil $args exits 2" 2 "$?"
	expect_eq "coil $args: one line on stderr" 1 "$(wc -l <"$T/err")"
	expect_grep "coil $args: names coil, points to --help" \
		"^coil: .*(try 'coil --help')$" "$T/err"
	expect_eq "coil $args: nothing on stdout" "" "$(cat "$T/out")"
done
"$COIL" --help >"$T/out" 2>"$T/err"
expect_eq "--help exits 0" 0 "$?"
expect_grep "--help: Usage line" "^Usage: coil \[OPTION\]" "$T/out"
expect_grep "--help: lists the options" "--checkpoint-memory SIZE" "$T/out"
expect_eq "--help: nothing on stderr" "" "$(cat "$T/err")"
"$COIL" --version >"$T/out"
expect_eq "--version exits 0" 0 "$?"
expect_grep "--version: name and number" "^coil [0-9]" "$T/out"
done_testing
