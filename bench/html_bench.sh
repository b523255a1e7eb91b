#!/usr/bin/env bash
# The HTML report of a large recording: its size and how long headless
# Chromium takes to lay it out and paint it.
# usage: bench/html_bench.sh [EVENTS] [RUNS]   (defaults: 50000000, 3)
# Targets: at most 2 MB, rendered in under 2 s.
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-50000000}
runs=${2:-3}
command -v chromium >/dev/null || { echo "chromium is missing: eval \"\$(tests/setup)\"" >&2; exit 2; }
cargo build --release -q -p stallscope -p stallscope-bench
tgt=${CARGO_TARGET_DIR:-target}
# The same synthetic recording as bench/analyze_bench.sh (shared when both run).
dir=$tgt/bench-synth-$events
if [ ! -f "$dir/events.count" ]; then
  echo "writing a synthetic recording of $events events to $dir ..."
  rm -rf "$dir"
  "$tgt"/release/synth_recording "$dir" "$events" >"$dir.count.tmp"
  mv "$dir.count.tmp" "$dir/events.count"
fi
out=$tgt/html-bench
mkdir -p "$out"
html=$out/report-$events.html
/usr/bin/time -f "%e" -o "$out/analyze.time" "$tgt"/release/stallscope analyze "$dir" -q --html "$html"
size=$(stat -c %s "$html")
# The page measures itself: performance.now() after a forced style and layout
# is the time from navigation start to a page ready to paint. The wall time
# of a full-page screenshot (start-up, load, paint, PNG) is set against the
# same run on an empty page.
probe=$out/probe.html
sed 's|</body>|<script>document.body.getBoundingClientRect();{const p=document.createElement("pre");p.id="rendered";p.textContent=performance.now().toFixed(0)+" "+document.querySelectorAll("*").length;document.body.appendChild(p);}</script></body>|' "$html" >"$probe"
echo '<!DOCTYPE html><html><body></body></html>' >"$out/empty.html"
chrome() {
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$out/profile" \
    --proxy-server=127.0.0.1:9 --window-size=1280,4000 "$@" 2>/dev/null
}
shot() {
  local t0 t1
  t0=$(date +%s.%N)
  chrome --screenshot="$out/shot.png" "file://$PWD/$1" >/dev/null
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}
ms=(); walls=(); blanks=()
for _ in $(seq "$runs"); do
  r=$(chrome --dump-dom "file://$PWD/$probe" | sed -n 's|.*<pre id="rendered">\([0-9]*\) \([0-9]*\)</pre>.*|\1 \2|p')
  [ -n "$r" ] || { echo "the page did not measure itself" >&2; exit 1; }
  ms+=("${r% *}"); elements=${r#* }
  walls+=("$(shot "$html")"); blanks+=("$(shot "$out/empty.html")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
m=$(median "${ms[@]}"); w=$(median "${walls[@]}"); b=$(median "${blanks[@]}")
awk -v e="$(cat "$dir/events.count")" -v s="$size" -v m="$m" -v w="$w" -v n="$runs" \
    -v el="$elements" -v b="$b" -v a="$(cat "$out/analyze.time")" 'BEGIN {
  printf "HTML report of a %d-event recording (analyze --html took %.1f s):\n", e, a;
  printf "  size %.0f kB, %d elements   (target: <= 2 MB)\n", s/1024, el;
  printf "  headless Chromium, median of %d: laid out %d ms after navigation start   (target: < 2000 ms)\n", n, m;
  printf "  full-page screenshot run %.2f s, the same on an empty page %.2f s\n", w, b;
  exit !(s <= 2*1024*1024 && m < 2000);
}'
