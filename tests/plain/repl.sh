#!/bin/sh
# The terminal REPL as a daily user keeps it (tmux, coil --plain): no
# deadline at a terminal and --timeout 0 as none, leaving with exit and
# quit, Ctrl-D at a continuation dropping the cell, the terminal's size
# (and a resize) seen by cells, a multi-line cell as one history entry
# across sessions, the history directory made with its parents, the
# terminal's modes back after SIGTERM, and IPython's syntax at the
# prompt, Tab completing keys and modules and indenting, input() and
# pdb reading their lines at the terminal, help paged.
. "${srcdir:-.}/tests/lib/tap.sh"
command -v tmux >/dev/null || skip_all "tmux is not installed"

# tmux of our own: its own socket name and directory, killed alone
L=coil-repl-$$
TMUX_TMPDIR=$(mktemp -d /tmp/coil-tmux.XXXXXX)
export TMUX_TMPDIR
trap 'tmux -L "$L" kill-server 2>/dev/null; rm -rf "$T" "$TMUX_TMPDIR"' EXIT
SHELL=/bin/bash
export SHELL
S=repl
tm() { tmux -L "$L" "$@"; }
screen() { tm capture-pane -p -t "$S"; }
keys() { tm send-keys -t "$S" "$@"; }
missed=""
wait_for() {	# wait_for REGEX: until the screen shows it (10 s)
	[ -z "$missed" ] || return 0
	i=0
	while ! screen | grep -Eq -- "$1"; do
		i=$((i + 1))
		if [ $i -gt 100 ]; then
			missed="the screen never showed /$1/"
			return 0
		fi
		sleep 0.1
	done
}
step() {
	if [ -z "$missed" ]; then
		ok "$1"
	else
		not_ok "$1" "$missed; it shows:
$(screen)"
	fi
	missed=""
}
# start CMD: a fresh session running CMD in a 100x30 terminal
start() {
	tm kill-session -t "$S" 2>/dev/null
	tm new-session -d -s "$S" -x 100 -y 30 "$1; echo EXITED \$?; sleep 30"
}
PLAIN="env HOME=$T/home XDG_STATE_HOME= PAGER='sed s/^/PAGED:/' $COIL --plain --sandbox none"
mkdir -p "$T/home"

start "$PLAIN"
wait_for '^>>> ?$'
keys 'import shutil' Enter
wait_for '^>>> ?$'
keys 'shutil.get_terminal_size()' Enter
wait_for 'columns=100, lines=30'
step "cells see the terminal's size"
tm resize-window -t "$S" -x 123 -y 40 2>/dev/null ||
	tm resize-pane -t "$S" -x 123 -y 40
keys 'shutil.get_terminal_size()' Enter
wait_for 'columns=123, lines=40'
step "and its new size after a resize"

keys 'for i in range(2):' Enter
wait_for '^\.\.\. ?$'
keys C-d
wait_for '^>>> ?$'
keys '6 * 7' Enter
wait_for '^42$'
step "Ctrl-D at a continuation drops the cell, the session goes on"
expect_eq "and later lines get no blank line after them" "42" \
	"$(screen | grep -A1 '^>>> 6 \* 7$' | tail -1)"

keys 'for i in range(2):' Enter '    print("row", i)' Enter '' Enter
wait_for '^row 1$'
keys C-l
keys Up
wait_for '^>>> for i in range\(2\):$'
wait_for '^    print\("row", i\)$'
step "Up recalls a multi-line cell whole"
keys Enter
wait_for '^row 1$'
step "and it runs again as it was"

keys '%timeit -n 2 -r 2 sum(range(10))' Enter
wait_for 'per loop \(mean ± std. dev. of 2 runs, 2 loops each\)'
keys '!echo shell says hi' Enter
wait_for '^shell says hi$'
keys 'len?' Enter
wait_for '^Signature: len\(obj, /\)$'
step "magics, shell escapes and help at the prompt"

keys "scores = {'alpha': 1, 'beta': 2}" Enter
wait_for '^>>> ?$'
keys 'scores["al' Tab
wait_for '^>>> scores\["alpha"$'
keys ']' Enter
wait_for '^1$'
step "Tab completes a dict's key"
keys 'import os.pa' Tab
wait_for '^>>> import os\.path ?$'
keys C-u
keys 'def f():' Enter Tab 'return 5' Enter '' Enter
wait_for '^>>> ?$'
keys 'f()' Enter
wait_for '^5$'
step "Tab completes a submodule, and indents an empty line"

keys 'name = input("Name: ")' Enter
wait_for '^Name: ?$'
keys 'Ada' Enter
wait_for '^>>> ?$'
keys 'name' Enter
wait_for "^'Ada'$"
step "input() reads a line at the terminal, at its prompt"
keys 'input()' Enter
sleep 0.5
keys C-c
wait_for '^KeyboardInterrupt$'
keys '6 * 7' Enter
wait_for '^42$'
step "Ctrl-C during input() interrupts the cell"

keys 'def f(x):' Enter '    breakpoint()' Enter '    y = x * 2' Enter \
	'    return y + 1' Enter '' Enter
wait_for '^>>> ?$'
keys 'f(3)' Enter
wait_for '^-> y = x \* 2$'
keys 'n' Enter
wait_for '^-> return y \+ 1$'
keys 'p y' Enter
wait_for '^6$'
keys 'n' Enter
wait_for '> <cell [0-9]+>\(4\)f\(\)->7$'
keys 'c' Enter
wait_for '^7$'
keys 'x = 1' Enter
wait_for '^>>> ?$'
step "pdb steps through a function, and ends with the cell"
keys '1/0' Enter
wait_for '^ZeroDivisionError'
keys '%debug' Enter
wait_for '^-> 1/0$'
keys 'q' Enter
wait_for '^>>> ?$'
keys 'import pdb; pdb.pm()' Enter
wait_for '^\(Pdb\) ?$'
keys 'q' Enter
wait_for '^>>> ?$'
step "%debug and pdb.pm() open the last error"

keys 'help(len)' Enter
wait_for '^PAGED:Help on built-in function len in module builtins:$'
wait_for '^>>> ?$'
step "help(obj) goes through \$PAGER at the terminal"
keys 'help()' Enter
wait_for '^help> ?$'
keys 'len' Enter
wait_for 'Return the number of items in a container'
keys 'q' Enter
wait_for '^>>> ?$'
step "help() is interactive at the terminal"

keys 'exit' Enter
wait_for 'EXITED 0'
step "bare exit leaves, status 0"
expect_grep "the history directory is made with its parents" \
	'^    print("row", i)$' "$T/home/.local/state/coil/history"

start "$PLAIN"
wait_for '^>>> ?$'
keys C-r 'range(2)'
wait_for "range\\(2\\)': for i in range\\(2\\):$"
wait_for '^    print\("row", i\)$'
step "a multi-line cell is one entry in the next session too"
keys C-g C-u Enter
keys 'quit()' Enter
wait_for 'EXITED 0'
step "quit() leaves"

# --timeout 0: none; an out-of-range value names the option
XDG_STATE_HOME=$T/state "$COIL" --agent --sandbox none --timeout 0 \
	>"$T/out" 2>&1 <<EOF
{"id": 1, "code": "import time; time.sleep(1.2); 'slept'"}
EOF
expect_grep "--timeout 0 is no deadline" '"result":"'"'"'slept'"'"'"' \
	"$T/out"
"$COIL" --timeout -1 >"$T/out" 2>"$T/err" </dev/null
expect_grep "--timeout -1 is refused, naming the option" \
	"^coil: --timeout: invalid number of seconds '-1'" "$T/err"

# SIGTERM at the prompt: the terminal's modes come back
start "sh -c 'echo PID \$\$; exec $COIL --plain --sandbox none'; echo CODE \$?; stty -a | tr ' ' '\n' | grep -Ex -- '-?(icanon|echo)' | tr '\n' ' '"
wait_for '^>>> ?$'
pid=$(screen | sed -n 's/^PID \([0-9][0-9]*\)$/\1/p' | head -1)
if [ -n "$pid" ]; then
	kill -TERM "$pid"
	wait_for '^CODE 143$'
	wait_for '^icanon echo '
	step "SIGTERM ends coil with the terminal's modes restored"
else
	not_ok "SIGTERM ends coil with the terminal's modes restored" \
		"no PID on the screen: $(screen)"
fi
done_testing
