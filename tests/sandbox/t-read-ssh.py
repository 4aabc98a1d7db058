#!/usr/bin/python3
"""Reading ~/.ssh: the home directory is not in the worker's root at all
(and Landlock allows nothing of it), whatever the uid.  --allow-read DIR
lifts it.  Under none it is read."""
import os
import pwd
import sbxlib

home = pwd.getpwuid(os.getuid()).pw_dir
ssh = os.path.join(home, ".ssh")
made_dir = not os.path.isdir(ssh)
os.makedirs(ssh, mode=0o700, exist_ok=True)
key = os.path.join(ssh, "coil-sandbox-test-key")
with open(key, "w") as f:
    f.write("SECRET KEY\n")
os.chmod(key, 0o600)

READ = r'''
t("hook", lambda: open(%r).read().strip())
k("kernel", lambda c: c.open(%r, 0))
t("listdir", lambda: os.listdir(%r))
''' % (key, key.encode(), ssh)

tap = sbxlib.begin("reading ~/.ssh")
wd = sbxlib.tmpdir("sbx-wd-")
try:
    for p in sbxlib.PROFILES:
        r = sbxlib.run(p, [READ, sbxlib.SESSION_OK], wd)
        if p == "none":
            tap.allowed(r, "hook")
        else:
            tap.denied(r, "hook")
            tap.denied(r, "kernel", words=False, kernel=True)
            tap.denied(r, "listdir")
        tap.session(r)
    r = sbxlib.run("standard", [READ], wd, args=("--allow-read", ssh))
    tap.ok(r.get("hook") == ("ALLOWED", "'SECRET KEY'"),
           "standard --allow-read ~/.ssh: readable (%s)" % (r.get("hook"),),
           r)
    # The work dir is a home: its credentials are covered all the same.
    fake = sbxlib.tmpdir("sbx-home-")
    os.makedirs(os.path.join(fake, ".ssh"), mode=0o700)
    with open(os.path.join(fake, ".ssh", "id_rsa"), "w") as f:
        f.write("HOME KEY\n")
    with open(os.path.join(fake, ".netrc"), "w") as f:
        f.write("machine x password hunter2\n")
    with open(os.path.join(fake, "notes.txt"), "w") as f:
        f.write("fine\n")
    HOME = r'''
t("home-key", lambda: open(".ssh/id_rsa").read().strip())
k("home-key-kernel", lambda c: c.open(b".ssh/id_rsa", 0))
t("home-netrc", lambda: open(".netrc").read().strip())
k("home-netrc-kernel", lambda c: c.open(b".netrc", 0))
t("home-write", lambda: open(".ssh/authorized_keys", "a").write("ssh-rsa evil"))
t("home-notes", lambda: open("notes.txt").read().strip())
'''
    for p in sbxlib.PROFILES:
        r = sbxlib.run(p, [HOME, sbxlib.SESSION_OK], fake)
        ak = os.path.join(fake, ".ssh", "authorized_keys")
        if p == "none":
            tap.allowed(r, "home-key")
            tap.allowed(r, "home-write")
            os.remove(ak)
            continue
        for n in ("home-key", "home-netrc", "home-write"):
            tap.denied(r, n)
        for n in ("home-key-kernel", "home-netrc-kernel"):
            tap.denied(r, n, words=False, kernel=True)
        tap.allowed(r, "home-notes", "the rest of the work dir is readable")
        tap.ok(not os.path.exists(ak), "%s: nothing was added to .ssh" % p)
        tap.session(r)
    r = sbxlib.run("standard", [HOME], fake, args=(
        "--allow-read", os.path.join(fake, ".ssh")))
    tap.ok(r.get("home-key") == ("ALLOWED", "'HOME KEY'"), "standard "
           "--allow-read HOME/.ssh: readable again (%s)" % (r.get("home-key"),),
           r)
finally:
    os.remove(key)
    if made_dir:
        os.rmdir(ssh)
tap.done()
