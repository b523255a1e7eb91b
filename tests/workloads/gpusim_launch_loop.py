"""Host cost of a kernel launch: launches N tiny kernels through gpusim
and prints the median host nanoseconds per gpusim_launch call (the ctypes
call included; it costs the same with and without the shim).

usage: gpusim_launch_loop.py LIBGPUSIM N"""
import ctypes
import statistics
import sys
import time

lib = ctypes.CDLL(sys.argv[1])
n = int(sys.argv[2])
vp = ctypes.c_void_p
lib.gpusim_launch.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong, vp]
lib.cudaStreamCreate.argtypes = [ctypes.POINTER(vp)]
launch, clock = lib.gpusim_launch, time.perf_counter_ns
stream = vp()
assert lib.cudaStreamCreate(ctypes.byref(stream)) == 0
name = b"tiny_kernel"
samples = []
for i in range(n):
    t0 = clock()
    launch(name, 1_000, stream)
    samples.append(clock() - t0)
    if i % 1000 == 999:
        lib.cudaStreamSynchronize(stream)  # not timed: keeps the queue short
lib.cudaDeviceSynchronize()
print(f"{statistics.median(samples):.0f}")
