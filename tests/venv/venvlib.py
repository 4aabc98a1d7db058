"""What the venv tests share: a virtualenv made with the system's python3
(Debian's python3-venv) and a small wheel written by hand, offline.

Both live in directories the test makes (under $TEST_WORKDIR) and
removes; nothing here touches the network or the machine's own
Python."""
import base64
import hashlib
import os
import subprocess
import sys
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import skip_all  # noqa: E402

PY = "/usr/bin/python3"


def python_version():
    """The system python3's "3.11": the one coil embeds (setup.sh)."""
    out = subprocess.run([PY, "-c", "import sys; print('%d.%d' % "
                          "sys.version_info[:2])"], capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


def make_venv(path, pip=True, system_site=False):
    """python3 -m venv path (with pip from Debian's python3-pip-whl when
    pip); the whole script is skipped when python3-venv is missing."""
    args = [PY, "-m", "venv"]
    if not pip:
        args.append("--without-pip")
    if system_site:
        args.append("--system-site-packages")
    r = subprocess.run(args + [path], capture_output=True, text=True,
                       env=dict(os.environ, PIP_NO_INDEX="1"))
    if r.returncode != 0:
        skip_all("python3 -m venv fails (apt-get install python3-venv): "
                 + (r.stderr or r.stdout)[-300:])
    return path


def site_packages(venv):
    return os.path.join(venv, "lib", "python" + python_version(),
                        "site-packages")


def plant_module(venv, name, text):
    """A module straight into the venv's site-packages (no pip)."""
    with open(os.path.join(site_packages(venv), name + ".py"), "w") as f:
        f.write(text)


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return "%s,sha256=%s,%d" % (name, digest.rstrip(b"=").decode(),
                                len(data))


def make_wheel(wheeldir, name="tinypkg", version="0.1", value=42):
    """A pure-Python wheel, written by hand (a wheel is a zip with a
    dist-info): the package `name` with VALUE = value and a console
    script `name`-hello that prints "hello from NAME".  Its path."""
    os.makedirs(wheeldir, exist_ok=True)
    info = "%s-%s.dist-info" % (name, version)
    files = {
        name + "/__init__.py": (
            "VALUE = %d\n\n\ndef hello():\n    print('hello from %s')\n"
            % (value, name)).encode(),
        info + "/METADATA": ("Metadata-Version: 2.1\nName: %s\n"
                             "Version: %s\nSummary: coil's test package\n"
                             % (name, version)).encode(),
        info + "/WHEEL": (b"Wheel-Version: 1.0\nGenerator: coil-test\n"
                          b"Root-Is-Purelib: true\nTag: py3-none-any\n"),
        info + "/entry_points.txt": ("[console_scripts]\n%s-hello = "
                                     "%s:hello\n" % (name, name)).encode(),
        info + "/top_level.txt": (name + "\n").encode(),
    }
    record = [_record_line(n, d) for n, d in files.items()]
    record.append(info + "/RECORD,,")
    files[info + "/RECORD"] = ("\n".join(record) + "\n").encode()
    path = os.path.join(wheeldir, "%s-%s-py3-none-any.whl" % (name, version))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            z.writestr(n, d)
    return path


def set_cfg(venv, key, value):
    """Change (or add) key in the venv's pyvenv.cfg."""
    cfg = os.path.join(venv, "pyvenv.cfg")
    with open(cfg) as f:
        lines = f.read().splitlines()
    out, done = [], False
    for line in lines:
        k = line.partition("=")[0].strip().lower()
        if k == key:
            out.append("%s = %s" % (key, value))
            done = True
        else:
            out.append(line)
    if not done:
        out.append("%s = %s" % (key, value))
    with open(cfg, "w") as f:
        f.write("\n".join(out) + "\n")
