"""Plays another CUPTI client (as torch.profiler's kineto would) against
gpusim. Before any CUDA call it subscribes to the callback API, so the
shim's cuptiSubscribe gets MULTIPLE_SUBSCRIBERS. After a first phase of
kernels it registers its own activity buffers through the global symbol
(as a program linked against libcupti does), taking the records over.

usage: gpu_other_client.py LIBGPUSIM REPORT_JSON"""
import ctypes
import json
import sys

lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
vp = ctypes.c_void_p
lib.gpusim_launch.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong, vp]
lib.cuptiActivityGetNextRecord.argtypes = [vp, ctypes.c_size_t, ctypes.POINTER(vp)]

CALLBACK = ctypes.CFUNCTYPE(None, vp, ctypes.c_uint32, ctypes.c_uint32, vp)
on_api = CALLBACK(lambda *a: None)
handle = vp()
sub_rc = lib.cuptiSubscribe(ctypes.byref(handle), on_api, None)

for i in range(100):
    assert lib.gpusim_launch(b"before_takeover", 5_000, None) == 0
assert lib.cudaDeviceSynchronize() == 0
assert lib.cuptiActivityFlushAll(0) == 0  # phase 1 goes to whoever holds the buffers now

REQUEST = ctypes.CFUNCTYPE(None, ctypes.POINTER(vp), ctypes.POINTER(ctypes.c_size_t),
                           ctypes.POINTER(ctypes.c_size_t))
COMPLETE = ctypes.CFUNCTYPE(None, vp, ctypes.c_uint32, vp, ctypes.c_size_t, ctypes.c_size_t)
buffers, received = [], [0]


def request(buf, size, max_records):
    b = ctypes.create_string_buffer(1 << 20)
    buffers.append(b)
    buf[0] = ctypes.cast(b, vp)
    size[0] = 1 << 20
    max_records[0] = 0


def complete(ctx, stream, buf, size, valid):
    rec = vp()
    while lib.cuptiActivityGetNextRecord(buf, valid, ctypes.byref(rec)) == 0:
        received[0] += 1


req, done = REQUEST(request), COMPLETE(complete)
# Through the global symbol table, as a program linked against libcupti calls it.
glob = ctypes.CDLL(None)
reg_rc = glob.cuptiActivityRegisterCallbacks(req, done)
for i in range(100):
    assert lib.gpusim_launch(b"after_takeover", 5_000, None) == 0
assert lib.cudaDeviceSynchronize() == 0
assert lib.cuptiActivityFlushAll(0) == 0
with open(sys.argv[2], "w") as f:
    json.dump({"subscribe_rc": sub_rc, "register_rc": reg_rc, "received": received[0]}, f)
print("other client received", received[0] > 0)
