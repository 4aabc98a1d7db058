#!/bin/sh
# A deliberately broken test, for the host guard to catch: it passes, and
# on the way does to a decoy host what a careless test does to the real
# one.  It acts only on a decoy that self-test.py made (the directory
# holds .hostguard-decoy), named as $1 or $HOST_GUARD_DECOY, so that
#   make check HOST_GUARD_ROOTS=... HOST_GUARD_DECOY=... TESTS='...'
# shows the guard firing in a real make check too (see self-test.py).
. "${srcdir:-.}/tests/lib/tap.sh"

d=${1:-${HOST_GUARD_DECOY:-}}
if [ -z "$d" ] || [ ! -f "$d/.hostguard-decoy" ]; then
	echo "broken-test.sh: '$d' is not a decoy host; refusing to touch it" >&2
	exit 99
fi

chmod 600 "$d/etc/passwd"
printf 'X' | dd of="$d/etc/shadow" conv=notrunc status=none
ln "$d/etc/shadow" "$d/outside/shadow"
echo 'evil:x:0:' >>"$d/etc/group"
mkdir "$d/etc/sudoers.d"
echo 'ALL ALL=(ALL) NOPASSWD: ALL' >"$d/etc/sudoers.d/evil"
rm "$d/etc/ssh/sshd_config"
ln -sfn /tmp/evil-mounts "$d/etc/mtab"
rm "$d/etc/hosts"
ln -s /tmp/evil-hosts "$d/etc/hosts"
# One byte of a big file, its size and mtime kept: only ctime tells.
touch -r "$d/usr/local/lib/libbig.so" "$T/when"
printf 'X' | dd of="$d/usr/local/lib/libbig.so" bs=1 seek=4096 \
	conv=notrunc status=none
touch -r "$T/when" "$d/usr/local/lib/libbig.so"
# Harm undone is harm all the same: a chmod put back, a file made and
# removed.
chmod 666 "$d/etc/sudoers"
chmod 440 "$d/etc/sudoers"
: >"$d/usr/local/bin/.tmp"
rm "$d/usr/local/bin/.tmp"
mkdir "$d/usr/local/lib/evil"
echo a >"$d/usr/local/lib/evil/a.py"
echo b >"$d/usr/local/lib/evil/b.py"
[ "$(id -u)" -eq 0 ] && chown 65534:65534 "$d/usr/local/bin/tool"
chmod 4755 "$d/usr/local/bin/tool"
rm -r "$d/root/.ssh"
mkdir -p "$d/home/user/.ssh"
echo 'ssh-ed25519 AAAA evil' >"$d/home/user/.ssh/authorized_keys"

ok "did its work"
done_testing
