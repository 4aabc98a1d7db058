#!/usr/bin/python3
"""The sandbox attacks of group 'limits' (tests/sandbox/attacks.py): fork, thread and memory bombs, filling the disk, open files.
Run under none, standard and strict, contained by the harness.
    t-limits.py [ROW...]"""
import sys
sys.dont_write_bytecode = True
import attacks  # noqa: E402

attacks.main('limits')
