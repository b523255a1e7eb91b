#!/bin/sh
# fd limit under threads: `ulimit -n LIMIT` then N threads and open till
# EMFILE (then, with ROUNDS, the last free fd opened ROUNDS times).
# usage: ulimit_threads.sh LIMIT N [ROUNDS]
ulimit -n "$1" || exit 9
exec "$HOSTILE_BIN/threads_fds" "$2" ${3:+"$3"}
