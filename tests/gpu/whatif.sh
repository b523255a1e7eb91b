#!/usr/bin/env bash
# What-if check on a real CUDA machine: for each scenario of tests/gpu/whatif.py,
# records the stalled run, takes the report's finding for the planted cause
# (and says where it ranks) and its estimated step time after the fix, then
# records the run with that fix applied and compares the estimate with the
# step time measured there (both GPU-side means from `analyze`, as
# tests/scenarios_e2e.rs does on gpusim). The recordings it leaves in
# WORK_DIR are what analyzer/tests/data/h200 holds.
#
# usage: tests/gpu/whatif.sh [STALLSCOPE [WORK_DIR]]
# env: PYTHON (default python3), SCENARIOS (default "loader precision sync memory").
# exit: 0 when every scenario ran (the table says how close each estimate was),
#       1 a run failed, 2 cannot run here.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=${1:-$repo/target/release/stallscope}
work=${2:-$(mktemp -d "${TMPDIR:-/tmp}/stallscope-whatif.XXXXXX")}
py=${PYTHON:-python3}
[[ -x "$bin" ]] || { echo "whatif.sh: no stallscope binary at $bin" >&2; exit 2; }
mkdir -p "$work"

# record NAME ARGS...: one recorded run and its JSON and text reports.
record() {
    local name=$1; shift
    timeout --kill-after=10 180 "$bin" record -o "$work/$name" -- \
        "$py" "$here/whatif.py" "$@" --out "$work/$name.summary.json" \
        >"$work/$name.out" 2>"$work/$name.err" || {
        echo "whatif.sh: the $name run failed:" >&2; tail -n 30 "$work/$name.err" >&2; exit 1; }
    cat "$work/$name.out"
    "$bin" analyze "$work/$name" --json "$work/$name.report.json" >"$work/$name.report.txt" 2>"$work/$name.analyze.err" || {
        echo "whatif.sh: analyze $name failed:" >&2; cat "$work/$name.analyze.err" >&2; exit 1; }
}

# field REPORT EXPR: a value from a JSON report (r is the report, f the
# finding for $cause, else the top one, n its rank).
field() {
    "$py" - "$1" "$2" "$cause" <<'EOF'
import json, re, sys
r = json.load(open(sys.argv[1]))
fs = r.get("findings") or []
n = next((k + 1 for k, x in enumerate(fs) if x.get("cause") == sys.argv[3]), 1 if fs else 0)
f = fs[n - 1] if n else {}
advised = re.search(r"num_workers \d+ -> (\d+)", f.get("assumption", "") + f.get("fix", ""))
print(eval(sys.argv[2]))
EOF
}

rows=()
for s in ${SCENARIOS:-loader precision sync memory}; do
    echo "== $s"
    case $s in loader) cause=data ;; *) cause=$s ;; esac
    if [[ $s == loader ]]; then record "$s-slow" "$s" slow --workers 1; else record "$s-slow" "$s" slow; fi
    head -n 40 "$work/$s-slow.report.txt"
    top=$(field "$work/$s-slow.report.json" 'f"#{n} {f.get('"'cause'"')}/{f.get('"'sub_cause'"')}"')
    est=$(field "$work/$s-slow.report.json" 'f.get("est_step_ns_after") or 0')
    before=$(field "$work/$s-slow.report.json" 'r["steps"].get("mean_ns") or 0')
    fix_args=("$s" fixed)
    if [[ $s == loader ]]; then
        # The worker count the report advises, else 4.
        m=$(field "$work/$s-slow.report.json" 'advised.group(1) if advised else 4')
        fix_args+=(--workers "$m")
        echo "fixed run with --workers $m"
    fi
    record "$s-fixed" "${fix_args[@]}"
    after=$(field "$work/$s-fixed.report.json" 'r["steps"].get("mean_ns") or 0')
    if [[ $s == precision ]]; then
        # The next step the fix names: what BF16 adds over TF32.
        record "$s-bf16" "$s" bf16
        bf16=$(field "$work/$s-bf16.report.json" 'r["steps"].get("mean_ns") or 0')
        rows+=("$(printf 'precision  measured: FP32 %s ms, TF32 %s ms, BF16 %s ms per step' \
            "$("$py" -c "print(f'{$before/1e6:.2f}')")" "$("$py" -c "print(f'{$after/1e6:.2f}')")" \
            "$("$py" -c "print(f'{$bf16/1e6:.2f}')")")")
    fi
    rows+=("$("$py" -c "
import sys
s, top, before, est, after = sys.argv[1:]
before, est, after = float(before), float(est), float(after)
off = abs(est - after) / after * 100 if after else float('nan')
print(f'{s:10} {top:28} step {before/1e6:7.2f} ms  estimated after fix {est/1e6:7.2f} ms  measured fixed {after/1e6:7.2f} ms  ({off:.1f}% off)')
" "$s" "$top" "$before" "$est" "$after")")
done
echo "== what-if estimates against fixed runs"
printf '%s\n' "${rows[@]}"
