"""A small, deterministic PyTorch training loop for tests/gpu/check.sh.

A conv net on synthetic 32x32 images, fed by a DataLoader with two forked
workers and pinned memory. The measured region (STEPS steps after WARMUP) is
bracketed by synchronizations and timed with CLOCK_MONOTONIC, the clock of
stallscope traces, so the checker can pick the same kernels out of a trace.

usage: train.py --mode plain|traced|profiler --out SUMMARY_JSON
                [--trace CHROME_TRACE_JSON] [--oom] [--steps N] [--device cuda|cpu]
"""
import argparse
import json
import os
import statistics
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

p = argparse.ArgumentParser()
p.add_argument("--mode", choices=["plain", "traced", "profiler"], required=True)
p.add_argument("--out", required=True)
p.add_argument("--trace")
p.add_argument("--oom", action="store_true", help="then allocate more than the GPU has")
p.add_argument("--steps", type=int, default=300)
p.add_argument("--warmup", type=int, default=30)
p.add_argument("--batch", type=int, default=256)
p.add_argument("--device", default="cuda")
a = p.parse_args()

dev = torch.device(a.device)
cuda = dev.type == "cuda"
torch.manual_seed(0)
torch.backends.cudnn.benchmark = False  # same kernels in every run


def sync():
    if cuda:
        torch.cuda.synchronize()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(
            nn.Flatten(), nn.Linear(64 * 16 * 16, 256), nn.ReLU(), nn.Linear(256, 10),
        )

    def forward(self, x):
        return self.head(self.features(x))


n = a.batch * 32
data = TensorDataset(torch.randn(n, 3, 32, 32), torch.randint(0, 10, (n,)))
loader = DataLoader(
    data, batch_size=a.batch, shuffle=True, num_workers=2, pin_memory=cuda,
    drop_last=True, persistent_workers=True, generator=torch.Generator().manual_seed(0),
)
model = Net().to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
lossf = nn.CrossEntropyLoss()


def batches():
    while True:
        yield from loader


it = batches()


def step(i):
    x, y = next(it)
    x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
    opt.zero_grad(set_to_none=True)
    loss = lossf(model(x), y)
    loss.backward()
    opt.step()
    if i % 50 == 0:
        return loss.item()  # a sync, as training loops log
    return None


for i in range(a.warmup):
    step(i)
sync()


def region():
    sync()
    t0 = time.monotonic_ns()
    times = []
    for i in range(a.steps):
        s = time.perf_counter_ns()
        step(i)
        times.append(time.perf_counter_ns() - s)
    sync()
    return t0, time.monotonic_ns(), times


if a.mode == "profiler":
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=acts) as prof:
        t0, t1, times = region()
    prof.export_chrome_trace(a.trace)
else:
    t0, t1, times = region()

summary = {
    "mode": a.mode, "pid": os.getpid(), "steps": a.steps, "region_start_ns": t0,
    "region_end_ns": t1, "step_ms_mean": (t1 - t0) / a.steps / 1e6,
    "step_ms_median": statistics.median(times) / 1e6,
    "device": torch.cuda.get_device_name(dev) if cuda else "cpu",
    "torch": torch.__version__, "cuda": torch.version.cuda,
}
if a.oom:
    total = torch.cuda.get_device_properties(dev).total_memory if cuda else 1 << 40
    asked = 2 * total
    summary["oom_asked_bytes"] = asked
    summary["oom_ts_ns"] = time.monotonic_ns()
    try:
        torch.empty(asked, dtype=torch.uint8, device=dev)
        summary["oom_caught"] = False
    except torch.cuda.OutOfMemoryError as e:
        summary["oom_caught"] = True
        summary["oom_message"] = str(e).splitlines()[0][:200]
    except RuntimeError as e:  # CPU: the allocator's own error
        summary["oom_caught"] = "out of memory" in str(e).lower() or "alloc" in str(e).lower()
        summary["oom_message"] = str(e).splitlines()[0][:200]
with open(a.out, "w") as f:
    json.dump(summary, f)
print(f"{a.mode}: {a.steps} steps, {summary['step_ms_mean']:.3f} ms/step on {summary['device']}")
