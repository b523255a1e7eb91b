//! Advice: the evidence each finding cites and the fix it prints. Numbers
//! come from the analyses; this module only turns them into sentences.

use stallscope_format::fs_name;

use super::findings::Inputs;
use super::types::Cause;
use crate::model::{Ns, Precision, SpanKind};

pub fn secs(ns: Ns) -> String {
    if ns >= 1_000_000_000 {
        format!("{:.1} s", ns as f64 / 1e9)
    } else if ns >= 1_000_000 {
        format!("{:.1} ms", ns as f64 / 1e6)
    } else {
        format!("{:.0} µs", ns as f64 / 1e3)
    }
}

fn mib(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    }
}

/// The thread that carried most of a cause, as "name (tid N)".
fn main_thread(i: &Inputs, cause: Cause) -> String {
    let cx = i.cx;
    i.ev.threads
        .iter()
        .filter(|((c, _), _)| *c == cause)
        .max_by_key(|(_, ns)| **ns)
        .map(|((_, r), _)| {
            let t = cx.thread(*r);
            let name = cx.tl.strings.get(t.name);
            let tid = t.tid.to_string();
            if name.contains(&tid) {
                name.to_string()
            } else if name.is_empty() {
                format!("thread {tid} (pid {})", cx.process(*r).pid)
            } else {
                format!("{name} (tid {tid})")
            }
        })
        .unwrap_or_else(|| "the launching thread".into())
}

/// Files or names behind a cause, most time first.
fn top_what(i: &Inputs, cause: Cause, n: usize) -> Vec<(String, Ns, u32, u32)> {
    let mut v: Vec<(String, Ns, u32, u32)> =
        i.ev.what
            .iter()
            .filter(|((c, _, _), _)| *c == cause)
            .map(|(&(_, pi, id), &ns)| {
                let p = &i.cx.tl.processes[pi as usize];
                let label = match p.object(id) {
                    Some(o) if cause == Cause::Io || cause == Cause::Data => {
                        i.cx.tl.strings.get(o.path).to_string()
                    }
                    _ => i.cx.tl.strings.get(id).to_string(),
                };
                (label, ns, pi, id)
            })
            .collect();
    v.sort_by_key(|x| std::cmp::Reverse(x.1));
    v.truncate(n);
    v
}

/// Read throughput of one file object over the whole recording (bytes / time in read calls).
fn file_rate(i: &Inputs, pi: u32, obj: u32) -> Option<f64> {
    let p = &i.cx.tl.processes[pi as usize];
    let (mut bytes, mut ns) = (0u64, 0i64);
    for t in &p.threads {
        for s in t
            .spans
            .iter()
            .filter(|s| matches!(s.kind, SpanKind::Host(op) if op.is_read()) && s.id == obj)
        {
            bytes += s.arg;
            ns += s.dur;
        }
    }
    (ns > 0).then(|| bytes as f64 / (ns as f64 / 1e9) / 1e6)
}

pub fn explain(i: &Inputs, cause: Cause, sub: &str, idle: Ns) -> (String, String) {
    let who = main_thread(i, cause);
    match cause {
        Cause::Data => {
            let ev = i.ev;
            let cap = ev.producer_capacity_ns.max(1.0);
            let workers = ev.producer_count;
            let ev_text = if sub == "cpu" && ev.producer_count == 0 {
                format!("{who} loaded batches itself (num_workers=0) while the GPU idled {}", secs(idle))
            } else if ev.producer_count == 0 {
                format!("{who} waited {} for batches (the trace does not show the workers)", secs(idle))
            } else {
                format!(
                    "{who} waited {} for batches; {workers} producer{} on CPU {:.0}% and reading files {:.0}% of the wait",
                    secs(idle),
                    if workers == 1 { "" } else { "s" },
                    100.0 * ev.producer_cpu_ns / cap,
                    100.0 * ev.producer_io_ns / cap,
                )
            };
            let fix = match sub {
                "cpu" => format!(
                    "more DataLoader workers (num_workers {workers} -> {}), cheaper per-sample transforms \
                     (pre-tokenize/pre-decode offline, or move augmentation to the GPU), prefetch_factor=4, \
                     persistent_workers=True",
                    (workers * 2).max(4)
                ),
                "io" => "data on local NVMe or in the page cache, larger sequential reads (sharded formats), \
                         and more workers so reads overlap"
                    .to_string(),
                _ => "keep more batches in flight: prefetch_factor=4, persistent_workers=True, pin_memory=True; \
                      look for a lock or slow main-process step between batches"
                    .to_string(),
            };
            (ev_text, fix)
        }
        Cause::Io => {
            let files = top_what(i, Cause::Io, 3);
            let mut parts = Vec::new();
            for (path, ns, pi, obj) in &files {
                let p = &i.cx.tl.processes[*pi as usize];
                let fs = p.object(*obj).map(|o| fs_name(o.fs_magic)).unwrap_or("?");
                let rate = file_rate(i, *pi, *obj).map(|r| format!(" at {r:.0} MB/s")).unwrap_or_default();
                parts.push(format!("{path} on {fs}{rate} ({})", secs(*ns)));
            }
            let what = if parts.is_empty() { format!("{sub} stalls") } else { parts.join(", ") };
            (
                format!("{who} blocked on I/O: {what}"),
                "move the reads out of the training loop (DataLoader workers), and keep the data on local NVMe \
                 or cache it in RAM first; for memory-mapped datasets read sequentially or pre-fault"
                    .to_string(),
            )
        }
        Cause::Cpu => {
            let (ev_text, fix) = match sub {
                "contention" => (
                    format!("{who} was runnable but waiting for a CPU (run-queue delay)"),
                    "fewer threads than cores: lower num_workers or OMP_NUM_THREADS, or give the job more cores"
                        .to_string(),
                ),
                "gil" => (
                    format!("{who} waited for the Python GIL held by another thread"),
                    "move Python-heavy work out of the training process (DataLoader workers)".to_string(),
                ),
                "host-work" => (
                    format!("{who} ran long CPU stretches without launching GPU work while the GPU idled"),
                    "move this work off the training loop: preprocessing into DataLoader workers, logging and \
                     metrics every N steps or on a background thread"
                        .to_string(),
                ),
                _ => (
                    format!("{who} computed on the CPU between launches while the GPU idled"),
                    "move preprocessing into DataLoader workers; cut Python overhead with torch.compile or CUDA \
                     graphs; avoid per-step Python loops over tensors"
                        .to_string(),
                ),
            };
            (ev_text, fix)
        }
        Cause::Memory => {
            let m = i.mem;
            let mut parts = Vec::new();
            if let Some((req, free, total)) = m.first_oom {
                parts.push(format!(
                    "{} out-of-memory error{} (first: {} requested, {} free of {})",
                    m.oom_count,
                    if m.oom_count == 1 { "" } else { "s" },
                    mib(req),
                    mib(free),
                    mib(total)
                ));
            }
            if m.free_calls > 0 {
                parts.push(format!("{} cudaFree calls ({})", m.free_calls, secs(m.free_ns)));
            }
            if m.alloc_calls > 0 {
                parts.push(format!("{} allocations ({})", m.alloc_calls, secs(m.alloc_ns)));
            }
            if m.offload_bytes_per_step > 0 {
                parts.push(format!(
                    "{} per step moved by {:.1} recurring same-size copies (offload)",
                    mib(m.offload_bytes_per_step),
                    m.offload_copies_per_step
                ));
            }
            if m.peak_allocated > 0 && m.device_memory > 0 {
                parts.push(format!("peak allocated {} of {}", mib(m.peak_allocated), mib(m.device_memory)));
            }
            (
                parts.join("; "),
                "make the model fit: gradient checkpointing, a smaller micro-batch with gradient accumulation, \
                 8-bit optimizers or QLoRA; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against \
                 fragmentation; never call torch.cuda.empty_cache() in the loop"
                    .to_string(),
            )
        }
        Cause::Sync => {
            let apis = top_what(i, Cause::Sync, 2);
            let names: Vec<String> = apis.iter().map(|a| a.0.clone()).filter(|n| !n.is_empty()).collect();
            (
                format!(
                    "{who}: the host blocked on the GPU ({}) and the GPU idled until the next launch",
                    if names.is_empty() { sub.to_string() } else { names.join(", ") }
                ),
                "avoid .item(), .cpu() and print(tensor) every step: log every N steps, accumulate on the GPU, \
                 use non_blocking copies"
                    .to_string(),
            )
        }
        Cause::Transfer => (
            format!(
                "{who}: {} pageable host-to-device copies ({}) staged by the CPU",
                i.mem.pageable_copies,
                mib(i.mem.pageable_bytes)
            ),
            "pin_memory=True in the DataLoader and .to(device, non_blocking=True)".to_string(),
        ),
        Cause::Launch if sub == "slow-call" => (
            format!("{who}: kernel-launch calls that took over 1 ms (lazy module loading, JIT compilation, or a full launch queue)"),
            "warm up before the measured steps (the first launch of each kernel loads its module); with \
             torch.compile, compile once outside the loop"
                .to_string(),
        ),
        Cause::Launch => (
            format!("{who}: kernels shorter than their launch cost, launched back to back"),
            "CUDA graphs (torch.compile(mode=\"reduce-overhead\")), fuse small ops, or a larger batch".to_string(),
        ),
        Cause::Other => (
            {
                let mut streams: Vec<(u64, Ns)> = i.ev.waited_streams.iter().map(|(s, n)| (*s, *n)).collect();
                streams.sort_by_key(|x| std::cmp::Reverse(x.1));
                let named: Vec<String> = streams
                    .iter()
                    .take(3)
                    .map(|(s, ns)| format!("stream {s} waited {} for an event (cudaStreamWaitEvent)", secs(*ns)))
                    .collect();
                if named.is_empty() {
                    "work was launched early but started late: waiting on another stream or an event".to_string()
                } else {
                    format!("work was launched but started late: {}", named.join(", "))
                }
            },
            "check cross-stream dependencies (events, collectives) and overlap them with compute".to_string(),
        ),
    }
}

/// The comm finding's evidence and fix, from one rank (so the wait is an
/// estimate).
pub fn comm_wait(wait: Ns) -> (String, String) {
    (
        format!(
            "communication kernels waited about {} for their peers (estimated from the fastest \
             instances of each collective on this rank)",
            secs(wait)
        ),
        "analyze all ranks together to name the slowest; balance the work across ranks and overlap \
         collectives with compute"
            .to_string(),
    )
}

/// The precision finding's evidence and fix: the FP32/TF32 split, the top
/// kernels, and the speed-ups assumed (`why32`, `why_tf`).
pub fn precision(
    i: &Inputs,
    fp32: Ns,
    tf32: Ns,
    kernels: Ns,
    why32: &str,
    why_tf: &str,
) -> (String, String) {
    let get = |p: Precision| {
        i.busy_by_precision
            .iter()
            .find(|x| x.0 == p)
            .map_or(0, |x| x.1)
    };
    let mut top: Vec<(u32, Ns)> = i
        .gemm_by_name
        .iter()
        .take(i.cx.tl.strings.len())
        .enumerate()
        .filter(|(_, ns)| **ns != 0)
        .map(|(n, ns)| (n as u32, *ns))
        .collect();
    top.sort_by_key(|x| std::cmp::Reverse(x.1));
    let names: Vec<&str> = top
        .iter()
        .take(2)
        .map(|(n, _)| i.cx.tl.strings.get(*n))
        .collect();
    let bf16 = get(Precision::Bf16) + get(Precision::Fp16);
    let evidence = format!(
        "{:.0}% of kernel time in FP32 GEMM/conv and {:.0}% in TF32 ({}), {:.0}% in BF16/FP16 tensor cores; \
         assumed: {}{}",
        100.0 * fp32 as f64 / kernels as f64,
        100.0 * tf32 as f64 / kernels as f64,
        names.join(", "),
        100.0 * bf16 as f64 / kernels as f64,
        if fp32 > 0 { why32 } else { "" },
        if tf32 > 0 {
            format!("; {why_tf}")
        } else {
            String::new()
        },
    );
    (
        evidence,
        "torch.autocast(\"cuda\", dtype=torch.bfloat16) around the forward pass and loss".into(),
    )
}
