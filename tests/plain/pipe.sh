#!/bin/sh
# Plain mode without a terminal: cells from stdin, no prompts, output and
# results as the python REPL prints them, errors on stderr, exit 1 when a
# cell failed.
. "${srcdir:-.}/tests/plain/lib.sh"

printf 'x = 1\nx + 1\nif x:\n    print("yes")\n\nprint(y)\ndef f():\n    return 5\n\nf()\n"end"\n' |
	"$COIL" --plain >"$T/out" 2>"$T/err"
rc=$?
expect_eq "exit status 1 after a failed cell" 1 "$rc"
expect_file "stdout" "$T/out" "2
yes
5
'end'"
grep -q "NameError: name 'y' is not defined" "$T/err" || fail "stderr lacks the NameError"
grep -q 'File "<cell 4>", line 1' "$T/err" || fail "traceback lacks the cell"

printf 'print("ok")\n' | "$COIL" >"$T/out" 2>&1
expect_eq "no terminal: plain mode, exit 0" 0 "$?"
expect_file "plain output" "$T/out" "ok"

printf 'def g():\n    return 7\n' | "$COIL" --plain >"$T/out" 2>&1
expect_file "a block open at end of input still runs" "$T/out" ""
printf 'def g():\n    return 7\ng()\n' | "$COIL" --plain >"$T/out" 2>&1
expect_file "a dedented line ends the block" "$T/out" "7"
printf 'x = (1,\n' | "$COIL" --plain >"$T/out" 2>&1
expect_eq "unfinished input fails" 1 "$?"
grep -q "unfinished" "$T/out" || fail "no message about unfinished input"
printf 'import time\ntime.sleep(5)\n"after"\n' | "$COIL" --plain --timeout 0.5 >"$T/out" 2>"$T/err"
grep -q "ran past its 0.5 s timeout" "$T/err" || fail "timeout not reported: $(cat "$T/err")"
expect_file "session goes on after a timeout" "$T/out" "'after'"
pass
