"""os.pread argv[2] times from argv[1] (64 bytes each), then sleeps 0.2 s.
Prints progress every 1000 calls when argv[3] == 'progress'."""
import os
import sys
import time

fd = os.open(sys.argv[1], os.O_RDONLY)
n = int(sys.argv[2])
progress = len(sys.argv) > 3 and sys.argv[3] == "progress"
i = 0
while n < 0 or i < n:
    os.pread(fd, 64, (i * 64) % 4096)
    i += 1
    if progress and i % 1000 == 0:
        print(i, flush=True)
time.sleep(0.2)
