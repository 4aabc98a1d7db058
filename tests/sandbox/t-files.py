#!/usr/bin/python3
"""The sandbox attacks of group 'files' (tests/sandbox/attacks.py): reading /etc/shadow and ~/.ssh, a home's credentials, writing outside the work dir, chmod and chown, set-uid and set-gid bits, links, /proc/1/environ.
Run under none, standard and strict, contained by the harness.
    t-files.py [ROW...]"""
import sys
sys.dont_write_bytecode = True
import attacks  # noqa: E402

attacks.main('files')
