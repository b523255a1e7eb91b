"""A host-only job: the main process writes data files in a temp dir of its
own, then forks workers (os.fork) that each read one file in 256 KiB reads and
checksum it on the CPU for a while. Writes what it did as JSON to argv[1]
(pids, files, bytes read), for the test to compare with the report.

argv: report.json [workers] [cpu_seconds]"""
import json
import os
import sys
import tempfile
import time

CHUNK = 256 * 1024


def work(path, cpu_s):
    """Reads the file, then keeps the CPU busy on its bytes."""
    read = 0
    calls = 0
    with open(path, "rb", buffering=0) as f:
        while True:
            b = f.read(CHUNK)
            calls += 1
            if not b:
                break
            read += len(b)
    end = time.monotonic() + cpu_s
    x = 0
    while time.monotonic() < end:
        for i in range(10_000):
            x = (x * 31 + i) & 0xFFFFFFFF
    return read, calls


def main():
    report = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    cpu_s = float(sys.argv[3]) if len(sys.argv) > 3 else 0.4
    data = tempfile.mkdtemp(prefix="forked_readers.")
    files = []
    for i in range(n):
        p = os.path.join(data, f"part{i}.bin")
        with open(p, "wb") as f:
            f.write(os.urandom(CHUNK * (4 + 2 * i)))
        files.append(p)
    pids = []
    for i in range(n):
        pid = os.fork()
        if pid == 0:
            read, calls = work(files[i], cpu_s)
            with open(f"{report}.{i}", "w") as f:
                json.dump({"pid": os.getpid(), "path": files[i], "bytes": read,
                           "calls": calls}, f)
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    workers = []
    for i in range(n):
        with open(f"{report}.{i}") as f:
            workers.append(json.load(f))
        os.unlink(f"{report}.{i}")
    # The report is written before the data files go: a file created after
    # an unlink may get the freed inode, and the shim names files by device
    # and inode, so its writes would be counted to the deleted file.
    with open(report, "w") as f:
        json.dump({"main_pid": os.getpid(), "dir": data, "workers": workers}, f)
    for p in files:
        os.unlink(p)
    os.rmdir(data)
    print("ok")


if __name__ == "__main__":
    main()
