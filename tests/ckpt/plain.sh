#!/bin/sh
# Plain mode's checkpoint magics (%snapshot, %rollback, %snapshots) and a
# crash restore, without a terminal.  The first run takes a checkpoint
# after every cell (--checkpoint-policy every): its crash must land on the
# cell just before, which piped cells, back to back, would not get.
. "${srcdir:-.}/tests/lib/tap.sh"

printf '%s\n' 'x = 1' '%snapshot base' 'x = 2' '%snapshots' \
	'%rollback base' 'print(x)' 'x = 3' '%rollback 1' 'x' \
	'y = 5' 'import os; os._exit(1)' 'y' |
	"$COIL" --plain --checkpoint-policy every >"$T/out" 2>"$T/err"
expect_eq "exit status 1: a cell crashed" 1 "$?"
expect_grep "%snapshot says what it pinned" \
	"^snapshot 'base' at cell 1$" "$T/out"
expect_grep "%snapshots lists base" "^ *1  base  *snapshot " "$T/out"
# The cells were waiting when the worker came up: no pristine one.
expect_eq "%snapshots lists no pristine one" 0 \
	"$(grep -c "^ *0  -  *pristine " "$T/out")"
expect_grep "%snapshots gives the total" \
	"checkpoints, holding .* beyond the worker" "$T/out"
expect_grep "%rollback NAME says what it undid" \
	"^rolled back to cell 1 (snapshot 'base'); undid cell 2$" "$T/out"
expect_grep "%rollback CELL says what it undid" \
	"^rolled back to cell 1 (snapshot 'base'); undid cells 3, 4$" "$T/out"
expect_grep "the first rollback notes files and processes stay" \
	"^coil: note: .*files.*processes" "$T/err"
expect_eq "the note comes once" 1 "$(grep -c "coil: note:" "$T/err")"
expect_grep "the crash says where the namespace is" \
	"back at the state after cell 6" "$T/err"
grep -v -e "^snapshot" -e "^rolled" -e "^ *[0-9]*  " -e "^ cell" \
	-e "checkpoints, holding" "$T/out" >"$T/values"
expect_file "values printed" "$T/values" "1
1
5"

# Piped cells, back to back, then a crash: the default policy kept no
# checkpoint between them, and the lost cells are run again (issue 24).
printf '%s\n' 'a = 1' 'b = a + 1' 'import os; os._exit(1)' 'print(a, b)' |
	"$COIL" --plain >"$T/out" 2>"$T/err"
expect_eq "a crash after piped cells: exit status 1" 1 "$?"
expect_grep "the message says the lost cells were run again" \
	"cells 1-2 were run again and answered as before" "$T/err"
expect_file "and the namespace holds what they did" "$T/out" "1 2"

# Bad magic arguments: a clear message, the session goes on.
printf '%s\n' 'z = 1' '%rollback nope' '%rollback' '%snapshot 12' 'z' |
	"$COIL" --plain >"$T/out" 2>"$T/err"
expect_eq "exit status 1 after a failed magic" 1 "$?"
expect_grep "a missing snapshot: said so, nothing changed" \
	"there is no snapshot 'nope'; nothing changed" "$T/err"
expect_grep "%rollback alone: its usage" "usage: %rollback NAME|CELL" "$T/err"
expect_grep "a name of digits is refused" "is a cell number" "$T/err"
expect_file "the session went on" "$T/out" "1"

# A line that only starts like a magic is Python (or another magic).
printf '%s\n' 'snapshot = 4' 'snapshot % 3' |
	"$COIL" --plain >"$T/out" 2>"$T/err"
expect_eq "python, not a magic: exit 0" 0 "$?"
expect_file "python, not a magic" "$T/out" "1"
done_testing
