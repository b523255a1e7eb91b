#!/bin/sh
# Starts processes and SIGKILLs each at once, during its start-up (while the
# shim is creating its trace file), 40 times. This shell survives, so the
# recording has at least one good file beside any that the kills cut short.
i=0
while [ $i -lt 40 ]; do
  "$HOSTILE_BIN/die" exit 0 >/dev/null &
  kill -KILL $! 2>/dev/null
  wait $! 2>/dev/null
  i=$((i + 1))
done
echo "40 children started and killed"
