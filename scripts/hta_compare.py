#!/usr/bin/env python3
"""Compare stallscope's `--hta-compat` figures with HolisticTraceAnalysis 0.5.

Runs HTA (in the Python given by --hta-python, one process per trace, through
scripts/hta/run_hta.py) on every trace of the Kineto corpus, writes its figures
(or its failure) to analyzer/tests/data/kineto/hta_reference.json, then runs our
figures on the same traces and prints both side by side. The Rust test
`analyzer/tests/kineto_hta.rs` checks the same agreement from the checked-in
reference without needing Python.

Setup (HTA needs pandas and friends). The plain install brings pandas 3, on
which HTA 0.5 fails to load two corpus traces; a second environment with
pandas 2 lets those be compared too:
    python3 -m venv /tmp/hta-venv
    /tmp/hta-venv/bin/pip install 'holistictraceanalysis==0.5.*'
    python3 -m venv /tmp/hta-pd2-venv
    /tmp/hta-pd2-venv/bin/pip install 'holistictraceanalysis==0.5.*' 'pandas<3'
    scripts/hta_compare.py --hta-python /tmp/hta-venv/bin/python \
                           --hta-python /tmp/hta-pd2-venv/bin/python

--ours is the command that prints our figures as JSON for one trace; it
defaults to the release build of the `kineto_hta` example, which prints the
same figures that `stallscope analyze --hta-compat --json` puts under
`hta_compat`.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_HTA = os.path.join(REPO, "scripts", "hta", "run_hta.py")
REFERENCE = os.path.join(REPO, "analyzer", "tests", "data", "kineto", "hta_reference.json")
TOLERANCE_PP = 1.0


def corpus_dir(arg):
    if arg:
        return arg
    base = os.environ.get("STALLSCOPE_CORPUS") or os.path.join(REPO, "..", "shared", "corpus")
    return os.path.normpath(os.path.join(base, "kineto"))


def traces(root):
    out = []
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".json") or f.endswith(".json.gz"):
                out.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(out)


def run_hta(python, path):
    try:
        p = subprocess.run(
            [python, RUN_HTA, path], capture_output=True, text=True, timeout=900
        )
    except subprocess.TimeoutExpired:
        return {"ok": False, "stage": "timeout", "error": "HTA ran over 900 s"}
    last = (p.stdout.strip().splitlines() or [""])[-1]
    try:
        return json.loads(last)
    except ValueError:
        tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
        return {"ok": False, "stage": "crash", "error": tail[:400]}


def run_ours(cmd, path):
    p = subprocess.run(cmd + [path], capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()[:400]
    doc = json.loads(p.stdout)
    return doc["traces"][0]["hta_compat"], None


def idle_shares(rows):
    """HTA's idle rows -> {stream: {category: percent of the stream's idle}}."""
    by = {}
    for r in rows:
        by.setdefault(r["stream"], {})[r["idle_category"]] = r["idle_time"] or 0.0
    out = {}
    for s, cats in by.items():
        total = sum(cats.values())
        if total > 0:
            out[s] = {c: 100.0 * v / total for c, v in cats.items()}
    return out


def compare(hta, ours):
    """Largest differences (percentage points) of the temporal and idle figures."""
    t_h, t_o = hta["temporal"], ours.get("temporal")
    if t_o is None:
        return None, None
    dt = max(abs(t_h[k] - t_o[k]) for k in ("idle_pct", "compute_pct", "non_compute_pct"))
    di = 0.0
    mine = {s["stream"]: s for s in ours["idle"]}
    for stream, shares in idle_shares(hta.get("idle", [])).items():
        o = mine.get(stream)
        for cat, key in (("host_wait", "host_wait_pct"), ("kernel_wait", "kernel_wait_pct"), ("other", "other_pct")):
            mine_v = o[key] if o else 0.0
            di = max(di, abs(shares.get(cat, 0.0) - mine_v))
    return dt, di


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", help="Kineto corpus dir (default: $STALLSCOPE_CORPUS/kineto or ../shared/corpus/kineto)")
    ap.add_argument(
        "--hta-python",
        action="append",
        help="a Python with HTA installed; repeat to fall back to another environment "
        "(e.g. one with pandas<3) where the first fails (default: $HTA_PYTHON or this Python)",
    )
    ap.add_argument("--reference", default=REFERENCE)
    ap.add_argument("--skip-hta", action="store_true", help="reuse the reference file instead of running HTA")
    ap.add_argument("--ours", help="command printing our figures for one trace (default: the kineto_hta example)")
    args = ap.parse_args()
    args.hta_python = args.hta_python or [os.environ.get("HTA_PYTHON", sys.executable)]

    root = corpus_dir(args.corpus)
    if not os.path.isdir(root):
        sys.exit(f"hta_compare: no corpus at {root}")
    names = traces(root)

    if args.skip_hta:
        with open(args.reference) as f:
            ref = json.load(f)
    else:
        envs = []
        for py in args.hta_python:
            out = subprocess.run([py, RUN_HTA, "--versions"], capture_output=True, text=True, check=True)
            envs.append(json.loads(out.stdout))
        ref = {
            "generated_by": "scripts/hta_compare.py",
            "environments": envs,
            "consecutive_kernel_delay_us": 30,
            "note": "HTA 0.5 figures per corpus trace (path relative to the corpus kineto/ dir) from the "
            "first environment where HTA succeeded (`env` indexes `environments`), and its failures",
            "traces": {},
        }
        for n in names:
            t0 = time.time()
            failures, result = [], None
            for i, py in enumerate(args.hta_python):
                r = run_hta(py, os.path.join(root, n))
                r.pop("seconds", None)
                if r.get("ok"):
                    result = {**r, "env": i}
                    break
                failures.append({"env": i, "stage": r.get("stage"), "error": r.get("error")})
            if result is None:
                result = {"ok": False, "stage": failures[0]["stage"], "error": failures[0]["error"]}
            result["failures"] = failures
            ref["traces"][n] = result
            status = f"ok (env {result['env']})" if result["ok"] else f"FAILED ({result['stage']}: {result['error'][:60]})"
            print(f"HTA {time.time() - t0:5.1f}s {n}: {status}", file=sys.stderr)
        os.makedirs(os.path.dirname(args.reference), exist_ok=True)
        with open(args.reference, "w") as f:
            json.dump(ref, f, indent=1, sort_keys=True)
            f.write("\n")

    if args.ours:
        cmd = shlex.split(args.ours)
    else:
        subprocess.run(
            ["cargo", "build", "--quiet", "--release", "-p", "stallscope-analyzer", "--example", "kineto_hta"],
            cwd=REPO, check=True,
        )
        target = os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target"))
        cmd = [os.path.join(target, "release", "examples", "kineto_hta")]

    hdr = f"{'trace':58} {'HTA idle/comp/non-comp %':>26} {'ours idle/comp/non-comp %':>26} {'Δtemp':>6} {'Δidle':>6}  status"
    print(hdr)
    print("-" * len(hdr))
    worst, agreed, failed_hta, bad = 0.0, 0, 0, []
    for n in names:
        h = ref["traces"].get(n)
        ours, err = run_ours(cmd, os.path.join(root, n))
        short = n if len(n) <= 58 else "…" + n[-57:]
        fmt = lambda t: f"{t['idle_pct']:6.2f} {t['compute_pct']:6.2f} {t['non_compute_pct']:6.2f}" if t else "-"
        o_t = ours.get("temporal") if ours else None
        if err:
            print(f"{short:58} {'':>26} {'':>26} {'':>6} {'':>6}  OUR READER FAILED: {err}")
            bad.append(n)
            continue
        if not h or not h.get("ok"):
            failed_hta += 1
            why = "no reference" if not h else f"HTA failed ({h.get('stage')}: {h.get('error', '')[:50]})"
            print(f"{short:58} {'-':>26} {fmt(o_t):>26} {'':>6} {'':>6}  {why}")
            continue
        dt, di = compare(h, ours)
        if dt is None:
            print(f"{short:58} {fmt(h['temporal']):>26} {'-':>26}  ours has no GPU work")
            bad.append(n)
            continue
        ok = dt <= TOLERANCE_PP and di <= TOLERANCE_PP
        agreed += ok
        worst = max(worst, dt, di)
        if not ok:
            bad.append(n)
        print(f"{short:58} {fmt(h['temporal']):>26} {fmt(o_t):>26} {dt:6.2f} {di:6.2f}  {'ok' if ok else 'DISAGREES'}")
    print(
        f"\n{agreed} traces agree within {TOLERANCE_PP} pp (worst difference {worst:.2f} pp); "
        f"HTA failed on {failed_hta}; {len(bad)} problems{': ' + ', '.join(bad) if bad else ''}"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
