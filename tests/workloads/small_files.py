"""Reads every file of a directory (open, read, close), as a data loader of many
small samples does. Prints the seconds the read loop took."""
import os
import sys
import time

d = sys.argv[1]
names = sorted(os.listdir(d))
t = time.perf_counter()
total = 0
for n in names:
    with open(os.path.join(d, n), "rb") as f:
        total += len(f.read())
print(time.perf_counter() - t)
