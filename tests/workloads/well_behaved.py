"""A program whose output and exit code must not change under the shim: it
reads files, writes one of its own, prints, and exits with code 3."""
import hashlib
import os
import sys

out_dir = sys.argv[1]
h = hashlib.sha256()
for name in sorted(os.listdir(os.path.dirname(os.__file__)))[:200]:
    p = os.path.join(os.path.dirname(os.__file__), name)
    if os.path.isfile(p):
        with open(p, "rb") as f:
            h.update(f.read())
fd = os.open(os.__file__, os.O_RDONLY)
for i in range(20_000):
    h.update(os.pread(fd, 64, (i * 64) % 4096))
os.close(fd)
payload = b"x" * 100_000
with open(os.path.join(out_dir, "own-output.bin"), "wb") as f:
    f.write(payload)
print("digest", h.hexdigest())
print("wrote", os.path.getsize(os.path.join(out_dir, "own-output.bin")))
sys.stderr.write("a line on stderr\n")
sys.exit(3)
