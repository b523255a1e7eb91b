"""Drives gpusim (a CPU stand-in GPU) through ctypes like a small training
loop: two host threads each launch kernels on their own stream, with pinned
and pageable copies in both directions, a memset, stream and device syncs,
NVTX ranges, and one timed sleep between two launches of the main thread.

usage: gpu_streams.py LIBGPUSIM REPORT_JSON [KERNELS [DELAY_S]]

DELAY_S: seconds to wait after loading gpusim, before the first CUDA call.

Writes what it did to REPORT_JSON, for the test to compare with the trace.
Times are CLOCK_MONOTONIC (time.monotonic_ns), the trace's clock."""
import ctypes
import json
import sys
import threading
import time

so, report_path = sys.argv[1], sys.argv[2]
total = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
delay = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
H2D, D2H = 1, 2
lib = ctypes.CDLL(so)
vp = ctypes.c_void_p
lib.gpusim_configure.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong]
lib.cudaMalloc.argtypes = [ctypes.POINTER(vp), ctypes.c_size_t]
lib.cudaMallocHost.argtypes = [ctypes.POINTER(vp), ctypes.c_size_t]
lib.cudaFreeHost.argtypes = [vp]
lib.cudaFree.argtypes = [vp]
lib.cudaStreamCreate.argtypes = [ctypes.POINTER(vp)]
lib.cudaMemcpyAsync.argtypes = [vp, vp, ctypes.c_size_t, ctypes.c_int, vp]
lib.cudaMemcpy.argtypes = [vp, vp, ctypes.c_size_t, ctypes.c_int]
lib.cudaMemsetAsync.argtypes = [vp, ctypes.c_int, ctypes.c_size_t, vp]
lib.cudaStreamSynchronize.argtypes = [vp]
lib.gpusim_launch.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong, vp]
lib.gpusim_nvtx_push.argtypes = [ctypes.c_char_p]
lib.cuptiGetStreamId.argtypes = [vp, vp, ctypes.POINTER(ctypes.c_uint32)]


def check(rc, what):
    if rc != 0:
        raise SystemExit(f"{what} failed: {rc}")


time.sleep(delay)
check(lib.gpusim_configure(b"gpusim-test", 8 << 30), "configure")
MB = 1 << 20
dev = vp()
check(lib.cudaMalloc(ctypes.byref(dev), 16 * MB), "cudaMalloc")
pinned = vp()
check(lib.cudaMallocHost(ctypes.byref(pinned), 4 * MB), "cudaMallocHost")
pageable = ctypes.create_string_buffer(4 * MB)
pageable_p = ctypes.cast(pageable, vp)


def stream():
    s = vp()
    check(lib.cudaStreamCreate(ctypes.byref(s)), "cudaStreamCreate")
    sid = ctypes.c_uint32()
    # CUPTI's id for the stream, to find its records; gpusim's CUPTI side
    # fails every call under GPUSIM_CUPTI_VERSION=fail, the CUDA side works.
    if lib.cuptiGetStreamId(None, s, ctypes.byref(sid)) != 0:
        return s, None
    return s, sid.value


class Worker:
    def __init__(self, label, kernels):
        self.label, self.kernels = label, kernels
        self.stream, self.stream_id = stream()
        self.launches, self.copies, self.memsets, self.syncs = [], [], [], 0
        self.sleep = None

    def copy(self, i, kind, pinned_mem, size, sync_call):
        host = pinned if pinned_mem else pageable_p
        dst, src = (dev, host) if kind == H2D else (host, dev)
        if sync_call:
            check(lib.cudaMemcpy(dst, src, size, kind), "cudaMemcpy")
            stream_id = None  # the legacy default stream
        else:
            check(lib.cudaMemcpyAsync(dst, src, size, kind, self.stream), "cudaMemcpyAsync")
            stream_id = self.stream_id
        self.copies.append({"kind": kind, "pinned": pinned_mem, "bytes": size,
                            "stream": stream_id, "api": "cudaMemcpy" if sync_call else "cudaMemcpyAsync"})

    def run(self):
        self.tid = threading.get_native_id()
        lib.gpusim_nvtx_push(f"loop-{self.label}".encode())
        for i in range(self.kernels):
            if i % 100 == 0:
                step = i // 100
                self.copy(i, H2D, True, (step + 1) * 64 * 1024, False)
                self.copy(i, H2D, False, 256 * 1024, False)
                self.copy(i, D2H, True, 128 * 1024, False)
                if step % 2 == 0:
                    self.copy(i, D2H, False, 64 * 1024, True)
                check(lib.cudaMemsetAsync(dev, 0, 32 * 1024, self.stream), "cudaMemsetAsync")
                self.memsets.append(32 * 1024)
            name = f"{self.label}_kernel_{i % 7}"
            check(lib.gpusim_launch(name.encode(), 10_000 + 1_000 * (i % 5), self.stream), "launch")
            self.launches.append(name)
            if i % 250 == 249:
                check(lib.cudaStreamSynchronize(self.stream), "cudaStreamSynchronize")
                self.syncs += 1
            if self.label == "main" and i == self.kernels // 3:
                t0 = time.monotonic_ns()
                time.sleep(0.004)
                self.sleep = {"after_launch": i, "t0": t0, "t1": time.monotonic_ns()}
        lib.gpusim_nvtx_pop()


main = Worker("main", total // 2)
side = Worker("side", total - total // 2)
t = threading.Thread(target=side.run, name="launcher")
t.start()
main.run()
t.join()
check(lib.cudaDeviceSynchronize(), "cudaDeviceSynchronize")
check(lib.cudaFreeHost(pinned), "cudaFreeHost")
check(lib.cudaFree(dev), "cudaFree")
report = {"device_syncs": 1, "threads": []}
for w in (main, side):
    report["threads"].append({
        "label": w.label, "tid": w.tid, "stream": w.stream_id, "launches": w.launches,
        "copies": w.copies, "memsets": w.memsets, "stream_syncs": w.syncs, "sleep": w.sleep,
    })
with open(report_path, "w") as f:
    json.dump(report, f)
print("launched", sum(len(w.launches) for w in (main, side)), "kernels")
