"""Training-loop scenarios on gpusim, each with a known dominant stall, for the
diagnosis tests. usage: scenario.py LIBGPUSIM NAME [fixed]

NAME: baseline | data_cpu | data_io | io | io_files | cpu | precision | memory | sync |
ckpt | pin_workers | main_loader | dispatch | startup | paced_io | epochs |
compile_pool.
`fixed` runs the same loop with the stall removed, to check the what-if.
Every step is a ProfilerStep#N NVTX range. Most end with a stream sync (as
`loss.item()` does), so host step times track the GPU; `ckpt` launches
asynchronously, so its host-side ranges close long before the GPU is done."""
import multiprocessing as mp
import os
import queue
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simgpu import Gpu  # noqa: E402

MS = 1_000_000
BF16 = b"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"
FP32 = b"ampere_sgemm_128x64_nn"
ELEM = b"void at::native::vectorized_elementwise_kernel<4>"

so, name = sys.argv[1], sys.argv[2]
fixed = len(sys.argv) > 3 and sys.argv[3] == "fixed"
STEPS = int(os.environ.get("SCENARIO_STEPS", "16"))  # the live tests run longer jobs


def burn(seconds):
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)


def read_random(path, n, evicted):
    if evicted:
        evict(path)
    fd = os.open(path, os.O_RDONLY)
    size = os.fstat(fd).st_size
    rnd = random.Random(n)
    for _ in range(n):
        os.pread(fd, 4096, rnd.randrange(0, size // 4096) * 4096)
    os.close(fd)


def read_for(path, seconds):
    """Random reads from disk for `seconds`, however fast the disk: a read
    count calibrated once was 2x off on a CI disk (75 ms a step, not 40),
    and the reads then paced the loop instead of the batches."""
    evict(path)
    fd = os.open(path, os.O_RDONLY)
    pages = os.fstat(fd).st_size // 4096
    rnd = random.Random(seconds)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        os.pread(fd, 4096, rnd.randrange(0, pages) * 4096)
    os.close(fd)


def small_files(count):
    """`count` files of 4 KiB: an image folder, a sharded token store."""
    root = os.path.join(os.environ.get("SCENARIO_DIR", "/tmp"), f"scenario-files-{os.getpid()}")
    os.mkdir(root)
    paths = []
    for k in range(count):
        path = os.path.join(root, f"{k:05}.bin")
        with open(path, "wb") as f:
            f.write(os.urandom(4096))
            f.flush()
            # Clean pages can be evicted without root; a sync of the whole
            # machine would wait for whatever else is being written.
            os.fsync(f.fileno())
        paths.append(path)
    return root, paths


def read_files(paths, evicted):
    """Opens, reads and closes each file, as an image folder's loader does.
    Each read is one short call: no run of calls on one file."""
    for path in paths:
        # The fixed run opens and closes each file too, for the same cost.
        fd = os.open(path, os.O_RDONLY)
        if evicted:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        os.read(fd, 8192)
        os.close(fd)


def data_file():
    path = os.path.join(os.environ.get("SCENARIO_DIR", "/tmp"), f"scenario-data-{os.getpid()}.bin")
    with open(path, "wb") as f:
        f.write(os.urandom(64 << 20))
        f.flush()
        os.fsync(f.fileno())  # clean pages can be evicted without root
    return path


def worker(q, kind, n, delay=0.0):
    """A DataLoader-style worker: makes `n` batches, each costing CPU or I/O,
    after `delay` seconds (staggered workers deliver evenly, not in pairs)."""
    time.sleep(delay)
    path = data_file() if kind == "io" else None
    for _ in range(n):
        if kind == "cpu":
            burn(0.004 if fixed else 0.09)
        elif kind == "cpu2":
            burn(0.004 if fixed else 0.16)
        elif fixed:
            # Files in RAM cost little per read.
            read_random(path, 1500, evicted=False)
        else:
            # About 120 ms from disk, so that the batch, not the 40 ms GPU
            # step, paces the loop. By the clock: a read count calibrated
            # once doubled the batch when the disk slowed down mid-run (a
            # full test run writing beside it), and the estimate for more
            # workers then missed the fixed run, which reads from RAM, by 47%.
            read_for(path, 0.12)
        q.put(b"x" * 1024)
    if path:
        os.unlink(path)


def checkpoint(g, dev):
    """A torch.save of the weights: copy them off the GPU (which waits for it),
    then write and fsync the file."""
    g.item(dev)
    path = os.path.join(os.environ.get("SCENARIO_DIR", "/tmp"), "ckpt.bin")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    chunk = os.urandom(1 << 20)
    for _ in range(48):
        os.write(fd, chunk)
    os.fsync(fd)
    os.close(fd)


def pin_thread(src, dst, n):
    """DataLoader's pin_memory thread: batches from the worker processes'
    queue into an in-process queue the main thread reads."""
    for _ in range(n):
        dst.put(src.get())


def gpu_work(g, kernels, ns, kname=BF16):
    for _ in range(kernels):
        g.launch(kname, ns)


# Python dispatch before each launch in eager mode, and what CUDA graphs or
# torch.compile leave of it (the analyzer's cpu/python what-if assumes 3 us).
DISPATCH_S = 0.00015
GRAPHED_S = 0.000003
SINGLE = b"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
MULTI = b"enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"


def dispatched(g, kernels, ns, overhead):
    """Eager PyTorch: Python work before every launch."""
    for _ in range(kernels):
        burn(overhead)
        g.launch(BF16, ns)


def loader_worker(q, n, cost, waits=False):
    """A DataLoader worker process: each batch costs `cost` of CPU, or of
    waiting (`waits`: for remote storage, say)."""
    for _ in range(n):
        if waits:
            time.sleep(cost)
        else:
            burn(cost)
        q.put(b"x" * 1024)


def start_workers(count, n, cost, maxsize, waits=False):
    ctx = mp.get_context("fork")
    q = ctx.Queue(maxsize=maxsize)
    per = [n // count + (1 if i < n % count else 0) for i in range(count)]
    ps = [ctx.Process(target=loader_worker, args=(q, k, cost, waits)) for k in per]
    for p in ps:
        p.start()
    return q, ps


def epochs(g):
    """A DataLoader without persistent_workers: each epoch starts two new
    workers, which make its batches at 100 ms of CPU each, and stops them
    when the epoch ends; the loop waits for every later epoch's first
    batches. Fixed: four workers kept across the epochs. Both take a
    warm-up batch before the first step."""
    n = 4
    if fixed:
        q, ps = start_workers(4, STEPS + 1, 0.1, 8)
    for e in range(STEPS // n):
        if not fixed:
            q, ps = start_workers(2, n + (e == 0), 0.1, 4)
        if e == 0:
            q.get()
        for i in range(e * n, (e + 1) * n):
            g.step_begin(i)
            q.get()
            gpu_work(g, 10, 4 * MS)
            g.sync()
            g.step_end()
        if not fixed:
            for p in ps:
                p.join()
    for p in ps:
        p.join()


# torch.compile's worker pool (torch/_inductor/compile_worker): a Python
# subprocess the trainer starts, which forks the compile workers; they idle
# once the model is compiled, and live until the job ends. The trainer keeps
# a thread blocked reading the subprocess's replies. The subprocess itself
# wakes up every 20 ms for 2 ms of CPU, as a metrics service (wandb's) does.
POOL = """
import os, select, sys, time
kids = []
for _ in range(int(sys.argv[1])):
    pid = os.fork()
    if pid == 0:
        os.read(0, 1)
        os._exit(0)
    kids.append(pid)
while not select.select([0], [], [], 0.02)[0]:
    end = time.perf_counter() + 0.002
    while time.perf_counter() < end:
        pass
for k in kids:
    os.waitpid(k, 0)
"""


def compile_pool(workers):
    import subprocess
    import threading
    pool = subprocess.Popen([sys.executable, "-c", POOL, str(workers)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    threading.Thread(target=pool.stdout.read, daemon=True).start()
    return pool


def idle_fork(conn):
    """A forked helper that waits on a pipe throughout (a multiprocessing
    Manager's server between calls)."""
    conn.recv()


def main():
    g = Gpu(so, memory=(1 << 30) if name == "memory" else 16 << 30)
    scratch = g.malloc(1 << 20)
    if name in ("data_cpu", "data_io"):
        ctx = mp.get_context("fork")
        q = ctx.Queue(maxsize=2)
        p = ctx.Process(target=worker, args=(q, "cpu" if name == "data_cpu" else "io", STEPS + 1))
        p.start()
        q.get()  # warm-up batch, outside the steps
    if name == "pin_workers":
        # Two workers feed a pin-memory thread, which feeds the main thread.
        ctx = mp.get_context("fork")
        wq = ctx.Queue(maxsize=4)
        per = (STEPS + 2) // 2
        pin_procs = [
            ctx.Process(target=worker, args=(wq, "cpu2", per, k * (0.002 if fixed else 0.08)))
            for k in range(2)
        ]
        for w in pin_procs:
            w.start()
        q = queue.Queue(maxsize=2)
        import threading
        pin = threading.Thread(target=pin_thread, args=(wq, q, 2 * per), daemon=True)
        pin.start()
        q.get()  # warm-up batch, outside the steps
    if name == "io":
        path = data_file()
    if name == "io_files":
        root, files = small_files(600)
    workers = []
    if name == "main_loader" and fixed:
        # The fix: 4 DataLoader workers at the same cost per batch.
        q, workers = start_workers(4, STEPS + 4, 0.04, 8)
        for _ in range(4):
            q.get()  # warm-up batches, outside the steps
    if name == "dispatch":
        # Workers that keep up: a batch every 1 ms for a step of ~35 ms.
        q, workers = start_workers(2, STEPS + 2, 0.002, 4)
        q.get()
    if name == "paced_io":
        # One worker delivers a batch every 100 ms (the fix: four); the loop
        # waits for it while the GPU runs the last step's 40 ms, then reads
        # files for about 40 ms while the GPU idles (the fix: no reads).
        # With batches every 80 ms, a loaded machine's loop (78-84 ms a
        # step) found a batch queued at every step, so none waited: the
        # recording showed nothing of the batches' pace.
        path = data_file()
        q, workers = start_workers(4 if fixed else 1, STEPS + 8, 0.1, 8, waits=True)
        q.get()
    if name == "memory":
        # The caching allocator's blocks: many mid-sized ones.
        cache = [g.malloc(3 << 20) for _ in range(190)]
        weights_host = bytearray(32 << 20)
        import ctypes
        host = ctypes.cast((ctypes.c_char * len(weights_host)).from_buffer(weights_host), ctypes.c_void_p)
        weights_dev = g.malloc(32 << 20)
    if name == "compile_pool":
        # Eight idle compile workers and an idle fork beside two DataLoader
        # workers whose batches take 100 ms of CPU (the fix: four of them).
        pool = compile_pool(8)
        ctx = mp.get_context("fork")
        idle_end, idle_conn = ctx.Pipe()
        idle = ctx.Process(target=idle_fork, args=(idle_conn,))
        idle.start()
        q, workers = start_workers(4 if fixed else 2, STEPS + 4, 0.1, 8)
        q.get()
    if name == "epochs":
        epochs(g)
        print("ok")
        return
    for i in range(STEPS):
        g.step_begin(i)
        if name == "baseline":
            gpu_work(g, 20, 4 * MS)
        elif name in ("data_cpu", "data_io", "compile_pool"):
            q.get()
            gpu_work(g, 10, 4 * MS)
        elif name == "io":
            read_random(path, 600, evicted=not fixed)
            gpu_work(g, 10, 4 * MS)
        elif name == "io_files":
            read_files(files, evicted=not fixed)
            gpu_work(g, 10, 4 * MS)
        elif name == "cpu":
            gpu_work(g, 10, 3 * MS)
            g.sync()
            if not fixed:
                burn(0.1)
        elif name == "precision":
            gpu_work(g, 10, 5 * MS, FP32)
            gpu_work(g, 4, 1 * MS, ELEM)
        elif name == "memory":
            if not fixed:
                for _ in range(4):
                    g.h2d(weights_dev, host, 32 << 20, sync=True)  # pageable "weights" offload
                big = g.malloc(700 << 20)
                if big is None:
                    # OOM: empty the cache (a cudaFree storm) and retry.
                    for b in cache:
                        g.free(b)
                    cache = []
                    big = g.malloc(700 << 20)
                gpu_work(g, 10, 3 * MS)
                g.free(big)
                cache = [g.malloc(3 << 20) for _ in range(190)]
            else:
                gpu_work(g, 10, 3 * MS)
        elif name == "main_loader":
            # num_workers=0: the loop loads each batch itself, then
            # dispatches its kernels from Python.
            if fixed:
                g.range_push(MULTI)
                q.get()
            else:
                g.range_push(SINGLE)
                burn(0.04)
            g.range_pop()
            dispatched(g, 100, MS // 2, DISPATCH_S / 6)
        elif name == "dispatch":
            g.range_push(MULTI)
            q.get()
            g.range_pop()
            dispatched(g, 200, 100_000, GRAPHED_S if fixed else DISPATCH_S)
        elif name == "startup":
            # A new kernel every 4th step, whose first launch loads its
            # module for 150 ms (lazy loading): the GPU finishes the work
            # queued before it and idles while the call still runs.
            gpu_work(g, 10, 4 * MS)
            if i % 4 == 1:
                g.module_load(150 * MS)
                g.launch(f"void new_kernel_{i}<float>".encode(), 2 * MS)
                g.module_load(0)
            # The last kernels wait for a peer's event, 10 ms late.
            g.wait_peer(10 * MS)
            gpu_work(g, 2, 1 * MS)
        elif name == "sync":
            gpu_work(g, 20, 2 * MS)
            g.item(scratch)
            if not fixed:
                burn(0.012)  # logging the loss
        elif name == "ckpt":
            gpu_work(g, 3, 4 * MS)
            if i % 4 == 3 and not fixed:
                checkpoint(g, scratch)
            g.step_end()
            continue
        elif name == "pin_workers":
            q.get()
            gpu_work(g, 10, 4 * MS)
        elif name == "paced_io":
            q.get()
            g.sync()  # the last step's kernels, run while the loop waited
            if not fixed:
                read_for(path, 0.036)
            gpu_work(g, 10, 4 * MS)
            g.step_end()
            continue
        g.sync()
        g.step_end()
    if name == "ckpt":
        g.sync()
    if name in ("data_cpu", "data_io"):
        p.join()
    if name == "pin_workers":
        for w in pin_procs:
            w.join()
    for p in workers:
        p.terminate()
        p.join()
    if name == "compile_pool":
        # The fork holds the pool's stdin too: it goes first.
        idle_end.send(None)
        idle.join()
        pool.stdin.close()
        pool.wait()
    if name in ("io", "paced_io"):
        os.unlink(path)
    if name == "io_files":
        for path in files:
            os.unlink(path)
        os.rmdir(root)
    print("ok")


if __name__ == "__main__":
    main()
