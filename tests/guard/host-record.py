#!/usr/bin/python3
# The host guard, first step: record /etc, /usr/local, ~/.ssh and the
# device nodes every sandbox binds, before any other test runs
# (Makefile.am orders it).  See hostguard.py.
import os
import sys

sys.dont_write_bytecode = True          # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostguard  # noqa: E402

hostguard.main_record()
