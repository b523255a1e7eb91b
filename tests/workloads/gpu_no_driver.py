"""A program whose output and exit code must not change under the shim,
on a machine with no CUDA driver. Halfway through it does what the CUDA
driver does at cuInit: load CUDA_INJECTION64_PATH and call its
InitializeInjection() (the CUPTI injection contract), so the shim tries the
libcupti it was given and must turn GPU capture off cleanly. It reads files
before and after, prints, and exits with code 3."""
import ctypes
import hashlib
import os
import sys

out_dir = sys.argv[1]
h = hashlib.sha256()
stdlib = os.path.dirname(os.__file__)
names = sorted(n for n in os.listdir(stdlib) if n.endswith(".py"))[:120]


def read_some(part):
    for name in names[part::2]:
        with open(os.path.join(stdlib, name), "rb") as f:
            h.update(f.read())


read_some(0)
inj = os.environ.get("CUDA_INJECTION64_PATH")
if inj:
    ctypes.CDLL(inj).InitializeInjection()
read_some(1)
with open(os.path.join(out_dir, "own-output.bin"), "wb") as f:
    f.write(b"y" * 50_000)
print("digest", h.hexdigest())
sys.stderr.write("a line on stderr\n")
sys.exit(3)
