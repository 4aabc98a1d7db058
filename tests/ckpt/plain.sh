#!/bin/sh
# Plain mode's checkpoint magics (%snapshot, %rollback, %snapshots) and a
# crash restore, without a terminal.
. "${srcdir:-.}/tests/plain/lib.sh"

printf '%s\n' 'x = 1' '%snapshot base' 'x = 2' '%snapshots' \
	'%rollback base' 'print(x)' 'x = 3' '%rollback 1' 'x' \
	'y = 5' 'import os; os._exit(1)' 'y' |
	"$COIL" --plain >"$T/out" 2>"$T/err"
expect_eq "exit status 1: a cell crashed" 1 "$?"
grep -q "^snapshot 'base' at cell 1$" "$T/out" ||
	fail "no snapshot line: $(cat "$T/out")"
grep -q "^ *1  base  *snapshot " "$T/out" ||
	fail "%snapshots does not list base: $(cat "$T/out")"
grep -q "^ *0  -  *pristine " "$T/out" ||
	fail "%snapshots does not list the pristine one: $(cat "$T/out")"
grep -q "checkpoints, holding .* beyond the worker" "$T/out" ||
	fail "%snapshots has no total: $(cat "$T/out")"
grep -q "^rolled back to cell 1 (snapshot 'base'); undid cell 2$" "$T/out" ||
	fail "no rollback line: $(cat "$T/out")"
grep -q "^rolled back to cell 1 (snapshot 'base'); undid cells 3, 4$" "$T/out" ||
	fail "no rollback-by-cell line: $(cat "$T/out")"
grep -q "^coil: note: .*files.*processes" "$T/err" ||
	fail "no note about files: $(cat "$T/err")"
[ "$(grep -c "coil: note:" "$T/err")" = 1 ] || fail "the note came twice"
grep -q "back at the state after cell 6" "$T/err" ||
	fail "the crash does not say where the namespace is: $(cat "$T/err")"
grep -v -e "^snapshot" -e "^rolled" -e "^ *[0-9]*  " -e "^ cell" \
	-e "checkpoints, holding" "$T/out" >"$T/values"
expect_file "values printed" "$T/values" "1
1
5"

# Bad magic arguments: a clear message, the session goes on.
printf '%s\n' 'z = 1' '%rollback nope' '%rollback' '%snapshot 12' 'z' |
	"$COIL" --plain >"$T/out" 2>"$T/err"
expect_eq "exit status 1 after a failed magic" 1 "$?"
grep -q "there is no snapshot 'nope'; nothing changed" "$T/err" ||
	fail "no message for a missing snapshot: $(cat "$T/err")"
grep -q "usage: %rollback NAME|CELL" "$T/err" || fail "no usage message"
grep -q "is a cell number" "$T/err" || fail "a digit name was accepted"
expect_file "the session went on" "$T/out" "1"

# A line that only starts like a magic is Python (or another magic).
printf '%s\n' 'snapshot = 4' 'snapshot % 3' |
	"$COIL" --plain >"$T/out" 2>"$T/err"
expect_file "python, not a magic" "$T/out" "1"
pass
