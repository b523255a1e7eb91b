"""Reads the files of argv[1]/a and argv[1]/b by turns (an image folder with
a folder per class), each with one open, read and close, argv[2] times round,
then sleeps 0.1 s."""
import os
import sys
import time

root = sys.argv[1]
a, b = (sorted(os.path.join(root, d, n) for n in os.listdir(os.path.join(root, d))) for d in "ab")
for _ in range(int(sys.argv[2])):
    for pair in zip(a, b):
        for path in pair:
            fd = os.open(path, os.O_RDONLY)
            os.read(fd, 1 << 20)
            os.close(fd)
time.sleep(0.1)
