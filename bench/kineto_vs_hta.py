#!/usr/bin/env python3
"""Benchmark: stallscope's Kineto reader + `--hta-compat` vs HolisticTraceAnalysis.

Side by side in one run, on the largest corpus traces: wall time and peak RSS
(from /usr/bin/time -v) of
  ours: the release `kineto_hta` example (read the trace, compute the temporal
        and idle breakdowns, print JSON), and
  HTA:  scripts/hta/run_hta.py (TraceAnalysis load + get_temporal_breakdown +
        get_idle_time_breakdown),
each as a whole process, medians of --runs runs, interleaved. Prints the ratios
and whether the targets hold (>= 50x faster, <= 1/5 of HTA's memory).

    bench/kineto_vs_hta.py --hta-python /tmp/hta-venv/bin/python [--traces 4] [--runs 3]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_HTA = os.path.join(REPO, "scripts", "hta", "run_hta.py")
TARGET_SPEEDUP = 50.0
TARGET_MEMORY = 1 / 5


def timed(cmd):
    """(wall seconds, peak RSS KiB) of one process. GNU time gives the RSS;
    its wall clock has 10 ms steps, so the wall time is measured here."""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {p.stderr.strip()[-300:]}")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    return wall, int(rss.group(1))


def largest_traces(root, n):
    files = []
    for d, _, names in os.walk(root):
        files += [os.path.join(d, f) for f in names if f.endswith((".json", ".json.gz"))]
    return sorted(files, key=os.path.getsize, reverse=True)[:n]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hta-python", default=os.environ.get("HTA_PYTHON", "/tmp/hta-venv/bin/python"))
    ap.add_argument("--corpus", default=os.path.join(
        os.environ.get("STALLSCOPE_CORPUS", os.path.join(REPO, "..", "shared", "corpus")), "kineto"))
    ap.add_argument("--traces", type=int, default=4, help="how many of the largest traces")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--ours", help="our binary (default: release kineto_hta example, built here)")
    args = ap.parse_args()

    if not os.path.exists(args.hta_python):
        sys.exit(f"no HTA python at {args.hta_python}: python3 -m venv /tmp/hta-venv && "
                 "/tmp/hta-venv/bin/pip install 'holistictraceanalysis==0.5.*'")
    ours = args.ours
    if not ours:
        subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "stallscope-analyzer",
                        "--example", "kineto_hta"], cwd=REPO, check=True)
        target = os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target"))
        ours = os.path.join(target, "release", "examples", "kineto_hta")

    print(f"{'trace':44} {'MB':>5} {'ours ms':>8} {'HTA s':>7} {'speedup':>8} "
          f"{'ours MiB':>9} {'HTA MiB':>8} {'mem ratio':>9}")
    speedups, mem_ratios = [], []
    for path in largest_traces(args.corpus, args.traces):
        o_wall, o_rss, h_wall, h_rss = [], [], [], []
        for _ in range(args.runs):
            w, r = timed([ours, path])
            o_wall.append(w)
            o_rss.append(r)
            w, r = timed([args.hta_python, RUN_HTA, path])
            h_wall.append(w)
            h_rss.append(r)
        ow, orss = statistics.median(o_wall), statistics.median(o_rss)
        hw, hrss = statistics.median(h_wall), statistics.median(h_rss)
        speedups.append(hw / ow)
        mem_ratios.append(orss / hrss)
        name = os.path.relpath(path, args.corpus)
        name = name if len(name) <= 44 else "…" + name[-43:]
        print(f"{name:44} {os.path.getsize(path) / 1e6:5.1f} {ow * 1e3:8.0f} {hw:7.2f} {hw / ow:7.0f}x "
              f"{orss / 1024:9.1f} {hrss / 1024:8.1f} {orss / hrss:9.3f}")
    worst_speed, worst_mem = min(speedups), max(mem_ratios)
    print(f"\nmedians of {args.runs} runs; worst speedup {worst_speed:.0f}x (target >= {TARGET_SPEEDUP:.0f}x: "
          f"{'met' if worst_speed >= TARGET_SPEEDUP else 'MISSED'}), worst memory ratio {worst_mem:.3f} "
          f"(target <= {TARGET_MEMORY:.2f}: {'met' if worst_mem <= TARGET_MEMORY else 'MISSED'})")
    print(f"machine: {os.cpu_count()} CPUs; wall time includes process start (and HTA's Python imports)")


if __name__ == "__main__":
    main()
