#!/usr/bin/python3
"""The harness's own containment, which every other sandbox test relies
on: the cgroup logic for v1 and v2 on fake trees (this machine may offer
only one of them; the kernel's side is emulated: a write to
cgroup.subtree_control enables a controller, one to cgroup.procs moves a
process), the real cgroup, and contain.py: a cell's write to /etc lands
in the harness's overlay, coil runs in a PID namespace other than the
harness's, and what a session leaves running is reported and then gone."""
import os
import sys
sys.dont_write_bytecode = True
import sbxlib  # noqa: E402

coiltest = sbxlib.coiltest


class Emulated(sbxlib.Cgroup):
    """Cgroup on a fake tree, with the kernel's side of its files."""
    readback = None             # a limit file that reads back wrong

    def _mount_of(self, d):
        for ctrl, mnt in [(c, self.v1.get(c)) for c in self.want] + \
                [("", self.v2)]:
            if mnt and d.startswith(mnt + "/"):
                return ctrl, mnt
        raise AssertionError(d)

    def _write(self, path, text):
        d, name = os.path.split(path)
        if name == "cgroup.subtree_control":
            have = set(self._read(path).split())
            for w in text.split():
                (have.add if w[0] == "+" else have.discard)(w[1:])
            text = " ".join(sorted(have))
        elif name == "cgroup.procs":
            ctrl, mnt = self._mount_of(d)
            f = os.path.join(self.proc, text, "cgroup")
            os.makedirs(os.path.dirname(f), exist_ok=True)
            lines = open(f).read().splitlines() if os.path.exists(f) else []
            if ctrl:
                ids = {"pids": "8", "memory": "4"}[ctrl]
                line = "%s:%s:%s" % (ids, ctrl, d[len(mnt):])
                lines = [l for l in lines if l.split(":")[1] != ctrl]
            else:
                line = "0::%s" % d[len(mnt):]
                lines = [l for l in lines if not l.startswith("0::")]
            with open(f, "w") as fh:
                fh.write("\n".join(lines + [line]) + "\n")
        elif name == self.readback:
            text = "max"
        with open(path, "w") as f:
            f.write(text)


def fake_tree(kind, controllers="cpu memory pids"):
    """A fake cgroupfs: mountinfo, /proc/self/cgroup, /proc."""
    top = sbxlib.tmpdir("sbx-fakecg-")
    mi = os.path.join(top, "mountinfo")
    own = os.path.join(top, "self-cgroup")
    if kind == 2:
        mnt = os.path.join(top, "unified")
        os.makedirs(os.path.join(mnt, "user.slice"))
        with open(os.path.join(mnt, "user.slice", "cgroup.controllers"),
                  "w") as f:
            f.write(controllers + "\n")
        open(os.path.join(mnt, "user.slice", "cgroup.subtree_control"),
             "w").close()
        with open(mi, "w") as f:
            f.write("35 24 0:30 / %s rw,nosuid shared:9 - cgroup2 cgroup2 "
                    "rw\n" % mnt)
        with open(own, "w") as f:
            f.write("0::/user.slice\n")
    else:
        with open(mi, "w") as f, open(own, "w") as g:
            for i, c in enumerate(("pids", "memory")):
                mnt = os.path.join(top, c)
                os.makedirs(os.path.join(mnt, "job"))
                f.write("%d 24 0:%d / %s rw shared:%d - cgroup cgroup rw,%s\n"
                        % (40 + i, 40 + i, mnt, 10 + i, c))
            g.write("8:pids:/job\n4:memory:/job\n0::/\n")
    return dict(mountinfo=mi, cgroup_file=own, proc=os.path.join(top, "proc"))


tap = sbxlib.begin("the harness's containment")

# cgroup v2, on a fake tree
t = fake_tree(2)
cg = Emulated(100, 1 << 28, name="sbxfake", **t)
tap.ok(cg.create(), "v2: the cgroup is made and its limits read back (%s)"
       % cg.why)
child = os.path.join(cg.v2, "user.slice", "sbxfake")
sub = open(os.path.join(cg.v2, "user.slice",
                        "cgroup.subtree_control")).read().split()
tap.ok("pids" in sub and "memory" in sub, "v2: pids and memory are "
       "enabled in the parent's cgroup.subtree_control (%s)" % sub)
tap.ok(open(os.path.join(child, "pids.max")).read() == "100" and
       open(os.path.join(child, "memory.max")).read() == str(1 << 28),
       "v2: pids.max and memory.max are set in the child")
tap.ok(cg.dirs == {"pids": child, "memory": child}, "v2: one cgroup for "
       "both controllers (%s)" % cg.dirs)
cg.join(4242)
tap.ok(cg.member(4242), "v2: a process moved in is a member "
       "(0::/user.slice/sbxfake)")
tap.ok(not cg.member(4243), "v2: a process not moved in is not")
cg = Emulated(100, 1 << 28, name="sbxfake2", **t)
tap.ok(cg.prove() and cg.proven, "v2: prove() moves a process in and "
       "sees it there (%s)" % cg.why)
cg = Emulated(100, 1 << 28, name="sbxfake3", **fake_tree(2, "cpu pids"))
tap.ok(not cg.create() and not cg.proven and "memory" in (cg.why or ""),
       "v2: no memory controller offered: not proven, saying so (%s)"
       % cg.why)
cg = Emulated(100, 1 << 28, name="sbxfake4", **t)
cg.readback = "pids.max"
tap.ok(not cg.prove() and "reads back" in (cg.why or ""), "v2: a limit "
       "that does not read back: not proven (%s)" % cg.why)

# cgroup v1, on a fake tree
t = fake_tree(1)
cg = Emulated(100, 1 << 28, name="sbxfake", **t)
tap.ok(cg.prove() and cg.proven, "v1: made in each controller's hierarchy, "
       "limits read back, a process moved in (%s)" % cg.why)
tap.ok(sorted(cg.dirs) == ["memory", "pids"] and
       open(os.path.join(cg.dirs["memory"], "memory.limit_in_bytes")).read()
       == str(1 << 28), "v1: memory.limit_in_bytes is set (%s)" % cg.dirs)
cg.join(4242)
with open(os.path.join(t["proc"], "4242", "cgroup"), "w") as f:
    f.write("8:pids:/job/sbxfake\n4:memory:/job\n")
tap.ok(not cg.member(4242), "v1: a process in only one of the two "
       "controllers' cgroups is not a member")

# the real cgroup of this machine
cg = sbxlib.Cgroup(512, 1 << 30)
if not cg.prove():
    tap.skip("this machine's cgroup is proven", cg.why)
else:
    tap.ok(cg.proven, "this machine: the harness's cgroup is proven (%s)"
           % ", ".join("%s v%d" % (c, v) for c, (v, _) in cg.paths.items()))
dirs = list(cg.dirs.values())
cg.remove()
tap.ok(not any(os.path.exists(d) for d in dirs), "the harness's cgroup is "
       "removed")

# contain.py fails closed: nothing runs when it cannot contain it
import subprocess  # noqa: E402
probe_dir = sbxlib.tmpdir("sbx-wd-")
for what, env in (
        ("no scratch dir", {"SBX_PROBE": "x1"}),
        ("a file to plant outside the overlays",
         {"SBX_PROBE": "x2", "SBX_SCRATCH": sbxlib.tmpdir("sbx-scr-"),
          "SBX_OVERLAY": "/etc", "SBX_PLANT": '{"%s/planted": "x"}'
          % probe_dir})):
    p = subprocess.run([sbxlib.CONTAIN, "/bin/sh", "-c", "echo RAN"],
                       env=dict(os.environ, **env), capture_output=True,
                       text=True, timeout=30)
    tap.ok(p.returncode == 97 and "RAN" not in p.stdout and
           p.stderr.startswith("contain: ") and not os.listdir(probe_dir),
           "contain.py with %s: exit 97 before the command, saying why "
           "(%s)" % (what, p.stderr.strip()))

# contain.py around a real coil, under none: nothing of coil's holds
wd = sbxlib.tmpdir("sbx-wd-")
CELL = r'''
import subprocess
open("/etc/coil-contain-check", "w").write("x")
print("RESULT etc ALLOWED", flush=True)
print("RESULT ns ALLOWED %s" % os.readlink("/proc/self/ns/pid"), flush=True)
subprocess.Popen(["/bin/sleep", "654"], start_new_session=True)
'''
r = sbxlib.run("none", [CELL, sbxlib.SESSION_OK], wd)
if r.skipped:
    tap.skip("contain.py holds", r.skip_reason)
else:
    tap.ok(r.get("etc")[0] == "ALLOWED" and not
           os.path.exists("/etc/coil-contain-check"), "a cell's write to "
           "/etc under none landed in the harness's overlay, not on the "
           "host", r)
    tap.ok(r.get("ns")[0] == "ALLOWED" and r.get("ns")[1] != sbxlib.pid_ns(),
           "the cell is in a PID namespace other than the harness's (%s)"
           % r.get("ns")[1], r)
    tap.ok(any("sleep 654" in c for _, c in r.leftovers), "what the session "
           "left running is reported (%s)" % r.leftovers, r)
    tap.ok(not [p for p in coiltest.procs()
                if coiltest.cmdline(p).strip() == "sleep 654"],
           "and it is gone with the harness's PID namespace")
    tap.session(r)
tap.done()
