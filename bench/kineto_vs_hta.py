#!/usr/bin/env python3
"""Benchmark: stallscope's Kineto reader + `--hta-compat` vs HolisticTraceAnalysis.

Side by side in one run, on every corpus trace over --min-mb MB of JSON
(decompressed), plus --big synthetic large ROCm traces: wall time, CPU time
and peak RSS (the process's own rusage, from wait4, with no wrapper process
timed; our peak RSS from one more run under GNU time, see `timed`) of
  ours: `stallscope analyze TRACE --hta-compat --json` (read the trace, the
        whole diagnosis, the HTA-compatible breakdowns, the JSON report), and
  HTA:  scripts/hta/run_hta.py (TraceAnalysis load + get_temporal_breakdown +
        get_idle_time_breakdown),
each as a whole process, interleaved: --runs runs of HTA, each beside
--ours-per-run runs of ours, and the medians of each. Prints the ratios
and whether the targets hold (>= 100x faster, <= 1/10 of HTA's memory).

The big traces are made at run time into target/ (never committed): a corpus
ROCm trace (MI300X, TraceLens) repeated --scale times with shifted times and
ids, written by Python's `json.dump` in each of --layouts: `dump` (the
`[{...}, {...}]` layout of traces that tools rewrite) and `compact`
(`separators=(",", ":")`, no blank between events), gzipped.

Public traces beyond the corpus: --kineto-repo names a git clone of
pytorch/kineto (with its history). Its TensorBoard-plugin samples (NVIDIA
V100 ResNet-50 training, 24-35 MB of JSON each, in the profiler API's and the
older autograd API's layouts) were removed from the tree in 2026-04; every
distinct one over --min-mb is taken from the history into
target/kineto-public/ (never committed). --tracelens-repo names a clone of
AMD-AGI/TraceLens: its test traces over --min-mb that the corpus lacks (ROCm
MI300X inference with xDiT, SGLang, vLLM and Hugging Face models; NVIDIA H100
and B200; 15-63 MB of JSON each) go to target/tracelens-public/. --extra adds
any other files.

The floor: `infl ms` is the time to inflate the gzip trace alone, as the
reader's pipeline does (flate2 from the file's bytes into a reused 512 KiB buffer, nothing parsed;
examples/kineto_inflate.rs, best of --runs + 2), and `HTA/infl` is HTA's wall
time over it: no reader of that file that inflates it on one core can beat
that ratio, whatever its parser. `ours/infl` is how far above that floor our
whole process is.

The load average is printed before and after: the ratios are only comparable
between runs on a similarly loaded machine.

    bench/kineto_vs_hta.py --hta-python /tmp/hta-venv/bin/python [--min-mb 5] [--big 1] [--runs 3] [--ours-per-run 5]
        [--kineto-repo CLONE] [--tracelens-repo CLONE] [--extra TRACE ...]
"""

import argparse
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_HTA = os.path.join(REPO, "scripts", "hta", "run_hta.py")
TARGET_SPEEDUP = 100.0
TARGET_MEMORY = 1 / 10
ROCM_SEED = os.path.join("TraceLens", "tests", "traces", "mi300", "resnet_act_checkpoint.json.gz")


def timed(cmd):
    """(wall s, CPU s, peak RSS KiB, note) of one process, from its rusage
    (wait4), so no wrapper process runs in the timed span: GNU time
    (`/usr/bin/time -v`), used before, added about 2 ms of its own start-up
    to every run, a tenth of a small trace's analysis. The peak RSS is
    floored at this script's own: a child's rusage counts the parent's pages
    it ran in before its exec. That floor is far below HTA's peak, not below
    ours: see `peak_rss`."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {stderr.strip()[-300:]}")
    cpu = usage.ru_utime + usage.ru_stime
    # run_hta.py says when HTA failed part way (then its time is not all of the work).
    note = ""
    if stdout.startswith("{"):
        res = json.loads(stdout.strip().splitlines()[-1])
        note = "" if res.get("ok") and "idle_error" not in res else f"HTA failed ({res.get('stage', 'idle')})"
    return wall, cpu, usage.ru_maxrss, note


def peak_rss(cmd):
    """Peak RSS (KiB) of one process started by GNU time, a small C program,
    so that the floor `timed` has is not in it."""
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {p.stderr.strip()[-300:]}")
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))


def json_bytes(path):
    """The decompressed size of a trace."""
    if not path.endswith(".gz"):
        return os.path.getsize(path)
    n = 0
    with gzip.open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            n += len(chunk)
    return n


def corpus_traces(root, min_bytes):
    """(path, JSON bytes) of every trace over min_bytes, largest first."""
    files = []
    for d, _, names in os.walk(root):
        files += [os.path.join(d, f) for f in names if f.endswith((".json", ".json.gz"))]
    sized = [(f, json_bytes(f)) for f in files]
    return sorted([t for t in sized if t[1] > min_bytes], key=lambda t: -t[1])


LAYOUTS = {"dump": {}, "compact": {"separators": (",", ":")}}


def scaled_rocm(seed, scale, out_dir, layout="dump"):
    """`seed` repeated `scale` times (times shifted past the previous copy,
    correlation/External/flow ids made distinct), as json.dump writes it in
    `layout`."""
    suffix = "" if layout == "dump" else f"_{layout}"
    out = os.path.join(out_dir, f"rocm_mi300_x{scale}{suffix}.json.gz")
    if os.path.exists(out):
        return out
    with gzip.open(seed, "rb") as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    times = [e["ts"] + e.get("dur", 0) for e in events if isinstance(e.get("ts"), (int, float))]
    span = int(max(times) - min(times)) + 1000
    big = []
    for k in range(scale):
        for e in events:
            e = dict(e)
            if isinstance(e.get("ts"), (int, float)) and e.get("ph") != "M":
                e["ts"] = round(e["ts"] + k * span, 3)
            if isinstance(e.get("id"), int):
                e["id"] += k * 10_000_000
            if isinstance(e.get("args"), dict):
                a = dict(e["args"])
                for key in ("correlation", "External id"):
                    if isinstance(a.get(key), int) and a[key] > 0:
                        a[key] += k * 10_000_000
                e["args"] = a
            big.append(e)
    doc["traceEvents"] = big
    os.makedirs(out_dir, exist_ok=True)
    tmp = out + ".tmp"
    with gzip.open(tmp, "wt", compresslevel=6) as f:
        json.dump(doc, f, **LAYOUTS[layout])
    os.replace(tmp, out)
    return out


def kineto_samples(repo, out_dir, min_bytes):
    """Every distinct trace ever under tb_plugin/samples in the pytorch/kineto
    clone `repo` with over min_bytes of JSON, written to out_dir as
    <sample>-<blob>.json.gz."""
    git = lambda *a: subprocess.run(["git", "-C", repo, *a], capture_output=True, check=True).stdout
    commits = git("log", "--all", "--format=%H", "--", "tb_plugin/samples").decode().split()
    blobs = {}
    for c in commits:
        for line in git("ls-tree", "-r", c, "--", "tb_plugin/samples").decode().splitlines():
            meta, path = line.split("\t", 1)
            if path.endswith(".json.gz"):
                blobs.setdefault(meta.split()[2], path)
    os.makedirs(out_dir, exist_ok=True)
    found = []
    for blob, path in sorted(blobs.items(), key=lambda b: b[1]):
        sample = path.split("/")[2]
        out = os.path.join(out_dir, f"{sample}-{blob[:8]}.json.gz")
        if not os.path.exists(out):
            with open(out + ".tmp", "wb") as f:
                f.write(git("cat-file", "blob", blob))
            os.replace(out + ".tmp", out)
        size = json_bytes(out)
        if size > min_bytes:
            found.append((out, size))
    return found


def tracelens_traces(repo, out_dir, corpus, min_bytes):
    """Every Kineto trace (tests/traces/**/*.json.gz) in the newest tree of the
    AMD-AGI/TraceLens clone `repo` with over min_bytes of JSON and not in the
    corpus already, written to out_dir. ROCm (MI300X) and NVIDIA (H100, B200)
    inference and training traces; blobs the clone lacks are skipped."""
    git = lambda *a: subprocess.run(["git", "-C", repo, *a], capture_output=True)
    tree = git("ls-tree", "-r", "HEAD", "--", "tests/traces").stdout.decode()
    os.makedirs(out_dir, exist_ok=True)
    found = []
    for line in sorted(tree.splitlines(), key=lambda l: l.split("\t", 1)[-1]):
        meta, path = line.split("\t", 1)
        if not path.endswith(".json.gz") or os.path.exists(os.path.join(corpus, "TraceLens", path)):
            continue
        out = os.path.join(out_dir, path[len("tests/traces/"):].replace("/", "_"))
        if not os.path.exists(out):
            blob = git("cat-file", "blob", meta.split()[2])
            if blob.returncode != 0 or not blob.stdout.startswith(b"\x1f\x8b"):
                continue  # not in the clone, or a Git LFS pointer
            with open(out + ".tmp", "wb") as f:
                f.write(blob.stdout)
            os.replace(out + ".tmp", out)
        size = json_bytes(out)
        if size > min_bytes:
            found.append((out, size))
    return found


def inflate_ms(exe, path, runs):
    """The best time to inflate a gzip trace alone (0 for plain JSON)."""
    if not path.endswith(".gz"):
        return 0.0
    out = subprocess.run([exe, path, str(runs)], capture_output=True, text=True, check=True).stdout
    return float(out.split()[0])


def load_average():
    """The 1, 5 and 15 minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hta-python", default=os.environ.get("HTA_PYTHON", "/tmp/hta-venv/bin/python"))
    ap.add_argument("--corpus", default=os.path.join(
        os.environ.get("STALLSCOPE_CORPUS", os.path.join(REPO, "..", "shared", "corpus")), "kineto"))
    ap.add_argument("--min-mb", type=float, default=5.0, help="corpus traces over this many MB of JSON")
    ap.add_argument("--big", type=int, default=1, help="synthetic large ROCm traces (0: none)")
    ap.add_argument("--scale", type=int, default=4, help="copies of the ROCm seed in the first big trace")
    ap.add_argument("--layouts", default="dump,compact",
                    help=f"JSON layouts of the big traces, of {','.join(LAYOUTS)}")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--ours-per-run", type=int, default=5,
                    help="runs of ours beside each HTA run: one of ours lasts about 1%% of HTA's, so a "
                    "pause of a few ms on this machine moves it far more; the median over more of "
                    "them is as steady as HTA's over --runs")
    ap.add_argument("--kineto-repo", help="a git clone of pytorch/kineto: its past TensorBoard-plugin "
                    "samples over --min-mb are benchmarked too")
    ap.add_argument("--tracelens-repo", help="a git clone of AMD-AGI/TraceLens: its test traces "
                    "(MI300X, H100, B200) over --min-mb that the corpus lacks")
    ap.add_argument("--extra", nargs="*", default=[], help="more trace files to benchmark")
    ap.add_argument("--ours", help="instead of `stallscope analyze`, a binary that takes the trace path "
                    "(e.g. the kineto_hta example)")
    args = ap.parse_args()

    if not os.path.exists(args.hta_python):
        sys.exit(f"no HTA python at {args.hta_python}: python3 -m venv /tmp/hta-venv && "
                 "/tmp/hta-venv/bin/pip install 'holistictraceanalysis==0.5.*'")
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target"))
    subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "stallscope-analyzer",
                    "--example", "kineto_inflate"], cwd=REPO, check=True)
    inflate_exe = os.path.join(target, "release", "examples", "kineto_inflate")
    if args.ours:
        ours_cmd = lambda path: [args.ours, path]
    else:
        subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "stallscope"], cwd=REPO, check=True)
        exe = os.path.join(target, "release", "stallscope")
        # The whole command a user runs: read, diagnose, HTA figures, JSON report.
        ours_cmd = lambda path: [exe, "analyze", path, "-q", "--hta-compat", "--json", os.devnull]

    traces = corpus_traces(args.corpus, args.min_mb * 1e6)
    for k in range(args.big):
        for layout in args.layouts.split(","):
            big = scaled_rocm(os.path.join(args.corpus, ROCM_SEED), args.scale * (k + 1),
                              os.path.join(target, "kineto-big"), layout)
            traces.append((big, json_bytes(big)))
    if args.kineto_repo:
        traces += kineto_samples(args.kineto_repo, os.path.join(target, "kineto-public"), args.min_mb * 1e6)
    if args.tracelens_repo:
        traces += tracelens_traces(args.tracelens_repo, os.path.join(target, "tracelens-public"),
                                   args.corpus, args.min_mb * 1e6)
    for path in args.extra:
        if not os.path.isfile(path):
            sys.exit(f"--extra {path}: no such file")
        traces.append((path, json_bytes(path)))
    print(f"machine: {os.cpu_count()} CPUs, load average {load_average()} at the start")
    print(f"{'trace':40} {'MB':>5} {'ours ms':>7} {'HTA s':>6} {'speedup':>7} {'CPU x':>6} "
          f"{'ours MiB':>8} {'HTA MiB':>7} {'mem':>6} {'infl ms':>7} {'HTA/infl':>8} {'ours/infl':>9}")
    speedups, cpu_ratios, mem_ratios, floors, above = [], [], [], [], []
    # Speed-ups over the traces HTA read to the end (where it fails, its
    # time runs only up to the failure).
    completed = []
    for path, size in traces:
        ours_runs, hta_runs = [], []
        hta_note = ""
        for _ in range(args.runs):  # interleaved, so both see the same machine
            ours_runs += [timed(ours_cmd(path)) for _ in range(args.ours_per_run)]
            hta_runs.append(timed([args.hta_python, RUN_HTA, path]))
            hta_note = hta_runs[-1][3]
        med = lambda runs, k: statistics.median(r[k] for r in runs)
        ow, oc, orss = med(ours_runs, 0), med(ours_runs, 1), peak_rss(ours_cmd(path))
        hw, hc, hrss = med(hta_runs, 0), med(hta_runs, 1), med(hta_runs, 2)
        infl = inflate_ms(inflate_exe, path, args.runs + 2) / 1e3
        speedups.append(hw / ow)
        if not hta_note:
            completed.append(hw / ow)
        cpu_ratios.append(hc / max(oc, 0.01))
        mem_ratios.append(orss / hrss)
        name = os.path.relpath(path, args.corpus) if path.startswith(args.corpus) else os.path.basename(path)
        name = name if len(name) <= 40 else "…" + name[-39:]
        print(f"{name:40} {size / 1e6:5.1f} {ow * 1e3:7.0f} {hw:6.2f} {hw / ow:6.0f}x "
              f"{hc / max(oc, 0.01):5.0f}x {orss / 1024:8.1f} {hrss / 1024:7.1f} {orss / hrss:6.3f} "
              + (f"{infl * 1e3:7.1f} {hw / infl:7.0f}x {ow / infl:8.1f}x" if infl else f"{'-':>7} {'-':>8} {'-':>9}")
              + f" {hta_note}",
              flush=True)
        if infl:
            floors.append(hw / infl)
            above.append(ow / infl)
    worst_speed, worst_mem = min(speedups), max(mem_ratios)
    print(f"\nmedians of {args.runs} interleaved runs (ours: {args.runs * args.ours_per_run}); wall speedup worst {worst_speed:.0f}x, "
          f"median {statistics.median(speedups):.0f}x (target >= {TARGET_SPEEDUP:.0f}x: "
          f"{'met' if worst_speed >= TARGET_SPEEDUP else 'MISSED'}; where HTA completed: worst "
          f"{min(completed, default=0):.0f}x, median {statistics.median(completed) if completed else 0:.0f}x, "
          f"{sum(x >= TARGET_SPEEDUP for x in completed)} of {len(completed)} at or over the target); CPU-time ratio worst {min(cpu_ratios):.0f}x; "
          f"memory ratio worst {worst_mem:.3f} (target <= {TARGET_MEMORY:.2f}: "
          f"{'met' if worst_mem <= TARGET_MEMORY else 'MISSED'})")
    if floors:
        print(f"inflate floor: HTA/infl median {statistics.median(floors):.0f}x (worst {min(floors):.0f}x), "
              f"our wall median {statistics.median(above):.1f}x the inflate time")
    print(f"machine: {os.cpu_count()} CPUs, load average {load_average()} at the end; times are whole processes "
          "(ours: read + figures + JSON; HTA: Python start, imports, load, both breakdowns); "
          "MB = decompressed JSON")


if __name__ == "__main__":
    main()
