"""A single-threaded Python program that forks (Python 3.12+ warns on stderr
when it sees other threads at fork: the shim's must not count)."""
import os
import warnings

warnings.simplefilter("default")
pids = []
for i in range(3):
    pid = os.fork()
    if pid == 0:
        with open(f"forked{i}.txt", "w") as f:
            f.write(str(i))
        os._exit(i)
    pids.append(pid)
print([os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in pids])
