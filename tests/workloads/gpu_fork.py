"""A gpusim workload that forks a child, as DataLoader workers are forked.

usage: gpu_fork.py LIBGPUSIM DATA_FILE REPORT_JSON [child-first]

Default: the parent launches kernels (so GPU capture is running), then
forks. The child reads a file and also calls CUDA functions (gpusim routes
them to the inherited CUPTI subscriber: the shim must ignore them there),
then exits normally. The parent launches more kernels after the fork.

child-first: the parent forks before any CUDA call; the child initializes
"CUDA" itself (its own cuInit, as a worker owning a GPU does) and launches
kernels, which its own trace must hold."""
import ctypes
import json
import os
import sys

so, data, report = sys.argv[1:4]
child_first = len(sys.argv) > 4 and sys.argv[4] == "child-first"
lib = ctypes.CDLL(so)
vp = ctypes.c_void_p
lib.gpusim_launch.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong, vp]
lib.cudaMalloc.argtypes = [ctypes.POINTER(vp), ctypes.c_size_t]
lib.gpusim_configure.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong]
lib.gpusim_configure(None, 1 << 30)

launched = 0
if not child_first:
    for i in range(50):
        assert lib.gpusim_launch(b"parent_before_fork", 5_000, None) == 0
        launched += 1
    assert lib.cudaDeviceSynchronize() == 0

r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    with open(data, "rb") as f:
        n = len(f.read())
    p = vp()
    oom = lib.cudaMalloc(ctypes.byref(p), 8 << 30)  # past capacity
    for _ in range(20):
        lib.gpusim_launch(b"child_kernel", 5_000, None)
    lib.cudaDeviceSynchronize()
    os.write(w, json.dumps({"read": n, "oom_rc": oom, "kernels": 20}).encode())
    os.close(w)
    sys.exit(0)
os.close(w)
child = json.loads(os.read(r, 4096).decode())
_, status = os.waitpid(pid, 0)
for i in range(50):
    assert lib.gpusim_launch(b"parent_after_fork", 5_000, None) == 0
    launched += 1
assert lib.cudaDeviceSynchronize() == 0
with open(report, "w") as f:
    json.dump({"parent": os.getpid(), "child": pid, "child_status": status,
               "child_report": child, "parent_kernels": launched}, f)
print("child exited with", os.waitstatus_to_exitcode(status))
