"""Loops until interrupted; records that it started. Ctrl-C (SIGINT to the
process group) must stop it at once, as KeyboardInterrupt."""
import os
import sys
import time

try:
    with open("started.tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename("started.tmp", "started")
    print("running", flush=True)
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline:
        time.sleep(0.01)
    print("ran to the end (not interrupted)", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
