"""Large outputs on stdout and stderr, and a large file."""
import sys

out = sys.stdout.buffer
for i in range(200_000):
    out.write(b"%08d the quick brown fox\n" % i)
out.flush()
for i in range(20_000):
    sys.stderr.write("err %06d\n" % i)
with open("big.txt", "wb") as f:
    for i in range(50):
        f.write(bytes([i]) * 100_000)
