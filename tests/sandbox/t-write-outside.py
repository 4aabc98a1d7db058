#!/usr/bin/python3
"""Writing outside the work directory: system dirs are read-only binds and
outside Landlock's write rules; anything else of the machine is not in the
worker's root.  The work dir, the private tmp and --allow-write DIR are
writable, and what the worker writes is owned on disk by the dir's owner.
Under none every write lands."""
import os
import sbxlib

out = sbxlib.tmpdir("sbx-out-", "/srv" if os.path.isdir("/srv") else "/opt")
targets = {
    "usr": "/usr/local/coil-sandbox-test",
    "etc": "/etc/coil-sandbox-test",
    "outside": os.path.join(out, "f"),
}

WRITE = "".join(r'''
t(%r, lambda: open(%r, "w").write("x"))
k(%r, lambda c: c.open(%r, 0o101, 0o644))
''' % (n, path, n + "-kernel", path.encode()) for n, path in targets.items())
WRITE += r'''
t("workdir", lambda: open("in-workdir", "w").write("x"))
t("tmpdir", lambda: open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "sbx-t"), "w").write("x"))
'''

tap = sbxlib.begin("writing outside the work directory")
wd = sbxlib.tmpdir("sbx-wd-")
try:
    for p in sbxlib.PROFILES:
        r = sbxlib.run(p, [WRITE, sbxlib.SESSION_OK], wd)
        for n, path in targets.items():
            if p == "none":
                tap.allowed(r, n)
            else:
                tap.denied(r, n)
                tap.denied(r, n + "-kernel", words=False, kernel=True)
                tap.ok(not os.path.exists(path), "%s: nothing appeared at "
                       "%s" % (p, path))
            if os.path.exists(path):
                os.remove(path)
        tap.allowed(r, "workdir", "the work directory is writable")
        tap.allowed(r, "tmpdir", "the private temp dir is writable")
        f = os.path.join(wd, "in-workdir")
        st = os.stat(f)
        tap.ok((st.st_uid, st.st_gid) == (os.getuid(), os.getgid()),
               "%s: the file is owned on disk by the work dir's owner "
               "(%d:%d)" % (p, st.st_uid, st.st_gid))
        os.remove(f)
        tap.session(r)
    r = sbxlib.run("standard", [WRITE], wd, args=("--allow-write", out))
    tap.allowed(r, "outside", "--allow-write lifts it")
finally:
    for path in targets.values():
        if os.path.exists(path):
            os.remove(path)
tap.done()
