#!/usr/bin/python3
# The host guard, last step: after every other test, walk what
# host-record.py recorded again and fail on each difference, by name
# (Makefile.am orders it).  See hostguard.py.
import os
import sys

sys.dont_write_bytecode = True          # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostguard  # noqa: E402

hostguard.main_compare()
