#!/usr/bin/env bash
# Two (or more) stallscope binaries side by side on the synthetic recording of
# bench/analyze_bench.sh, interleaved so that the machine's drift hits them
# alike (and in a rotating order, as a run is slowed by the one before it):
# medians of the phases STALLSCOPE_TIMING prints, of the wall time, and of
# the CPU time in user and system mode (steadier than wall time).
# usage: bench/analyze_ab.sh ROUNDS BIN... (the recording must exist: run
#        bench/analyze_bench.sh first; EVENTS defaults to 50000000; REC=PATH
#        names another recording or a Kineto trace, and ARGS adds options to
#        `analyze`, e.g. ARGS=--hta-compat)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=$1
shift
dir=${REC:-${CARGO_TARGET_DIR:-target}/bench-synth-${EVENTS:-50000000}}
if [ -z "${REC:-}" ] && [ ! -f "$dir/events.count" ]; then
  echo "no recording at $dir: run bench/analyze_bench.sh first" >&2
  exit 2
fi
[ -e "$dir" ] || { echo "$dir: no such file or directory" >&2; exit 2; }
ARGS=${ARGS:-} python3 - "$dir" "$rounds" "$@" <<'PY'
import os, re, resource, statistics, subprocess, sys, time
rec, rounds, bins = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
res = {b: {"read": [], "diagnose": [], "wall": [], "user": [], "sys": []} for b in bins}
env = dict(os.environ, STALLSCOPE_TIMING="1")
for r in range(rounds):
    for b in bins[r % len(bins):] + bins[:r % len(bins)]:
        t = time.perf_counter()
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run([b, "analyze", rec, "-q", "--json", os.devnull] + os.environ["ARGS"].split(),
                           env=env, capture_output=True, text=True, check=True)
        res[b]["wall"].append(time.perf_counter() - t)
        ru2 = resource.getrusage(resource.RUSAGE_CHILDREN)
        res[b]["user"].append(ru2.ru_utime - ru.ru_utime)
        res[b]["sys"].append(ru2.ru_stime - ru.ru_stime)
        for k in ("read", "diagnose"):
            res[b][k].append(float(re.search(r"timing: %s ([0-9.]+)" % k, p.stderr).group(1)))
print(f"medians of {rounds} interleaved runs on {rec}:")
for b in bins:
    print(f"  {b}: " + "  ".join(f"{k} {statistics.median(v):.3f} s" for k, v in res[b].items()))
PY
