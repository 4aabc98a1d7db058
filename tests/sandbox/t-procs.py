#!/usr/bin/python3
"""The sandbox attacks of group 'procs' (tests/sandbox/attacks.py): a daemon, kill(-1, 9), killing init, unshare, io_uring.
Run under none, standard and strict, contained by the harness.
    t-procs.py [ROW...]"""
import sys
sys.dont_write_bytecode = True
import attacks  # noqa: E402

attacks.main('procs')
