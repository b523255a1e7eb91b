"""Python dup2s files onto fds 700-703 and writes through them while
threads read."""
import os
import threading


def work():
    fd = os.open("/dev/zero", os.O_RDONLY)
    for _ in range(2000):
        os.pread(fd, 64, 0)
    os.close(fd)


for target in (700, 701, 702, 703):
    fd = os.open(f"p{target}.txt", os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o644)
    os.write(fd, b"first\n")
    os.dup2(fd, target)
    os.close(fd)
    ts = [threading.Thread(target=work) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    os.write(target, b"second\n")
    os.close(target)
for target in (700, 701, 702, 703):
    print(target, open(f"p{target}.txt").read().split())
