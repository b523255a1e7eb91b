#!/bin/sh
# The last free fd under a limit, with threads: `ulimit -n LIMIT`, then
# last_free_fd THREADS ROUNDS.
ulimit -n "$1" || exit 9
exec "$HOSTILE_BIN/last_free_fd" "$2" "$3"
