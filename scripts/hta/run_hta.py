#!/usr/bin/env python3
"""Run HolisticTraceAnalysis on one Kineto trace and print its figures as JSON.

Usage: run_hta.py TRACE [--what temporal|idle|both]
       run_hta.py --versions

Prints one JSON object on stdout:
  {"ok": true, "rank": R, "temporal": {...}, "idle": [{stream, idle_category,
   idle_time, idle_time_ratio}, ...], "seconds": {...}}
or {"ok": false, "stage": "load"|"temporal"|"idle", "error": "..."}.

Each trace runs in its own process (hta_compare.py and the benchmark call this
script once per trace) so that one HTA failure or its memory use does not leak
into the next trace.
"""

import argparse
import contextlib
import io
import json
import logging
import math
import os
import re
import sys
import time
import warnings


def _rank_of(path):
    """The rank HTA itself would infer (first `"rank": N` in the file)."""
    import gzip

    rank_re = re.compile(r'"rank":\s+(\d+)')
    opener = gzip.open if path.endswith("gz") else open
    with opener(path, "rb") as f:
        for line in f:
            m = rank_re.search(line.decode(errors="replace"))
            if m:
                return int(m.group(1))
    return 0


def _num(x):
    """NaN (HTA's 0/0 ratio on a stream with one op) is not JSON: null."""
    x = float(x)
    return None if math.isnan(x) else x


def _err(stage, e):
    return {"ok": False, "stage": stage, "error": f"{type(e).__name__}: {e}"[:400]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace", nargs="?")
    ap.add_argument("--versions", action="store_true", help="print HTA/pandas versions")
    ap.add_argument("--what", default="both", choices=["temporal", "idle", "both"])
    args = ap.parse_args()

    warnings.filterwarnings("ignore")
    logging.disable(logging.CRITICAL)
    if args.versions or not args.trace:
        from importlib.metadata import version

        names = ("holistictraceanalysis", "pandas", "numpy")
        print(json.dumps({n: version(n) for n in names}))
        return
    path = os.path.abspath(args.trace)
    rank = _rank_of(path)
    out = {"ok": True, "rank": rank, "seconds": {}}
    # HTA prints progress on stdout/stderr; keep stdout for our JSON.
    sink = io.StringIO()
    t0 = time.perf_counter()
    try:
        with contextlib.redirect_stdout(sink):
            from hta.trace_analysis import TraceAnalysis

            ta = TraceAnalysis(trace_files={rank: path}, trace_dir=os.path.dirname(path))
    except BaseException as e:  # HTA raises AssertionError, KeyError, ...
        print(json.dumps(_err("load", e)))
        return
    out["seconds"]["load"] = time.perf_counter() - t0

    if args.what in ("temporal", "both"):
        t1 = time.perf_counter()
        try:
            with contextlib.redirect_stdout(sink):
                df = ta.get_temporal_breakdown(visualize=False)
            row = df.iloc[0]
            out["temporal"] = {
                "idle_us": float(row["idle_time(us)"]),
                "compute_us": float(row["compute_time(us)"]),
                "non_compute_us": float(row["non_compute_time(us)"]),
                "kernel_us": float(row["kernel_time(us)"]),
                "idle_pct": float(row["idle_time_pctg"]),
                "compute_pct": float(row["compute_time_pctg"]),
                "non_compute_pct": float(row["non_compute_time_pctg"]),
            }
        except BaseException as e:
            out = {**_err("temporal", e), "rank": rank}
            print(json.dumps(out))
            return
        out["seconds"]["temporal"] = time.perf_counter() - t1

    if args.what in ("idle", "both"):
        t2 = time.perf_counter()
        try:
            with contextlib.redirect_stdout(sink):
                df, _ = ta.get_idle_time_breakdown(ranks=[rank], visualize=False)
            out["idle"] = [
                {
                    "stream": int(r["stream"]),
                    "idle_category": str(r["idle_category"]),
                    "idle_time": _num(r["idle_time"]),
                    "idle_time_ratio": _num(r["idle_time_ratio"]),
                }
                for _, r in df.iterrows()
            ]
        except BaseException as e:
            out["idle_error"] = f"{type(e).__name__}: {e}"[:400]
        out["seconds"]["idle"] = time.perf_counter() - t2

    print(json.dumps(out))


if __name__ == "__main__":
    sys.exit(main())
