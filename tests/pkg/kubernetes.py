#!/usr/bin/python3
"""share/kubernetes: the manifests are Kubernetes objects whose every field
is one the API knows, set as coil needs, and the probe they run answers
for the session.

- kubectl, offline (no cluster, no kubeconfig): `kubectl label --local
  --dry-run=client -o json` parses each file as kubectl does (YAML, every
  document) into JSON as written; `kubectl set image --local` (pods and
  jobs) and `kubectl set selector --local` (services) decode it into the
  API's Go types and print them again.  A field the API does not have
  (a misspelling, a field of a newer release) is dropped by that round
  trip and a value of the wrong type fails it: so "every field written
  is in the typed copy, unchanged" is the check, and a misspelt copy
  shows it catches one.  (kubectl create/apply --dry-run=client need a
  server for discovery and the OpenAPI schema, so they cannot run here.)
- What coil needs, read from the parsed objects: hostUsers false, a
  non-root uid, no capabilities, procMount Unmasked, seccomp and
  AppArmor Unconfined for coil's container, --http's port the one the
  probes, the container and the Service name, the token from a Secret
  and never on the command line, the memory limit covering --memory and
  --checkpoint-memory, the probe script where `make install` puts it.
- coil-probe.py against a real `coil --mcp --http` with a token: it
  passes, also while a cell runs; a wrong token, no token and no server
  fail it, saying why.
- The pod's conditions, made here (root only): coil as the manifests'
  uid, without capabilities, with no_new_privs, in a mount namespace of
  the test's own: with /proc as procMount: Unmasked leaves it, a cell
  runs and the sandbox's namespaces hold, also with / read-only
  (readOnlyRootFilesystem) but the work dir; with a file of /proc covered
  as a runtime's default (Masked) does, coil refuses to start, naming
  the /proc mount.  Nothing outside that namespace changes.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "mcp"))
from coiltest import COIL, SYSPYTHON, TOP, check, cleanup, done, skip, \
    workdir  # noqa: E402
from mcphttp import HttpCoil  # noqa: E402

SRC = os.environ.get("srcdir") or TOP
K8S = os.path.join(SRC, "share", "kubernetes")
PROBE = os.path.join(K8S, "coil-probe.py")
PROBE_INSTALLED = "/usr/share/coil/kubernetes/coil-probe.py"
KUBECTL = shutil.which("kubectl")
TOKEN = "k8s-test-token-0123456789abcdef"
MARK = "check.invalid/coil:0"


def kubectl(*args):
    """kubectl offline: no kubeconfig, HOME a fresh dir (its cache)."""
    home = tempfile.mkdtemp(prefix="coil-kubectl-",
                            dir=os.environ.get("TEST_WORKDIR"))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home}
    try:
        return subprocess.run([KUBECTL, *args], capture_output=True,
                              text=True, env=env, timeout=120)
    finally:
        cleanup(home)


def objects(out):
    """The objects of kubectl's -o json output (an object or a List)."""
    dec, objs, i = json.JSONDecoder(), [], 0
    while i < len(out):
        if out[i].isspace():
            i += 1
            continue
        o, i = dec.raw_decode(out, i)
        objs += o["items"] if o.get("kind") == "List" else [o]
    return objs


def raw(path):
    r = kubectl("label", "--local", "--dry-run=client", "-o", "json",
                "-f", path, "coil-check=1")
    return r, objects(r.stdout) if r.returncode == 0 else []


def typed(path, kind):
    if kind == "Service":
        r = kubectl("set", "selector", "--local", "--dry-run=client", "-o",
                    "json", "-f", path, "coil-check=1")
    else:
        r = kubectl("set", "image", "--local", "--dry-run=client", "-o",
                    "json", "-f", path, "*=" + MARK)
    return r, objects(r.stdout) if r.returncode == 0 else []


def leaves(o, path=""):
    """(path, value) of every leaf; list items by index, or by name."""
    if isinstance(o, dict):
        for k, v in o.items():
            yield from leaves(v, path + "." + k)
    elif isinstance(o, list):
        for i, v in enumerate(o):
            key = v.get("name") if isinstance(v, dict) and "name" in v \
                else i
            yield from leaves(v, "%s[%s]" % (path, key))
    else:
        yield path, o


def lost(raw_obj, typed_obj, kind):
    """What the typed round trip dropped or changed."""
    t = dict(leaves(typed_obj))
    out = []
    for p, v in leaves(raw_obj):
        if p.endswith(".image") or p == ".metadata.labels.coil-check" or \
                (kind == "Service" and p.startswith(".spec.selector.")):
            continue
        if p not in t or t[p] != v:
            out.append("%s: %r -> %r" % (p, v, t.get(p, "(dropped)")))
    return out


# ---- sizes and the pod's parts -------------------------------------------

def coil_size(s):
    """A SIZE as coil reads it (K, M, G, T: powers of 1024)."""
    m = re.fullmatch(r"(\d+)([KMGT]?)", s)
    return int(m.group(1)) * 1024 ** " KMGT".index(m.group(2) or " ")


def k8s_size(s):
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi|Ti)?", s)
    return int(m.group(1)) * {None: 1, "Ki": 1024, "Mi": 1024 ** 2,
                              "Gi": 1024 ** 3, "Ti": 1024 ** 4}[m.group(2)]


def opt(args, name):
    return args[args.index(name) + 1] if name in args else None


def pod_spec(o):
    return o["spec"] if o["kind"] == "Pod" else o["spec"]["template"]["spec"]


def coil_container(spec):
    for c in spec.get("initContainers", []) + spec.get("containers", []):
        if c.get("command", [None])[0] == "coil":
            return c
    return None


def effective(spec, c, key):
    """A security setting of container c, or the pod's when c has none."""
    v = c.get("securityContext", {}).get(key)
    return v if v is not None else spec.get("securityContext", {}).get(key)


def check_pod(name, o):
    spec = pod_spec(o)
    c = coil_container(spec)
    if not check(c is not None, "%s: a container runs coil" % name):
        return None
    args, sc = c.get("args", []), c.get("securityContext", {})
    check(spec.get("hostUsers") is False, "%s: hostUsers: false (a user "
          "namespace of the pod's own)" % name)
    uid = effective(spec, c, "runAsUser")
    check(effective(spec, c, "runAsNonRoot") is True and uid not in (None, 0),
          "%s: coil runs as a non-root uid (%s)" % (name, uid))
    check(sc.get("capabilities", {}).get("drop") == ["ALL"] and
          not sc.get("capabilities", {}).get("add"),
          "%s: every capability dropped, none added" % name, sc)
    check(sc.get("allowPrivilegeEscalation") is False,
          "%s: allowPrivilegeEscalation: false" % name)
    check(sc.get("procMount") == "Unmasked", "%s: procMount: Unmasked (coil "
          "mounts the session's /proc)" % name)
    check(sc.get("privileged") is not True, "%s: not privileged" % name)
    for key in ("seccompProfile", "appArmorProfile"):
        p = effective(spec, c, key) or {}
        check(p.get("type") in ("Unconfined", "Localhost"),
              "%s: %s Unconfined or Localhost for coil's container (%s)"
              % (name, key, p.get("type")))
    check(spec.get("automountServiceAccountToken") is False,
          "%s: no service account token for model-written code" % name)
    check("--mcp" in args and opt(args, "--http") is not None,
          "%s: coil --mcp --http" % name, args)
    http = opt(args, "--http") or ":0"
    port = int(http.rsplit(":", 1)[1])
    check("--http-token-file" not in args and
          not any(TOKEN in a or "Bearer" in a for a in args),
          "%s: no token on the command line" % name)
    env = {e["name"]: e for e in c.get("env", [])}
    if not http.startswith("127."):
        ref = env.get("COIL_HTTP_TOKEN", {}).get("valueFrom", {}).get(
            "secretKeyRef")
        check(ref is not None and "value" not in env["COIL_HTTP_TOKEN"],
              "%s: off loopback, the token comes from a Secret through "
              "COIL_HTTP_TOKEN" % name, env.get("COIL_HTTP_TOKEN"))
        ports = {p.get("name"): p["containerPort"] for p in c.get("ports",
                                                                  [])}
        check(ports.get("mcp") == port, "%s: the container port named mcp "
              "is --http's (%d)" % (name, port), ports)
    mem, ck = opt(args, "--memory"), opt(args, "--checkpoint-memory")
    limit = c.get("resources", {}).get("limits", {}).get("memory")
    if check(mem is not None and ck is not None and limit is not None,
             "%s: --memory, --checkpoint-memory and a memory limit" % name):
        need = coil_size(mem) + coil_size(ck)
        check(k8s_size(limit) >= need + 256 * 1024 ** 2,
              "%s: the limit %s covers --memory %s, --checkpoint-memory %s "
              "and 256Mi for the rest" % (name, limit, mem, ck))
    probes = [k for k in ("startupProbe", "readinessProbe", "livenessProbe")
              if k in c]
    check("startupProbe" in probes and "livenessProbe" in probes,
          "%s: a startup and a liveness probe" % name, probes)
    for k in probes:
        cmd = c[k].get("exec", {}).get("command", [])
        check(cmd[:2] == ["python3", PROBE_INSTALLED] and
              opt(cmd, "--port") == str(port),
              "%s: %s runs coil-probe.py on port %d" % (name, k, port), cmd)
    mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
    check(opt(args, "--workdir") in mounts and "/tmp" in mounts,
          "%s: the work dir and /tmp are volumes (the root is read-only)"
          % name, mounts)
    return c


# ---- the probe, for real ---------------------------------------------------

def probe(port, env_token=None, *extra):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if env_token is not None:
        env["COIL_HTTP_TOKEN"] = env_token
    return subprocess.run([SYSPYTHON, PROBE, "--port", str(port),
                           "--timeout", "20", *extra], capture_output=True,
                          text=True, env=env, timeout=60)


def check_probe():
    env = dict(os.environ, COIL_HTTP_TOKEN=TOKEN)
    wd = workdir()
    hc = HttpCoil("--workdir", wd, env=env)
    try:
        if not check(hc.port is not None, "coil --mcp --http serves with "
                     "a token", hc.stderr_text()):
            return
        r = probe(hc.port, TOKEN)
        check(r.returncode == 0, "the probe passes with the token from "
              "COIL_HTTP_TOKEN", r.stderr)
        tf = os.path.join(wd, "token")
        with open(tf, "w") as f:
            f.write(TOKEN + "\n")
        r = probe(hc.port, None, "--token-file", tf)
        check(r.returncode == 0, "the probe passes with --token-file",
              r.stderr)
        r = probe(hc.port, TOKEN[::-1])
        check(r.returncode == 1 and "401" in r.stderr and "wrong bearer "
              "token" in r.stderr, "a wrong token fails it, saying so",
              r.stderr)
        r = probe(hc.port)
        check(r.returncode == 1 and "401" in r.stderr,
              "no token fails it", r.stderr)
        # While a cell is in flight: the supervisor answers.
        base = hc.headers

        def with_token(extra=None, sid=True):
            return base(dict(extra or {}, Authorization="Bearer " + TOKEN),
                        sid)
        hc.headers = with_token
        st, _ = hc.initialize()
        st2, _, sse = hc.rpc("tools/call", {"name": "run_python",
                                            "arguments": {
                                                "code": "import time\n"
                                                "time.sleep(60)",
                                                "timeout": 120}})
        r = probe(hc.port, TOKEN)
        check(st == 200 and st2 == 200 and r.returncode == 0, "the probe "
              "passes while a cell is in flight (a 60 s sleep)",
              (st, st2, r.stderr))
        if hasattr(sse, "conn"):
            sse.conn.close()
    finally:
        hc.close()
        cleanup(wd)
    r = probe(hc.port, TOKEN)
    check(r.returncode == 1 and "no answer" in r.stderr,
          "no server fails it, saying so", r.stderr)


# ---- the pod's conditions, made here ---------------------------------------

# runc's default masked paths: a file among them is covered with
# /dev/null, which locks the container's /proc against a new proc mount
# in a user namespace.
MASKED = ("/proc/kcore", "/proc/timer_list", "/proc/keys",
          "/proc/latency_stats", "/proc/sched_debug")


def in_pod(uid, args, mask, code, ro_root=False):
    """coil --plain with the pod's options, as uid without capabilities,
    in a mount namespace of its own where mask (or nothing) is covered,
    and with ro_root, / read-only but the test's dir.  Exit 77: the
    namespace could not be made so."""
    top = tempfile.mkdtemp(prefix="coil-k8s-")
    try:
        os.chmod(top, 0o755)
        binary = os.path.join(top, "coil")
        shutil.copy(COIL, binary)
        os.chmod(binary, 0o755)
        work = os.path.join(top, "work")
        os.mkdir(work)
        os.chown(work, uid, uid)
        inner = ("mount --bind /dev/null %s || exit 77; " % mask
                 if mask else "") + \
            ("mount --bind %s %s && mount -o remount,bind,ro / || exit 77; "
             % (top, top) if ro_root else "") + \
            ('h=$1; shift; exec setpriv --reuid %d --regid %d '
             '--clear-groups --inh-caps=-all --bounding-set=-all '
             '--no-new-privs env -i PATH=/usr/bin:/bin HOME="$h" "$@"'
             % (uid, uid))
        r = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c",
             inner, "sh", work, binary, "--plain", "--no-record",
             "--workdir", work, *args], input=code, capture_output=True,
            text=True, timeout=120)
        return r
    finally:
        shutil.rmtree(top, ignore_errors=True)


def check_in_pod(c, spec):
    why = None
    if os.geteuid() != 0:
        why = "not root: cannot make the pod's mount namespace and uid"
    elif not shutil.which("unshare") or not shutil.which("setpriv"):
        why = "no unshare or setpriv (util-linux)"
    else:
        top = tempfile.mkdtemp(prefix="coil-k8s-")
        try:
            shutil.copy(COIL, os.path.join(top, "coil"))
            r = subprocess.run([os.path.join(top, "coil"), "--version"],
                               capture_output=True, timeout=60)
            if r.returncode != 0:
                why = "a copy of coil in %s does not run (noexec?)" % top
        except OSError as e:
            why = "a copy of coil in %s does not run: %s" % (top, e)
        finally:
            shutil.rmtree(top, ignore_errors=True)
    if why:
        skip("coil under the pod's conditions", why)
        return
    uid = effective(spec, c, "runAsUser")
    args = c["args"]
    keep = []
    for name in ("--memory", "--checkpoint-memory"):
        keep += [name, opt(args, name)]
    r = in_pod(uid, keep, None, "print(6 * 7)\n")
    check(r.returncode == 0 and "42" in r.stdout, "as uid %d without "
          "capabilities and /proc unmasked, a cell runs" % uid,
          r.stdout + r.stderr)
    r = in_pod(uid, keep + ["--sandbox-report"], None, "")
    for what in ("user namespace", "mount namespace", "pid namespace",
                 "network namespace"):
        check(re.search(r"^\s*on\s+%s" % what, r.stdout, re.M),
              "there the %s holds" % what, r.stdout + r.stderr)
    r = in_pod(uid, keep, None, "print(6 * 7)\n", ro_root=True)
    if r.returncode == 77:
        skip("a read-only root", "/ cannot be remounted read-only here")
    else:
        check(r.returncode == 0 and "42" in r.stdout, "with / read-only "
              "but the work dir (readOnlyRootFilesystem), a cell runs",
              r.stdout + r.stderr)
    mask = next((p for p in MASKED if os.path.isfile(p)), None)
    if mask is None:
        skip("coil under a masked /proc", "none of %s here" % (MASKED,))
        return
    r = in_pod(uid, keep, mask, "print(6 * 7)\n")
    if r.returncode == 77:
        skip("coil under a masked /proc", "%s cannot be covered" % mask)
        return
    check(r.returncode != 0 and "42" not in r.stdout and
          "mounting the session's /proc" in r.stderr,
          "with %s masked (procMount: Default), coil refuses to start, "
          "naming the /proc mount" % mask, r.stdout + r.stderr)


def check_catches():
    """The round trip catches a field the API does not have, and a wrong
    type."""
    wd = workdir()
    try:
        with open(os.path.join(K8S, "session.yaml")) as f:
            text = f.read()
        bad = os.path.join(wd, "typo.yaml")
        with open(bad, "w") as f:
            f.write(text.replace("hostUsers:", "hostUser:").replace(
                "procMount:", "procMounts:"))
        _, o = raw(bad)
        _, t = typed(bad, "Pod")
        miss = lost(o[0], t[0], "Pod") if o and t else []
        check(len(miss) == 2 and any("hostUser:" in m or ".hostUser" in m
                                     for m in miss),
              "a misspelt copy: the round trip drops its two fields", miss)
        with open(bad, "w") as f:
            f.write(text.replace("runAsUser: 1000", "runAsUser: many"))
        r, _ = typed(bad, "Pod")
        check(r.returncode != 0 and "runAsUser" in r.stderr,
              "a value of the wrong type fails kubectl", r.stderr)
    finally:
        cleanup(wd)


def main():
    check_probe()
    files = sorted(f for f in os.listdir(K8S) if f.endswith(".yaml"))
    check(files == ["eval-job.yaml", "service.yaml", "session.yaml"],
          "share/kubernetes has the session, the Service and the Job",
          files)
    if KUBECTL is None:
        skip("the manifests through kubectl", "kubectl is not installed "
             "(Debian: apt-get install kubernetes-client)")
        done()
    r = kubectl("version", "--client", "-o", "json")
    try:
        v = json.loads(r.stdout)["clientVersion"]
        minor = int(re.match(r"\d+", v["minor"]).group(0))
    except (ValueError, KeyError, AttributeError):
        minor, v = 0, r.stdout + r.stderr
    # appArmorProfile came in 1.30 (hostUsers 1.25, backoffLimitPerIndex
    # and sidecars 1.28): an older kubectl's types drop them.
    typed_ok = minor >= 30
    got = {}
    for f in files:
        path = os.path.join(K8S, f)
        r, objs = raw(path)
        if not check(r.returncode == 0 and len(objs) == 1, "kubectl parses "
                     "%s: one object" % f, r.stderr):
            continue
        o = objs[0]
        got[o["kind"]] = o
        if not typed_ok:
            skip("%s: every field is the API's" % f, "kubectl %s predates "
                 "fields these files use (appArmorProfile: 1.30)" % v)
            continue
        r, t = typed(path, o["kind"])
        check(r.returncode == 0 and len(t) == 1 and
              not lost(o, t[0], o["kind"]), "%s: every field is the API's "
              "(%s, kubectl's types)" % (f, o["kind"]),
              r.stderr + "\n".join(lost(o, t[0], o["kind"]) if t else []))
    check(sorted(got) == ["Job", "Pod", "Service"], "a Pod, a Service and "
          "a Job", sorted(got))
    if typed_ok:
        check_catches()
    if "Pod" in got:
        c = check_pod("session.yaml", got["Pod"])
        if "Service" in got and c is not None:
            svc = got["Service"]["spec"]
            labels = got["Pod"]["metadata"]["labels"]
            check(all(labels.get(k) == v for k, v in
                      svc["selector"].items()), "the Service selects the "
                  "session's pod", svc["selector"])
            check([p.get("targetPort") for p in svc["ports"]] == ["mcp"],
                  "the Service reaches the container's mcp port",
                  svc["ports"])
        if c is not None:
            check_in_pod(c, got["Pod"]["spec"])
    if "Job" in got:
        job = got["Job"]
        spec = pod_spec(job)
        c = check_pod("eval-job.yaml", job)
        check(job["spec"].get("completionMode") == "Indexed" and
              spec.get("restartPolicy") == "Never",
              "the Job is Indexed, its pods not restarted")
        if c is not None:
            check(c in spec.get("initContainers", []) and
                  c.get("restartPolicy") == "Always",
                  "coil is a native sidecar: it ends when the harness does")
            http = opt(c["args"], "--http")
            harness = [h for h in spec["containers"] if h is not c]
            urls = [e.get("value") for h in harness for e in h.get("env", [])
                    if e["name"] == "COIL_MCP_URL"]
            check(http.startswith("127.") and
                  urls == ["http://%s/mcp" % http], "the harness reaches "
                  "coil on the pod's loopback", (http, urls))
            for h in harness:
                check(h.get("securityContext", {}).get("procMount") is None
                      and effective(spec, h, "seccompProfile")["type"] ==
                      "RuntimeDefault", "the harness keeps the runtime's "
                      "defaults")
    mk = open(os.path.join(SRC, "Makefile.am")).read()
    check(re.search(r"kubernetesdir\s*=\s*\$\(pkgdatadir\)/kubernetes", mk)
          and "share/kubernetes/coil-probe.py" in mk,
          "make install puts coil-probe.py in $(pkgdatadir)/kubernetes, "
          "where the probes run it from")
    done()


main()
