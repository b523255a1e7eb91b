"""Reads data files in 64 KiB chunks three ways (buffered, os.pread, mmap), from
two threads of the main process and from two forked multiprocessing workers.
Writes what it did as JSON to argv[2], for the test to compare with the trace."""
import json
import mmap
import multiprocessing as mp
import os
import sys
import threading

CHUNK = 64 * 1024


def read_buffered(path):
    calls = 0
    with open(path, "rb", buffering=CHUNK) as f:
        while True:
            calls += 1
            if not f.read(CHUNK):
                return calls


def read_pread(path):
    fd = os.open(path, os.O_RDONLY)
    size = os.fstat(fd).st_size
    calls = 0
    for off in range(0, size, CHUNK):
        os.pread(fd, CHUNK, off)
        calls += 1
    os.close(fd)
    return calls


def read_mmap(path):
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        total = sum(m[off] for off in range(0, len(m), 4096))
        size = len(m)
        m.close()
    return size, total


def worker(path, q):
    calls = read_buffered(path)
    size, _ = read_mmap(path)
    q.put({"pid": os.getpid(), "tid": threading.get_native_id(), "path": path,
           "read_calls": calls, "mmap_bytes": size})


def main():
    data_dir, report = sys.argv[1], sys.argv[2]
    paths = [os.path.join(data_dir, f"shard{i}.bin") for i in range(4)]
    for i, p in enumerate(paths):
        with open(p, "wb") as f:
            f.write(bytes([i]) * (CHUNK * (8 + i)))

    threads = []
    results = [None, None]

    def run(i):
        results[i] = {"tid": threading.get_native_id(), "path": paths[i], "pread_calls": read_pread(paths[i])}

    for i in range(2):
        t = threading.Thread(target=run, args=(i,))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()

    ctx = mp.get_context("fork")
    q = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(paths[2 + i], q)) for i in range(2)]
    for p in procs:
        p.start()
    workers = [q.get() for _ in procs]
    for p in procs:
        p.join()

    with open(report, "w") as f:
        json.dump({"main_pid": os.getpid(), "threads": results, "workers": workers}, f)
    print("ok")


if __name__ == "__main__":
    main()
