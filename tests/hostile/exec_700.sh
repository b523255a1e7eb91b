#!/bin/sh
# bash opens fd 700 itself (the shim's old trace fd) and logs through it.
exec bash -c '
exec 700>log.txt
for i in 1 2 3; do echo "line $i" >&700; sleep 0.05; done
exec 701>other.txt
echo "to 701" >&701
ls /proc/self/fd >/dev/null
exec 700>&-
cat log.txt other.txt
'
