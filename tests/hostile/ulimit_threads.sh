#!/bin/sh
# fd limit under threads: `ulimit -n LIMIT` then N threads and open till EMFILE.
ulimit -n "$1" || exit 9
exec "$HOSTILE_BIN/threads_fds" "$2"
