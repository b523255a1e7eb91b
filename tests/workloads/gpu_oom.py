"""Allocates past the capacity of a gpusim device: the second cudaMalloc
fails with cudaErrorMemoryAllocation (2), as a too-large allocation does on
a real GPU. Writes the sizes and the memory state it saw to REPORT_JSON.

usage: gpu_oom.py LIBGPUSIM REPORT_JSON"""
import ctypes
import json
import sys
import threading

lib = ctypes.CDLL(sys.argv[1])
vp = ctypes.c_void_p
lib.gpusim_configure.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong]
lib.cudaMalloc.argtypes = [ctypes.POINTER(vp), ctypes.c_size_t]
lib.cudaFree.argtypes = [vp]
lib.cudaMemGetInfo.argtypes = [ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]

GIB = 1 << 30
lib.gpusim_configure(b"gpusim-small", 1 * GIB)
held = vp()
assert lib.cudaMalloc(ctypes.byref(held), 384 << 20) == 0
too_big = vp()
requested = 4 * GIB + 12345
rc = lib.cudaMalloc(ctypes.byref(too_big), requested)
free, total = ctypes.c_size_t(), ctypes.c_size_t()
assert lib.cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total)) == 0
assert lib.cudaFree(held) == 0
with open(sys.argv[2], "w") as f:
    json.dump({"tid": threading.get_native_id(), "rc": rc, "requested": requested,
               "free": free.value, "total": total.value}, f)
print("cudaMalloc of", requested, "bytes returned", rc)
