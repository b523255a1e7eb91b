"""Reads argv[1] in 64 KiB preads, argv[2] times, round and round (a loop
reading a file in pieces, each far below a span threshold), then sleeps
0.1 s; with argv[3] == "exit", leaves by os._exit right after the close
instead (as multiprocessing's workers do)."""
import os
import sys
import time

fd = os.open(sys.argv[1], os.O_RDONLY)
pieces = os.fstat(fd).st_size // 65536
for i in range(int(sys.argv[2])):
    os.pread(fd, 65536, (i % pieces) * 65536)
os.close(fd)
if sys.argv[3:] == ["exit"]:
    os._exit(0)
time.sleep(0.1)
