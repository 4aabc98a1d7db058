#!/bin/sh
# Plain mode on a real terminal (tmux): prompts, results, continuation
# lines, completion from the namespace, Ctrl-C interrupting a cell and
# clearing the line, history saved, Ctrl-D exiting.
. "${srcdir:-.}/tests/plain/lib.sh"
command -v tmux >/dev/null || { echo "tmux is not installed"; exit 77; }

S=coil-tty-$$
TMUX_TMPDIR=$T
export TMUX_TMPDIR
screen() { tmux capture-pane -p -t "$S"; }
wait_for() {	# wait_for REGEX: until the screen shows it (10 s)
	i=0
	while ! screen | grep -Eq "$1"; do
		i=$((i + 1))
		[ $i -gt 100 ] && { screen; fail "screen never showed /$1/"; }
		sleep 0.1
	done
}
keys() { tmux send-keys -t "$S" "$@"; }

tmux new-session -d -s "$S" -x 100 -y 30 \
	"env XDG_STATE_HOME=$T/state $COIL --plain; echo EXITED \$?; sleep 30"
trap 'tmux kill-server 2>/dev/null; rm -rf "$T"' EXIT
wait_for '^>>> ?$'
keys 'answer = 6 * 7' Enter
wait_for '^>>> ?$'
keys 'answer' Enter
wait_for '^42$'
n=$((n + 1)); echo "ok $n - result printed"

keys 'for i in range(2):' Enter
wait_for '^\.\.\. ?$'
keys '    print("line", i)' Enter '' Enter
wait_for '^line 1$'
n=$((n + 1)); echo "ok $n - continuation prompt and block"

keys 'ans' Tab
wait_for '^>>> answer$'
keys Enter
wait_for '^42$'
n=$((n + 1)); echo "ok $n - tab completion from the namespace"

keys 'import time' Enter 'time.sleep(30)' Enter
sleep 0.5
keys C-c
wait_for 'KeyboardInterrupt'
wait_for '^>>> ?$'
keys 'answer + 1' Enter
wait_for '^43$'
n=$((n + 1)); echo "ok $n - Ctrl-C interrupts the cell, state kept"

keys 'half typed' C-c
wait_for '^>>> ?$'
keys Up
wait_for '^>>> answer \+ 1$'
keys C-u Enter
n=$((n + 1)); echo "ok $n - Ctrl-C clears the line; Up recalls history"

keys C-d
wait_for 'EXITED 0'
n=$((n + 1)); echo "ok $n - Ctrl-D exits 0"
grep -q 'answer = 6 \* 7' "$T/state/coil/history" || fail "history file not written"
n=$((n + 1)); echo "ok $n - history saved in \$XDG_STATE_HOME/coil/history"
pass
