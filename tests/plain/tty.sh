#!/bin/sh
# Plain mode on a real terminal (tmux): prompts, results, continuation
# lines, completion from the namespace and of magics, Ctrl-C
# interrupting a cell and clearing the line, history saved (a cell with a
# "#1 ..." comment line comes back whole in the next session), Ctrl-D
# exiting.
. "${srcdir:-.}/tests/lib/tap.sh"
command -v tmux >/dev/null || skip_all "tmux is not installed"

S=coil-tty-$$
# short: a unix socket path has at most 107 bytes, and $T under a
# distcheck build tree is longer
TMUX_TMPDIR=$(mktemp -d /tmp/coil-tmux.XXXXXX)
export TMUX_TMPDIR
screen() { tmux capture-pane -p -t "$S"; }

# Each check is a few keys and the screens they must bring.  A screen
# that never comes fails the check (the others of it are not waited for)
# and the next check goes on from wherever the terminal is.
missed=""
wait_for() {	# wait_for REGEX: until the screen shows it (10 s)
	[ -z "$missed" ] || return 0
	i=0
	while ! screen | grep -Eq "$1"; do
		i=$((i + 1))
		if [ $i -gt 100 ]; then
			missed="the screen never showed /$1/"
			return 0
		fi
		sleep 0.1
	done
}
step() {	# step DESC: ok if every wait_for since the last step succeeded
	if [ -z "$missed" ]; then
		ok "$1"
	else
		not_ok "$1" "$missed; it shows:
$(screen)"
	fi
	missed=""
}
keys() { tmux send-keys -t "$S" "$@"; }

# tmux runs the command with $SHELL, else the passwd shell (nologin for
# a system user such as distcheck's)
SHELL=/bin/bash
export SHELL
tmux new-session -d -s "$S" -x 100 -y 30 \
	"env XDG_STATE_HOME=$T/state $COIL --plain; echo EXITED \$?; sleep 30"
trap 'tmux kill-server 2>/dev/null; rm -rf "$T" "$TMUX_TMPDIR"' EXIT
wait_for '^>>> ?$'
keys 'answer = 6 * 7' Enter
wait_for '^>>> ?$'
keys 'answer' Enter
wait_for '^42$'
step "result printed"

keys 'for i in range(2):' Enter
wait_for '^\.\.\. ?$'
keys '    print("line", i)' Enter '' Enter
wait_for '^line 1$'
step "continuation prompt and block"

keys 'ans' Tab
wait_for '^>>> answer$'
keys Enter
wait_for '^42$'
step "tab completion from the namespace"

keys '%who_' Tab
wait_for '^>>> %who_ls$'
keys Enter
wait_for "^\\['answer', 'i'\\]$"
step "tab completes a magic's name"

keys 'import time' Enter 'time.sleep(30)' Enter
sleep 0.5
keys C-c
wait_for 'KeyboardInterrupt'
wait_for '^>>> ?$'
keys 'answer + 1' Enter
wait_for '^43$'
step "Ctrl-C interrupts the cell, state kept"

keys 'half typed' C-c
wait_for '^>>> ?$'
keys Up
wait_for '^>>> answer \+ 1$'
keys C-u Enter
step "Ctrl-C clears the line; Up recalls history"

keys 'if True:' Enter '#1 a comment readline takes for a time' Enter
keys '    z = 9' Enter '' Enter
wait_for '^>>> ?$'
keys C-d
wait_for 'EXITED 0'
step "Ctrl-D exits 0"
expect_grep "history saved in \$XDG_STATE_HOME/coil/history" \
	'answer = 6 \* 7' "$T/state/coil/history"
expect_grep "a line that would read as a timestamp is kept escaped" \
	'^\\#1 a comment' "$T/state/coil/history"

# The next session reads the cell back whole: Up, Enter runs all of it.
tmux kill-session -t "$S"
tmux new-session -d -s "$S" -x 100 -y 30 \
	"env XDG_STATE_HOME=$T/state $COIL --plain; echo EXITED \$?; sleep 30"
wait_for '^>>> ?$'
keys Up Enter
wait_for '^>>> ?$'
keys 'z' Enter
wait_for '^9$'
step "the next session recalls the cell whole, its #1 line too"
keys C-d
wait_for 'EXITED 0'
done_testing
