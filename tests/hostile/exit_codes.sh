#!/bin/sh
# Exit statuses of children as the shell sees them, then its own.
for c in 0 1 3 42 255; do sh -c "exit $c"; echo "exit $c -> $?"; done
sh -c 'kill -TERM $$'; echo "self TERM -> $?"
sh -c 'kill -KILL $$'; echo "self KILL -> $?"
false || echo "false -> $?"
exit "${1:-0}"
