#!/bin/sh
# A pipeline of several traced processes; SIGPIPE ends `yes`.
seq 1 200000 | sort -rn | head -3
yes hostile | head -2
printf 'b\na\nc\n' | sort | tr a-z A-Z > sorted.txt
cat sorted.txt | wc -l
