#!/bin/sh
# Plain mode without a terminal: cells from stdin, no prompts, output and
# results as the python REPL prints them, errors on stderr, exit 1 when a
# cell failed.
. "${srcdir:-.}/tests/lib/tap.sh"

printf 'x = 1\nx + 1\nif x:\n    print("yes")\n\nprint(y)\ndef f():\n    return 5\n\nf()\n"end"\n' |
	"$COIL" --plain >"$T/out" 2>"$T/err"
expect_eq "exit status 1 after a failed cell" 1 "$?"
expect_file "stdout" "$T/out" "2
yes
5
'end'"
expect_grep "stderr has the NameError" \
	"NameError: name 'y' is not defined" "$T/err"
expect_grep "the traceback names the cell" 'File "<cell 4>", line 1' "$T/err"

printf 'print("ok")\n' | "$COIL" >"$T/out" 2>&1
expect_eq "no terminal: plain mode, exit 0" 0 "$?"
expect_file "plain output" "$T/out" "ok"

printf 'for i in range(2):\n    print(i)\n' | "$COIL" --plain >"$T/out" 2>&1
expect_eq "a block open at end of input: exit 0" 0 "$?"
expect_file "a block open at end of input still runs" "$T/out" "0
1"
printf 'def g():\n    return 7\ng()\n' | "$COIL" --plain >"$T/out" 2>&1
expect_file "a dedented line ends the block" "$T/out" "7"
printf 'x = (1,\n' | "$COIL" --plain >"$T/out" 2>&1
expect_eq "unfinished input fails" 1 "$?"
expect_grep "a message says the input is unfinished" "unfinished" "$T/out"
printf 'import time\ntime.sleep(5)\n"after"\n' |
	"$COIL" --plain --timeout 0.5 >"$T/out" 2>"$T/err"
expect_grep "a timeout is reported" "ran past its 0.5 s timeout" "$T/err"
expect_file "the session goes on after a timeout" "$T/out" "'after'"

# A cell magic alone on its line is not a whole cell: its body follows,
# up to a blank line (%%writefile must not empty the file at once).
echo 'important = 1' >"$T/keep.py"
printf '%%%%writefile %s\nprint("new")\n\n%%%%bash\necho hi\n\n' \
	"$T/keep.py" | "$COIL" --plain >"$T/out" 2>&1
expect_eq "cell magics typed line by line: exit 0" 0 "$?"
expect_file "%%writefile wrote its body" "$T/keep.py" 'print("new")'
expect_grep "%%bash ran its body" "^hi$" "$T/out"

# A line that is not UTF-8 is a clear SyntaxError, as python3 says
printf 'print("a\377b")\nprint(2)\n' | "$COIL" --plain >"$T/out" 2>"$T/err"
expect_eq "a cell that is not UTF-8 fails: exit 1" 1 "$?"
expect_grep "it is a SyntaxError naming the byte" \
	"SyntaxError: .*not UTF-8.*\\\\xff" "$T/err"
expect_file "the next cell runs" "$T/out" "2"

# exit and %snapshot are cells of their own: after a block they end it
printf 'if True:\n    print("block")\nexit\nprint("not reached")\n' |
	"$COIL" --plain >"$T/out" 2>&1
expect_eq "exit after a block: exit 0" 0 "$?"
expect_file "the block ran, then exit left" "$T/out" "block"
printf 'for i in range(2):\n    pass\n%%snapshot s\n' |
	"$COIL" --plain >"$T/out" 2>&1
expect_eq "%snapshot after a block: exit 0" 0 "$?"
expect_grep "%snapshot ran as a cell of its own" "snapshot 's'" "$T/out"

# CRLF line ends are line ends
printf 'print("crlf")\r\n!echo sh\r\nexit\r\nprint("after exit")\r\n' |
	"$COIL" --plain >"$T/out" 2>&1
expect_file "CRLF: the \\r is not part of the line" "$T/out" "crlf
sh"
done_testing
