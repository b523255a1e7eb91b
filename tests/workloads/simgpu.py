"""A thin ctypes wrapper over gpusim (the CPU stand-in GPU), shaped like the
calls a PyTorch training loop makes underneath."""
import ctypes

H2D, D2H = 1, 2
vp = ctypes.c_void_p


class Gpu:
    def __init__(self, so, name=b"gpusim", memory=16 << 30):
        lib = ctypes.CDLL(so)
        lib.gpusim_configure.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong]
        lib.cudaMalloc.argtypes = [ctypes.POINTER(vp), ctypes.c_size_t]
        lib.cudaMallocHost.argtypes = [ctypes.POINTER(vp), ctypes.c_size_t]
        lib.cudaFree.argtypes = [vp]
        lib.cudaStreamCreate.argtypes = [ctypes.POINTER(vp)]
        lib.cudaMemcpyAsync.argtypes = [vp, vp, ctypes.c_size_t, ctypes.c_int, vp]
        lib.cudaMemcpy.argtypes = [vp, vp, ctypes.c_size_t, ctypes.c_int]
        lib.cudaStreamSynchronize.argtypes = [vp]
        lib.gpusim_launch.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong, vp]
        lib.gpusim_nvtx_push.argtypes = [ctypes.c_char_p]
        self.lib = lib
        self.check(lib.gpusim_configure(name, memory), "configure")
        self.stream = vp()
        self.check(lib.cudaStreamCreate(ctypes.byref(self.stream)), "stream")

    @staticmethod
    def check(rc, what):
        if rc != 0:
            raise SystemExit(f"{what} failed: {rc}")

    def malloc(self, nbytes):
        """Returns a device pointer, or None when the device is out of memory."""
        p = vp()
        rc = self.lib.cudaMalloc(ctypes.byref(p), nbytes)
        if rc == 2:
            return None
        self.check(rc, "cudaMalloc")
        return p

    def free(self, p):
        self.check(self.lib.cudaFree(p), "cudaFree")

    def pinned(self, nbytes):
        p = vp()
        self.check(self.lib.cudaMallocHost(ctypes.byref(p), nbytes), "cudaMallocHost")
        return p

    def h2d(self, dst, src, nbytes, sync=False):
        if sync:
            self.check(self.lib.cudaMemcpy(dst, src, nbytes, H2D), "cudaMemcpy")
        else:
            self.check(self.lib.cudaMemcpyAsync(dst, src, nbytes, H2D, self.stream), "cudaMemcpyAsync")

    def item(self, dev):
        """A `.item()`: a 4-byte device-to-host copy, which waits for the GPU."""
        out = ctypes.create_string_buffer(4)
        self.check(self.lib.cudaMemcpy(ctypes.cast(out, vp), dev, 4, D2H), "cudaMemcpy D2H")

    def launch(self, name, ns):
        self.check(self.lib.gpusim_launch(name, ns, self.stream), "launch")

    def sync(self):
        self.check(self.lib.cudaStreamSynchronize(self.stream), "sync")

    def step_begin(self, i):
        self.lib.gpusim_nvtx_push(f"ProfilerStep#{i}".encode())

    def step_end(self):
        self.lib.gpusim_nvtx_pop()

    def wait_peer(self, delay_ns):
        """cudaStreamWaitEvent on a peer's event that completes `delay_ns`
        after the work queued on this stream."""
        self.check(self.lib.gpusim_stream_wait_peer(self.stream, ctypes.c_ulonglong(delay_ns)), "wait")

    def module_load(self, ns):
        """From now on, the first launch of each kernel name loads its module
        for `ns` inside the launch call."""
        self.lib.gpusim_set_module_load(ctypes.c_ulonglong(ns))

    def range_push(self, name):
        """An NVTX range, as record_function or the DataLoader's own."""
        self.lib.gpusim_nvtx_push(name)

    def range_pop(self):
        self.lib.gpusim_nvtx_pop()
