"""Writes a file, deletes it, then writes another: ext4 gives the new file
the freed inode at once. Prints whether it did. usage: reused_inode.py DIR"""
import os
import sys

d = sys.argv[1]
old, new = os.path.join(d, "old.bin"), os.path.join(d, "new.bin")
chunk = b"x" * (1 << 20)
with open(old, "wb") as f:
    for _ in range(4):
        f.write(chunk)
ino = os.stat(old).st_ino
os.unlink(old)
with open(new, "wb") as f:
    for _ in range(4):
        f.write(chunk)
# The same file opened again with O_CREAT stays the same object.
with open(new, "ab") as f:
    f.write(chunk)
print("reused" if os.stat(new).st_ino == ino else "not reused")
