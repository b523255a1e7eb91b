"""A small job with a forked worker, as a DataLoader forks its workers: the
parent reads some files, forks a multiprocessing worker that reads more, waits
for it and exits 0. usage: forked_worker.py"""
import multiprocessing as mp
import os


def read_stdlib(limit):
    base = os.path.dirname(os.__file__)
    total = 0
    for name in sorted(os.listdir(base))[:limit]:
        p = os.path.join(base, name)
        if os.path.isfile(p):
            with open(p, "rb") as f:
                total += len(f.read())
    return total


def worker(q):
    # Enough calls that the shim keeps the worker's file (a process whose
    # calls took under 1 ms in all leaves none).
    fd = os.open(os.__file__, os.O_RDONLY)
    for i in range(20_000):
        os.pread(fd, 64, (i * 64) % 4096)
    os.close(fd)
    q.put((os.getpid(), read_stdlib(200)))


if __name__ == "__main__":
    read_stdlib(100)
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=worker, args=(q,))
    p.start()
    pid, n = q.get()
    p.join()
    print(f"parent {os.getpid()} worker {pid} read {n} bytes")
