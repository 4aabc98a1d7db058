#!/bin/sh
# setup.sh - install what coil needs on Debian 12, build it, and then
#   ./setup.sh              start coil
#   ./setup.sh check        run the whole test suite (make check)
#   ./setup.sh check-asan   the suite again under AddressSanitizer + UBSan
#   ./setup.sh bench        the benchmarks, side by side with their peers
# Builds go to build/ (and build-asan/); the source tree stays clean.
set -eu
cd "$(dirname "$0")"
top=$(pwd)

# Build and test dependencies, by Debian package name.
PKGS="build-essential autoconf automake pkg-config python3-dev
libjansson-dev libreadline-dev libncurses-dev libseccomp-dev libpng-dev
xvfb xterm x11-apps netpbm xauth kitty
python3 tmux clang libclang-rt-14-dev
python3-ipykernel python3-jupyter-client python3-numpy python3-matplotlib
python3-pandas python3-nbformat python3-ipython
python3-jupyter-server
python3-sympy python-sympy-doc jupyter-nbconvert
python3-jsonschema python3-venv libmicrohttpd-dev curl
debhelper fakeroot lintian bash-completion systemd"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
# The MCP tests' clients (tests/mcp/sdk.py): Node.js 20 and npm, from
# Debian or from wherever this machine's node came (NodeSource's
# nodejs has npm in it, and conflicts with Debian's npm).
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
# kubectl, for tests/pkg/kubernetes.py: Debian's kubernetes-client, unless
# one is here already (Google's kubectl package has the same file).
command -v kubectl >/dev/null 2>&1 || missing="$missing kubernetes-client"
if [ -n "$missing" ]; then
	echo "setup: installing$missing" >&2
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -q >&2
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q \
		--no-install-recommends $missing >&2
fi

[ -x configure ] && [ configure -nt configure.ac ] && [ configure -nt Makefile.am ] ||
	autoreconf -fi >&2

build() {	# build DIR [CONFIGURE-ARGS...]
	dir=$1
	shift
	mkdir -p "$dir"
	if [ ! -f "$dir/Makefile" ]; then
		(cd "$dir" && "$top/configure" -q "$@") >&2
	fi
	make -C "$dir" -j"$(nproc)" >&2
}

# The checks (TAP lines, not files) the last make check in each DIR
# passed, failed and skipped, as one line.  An expected failure (TAP's
# TODO) is as intended; an unexpected pass and an error are failures.
counts() {	# counts DIR...
	logs=""
	for dir; do
		[ -f "$dir/test-suite.log" ] && logs="$logs $dir/test-suite.log"
	done
	# The totals come first in each log; a test's own log, quoted
	# below them, cannot add to them.
	# shellcheck disable=SC2086
	awk '/^# [A-Z]+: *[0-9]+$/ && !seen[FILENAME, $2]++ {
			n[$2] += $3
		}
		END {
			printf "%d passed, %d failed, %d skipped\n",
			    n["PASS:"] + n["XFAIL:"],
			    n["FAIL:"] + n["XPASS:"] + n["ERROR:"], n["SKIP:"]
		}' $logs </dev/null
}

case "${1:-run}" in
run)
	build build
	shift $(($# > 0 ? 1 : 0))
	exec build/src/coil "$@"
	;;
check)
	build build
	status=0
	make -C build -j"$(nproc)" check || status=$?
	counts build
	exit $status
	;;
check-asan)
	# The worker keeps its own signals: a cell's segfault must reach
	# the supervisor as SIGSEGV, as it does without sanitizers.
	build build-asan --enable-sanitizers
	status=0
	ASAN_OPTIONS=detect_leaks=1:handle_segv=0:handle_abort=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		make -C build-asan -j"$(nproc)" check || status=$?
	counts build-asan
	exit $status
	;;
fuzz)
	build build
	make -C build fuzz FUZZ_TIME="${FUZZ_TIME:-60}"
	;;
bench)
	build build
	make -C build bench
	;;
*)
	echo "usage: ./setup.sh [run [COIL-OPTIONS...] | check | check-asan | fuzz | bench]" >&2
	exit 2
	;;
esac
