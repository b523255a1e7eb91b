#!/usr/bin/env bash
# GPU capture check for a real CUDA machine (issue 3): one GPU, PyTorch with
# CUDA, nothing else. Runs the same small training loop (tests/gpu/train.py)
# three times: plain, under `stallscope record`, and under torch.profiler,
# then compares them (tests/gpu/compare.py):
#   - the kernels both recorded in the measured region: count and total GPU
#     time within 2%;
#   - the memcpy count;
#   - whether an OOM record appears for a deliberately too-large allocation;
#   - the step-time overhead ratio with and without the shim.
# Takes about a minute; every run has a timeout, the whole well under 5 min.
#
# usage: tests/gpu/check.sh [STALLSCOPE [LIBSTALLSCOPE_SO]]
#   STALLSCOPE        release `stallscope` binary (default: target/release/stallscope)
#   LIBSTALLSCOPE_SO  the shim (default: libstallscope.so beside STALLSCOPE)
# env: PYTHON (default python3), STEPS (default 300), KEEP=1 keeps the work dir,
#      PAIRS (default 3): more runs without and with the shim, alternating, for
#      the overhead ratio (a shared machine's speed drifts between runs); each
#      pair also runs the shim with STALLSCOPE_ALL_API=1 (CUPTI records every
#      CUDA call), to show what recording the kept calls only saves.
# exit: 0 pass, 1 a check failed, 2 cannot run here.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi

die() { echo "check.sh: $*" >&2; exit 2; }

bin=${1:-$repo/target/release/stallscope}
[[ -x "$bin" ]] || die "no stallscope binary at $bin (build: cargo build --release --workspace)"
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
shim=${2:-$(dirname "$bin")/libstallscope.so}
[[ -f "$shim" ]] || die "no shim at $shim (pass it as the second argument)"
export STALLSCOPE_SHIM=$(cd "$(dirname "$shim")" && pwd)/$(basename "$shim")
py=${PYTHON:-python3}
steps=${STEPS:-300}
command -v timeout >/dev/null || die "needs coreutils timeout"
command -v "$py" >/dev/null || die "no $py"

work=$(mktemp -d "${TMPDIR:-/tmp}/stallscope-gpu-check.XXXXXX")
cleanup() {
    if [[ "${KEEP:-0}" == 1 ]]; then echo "work dir kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

echo "== environment"
"$bin" --version || true
if command -v nvidia-smi >/dev/null; then
    timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
fi
timeout 120 "$py" - <<'EOF' || die "PyTorch with a working CUDA GPU is required"
import sys, torch
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, "
      f"GPU: {torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'none'}")
sys.exit(0 if torch.cuda.is_available() else 1)
EOF

# A run that fails or hangs is reported with its output, then the check fails.
run() {
    local name=$1 limit=$2; shift 2
    echo "== $name"
    local rc=0
    timeout --kill-after=10 "$limit" "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
    cat "$work/$name.out"
    grep '^stallscope:' "$work/$name.err" || true
    if [[ $rc -ne 0 ]]; then
        echo "check.sh: the $name run failed (exit $rc$([[ $rc -eq 124 ]] && echo ', timed out after '"$limit"' s')):" >&2
        tail -n 30 "$work/$name.err" >&2
        echo "GPU CHECK: FAIL ($name run)"
        exit 1
    fi
}

train=(--steps "$steps")
run plain 90 "$py" "$here/train.py" --mode plain --out "$work/plain.json" "${train[@]}"
run stallscope 120 "$bin" record -o "$work/rec" -- \
    "$py" "$here/train.py" --mode traced --oom --out "$work/traced.json" "${train[@]}"
run profiler 120 "$py" "$here/train.py" --mode profiler --out "$work/profiler.json" \
    --trace "$work/torch_trace.json" "${train[@]}"

# Alternate plain and recorded runs: the overhead is the median of each
# pair's ratio, so a drift in the machine's speed between runs moves it less.
for k in $(seq "${PAIRS:-3}"); do
    run "plain-$k" 90 "$py" "$here/train.py" --mode plain --out "$work/plain-$k.json" "${train[@]}"
    run "stallscope-$k" 120 "$bin" record -o "$work/rec-$k" -- \
        "$py" "$here/train.py" --mode traced --out "$work/traced-$k.json" "${train[@]}"
    STALLSCOPE_ALL_API=1 run "stallscope-all-api-$k" 120 "$bin" record -o "$work/rec-all-$k" -- \
        "$py" "$here/train.py" --mode traced --out "$work/traced-all-$k.json" "${train[@]}"
done

echo "== stallscope dump"
rc=0
timeout 60 "$bin" dump --json "$work/rec" >"$work/dump.jsonl" 2>"$work/dump.err" || rc=$?
if [[ $rc -ne 0 ]]; then
    cat "$work/dump.err" >&2
    echo "GPU CHECK: FAIL (stallscope dump exit $rc)"
    exit 1
fi
echo "$(wc -l <"$work/dump.jsonl") records from $(ls "$work/rec"/*.sst | wc -l) processes"

echo "== compare"
timeout 120 "$py" "$here/compare.py" "$work/dump.jsonl" "$work/traced.json" \
    "$work/plain.json" "$work/profiler.json" "$work/torch_trace.json"
