#!/usr/bin/python3
"""The sandbox attacks of group 'net' (tests/sandbox/attacks.py): TCP, UDP, pathname unix sockets, netlink/vsock/packet/raw sockets.
Run under none, standard and strict, contained by the harness.
    t-net.py [ROW...]"""
import sys
sys.dont_write_bytecode = True
import attacks  # noqa: E402

attacks.main('net')
