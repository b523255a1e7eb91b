"""Real-GPU what-if workloads for tests/gpu/whatif.sh: each scenario has a
stall and the fix that the report should advise, so the fix's estimated step
time can be checked against a run with the fix applied.

  loader     a DataLoader whose samples cost CPU time (tokenizing, decoding)
             feeds a bf16 MLP; the fix is more workers (--workers N).
  precision  the same MLP in FP32 with TF32 off, fed from GPU memory; the fix
             the report models is TF32 matmuls (`fixed`), its next step bf16
             autocast (`bf16`).
  sync       a loss.item() after every step, then host-side logging work that
             could have overlapped the GPU; the fix drops the per-step item().
  memory     torch.cuda.empty_cache() after every step, so each step allocates
             its activations with cudaMalloc again and frees them with a
             synchronizing cudaFree; the fix drops the call.

The model is an MLP, or with WHATIF_MODEL=gpt a decoder-only transformer as
LLM fine-tuning trains one (token embedding, causal flash/SDPA attention,
LayerNorm, GELU MLP, a vocabulary head with cross-entropy, fused AdamW): its
kernels are attention, normalization and optimizer kernels beside the GEMMs.

usage: whatif.py SCENARIO slow|fixed|bf16 --out SUMMARY_JSON [--workers N] [--steps N]
env: WHATIF_MODEL (mlp|gpt), WHATIF_WIDTH (4096; gpt 1024), WHATIF_TOKENS
     (8192), WHATIF_LAYERS (4; gpt 8) and WHATIF_SAMPLE_MS (1.5; gpt 8 per
     1024-token sequence) size the model and the samples' CPU cost, to check
     the estimates on shapes other than the ones they were compared on.
"""
import argparse
import json
import os
import statistics
import time

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset

p = argparse.ArgumentParser()
p.add_argument("scenario", choices=["loader", "precision", "sync", "memory"])
p.add_argument("variant", choices=["slow", "fixed", "bf16"])
p.add_argument("--out", required=True)
p.add_argument("--workers", type=int, default=1, help="DataLoader workers (loader)")
p.add_argument("--steps", type=int, default=40)
p.add_argument("--warmup", type=int, default=8)
a = p.parse_args()

dev = torch.device("cuda")
torch.manual_seed(0)
tf32 = a.scenario == "precision" and a.variant == "fixed"
torch.backends.cuda.matmul.allow_tf32 = tf32
torch.backends.cudnn.allow_tf32 = tf32

GPT = os.environ.get("WHATIF_MODEL", "mlp") == "gpt"
WIDTH = int(os.environ.get("WHATIF_WIDTH", 1024 if GPT else 4096))
TOKENS = int(os.environ.get("WHATIF_TOKENS", 8192))
LAYERS = int(os.environ.get("WHATIF_LAYERS", 8 if GPT else 4))
FEATURES = 256
# A batch of 32 MLP samples costs 48 ms of CPU, one of 8 sequences 64 ms.
SAMPLE_CPU_S = float(os.environ.get("WHATIF_SAMPLE_MS", 8 if GPT else 1.5)) / 1000
BATCH = 8 if GPT else 32
SEQ = TOKENS // BATCH
VOCAB = 32768
HEADS = 16


def burn(seconds):
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        x += 1
    return x


class CostlySamples(Dataset):
    """Samples that cost CPU time to produce, as decoding or tokenizing does."""

    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        burn(SAMPLE_CPU_S)
        if GPT:  # one sequence of token ids, one longer than the model reads
            return torch.randint(VOCAB, (SEQ + 1,), generator=torch.Generator().manual_seed(i))
        return torch.full((SEQ, FEATURES), float(i % 7) / 7.0)


class Block(nn.Module):
    """A pre-norm transformer block."""

    def __init__(self, d):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, HEADS, d // HEADS).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, WIDTH)
        self.blocks = nn.Sequential(*[Block(WIDTH) for _ in range(LAYERS)])
        self.ln = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, ids):
        logits = self.head(self.ln(self.blocks(self.emb(ids[:, :-1]))))
        return F.cross_entropy(logits.float().view(-1, VOCAB), ids[:, 1:].reshape(-1))


if GPT:
    model = Decoder()
else:
    model = nn.Sequential(nn.Linear(FEATURES, WIDTH),
                          *[nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.GELU()) for _ in range(LAYERS)])
model = model.to(dev)
if a.scenario != "precision":
    model = model.to(torch.bfloat16)
if GPT:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
else:
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
amp = a.scenario == "precision" and a.variant == "bf16"

if a.scenario == "loader":
    workers = a.workers
    loader = DataLoader(CostlySamples(), batch_size=BATCH, num_workers=workers,
                        pin_memory=True, persistent_workers=workers > 0,
                        prefetch_factor=2 if workers > 0 else None)
    batches = iter(loader)

    def next_batch():
        x = next(batches)
        if GPT:
            return x.to(dev, non_blocking=True)
        return x.view(TOKENS, FEATURES).to(dev, non_blocking=True).to(torch.bfloat16)
else:
    if GPT:
        resident = torch.randint(VOCAB, (BATCH, SEQ + 1), device=dev)
    else:
        dtype = torch.float32 if a.scenario == "precision" else torch.bfloat16
        resident = torch.randn(TOKENS, FEATURES, device=dev, dtype=dtype)

    def next_batch():
        return resident


def log_host_work():
    """What a loop does with a logged loss: formatting, a metrics call."""
    burn(0.004)


def step(i):
    x = next_batch()
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
        loss = model(x) if GPT else model(x).float().pow(2).mean()
    loss.backward()
    opt.step()
    if a.scenario == "sync":
        if a.variant == "slow" or i % 20 == 0:
            loss.item()
        log_host_work()
    if a.scenario == "memory" and a.variant == "slow":
        torch.cuda.empty_cache()


for i in range(a.warmup):
    step(i)
torch.cuda.synchronize()
t0 = time.monotonic_ns()
times = []
for i in range(a.steps):
    s = time.perf_counter_ns()
    step(i)
    times.append(time.perf_counter_ns() - s)
torch.cuda.synchronize()
t1 = time.monotonic_ns()
summary = {
    "scenario": a.scenario, "variant": a.variant, "model": "gpt" if GPT else "mlp", "pid": os.getpid(), "steps": a.steps,
    "workers": a.workers if a.scenario == "loader" else None,
    "step_ms_mean": (t1 - t0) / a.steps / 1e6,
    "step_ms_median": statistics.median(times) / 1e6,
}
with open(a.out, "w") as f:
    json.dump(summary, f)
print(f"{a.scenario} {a.variant}: {summary['step_ms_mean']:.2f} ms/step (wall)")
