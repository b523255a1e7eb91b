"""SIGCHLD and SIGUSR1 handlers in Python; children exit while the parent sleeps."""
import os
import signal
import subprocess
import time

seen = []
signal.signal(signal.SIGUSR1, lambda s, f: seen.append("usr1"))
signal.signal(signal.SIGCHLD, lambda s, f: seen.append("chld"))
os.kill(os.getpid(), signal.SIGUSR1)
procs = [subprocess.Popen(["true"]) for _ in range(5)]
for p in procs:
    p.wait()
time.sleep(0.05)
print("usr1" in seen, "chld" in seen)
print(subprocess.run(["sh", "-c", "echo from sh; exit 3"], capture_output=True))
