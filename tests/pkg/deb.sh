#!/bin/bash
# tests/pkg/deb.sh - coil's Debian package, built and run as a user would
# get it: TAP lines, for .ci/run and for a person (bash tests/pkg/deb.sh,
# from anywhere; KEEP=1 keeps the temp dir and says where).
#
#  1. The files git tracks, copied (as .ci/distcheck does) to a temp dir,
#     so the checkout stays clean; dpkg-buildpackage -us -uc -b there; the
#     .deb and .changes land in the temp dir.
#  2. lintian on the .changes (and so the .deb): no errors; what it says
#     (warnings) is printed as TAP comments.
#  3. The .deb unpacked with dpkg -x into an empty directory, and its
#     coil run from there: --version, and one agent cell under the
#     sandboxes none and standard.  dpkg -x rather than dpkg --root or a
#     chroot: --root wants a dpkg database and every dependency inside
#     the root, and a chroot wants debootstrap and a mirror, which CI has
#     not offline.  The unpacked coil runs on the host's libraries, which
#     the package's Depends name; apt-get -s (a simulation, nothing
#     written) checks the host has them all.  Nothing else is borrowed
#     from a build tree: the binary carries its Python files and reads no
#     data from /usr/share/coil at run time.
#  4. make install of a second copy, configured --prefix=/usr, into
#     DESTDIR: the same files, modes and contents as the package, but
#     for what is the package's own (/usr/share/doc/coil: copyright and
#     changelog; lintian's overrides) and man pages, which the package
#     keeps gzipped.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck disable=SC2034 # tap.sh's
srcdir=$top
. "$top/tests/lib/tap.sh"
[ -n "${KEEP:-}" ] && trap 'echo "# kept $T" >&2' EXIT

for tool in dpkg-buildpackage dpkg-checkbuilddeps fakeroot git; do
	command -v "$tool" >/dev/null ||
		skip_all "no $tool: apt-get install dpkg-dev fakeroot git"
done
[ -d "$top/.git" ] || [ -f "$top/.git" ] ||
	skip_all "'$top' is not a git checkout (the copy is of what git tracks)"

# The tracked files, as they are in the work tree.
copy() {	# copy DIR
	mkdir -p "$1"
	(cd "$top" && git ls-files -z | tar --null -T - -cf -) |
		tar -C "$1" -xf -
}
copy "$T/deb/coil"
cd "$T/deb/coil" || exit 1
if ! deps=$(dpkg-checkbuilddeps 2>&1); then
	skip_all "build dependencies missing: ${deps#*: } (./setup.sh installs them)"
fi

# 1. The package.
log=$T/deb/build.log
if dpkg-buildpackage -us -uc -b -J >"$log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b"
else
	not_ok "dpkg-buildpackage -us -uc -b" "$(tail -n 40 "$log")"
	done_testing
fi
cd "$T" || exit 1
debs=("$T"/deb/coil_*.deb)
changes=("$T"/deb/coil_*.changes)
expect_eq "one .deb and one .changes" "1 1" "${#debs[@]} ${#changes[@]}"
deb=${debs[0]}
echo "# $(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"

# 2. lintian.
if command -v lintian >/dev/null; then
	lintian "${changes[0]}" >"$T/lintian" 2>&1
	sed 's/^/# /' "$T/lintian"
	if grep -q '^E: ' "$T/lintian"; then
		not_ok "lintian: no errors" "$(grep '^E: ' "$T/lintian")"
	else
		ok "lintian: no errors ($(grep -c '^W: ' "$T/lintian") warnings)"
	fi
else
	skip "lintian: no errors" "no lintian: apt-get install lintian"
fi

# 3. Unpacked into a fresh tree, and run from there.
mkdir "$T/root"
dpkg -x "$deb" "$T/root"
coil=$T/root/usr/bin/coil
if command -v apt-get >/dev/null; then
	# What apt would install with the package: nothing but it.
	inst=$(apt-get -s -q install "$deb" 2>&1 | sed -n 's/^Inst \([^ ]*\).*/\1/p')
	expect_eq "its Depends are all on this host (apt-get -s)" "coil" \
		"$inst"
else
	skip "its Depends are all on this host" "no apt-get"
fi
version=$(dpkg-deb -f "$deb" Version)
expect_match "the unpacked coil --version" "^coil $version\$" \
	"$("$coil" --version 2>&1 | head -n 1)"
# bash-completion finds the package's completion where it looks on
# demand ($XDG_DATA_DIRS/bash-completion/completions), and it offers
# the unpacked coil's options.
lib=/usr/share/bash-completion/bash_completion
if [ -r "$lib" ]; then
	got=$(XDG_DATA_DIRS=$T/root/usr/share bash --norc --noprofile -c '
		. "$1"
		__load_completion coil && complete -p coil
		COMP_WORDS=(coil --sandbox-r) COMP_CWORD=1
		COMP_LINE="coil --sandbox-r" COMP_POINT=16
		_coil "$2" --sandbox-r coil
		echo "${COMPREPLY[*]}"' load "$lib" "$coil" 2>&1)
	expect_eq "bash-completion loads its completion and it completes" \
		"complete -F _coil coil
--sandbox-require --sandbox-report" "$got"
else
	skip "bash-completion loads its completion" \
		"no '$lib': apt-get install bash-completion"
fi
mkdir "$T/work"
for profile in none standard; do
	got=$(cd "$T/work" && echo '{"id":1,"code":"1+1"}' |
		XDG_STATE_HOME=$T/state HOME=$T/work "$coil" --agent \
		--no-record --sandbox "$profile" 2>"$T/err")
	expect_match "the unpacked coil runs a cell (--sandbox $profile)" \
		'"id": ?1,.*"result": ?"2"' "$got
$(cat "$T/err")"
done

# 4. make install against the package's files.
# The manual's date: the package's, its changelog's (SOURCE_DATE_EPOCH,
# which dpkg-buildpackage sets from it).
copy "$T/inst/coil"
SOURCE_DATE_EPOCH=$(cd "$T/inst/coil" && dpkg-parsechangelog -STimestamp)
export SOURCE_DATE_EPOCH
if (cd "$T/inst/coil" && autoreconf -fi && mkdir _build && cd _build &&
	../configure -q --prefix=/usr && make -j"$(nproc)" &&
	make install DESTDIR="$T/inst/root") >"$T/inst/log" 2>&1; then
	ok "configure --prefix=/usr; make install DESTDIR"
else
	not_ok "configure --prefix=/usr; make install DESTDIR" \
		"$(tail -n 40 "$T/inst/log")"
fi
# The files (no directories), with their modes; man pages unzipped.
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $1, $6 }' |
	sed -E 's| \./| /|; s|(/man/.*)\.gz$|\1|' |
	grep -v -E ' /usr/share/(doc/coil/(copyright|changelog\.gz)|lintian/overrides/coil)$' |
	sort >"$T/deb.files"
(cd "$T/inst/root" && find . ! -type d -printf '%M %p\n') |
	sed 's| \./| /|' | sort >"$T/inst.files"
expect_eq "make install and the package: the same files, the same modes" \
	"$(cat "$T/deb.files")" "$(cat "$T/inst.files")"
# The same contents, but for the binary (the package's is stripped and
# built with Debian's flags) and the gzipped manual.
differ=""
while read -r _ path; do
	case $path in
	/usr/bin/coil) continue ;;
	/usr/share/man/*)
		zcat "$T/root$path.gz" | cmp -s - "$T/inst/root$path" ;;
	*) cmp -s "$T/root$path" "$T/inst/root$path" ;;
	esac || differ="$differ $path"
done <"$T/deb.files"
expect_eq "make install and the package: the same contents" "" "$differ"
expect_match "the package has the bash completion" \
	' /usr/share/bash-completion/completions/coil$' "$(cat "$T/deb.files")"
expect_match "the package has share/" ' /usr/share/coil/mcp-tools.json$' \
	"$(cat "$T/deb.files")"

done_testing
