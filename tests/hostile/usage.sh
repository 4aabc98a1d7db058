#!/bin/sh
# Usage errors exit 2 with one line on stderr; --help and --version
# exit 0 on stdout, as GNU programs do.
. "${srcdir:-.}/tests/plain/lib.sh"

for args in "--frobnicate" "--timeout" "--timeout -3" "--max-output 0" \
    "--sandbox lax" "--workdir /nonexistent" "--checkpoints many" extra; do
	# shellcheck disable=SC2086
	"$COIL" $args >"$T/out" 2>"$T/err" </dev/null
	expect_eq "coil $args exits 2" 2 "$?"
	expect_eq "coil $args: one line on stderr" 1 "$(wc -l <"$T/err")"
	grep -q "^coil: .*(try 'coil --help')$" "$T/err" || fail "coil $args: $(cat "$T/err")"
	[ -s "$T/out" ] && fail "coil $args wrote to stdout"
done
"$COIL" --help >"$T/out" 2>"$T/err"
expect_eq "--help exits 0" 0 "$?"
grep -q "^Usage: coil \[OPTION\]" "$T/out" || fail "--help lacks Usage"
grep -q -- "--checkpoint-memory SIZE" "$T/out" || fail "--help lacks an option"
"$COIL" --version >"$T/out"
expect_eq "--version exits 0" 0 "$?"
grep -q "^coil [0-9]" "$T/out" || fail "--version: $(cat "$T/out")"
pass
