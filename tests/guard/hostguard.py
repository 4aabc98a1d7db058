#!/usr/bin/python3
"""hostguard - proof that `make check` left the host as it found it.

Before the suite, host-record.py writes a record of every entry under the
guarded roots; after it, host-compare.py walks them again and fails,
naming each difference, if anything changed.  An entry is its type, mode,
owner and link count; a regular file also its size and sha256; a symlink
its target.  What this user cannot read is recorded by what lstat says of
it, and said so ("unreadable", "unlisted"), so the guard works as non-root.

The record is one line an entry, in the build tree, for people too:

    /etc/passwd file mode=0644 owner=0:0 links=1 size=1221 sha256=a2a1...
    /etc/shadow file mode=0640 owner=0:42 links=1 size=631 unreadable
    /etc/mtab link owner=0:0 links=1 -> /proc/mounts

and a root that is not there (often ~/.ssh) has no line: creating it is
then a difference like any other.

Files over HASH_MAX bytes (here /usr/local's CUDA libraries: 36 files,
2.9 GB, 9 s to hash warm and 29 s cold, twice a run) are vouched for by
inode, mtime and ctime instead of their sha256: every write, truncate,
chmod or replace moves ctime, and only the kernel sets it.

Leftovers of killed sessions (/tmp/coil-* private temp dirs, coil.*
cgroups) are listed in the record too, and those new at compare time are
reported; see leftovers() for why they fail the run only on request.

Used by hand:

    hostguard.py record FILE [ROOT...]    record ROOTs (default: ROOTS)
    hostguard.py compare FILE             TAP: what changed since FILE

Environment: HOST_GUARD_ROOTS (roots, colon separated), HOST_GUARD_RECORD
(the record file), HOST_GUARD_LEFTOVERS=fail (new leftovers fail the run).
"""
import bisect
import errno
import hashlib
import os
import pwd
import re
import stat
import sys
import time

sys.dont_write_bytecode = True          # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "..", "lib"))
from coiltest import TAP  # noqa: E402

# /etc holds /etc/passwd, /etc/shadow, /etc/group and /etc/sudoers.
# The device nodes are those the sandbox binds into every worker's /dev
# (sbx-util.c): one removed or replaced (a test as root under --sandbox
# none, a cell's os.remove) breaks every session on the machine; it
# happened once during this project, which nothing caught.
ROOTS = ["/etc", "/usr/local", "/root/.ssh", "/dev/null", "/dev/zero",
         "/dev/full", "/dev/random", "/dev/urandom"]

# Entries the machine changes by itself while a suite runs, each with
# why.  An excluded entry is recorded by its type alone: removing or
# replacing it still shows.  None is needed on Debian 12 as measured:
# recorded, then compared every 2 minutes while five people built coil
# and ran sessions on the machine, nothing under the roots changed in an
# hour, nor any ctime in 45 minutes.  /etc/mtab is a symlink: its target is
# what is compared, not /proc/mounts.  /etc/ld.so.cache, /etc/alternatives
# and the like move only when dpkg runs, which is someone's apt-get, not
# the machine by itself: the compare then shows dpkg's log since the
# record, as a hint.
EXCLUDE = {
}

HASH_MAX = 1 << 20
RECORD_VERSION = "coil host guard record 2"
# dpkg's log, read to explain a change (HOST_GUARD_DPKG_LOG: a test's)
DPKG_LOG = os.environ.get("HOST_GUARD_DPKG_LOG") or "/var/log/dpkg.log"
CGROUP_ROOT = "/sys/fs/cgroup"
SHOW_MAX = 40           # differences shown one by one under each root


# ------------------------------------------------------------- the roots

def default_roots():
    """The guarded roots: $HOST_GUARD_ROOTS, else ROOTS and the invoking
    user's ~/.ssh (from the password file, not $HOME, which a test
    environment may point elsewhere)."""
    env = os.environ.get("HOST_GUARD_ROOTS")
    if env:
        return [r for r in env.split(":") if r]
    roots = list(ROOTS)
    try:
        home = pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        home = None
    if home and home != "/":
        roots.append(os.path.join(home, ".ssh"))
    return unique_roots(roots)


def unique_roots(roots):
    """roots in order, each once, none inside another."""
    out = []
    for r in (os.path.normpath(os.path.abspath(r)) for r in roots):
        if r not in out and not any(r.startswith(o.rstrip("/") + "/")
                                    for o in out):
            out = [o for o in out if not o.startswith(r.rstrip("/") + "/")]
            out.append(r)
    return out


# -------------------------------------------------------------- an entry

def quote(path):
    """A path as one word: bytes outside printable ASCII, the space and
    the backslash as \\xNN."""
    out = []
    for b in os.fsencode(path):
        if 0x20 < b < 0x7f and b != 0x5c:
            out.append(chr(b))
        else:
            out.append("\\x%02x" % b)
    return "".join(out)


def unquote(word):
    return os.fsdecode(re.sub(rb"\\x([0-9a-f]{2})",
                              lambda m: bytes([int(m.group(1), 16)]),
                              word.encode("ascii")))


def sha256_of(path, st):
    """The file's sha256, or None when this user cannot read it.  The
    file is opened without following links or blocking, without moving
    its atime where the kernel allows, and must still be the inode that
    was stat'ed."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        try:
            fd = os.open(path, flags | os.O_NOATIME)
        except PermissionError:
            fd = os.open(path, flags)   # O_NOATIME needs owner or root
    except OSError:
        return None
    try:
        fst = os.fstat(fd)
        if (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino):
            return None
        h = hashlib.sha256()
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


KINDS = [(stat.S_ISREG, "file"), (stat.S_ISDIR, "dir"),
         (stat.S_ISLNK, "link"), (stat.S_ISFIFO, "fifo"),
         (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "chardev"),
         (stat.S_ISBLK, "blockdev")]


def describe(path, st, hash_max):
    """The record's words for one entry (a list, the kind first)."""
    kind = next((k for test, k in KINDS if test(st.st_mode)), "unknown")
    if path in EXCLUDE:
        return [kind, "excluded"]
    words = [kind]
    if kind != "link":          # a symlink's mode is always 0777
        words.append("mode=%04o" % stat.S_IMODE(st.st_mode))
    words.append("owner=%d:%d" % (st.st_uid, st.st_gid))
    if kind != "dir":           # a directory's count moves with its subdirs
        words.append("links=%d" % st.st_nlink)
    if kind == "file":
        words.append("size=%d" % st.st_size)
        if st.st_size > hash_max:
            words += ["ino=%d" % st.st_ino, "mtime=%d" % st.st_mtime_ns]
        else:
            digest = sha256_of(path, st)
            words.append("sha256=" + digest if digest else "unreadable")
    elif kind in ("chardev", "blockdev"):
        words.append("dev=%d:%d" % (os.major(st.st_rdev),
                                    os.minor(st.st_rdev)))
    words.append("ctime=%d" % st.st_ctime_ns)
    if kind == "link":
        try:
            words += ["->", quote(os.readlink(path))]
        except OSError:
            words.append("unreadable")
    return words


def walk(root, hash_max=HASH_MAX):
    """{path: words} for root and everything under it, not following
    symlinks.  A root that is not there has no entry (creating it is then
    an addition); one that lstat may not see (a parent this user cannot
    search) is "unknown".  A loop, not recursion: a test that nests
    directories deeper than Python's stack must still be named."""
    entries = {}
    todo = [root]
    while todo:
        path = todo.pop()
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue            # an absent root, or gone since the listing
        except OSError as e:
            entries[path] = ["unknown",
                             "error=" + errno.errorcode.get(e.errno, "?")]
            continue
        words = describe(path, st, hash_max)
        entries[path] = words
        if words[0] == "dir" and "excluded" not in words:
            try:
                names = os.listdir(path)
            except OSError:
                words.append("unlisted")
                continue
            todo += [os.path.join(path, n) for n in names]
    return entries


# ------------------------------------------------------------- leftovers

def leftovers():
    """What a session must not leave behind on the host, present now:
    private temp dirs (/tmp/coil-PID-XXXXXX, and under $TMPDIR) and
    session cgroups (coil.PID anywhere under /sys/fs/cgroup).  A dict
    {path: pid}."""
    found = {}
    tmps = {"/tmp", os.environ.get("TMPDIR") or "/tmp"}
    for d in tmps:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            m = re.match(r"coil-(\d+)-", name)
            p = os.path.join(d, name)
            if m and os.path.isdir(p) and not os.path.islink(p):
                found[p] = int(m.group(1))

    def scan(d, depth):
        try:
            it = list(os.scandir(d))
        except OSError:
            return
        for e in it:
            if not e.is_dir(follow_symlinks=False):
                continue
            m = re.fullmatch(r"coil\.(\d+)", e.name)
            if m:
                found[e.path] = int(m.group(1))
            elif depth < 8:
                scan(e.path, depth + 1)

    scan(CGROUP_ROOT, 0)
    return found


def owned_by(path):
    """Text " (uid N)" after a leftover: a hint to whose session left it."""
    try:
        return " (uid %d)" % os.lstat(path).st_uid
    except OSError:
        return ""


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass
    return True


# ---------------------------------------------------------------- record

def dpkg_log_size():
    try:
        return os.stat(DPKG_LOG).st_size
    except OSError:
        return -1


def record(path, roots, hash_max=HASH_MAX):
    """Walk roots and write the record to path.  Returns ({root: count},
    the seconds the walk took)."""
    t0 = time.monotonic()
    walks = {r: walk(r, hash_max) for r in roots}
    took = time.monotonic() - t0
    lines = ["# " + RECORD_VERSION,
             "# made %s by uid %d, pid %d, in %.2f s" % (
                 time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 os.getuid(), os.getpid(), took),
             "# files over %d bytes go by inode, mtime and ctime" % hash_max,
             "@hash_max %d" % hash_max,
             "@made %.3f" % time.time(),
             "@dpkg_log %d" % dpkg_log_size()]
    lines += ["@root " + quote(r) for r in roots]
    for p in sorted(EXCLUDE):
        lines.append("# excluded %s: %s" % (p, EXCLUDE[p]))
    lines += ["@leftover " + quote(p) for p in sorted(leftovers())]
    for r in roots:
        for p in sorted(walks[r]):
            lines.append(quote(p) + " " + " ".join(walks[r][p]))
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)
    return {r: len(walks[r]) for r in roots}, took


def read_record(path):
    """(meta, entries): meta has hash_max, made, dpkg_log, roots and
    leftovers; entries is {path: words}."""
    meta = {"roots": [], "leftovers": set()}
    entries = {}
    with open(path) as f:
        first = f.readline().rstrip("\n")
        if first != "# " + RECORD_VERSION:
            raise ValueError("'%s' is not a host guard record" % path)
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            word, _, rest = line.partition(" ")
            if word == "@root":
                meta["roots"].append(unquote(rest))
            elif word == "@leftover":
                meta["leftovers"].add(unquote(rest))
            elif word == "@made":
                meta["made"] = float(rest)
            elif word.startswith("@"):
                meta[word[1:]] = int(rest)
            else:
                entries[unquote(word)] = rest.split(" ")
    return meta, entries


# --------------------------------------------------------------- compare

def fields(words):
    """An entry's words as (kind, {name: value}): "-> target" is named
    target, an unreadable file's sha256 and an unreadable link's target
    are "(unreadable)", another bare word is a flag, its own value."""
    kind, out, rest = words[0], {}, words[1:]
    while rest:
        w = rest.pop(0)
        if w == "->" and rest:
            out["target"] = unquote(rest.pop(0))
        elif "=" in w:
            k, _, v = w.partition("=")
            out[k] = v
        elif w == "unreadable":
            out["target" if kind == "link" else "sha256"] = "(unreadable)"
        else:
            out[w] = w
    return kind, out


def plural(n, what):
    return "%d %s%s" % (n, what, "" if n == 1 else "s")


def n_entries(n):
    return "%d %s" % (n, "entry" if n == 1 else "entries")


def short(name, value):
    """A value as a difference shows it: a digest cut, a time as a date."""
    if name == "sha256" and len(value) > 16:
        return value[:16] + ".."
    if value is None:
        return "-"
    if name in ("mtime", "ctime") and value.isdigit():
        ns = int(value)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(
            ns // 10**9)) + ".%09dZ" % (ns % 10**9)
    return value


def brief(words):
    """An entry's words as one line of a difference: digests cut, ctime
    left to the detail (it moves with every other change)."""
    return " ".join("sha256=" + short("sha256", w[7:])
                    if w.startswith("sha256=") else w for w in words
                    if not w.startswith("ctime="))


def ancestors(path):
    while True:
        parent = os.path.dirname(path)
        if parent == path:
            return
        yield parent
        path = parent


def differences(before, after):
    """Each difference as (path, one line of text).  A directory added
    or removed whole is one line with the count of entries inside it.
    ctime is named only when nothing else changed: the entry was touched
    and put back (a chmod undone, a file made and removed in a
    directory), harm all the same.  A directory whose entries came or
    went is not said to be touched as well."""
    out = []
    gone = sorted(set(before) - set(after))
    new = sorted(set(after) - set(before))
    for names, verb, side in ((gone, "removed", before),
                              (new, "added", after)):
        whole = set()       # directories added or removed whole, so far
        for p in names:
            if any(a in whole for a in ancestors(p)):
                continue
            # names is sorted: what starts with "p/" sorts before "p0"
            inside = (bisect.bisect_left(names, p + "0") -
                      bisect.bisect_left(names, p + "/"))
            text = "%s %s: %s%s" % (verb, quote(p), "was " if verb ==
                                    "removed" else "", brief(side[p]))
            if inside:
                text += " (and %s inside)" % n_entries(inside)
                whole.add(p)
            out.append((p, text))
    moved = {os.path.dirname(p) for p in gone + new}
    for p in sorted(set(before) & set(after)):
        if before[p] == after[p]:
            continue
        (k0, f0), (k1, f1) = fields(before[p]), fields(after[p])
        if k0 != k1:
            out.append((p, "changed %s: %s -> %s (was %s; now %s)" % (
                quote(p), k0, k1, brief(before[p]), brief(after[p]))))
            continue
        if {n for n in set(f0) | set(f1)
                if f0.get(n) != f1.get(n)} == {"ctime"}:
            if p not in moved:
                out.append((p, "touched %s: ctime %s -> %s, all else as "
                            "before: %s" % (
                                quote(p), short("ctime", f0.get("ctime")),
                                short("ctime", f1.get("ctime")),
                                TOUCHED.get(unhashed(f0) or k0,
                                            TOUCHED["file"]))))
            continue
        parts = []
        for name in list(f0) + [n for n in f1 if n not in f0]:
            if name == "ctime":
                continue
            v0, v1 = f0.get(name, "-"), f1.get(name, "-")
            if v0 == name or v1 == name:        # a flag came or went
                parts.append(("now " if v1 == name else "no longer ") +
                             name)
            elif v0 != v1:
                if name == "target":
                    v0, v1 = quote(v0), quote(v1)
                parts.append("%s %s -> %s" % (name, short(name, v0),
                                              short(name, v1)))
        out.append((p, "changed %s: %s" % (quote(p), "; ".join(parts))))
    return out


TOUCHED = {
    "file": "a chmod, chown or link undone",
    "dir": "an entry made and removed, or a chmod or chown undone",
    "unhashed": "rewritten in place (its content is not hashed), or a "
                "chmod, chown or link undone",
}


def unhashed(f):
    """"unhashed" for a file the record has no digest of (too big, or
    unreadable to this user): its ctime alone tells of a rewrite."""
    if "ino" in f or f.get("sha256") == "(unreadable)":
        return "unhashed"
    return None


def restore_hint(before, after, p):
    """A command that puts back what chmod or chown took, if that is all
    that changed; else None."""
    (k0, f0), (k1, f1) = fields(before[p]), fields(after[p])
    if k0 != k1 or set(f0) != set(f1):
        return None
    cmds = []
    for name in f0:
        if f0[name] == f1[name] or name == "ctime":
            continue
        if name == "mode":
            cmds.append("chmod %s %s" % (f0[name], p))
        elif name == "owner":
            cmds.append("chown -h %s %s" % (f0[name], p))
        else:
            return None
    return "; ".join(cmds) or None


def dpkg_news(offset):
    """Lines dpkg logged after offset: another engineer's apt-get during
    the run explains a change under /etc, and says so."""
    if offset < 0:
        return []
    try:
        with open(DPKG_LOG, "rb") as f:
            f.seek(offset)
            return f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return []


def compare(path, tap, leftovers_fail=False):
    """TAP checks: each root unchanged since the record at path, and no
    new leftovers.  Returns the number of differences."""
    try:
        meta, rec = read_record(path)
    except (OSError, ValueError) as e:
        tap.check(False, "a host record to compare with",
                  "%s: host-record.py did not run before, or failed" % e)
        return 1
    tap.diag("record %s, made %.0f s ago" % (path, time.time() - meta["made"]))
    roots = meta["roots"]
    t0 = time.monotonic()
    now = {}
    for r in roots:
        now.update(walk(r, meta["hash_max"]))
    took = time.monotonic() - t0
    total = 0
    for r in roots:
        def under(e):
            return {p: w for p, w in e.items()
                    if p == r or p.startswith(r.rstrip("/") + "/")}
        b, a = under(rec), under(now)
        diffs = differences(b, a)
        total += len(diffs)
        if not diffs:
            hidden = a.get(r, ["?"])[0] == "unknown"
            tap.check(True, "host unchanged: %s under %s%s" % (
                n_entries(len(a)), r, " (absent)" if not a else
                " (hidden from this user)" if hidden else ""))
            continue
        for p, text in diffs[:SHOW_MAX]:
            detail = ["before: " + " ".join(b[p]) if p in b else
                      "before: not there",
                      "after:  " + " ".join(a[p]) if p in a else
                      "after:  not there"]
            hint = restore_hint(b, a, p) if p in a and p in b else None
            if hint:
                detail.append("to put it back: " + hint)
            tap.check(False, "host " + text, "\n".join(detail))
        if len(diffs) > SHOW_MAX:
            tap.check(False, "host: %d more differences under %s" % (
                len(diffs) - SHOW_MAX, r),
                "\n".join(text for _, text in diffs[SHOW_MAX:]))
    if total:
        news = dpkg_news(meta.get("dpkg_log", -1))
        if news:
            tap.diag("dpkg ran during the suite (another apt-get on this "
                     "machine?); it may explain changes under /etc:\n" +
                     "\n".join(news[:20]))
    tap.diag("walked %d entries again in %.2f s" % (len(now), took))
    check_leftovers(meta["leftovers"], tap, leftovers_fail)
    return total


def check_leftovers(before, tap, fail):
    """Leftovers new since the record whose process is gone.  This machine
    is shared: a coil another person killed during the run leaves the
    same /tmp/coil-PID-* and coil.PID, and nothing on them says whose it
    was.  So by default they are counted in diagnostics only; with
    HOST_GUARD_LEFTOVERS=fail (a machine the suite has alone, as CI) they
    are a check."""
    now = leftovers()
    new = {p: pid for p, pid in now.items()
           if p not in before and not alive(pid)}
    running = [p for p, pid in now.items() if p not in before and
               alive(pid)]
    dirs = sorted(p for p in new if not p.startswith(CGROUP_ROOT + "/"))
    cgs = sorted(p for p in new if p.startswith(CGROUP_ROOT + "/"))
    text = "coil leftovers new since the record: %s, %s" % (
        plural(len(dirs), "temp dir"), plural(len(cgs), "cgroup"))
    listing = "\n".join(p + owned_by(p) for p in dirs + cgs)
    if running:
        listing += "\nstill running, not counted:\n" + "\n".join(
            sorted(running))
    if fail:
        tap.check(not new, text, listing)
    else:
        tap.diag(text + (" (not a failure: set HOST_GUARD_LEFTOVERS=fail "
                         "where the suite runs alone)" if new else ""))
        if listing:
            tap.diag(listing.strip())


# ------------------------------------------------------------------ main

def record_path():
    """$HOST_GUARD_RECORD, else tests/host-guard.record of the build tree
    (make check runs the tests from the top of it)."""
    return os.environ.get("HOST_GUARD_RECORD") or os.path.join(
        os.getcwd(), "tests", "host-guard.record")


def main_record():
    """The record step, as a test: TAP that says what was recorded."""
    tap = TAP()
    path, roots = record_path(), default_roots()
    counts, took = record(path, roots)
    tap.check(os.path.exists(path), "host recorded: %s under %s in %.2f s" % (
        n_entries(sum(counts.values())), ", ".join(
            r + ("" if counts[r] else " (absent)") for r in roots), took))
    tap.diag("the record: " + path)
    tap.done()


def main_compare(path=None):
    """The compare step, as a test: one check a root or a difference."""
    tap = TAP()
    compare(path or record_path(), tap,
            os.environ.get("HOST_GUARD_LEFTOVERS") == "fail")
    tap.done()


def main(argv):
    if len(argv) >= 3 and argv[1] == "record":
        counts, took = record(argv[2], unique_roots(argv[3:]) or
                              default_roots())
        print("recorded %d entries in %.2f s: %s" % (
            sum(counts.values()), took, argv[2]))
        return 0
    if len(argv) == 3 and argv[1] == "compare":
        main_compare(argv[2])           # exits
    sys.stderr.write("usage: hostguard.py record FILE [ROOT...]\n"
                     "       hostguard.py compare FILE\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
