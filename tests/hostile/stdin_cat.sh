#!/bin/sh
# stdin passes through unchanged, through several processes.
cat | tr a-z A-Z | cat > upper.txt
wc -c < upper.txt
head -c 64 upper.txt
