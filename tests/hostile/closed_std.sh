#!/bin/sh
# stdout closed, and stdin closed.
"$HOSTILE_BIN/stdout_closed" >&-
cat out.txt
cat <&- 2>/dev/null; echo "cat with closed stdin: $?"
