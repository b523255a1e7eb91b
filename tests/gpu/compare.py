"""Compares a stallscope recording with a torch.profiler trace of the same
training region (tests/gpu/check.sh). Prints the findings; exits 1 if a
check fails.

usage: compare.py DUMP_JSONL TRACED_SUMMARY PLAIN_SUMMARY PROFILER_SUMMARY CHROME_TRACE
  DUMP_JSONL: `stallscope dump --json` of the recording directory.
"""
import collections
import json
import os
import shutil
import statistics
import subprocess
import sys

TOLERANCE = 0.02


def load_lines(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out


def load(path):
    with open(path) as f:
        return json.load(f)


def rel_diff(a, b):
    m = max(abs(a), abs(b))
    return 0.0 if m == 0 else abs(a - b) / m


def demangled(names):
    """Itanium-mangled kernel names as torch.profiler shows them: CUPTI hands
    out mangled names and Kineto demangles them (abi::__cxa_demangle, as
    c++filt does). Names pass unchanged when no demangler is installed."""
    mangled = sorted({n for n in names if n.startswith("_Z")})
    tool = shutil.which("c++filt") or shutil.which("cu++filt") or shutil.which(
        "cu++filt", path="/usr/local/cuda/bin")
    if not mangled or not tool:
        return {}
    out = subprocess.run([tool], input="\n".join(mangled) + "\n", capture_output=True,
                         text=True, timeout=60).stdout.splitlines()
    return dict(zip(mangled, out)) if len(out) == len(mangled) else {}


def ours(dump, summary):
    """Kernels and copies the main process ran inside the measured region."""
    pid = summary["pid"]
    t0, t1 = summary["region_start_ns"], summary["region_end_ns"]
    recs = [r for r in dump if r.get("pid") == pid]
    inside = lambda r: t0 <= r["ts_ns"] and r["ts_ns"] + r.get("dur_ns", 0) <= t1
    kernels = [(r["name"], r["dur_ns"]) for r in recs if r["kind"] == "kernel" and inside(r)]
    names = demangled(n for n, _ in kernels)
    kernels = [(names.get(n, n), d) for n, d in kernels]
    copies = [r for r in recs if r["kind"] == "memcpy" and inside(r)]
    return recs, kernels, copies


def profiler(trace):
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    kernels, copies = [], []
    for e in events:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat", "")
        if cat == "kernel":
            kernels.append((e["name"], float(e.get("dur", 0)) * 1000.0))
        elif cat == "gpu_memcpy":
            copies.append(e)
    return kernels, copies


def main(argv):
    if len(argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    dump = load_lines(argv[1])
    traced, plain, prof_sum = load(argv[2]), load(argv[3]), load(argv[4])
    trace = load(argv[5])
    failures = []

    def check(ok, what):
        print(f"  [{'ok' if ok else 'FAIL'}] {what}")
        if not ok:
            failures.append(what)

    recs, our_k, our_c = ours(dump, traced)
    prof_k, prof_c = profiler(trace)
    print(f"device: {traced.get('device')}, torch {traced.get('torch')}, CUDA {traced.get('cuda')}")

    print("\nGPU capture state (stallscope):")
    states = [r for r in recs if r["kind"] == "gpu_status"]
    names = {1: "ACTIVE", 2: "UNAVAILABLE", 3: "PARTIAL", 4: "DISABLED"}
    for s in states:
        print(f"  {names.get(s['status'], s['status'])}: CUPTI {s['cupti_version']}: {s['reason']}")
    for n in recs:
        if n["kind"] == "note":
            print(f"  note: {n['text']}")
    dropped = sum(r["count"] for r in recs if r["kind"] == "gpu_dropped")
    check(bool(states) and states[-1]["status"] == 1, "GPU capture active to the end")
    check(dropped == 0, f"no GPU records dropped (dropped: {dropped})")

    print(f"\nKernels in the measured region ({traced['steps']} steps):")
    n1, n2 = len(our_k), len(prof_k)
    g1, g2 = sum(d for _, d in our_k), sum(d for _, d in prof_k)
    print(f"  stallscope:     {n1:7d} kernels, {g1 / 1e6:10.3f} ms GPU time")
    print(f"  torch.profiler: {n2:7d} kernels, {g2 / 1e6:10.3f} ms GPU time")
    check(n1 > 0 and rel_diff(n1, n2) <= TOLERANCE,
          f"kernel counts agree within 2% ({rel_diff(n1, n2) * 100:.2f}%)")
    check(g1 > 0 and rel_diff(g1, g2) <= TOLERANCE,
          f"total kernel GPU time agrees within 2% ({rel_diff(g1, g2) * 100:.2f}%)")
    # Each kernel ties to its launch call through the correlation id: the
    # analysis needs the API record (started at cuInit, the shim asks CUPTI
    # for the calls it keeps only).
    t0, t1 = traced["region_start_ns"], traced["region_end_ns"]
    calls = {r["correlation"] for r in recs if r["kind"] == "api"}
    region = [r for r in recs if r["kind"] == "kernel" and t0 <= r["ts_ns"] <= t1]
    tied = sum(1 for r in region if r["correlation"] in calls)
    check(region and tied >= 0.99 * len(region),
          f"kernels tied to their launch calls ({tied} of {len(region)})")
    by1, by2 = collections.defaultdict(lambda: [0, 0.0]), collections.defaultdict(lambda: [0, 0.0])
    for name, d in our_k:
        by1[name][0] += 1
        by1[name][1] += d
    for name, d in prof_k:
        by2[name][0] += 1
        by2[name][1] += d
    both = set(by1) & set(by2)
    print(f"  kernel names: {len(by1)} in stallscope, {len(by2)} in torch.profiler, {len(both)} in both")
    top = sorted(set(by1) | set(by2), key=lambda k: -(by1[k][1] + by2[k][1]))[:10]
    print(f"  {'count':>13} {'GPU ms':>21}  kernel (top 10 by time; stallscope / torch.profiler)")
    for k in top:
        print(f"  {by1[k][0]:6d}/{by2[k][0]:<6d} {by1[k][1] / 1e6:10.3f}/{by2[k][1] / 1e6:<10.3f}  {k[:90]}")
    same_counts = sum(1 for k in both if by1[k][0] == by2[k][0])
    check(len(both) >= 0.9 * max(len(by1), len(by2), 1),
          f"kernel names match ({same_counts} of {len(both)} shared names with equal counts)")

    all_copies = [r for r in recs if r["kind"] == "memcpy"]
    print(f"\nMemcpy: {len(our_c)} in the region by stallscope ({len(all_copies)} in the whole run), "
          f"{len(prof_c)} by torch.profiler")
    check(len(our_c) > 0 and rel_diff(len(our_c), len(prof_c)) <= TOLERANCE,
          "memcpy counts agree within 2%")

    print("\nOOM on a deliberately too-large allocation:")
    if "oom_asked_bytes" in traced:
        ooms = [r for r in recs if r["kind"] == "oom"]
        print(f"  torch raised OutOfMemoryError: {traced.get('oom_caught')}"
              f" ({traced.get('oom_message', '')})")
        for o in ooms[:3]:
            print(f"  stallscope OOM record: requested {o['requested']} B, free {o['free']} B,"
                  f" total {o['total']} B (cbid {o['cbid']}, result {o['result']})")
        check(traced.get("oom_caught") is True, "torch raised OutOfMemoryError")
        check(any(o["requested"] >= traced["oom_asked_bytes"] and o["total"] > 0 for o in ooms),
              f"OOM detected by stallscope ({len(ooms)} OOM records)")
    else:
        check(False, "the traced run did not try the OOM allocation")

    ratio = traced["step_ms_mean"] / plain["step_ms_mean"]
    ratio_med = traced["step_ms_median"] / plain["step_ms_median"]
    print(f"\nStep time: {plain['step_ms_mean']:.3f} ms without the shim, {traced['step_ms_mean']:.3f} ms"
          f" with it, {prof_sum['step_ms_mean']:.3f} ms under torch.profiler")
    print(f"  overhead ratio (stallscope / none): {ratio:.3f} mean, {ratio_med:.3f} median")
    # The alternating pairs check.sh ran beside these (plain-K / traced-K).
    work = os.path.dirname(os.path.abspath(argv[2]))
    pairs, all_api = [], []
    for k in range(1, 100):
        a, b, c = (os.path.join(work, f"{m}-{k}.json") for m in ("plain", "traced", "traced-all"))
        if not (os.path.exists(a) and os.path.exists(b)):
            break
        pa, pb = load(a), load(b)
        pairs.append((pa["step_ms_median"], pb["step_ms_median"]))
        if os.path.exists(c):
            all_api.append(load(c)["step_ms_median"] / pa["step_ms_median"])
    if pairs:
        ratios = [b / a for a, b in [(plain["step_ms_median"], traced["step_ms_median"])] + pairs]
        print("  alternating runs (median step, ms, without / with): "
              + ", ".join(f"{a:.3f}/{b:.3f}" for a, b in pairs))
        ratio = statistics.median(ratios)
        print(f"  overhead ratio, median of {len(ratios)} pairs' median steps: {ratio:.3f}"
              f" (pairs {min(ratios):.3f}-{max(ratios):.3f})")
    if all_api:
        print(f"  with STALLSCOPE_ALL_API=1 (every CUDA call recorded): {statistics.median(all_api):.3f}"
              f" (runs {min(all_api):.3f}-{max(all_api):.3f})")
    if ratio > 1.05:
        print("  WARN: overhead above 1.05")

    print(f"\nGPU CHECK: {'PASS' if not failures else 'FAIL (' + '; '.join(failures) + ')'}")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
