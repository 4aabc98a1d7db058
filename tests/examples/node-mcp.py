#!/usr/bin/python3
"""share/examples/coil-loop.mjs with coil --mcp as the tool, against OpenAI's
and Anthropic's APIs played back from recorded responses (looplib.py):
the requests it sends (coil's tools and system text, each cell's result,
restored after a crash, a timeout, a figure as an image, every kind of
error), the model's last word, and the chat log it writes, which coil
--replay runs again (--check: the same results).
"""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from looplib import main_checks, node_missing, replay_checks  # noqa: E402
from coiltest import done, skip_all  # noqa: E402

why = node_missing()
if why:
    skip_all(why)

main_checks("node", "mcp")
replay_checks("node", "mcp")
done()
