#!/bin/sh
# A file-size limit: the writer dies of SIGXFSZ at 64 KiB, as without the shim.
ulimit -f 64
head -c 200000 /dev/zero > big.bin
echo "dd status: $?"
ls -l big.bin | awk '{print $5}'
