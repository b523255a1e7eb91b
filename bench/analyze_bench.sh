#!/usr/bin/env bash
# Analysis throughput and peak memory on a synthetic recording.
# usage: bench/analyze_bench.sh [EVENTS] [RUNS] [--api-from-cupti]
#   (defaults: 50000000, 3). --api-from-cupti lays the CUDA API records out as
#   the shim does, in the CUPTI thread's chunks, so the trainer's spans arrive
#   out of order and the reader sorts them.
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-50000000}
runs=${2:-3}
layout=${3:-}
cargo build --release -q -p stallscope -p stallscope-bench
# Binaries (and the recording) live in cargo's target directory.
tgt=${CARGO_TARGET_DIR:-target}
dir=$tgt/bench-synth-$events${layout:+-cupti}
if [ ! -f "$dir/events.count" ]; then
  echo "writing a synthetic recording of $events events to $dir ..."
  rm -rf "$dir"
  "$tgt"/release/synth_recording "$dir" "$events" $layout >"$dir.count.tmp"
  mv "$dir.count.tmp" "$dir/events.count"
fi
actual=$(cat "$dir/events.count")
bytes=$(du -cb "$dir"/*.sst | tail -1 | cut -f1)
# Warm the page cache once, as a second analysis of the same trace would find it.
cat "$dir"/*.sst >/dev/null
walls=(); rss=(); cpus=()
for _ in $(seq "$runs"); do
  out=$( { /usr/bin/time -f "%e %M %U %S" "$tgt"/release/stallscope analyze "$dir" -q --json /dev/null; } 2>&1 | tail -1)
  walls+=("$(echo "$out" | cut -d' ' -f1)"); rss+=("$(echo "$out" | cut -d' ' -f2)")
  cpus+=("$(echo "$out" | awk '{print $3 + $4}')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
w=$(median "${walls[@]}"); m=$(median "${rss[@]}"); c=$(median "${cpus[@]}")
load=$(cut -d' ' -f1 /proc/loadavg)
awk -v e="$actual" -v w="$w" -v m="$m" -v b="$bytes" -v n="$runs" -v c="$c" -v l="$load" -v k="$(nproc)" 'BEGIN {
  printf "stallscope analyze on %d events (%.2f GB of trace), median of %d runs:\n", e, b/1e9, n;
  printf "  wall %.2f s   throughput %.1f M events/s   (target: >= 25 M events/s)\n", w, e/w/1e6;
  # On a shared machine the wall time measures the neighbours: CPU time does not.
  printf "  CPU %.2f s (user+sys)   %.1f M events per CPU-second; load average %s on %d CPUs\n", c, e/c/1e6, l, k;
  printf "  peak RSS %.2f GB = %.2fx the trace size   (target: <= 1.5x)\n", m*1024/1e9, m*1024/b;
}'
