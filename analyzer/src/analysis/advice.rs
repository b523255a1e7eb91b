//! Advice: the evidence each finding cites and the fix it prints. Numbers
//! come from the analyses; this module only turns them into sentences.

use stallscope_format::fs_name;

use super::arch::Arch;
use super::findings::Inputs;
use super::job::{JobContext, Mode};
use super::kernels::short_name;
use super::precision::{self, Fp32Time};
use super::types::Cause;
use super::whatif::replays::{DataModel, workers_after};
use crate::model::{Ns, Precision};

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
                        o.label(&i.cx.tl.strings).into_owned()
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

/// Bytes per second of one file object over the whole recording, in its
/// reads, or with `write` in its writes and flushes, in MB/s.
fn file_rate(i: &Inputs, pi: u32, obj: u32, write: bool) -> Option<f64> {
    let f = i.cx.file_io(pi).get(&obj).copied().unwrap_or_default();
    let (bytes, ns) = if write {
        (f.write_bytes, f.write_ns)
    } else {
        (f.read_bytes, f.read_ns)
    };
    (ns > 0).then(|| bytes as f64 / (ns as f64 / 1e9) / 1e6)
}

/// Whether file object `obj` of process `pi` was mostly written, not read.
fn is_written(i: &Inputs, pi: u32, obj: u32) -> bool {
    i.cx.file_io(pi)
        .get(&obj)
        .is_some_and(|f| f.mostly_written())
}

/// What the I/O stalls mostly wait for, when that is writing rather than
/// reading: the fix differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writing {
    /// Large writes (a checkpoint): save asynchronously.
    Saves,
    /// Small appends (a log or metrics file, often flushed per step): log
    /// from a background thread, flush less often.
    Logs,
}

/// Bytes per write call below which a written file is a log: a log appends
/// lines or records; torch.save writes each tensor's storage in one call.
const LOG_WRITE_BYTES: u64 = 64 << 10;

/// Whether the I/O stalls are mostly on files written, not read, and on what
/// kind of writing; `None` when reads are the stall.
pub fn io_writing(i: &Inputs) -> Option<Writing> {
    let files = top_what(i, Cause::Io, usize::MAX);
    let total: Ns = files.iter().map(|f| f.1).sum();
    let (mut saved, mut bytes, mut calls): (Ns, u64, u64) = (0, 0, 0);
    for &(_, ns, pi, obj) in &files {
        let f = i.cx.file_io(pi).get(&obj).copied().unwrap_or_default();
        if f.mostly_written() {
            saved += ns;
            bytes += f.write_bytes;
            calls += f.write_calls;
        }
    }
    (total > 0 && 2 * saved > total).then(|| {
        if calls > 0 && bytes / calls < LOG_WRITE_BYTES {
            Writing::Logs
        } else {
            Writing::Saves
        }
    })
}

/// Where the job's batches come from, for the data and I/O fixes: a
/// DataLoader (or producer processes) in the trace, or neither.
fn has_producer(i: &Inputs) -> bool {
    i.job.dataloader || i.ev.producer_count > 0
}

/// The fix a host-side finding pairs with when batches pace the loop (see
/// `whatif::replays::paced_by_batches`): the producers made faster, as the
/// data what-if `d` models them.
pub fn faster_batches(i: &Inputs, d: &DataModel) -> String {
    match (d.workers, d.workers_after) {
        (Some(0), Some(m)) => format!(
            "load the batches in DataLoader workers (num_workers 0 -> {m}), so that the next one is \
             ready when the loop asks"
        ),
        (Some(n), Some(m)) => format!(
            "more DataLoader workers (num_workers {n} -> {m}) or cheaper batches, so that the next \
             one is ready when the loop asks"
        ),
        _ if has_producer(i) => "more DataLoader workers or cheaper batches, so that the next one \
                                 is ready when the loop asks"
            .to_string(),
        _ => "a faster batch producer (record it too), so that the next batch is ready when the \
              loop asks"
            .to_string(),
    }
}

/// An AMD GPU, by its name or architecture, or by the HIP calls of its trace.
fn is_amd(i: &Inputs) -> bool {
    i.gpu.hip || Arch::of(i.gpu).is_amd()
}

/// The allocator's calls as the trace's runtime names them.
pub fn alloc_api(i: &Inputs) -> (&'static str, &'static str) {
    if is_amd(i) {
        ("hipMalloc", "hipFree")
    } else {
        ("cudaMalloc", "cudaFree")
    }
}

/// Allocation or free calls per step at or above this are churn: the caching
/// allocator (or a library's per-call workspace) goes to the driver every step.
const CHURN_PER_STEP: f64 = 20.0;

pub fn explain(i: &Inputs, cause: Cause, sub: &str, idle: Ns) -> (String, String) {
    let who = main_thread(i, cause);
    let job = i.job;
    match cause {
        Cause::Data => {
            let ev = i.ev;
            let cap = ev.producer_capacity_ns.max(1.0);
            let workers = ev.producer_count;
            let ev_text = if sub == "cpu" && ev.producer_count == 0 {
                format!("{who} loaded batches itself (num_workers=0) while the GPU idled {}", secs(idle))
            } else if ev.producer_count == 0 {
                format!("{who} waited for batches while the GPU idled {} (the trace does not show the producers)", secs(idle))
            } else {
                let restarted = match ev.producers_restarted {
                    0 => String::new(),
                    n => format!(
                        "; {n} worker process{} started after the first step (new workers each epoch)",
                        if n == 1 { "" } else { "es" }
                    ),
                };
                format!(
                    "{who} waited for batches while the GPU idled {}; {workers} producer{} on CPU {:.0}% and reading files {:.0}% of the wait{restarted}",
                    secs(idle),
                    if workers == 1 { "" } else { "s" },
                    100.0 * ev.producer_cpu_ns / cap,
                    100.0 * ev.producer_io_ns / cap,
                )
            };
            // pin_memory is advised only with pageable copies seen, and then the evidence says so.
            let pin = i.mem.pageable_copies > 0 && sub != "cpu" && sub != "io";
            let ev_text = if pin && !job.inference() && has_producer(i) {
                format!(
                    "{ev_text}; {} pageable host-to-device copies ({})",
                    i.mem.pageable_copies,
                    mib(i.mem.pageable_bytes)
                )
            } else {
                ev_text
            };
            let fix = if job.inference() && job.dataloader && sub == "cpu" && workers == 0 {
                // The workers the what-if assumed (see `DataModel`).
                let after = i
                    .replays
                    .and_then(|r| r.data)
                    .and_then(|d| d.workers_after)
                    .unwrap_or(4);
                format!(
                    "load the inputs in DataLoader workers (num_workers 0 -> {after}), so that the next \
                     batch is prepared while the GPU runs, and copy it with non_blocking=True"
                )
            } else if job.inference() {
                "prepare the next inputs while the GPU runs (a background thread or process), and copy \
                 them with non_blocking=True"
                    .to_string()
            } else if !has_producer(i) {
                "the batch producer is not in the trace: record it too, and keep more batches in flight \
                 (prefetch the next one while the GPU runs)"
                    .to_string()
            } else {
                // Lead with the workers the what-if modeled (see `DataModel`):
                // a deeper prefetch alone adds no batches per second.
                let planned = i.replays.and_then(|r| r.data).and_then(|d| d.workers.zip(d.workers_after));
                let more = match planned {
                    Some((n, m)) => format!("more DataLoader workers (num_workers {n} -> {m})"),
                    None if workers > 0 => {
                        format!("more DataLoader workers (num_workers {workers} -> {})", workers_after(workers))
                    }
                    None => "twice the DataLoader workers (the trace does not show how many)".to_string(),
                };
                let pin = if pin { "; pin_memory=True" } else { "" };
                // Only where workers were seen starting again mid-run: it
                // saves nothing in a loop whose workers live throughout.
                let keep = if i.ev.producers_restarted > 0 {
                    ", persistent_workers=True (keep the workers across epochs)"
                } else {
                    ""
                };
                match sub {
                    "cpu" => format!(
                        "{more}, cheaper per-sample transforms (pre-tokenize/pre-decode offline, or move \
                         augmentation to the GPU){keep}"
                    ),
                    "io" => format!(
                        "{more} so that reads overlap; data on local NVMe or in the page cache, larger \
                         sequential reads (sharded formats){keep}"
                    ),
                    // Producers seen, and neither on CPU nor reading files.
                    "starved" if workers > 0 => format!(
                        "{more}: the producers slept through most of the wait (remote storage, the network \
                         or a lock), and more of them overlap that latency{pin}{keep}; look for a lock or \
                         slow main-process step between batches"
                    ),
                    _ => format!(
                        "{more}, so that the next batch is ready when the loop asks{pin}{keep}; if the \
                         workers keep up, look for a lock or slow main-process step between batches"
                    ),
                }
            };
            (ev_text, fix)
        }
        Cause::Io => {
            let files = top_what(i, Cause::Io, 3);
            // Small files read one after another in runs (the object is
            // then their folder).
            let small_files_of = |pi: u32, obj: u32| i.cx.file_io(pi).get(&obj).map_or(0, |f| f.files);
            let mut parts = Vec::new();
            for (path, ns, pi, obj) in &files {
                let p = &i.cx.tl.processes[*pi as usize];
                let fs = p.object(*obj).map(|o| fs_name(o.fs_magic)).unwrap_or("?");
                let (verb, rate) = if is_written(i, *pi, *obj) {
                    ("writing ", file_rate(i, *pi, *obj, true))
                } else {
                    ("", file_rate(i, *pi, *obj, false))
                };
                let rate = rate.map(|r| format!(" at {r:.0} MB/s")).unwrap_or_default();
                let files = match small_files_of(*pi, *obj) {
                    0 => String::new(),
                    n => format!(" ({n} small files, one after another)"),
                };
                parts.push(format!("{verb}{path}{files} on {fs}{rate} ({})", secs(*ns)));
            }
            // The top wait is a folder of small files: their number costs,
            // as much as where they are.
            let small_files = files.first().is_some_and(|&(_, _, pi, obj)| small_files_of(pi, obj) > 0);
            let what = match (parts.is_empty(), sub) {
                (false, _) => parts.join(", "),
                (true, "page-faults") => {
                    "major page faults (memory-mapped files, or memory swapped out)".to_string()
                }
                (true, "d-state") => "uninterruptible sleep in the kernel (D state) outside any \
                                      recorded call: a disk, a network filesystem or a driver"
                    .to_string(),
                (true, _) => format!("{sub} stalls"),
            };
            match io_writing(i) {
                Some(Writing::Saves) => {
                    return (
                        format!("{who} blocked on I/O: {what}"),
                        "save asynchronously: copy the state to CPU memory, then write it from a \
                         background thread or process (torch.distributed.checkpoint.async_save, or \
                         torch.save in a thread); save less often, or to local NVMe first and upload \
                         from there"
                            .to_string(),
                    );
                }
                Some(Writing::Logs) => {
                    return (
                        format!("{who} blocked on I/O: {what}"),
                        "log from a background thread (logging.handlers.QueueHandler, or the metrics \
                         logger's own async mode), buffer the records and flush every few hundred \
                         steps, and do not fsync them per step"
                            .to_string(),
                    );
                }
                None => {}
            }
            let away = if i.job.dataloader {
                "move the reads into DataLoader workers"
            } else {
                "move the reads off the thread that launches GPU work (a background reader, prefetched)"
            };
            let fix = if small_files {
                format!(
                    "{away}; pack the small files into large shards read sequentially (WebDataset tar \
                     shards, Arrow/Parquet, LMDB), and keep them on local NVMe or cache them in RAM first"
                )
            } else {
                format!(
                    "{away}, and keep the data on local NVMe or cache it in RAM first; for memory-mapped \
                     datasets read sequentially or pre-fault"
                )
            };
            (format!("{who} blocked on I/O: {what}"), fix)
        }
        Cause::Cpu => {
            let (ev_text, fix) = match sub {
                // Waits for a CPU inside launch bursts: the what-if is the
                // dispatch one (less dispatch waits less), so its fix leads.
                "contention" => (
                    format!("{who} was runnable but waiting for a CPU (run-queue delay)"),
                    if job.graphs() {
                        format!(
                            "keep runnable threads under the cores: lower num_workers or \
                             OMP_NUM_THREADS, or give the job more cores; {GRAPHS_IN_USE}"
                        )
                    } else {
                        "less dispatch to wait for a CPU: CUDA graphs or torch.compile(mode=\"reduce-overhead\"); \
                         and keep runnable threads under the cores: lower num_workers or OMP_NUM_THREADS, \
                         or give the job more cores"
                            .to_string()
                    },
                ),
                "gil" => (
                    format!("{who} waited for the Python GIL held by another thread"),
                    if i.job.dataloader {
                        "move Python-heavy work out of the training process (DataLoader workers)".to_string()
                    } else {
                        "move Python-heavy work out of the process that launches GPU work (another process)"
                            .to_string()
                    },
                ),
                "host-work" => (
                    format!("{who} ran long CPU stretches without launching GPU work while the GPU idled"),
                    host_work_fix(job),
                ),
                _ => (
                    format!("{who} computed on the CPU between launches while the GPU idled"),
                    cpu_fix(job),
                ),
            };
            (ev_text, fix)
        }
        Cause::Memory => memory(i),
        Cause::Sync => {
            let apis = top_what(i, Cause::Sync, 2);
            let names: Vec<String> = apis.iter().map(|a| a.0.clone()).filter(|n| !n.is_empty()).collect();
            (
                format!(
                    "{who}: the host blocked on the GPU ({}) and the GPU idled until the next launch",
                    if names.is_empty() { sub.to_string() } else { names.join(", ") }
                ),
                "avoid .item(), .cpu() and print(tensor) every step: fetch results every N steps, keep them \
                 on the GPU until then, use non_blocking copies"
                    .to_string(),
            )
        }
        Cause::Transfer if i.mem.pageable_copies > 0 => (
            format!(
                "{who}: {} pageable host-to-device copies ({}) staged by the CPU",
                i.mem.pageable_copies,
                mib(i.mem.pageable_bytes)
            ),
            if i.job.dataloader {
                "pin_memory=True in the DataLoader and .to(device, non_blocking=True)".to_string()
            } else {
                "pin the host buffers (tensor.pin_memory()) and copy with .to(device, non_blocking=True)"
                    .to_string()
            },
        ),
        Cause::Transfer => (
            format!("{who}: host-to-device copies that no GPU work overlapped"),
            match job.serving_engine {
                // The engine copies its own inputs: only its scheduler can overlap them.
                Some(engine) => engine_overlap(engine),
                None => "copy the next inputs ahead, on a side stream with non_blocking=True, while the current step runs"
                    .to_string(),
            },
        ),
        Cause::Launch if sub == "slow-call" => (
            format!("{who}: kernel-launch calls that took over 1 ms (lazy module loading, JIT compilation, or a full launch queue)"),
            "warm up before the measured steps (the first launch of each kernel loads its module); with \
             torch.compile, compile once outside the loop"
                .to_string(),
        ),
        Cause::Launch if job.serving_engine.is_some() => (
            format!("{who}: kernels shorter than their launch cost, launched back to back"),
            engine_graphs(job.serving_engine.unwrap_or("the engine"), job.graphs()),
        ),
        Cause::Launch if job.graphs() => (
            format!("{who}: kernels shorter than their launch cost, launched back to back (graphs are in use)"),
            "fuse the small ops outside the graphs (torch.compile), or put more work in each launch (larger batch)"
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

/// What a serving engine offers against host work between its steps (its
/// scheduling and input preparation): a scheduler that prepares the next
/// step while the GPU runs the current one. vLLM's is off by default
/// (`--async-scheduling`); SGLang's overlap scheduler is on unless disabled.
fn engine_overlap(engine: &str) -> String {
    match engine {
        "vLLM" => "vLLM: turn on async scheduling (--async-scheduling), so that the engine \
                   prepares and copies the next step's inputs while the GPU runs"
            .to_string(),
        "SGLang" => "SGLang: keep the overlap scheduler on (no --disable-overlap-schedule), so \
                     that the engine prepares the next batch while the GPU runs"
            .to_string(),
        _ => format!(
            "{engine}: an engine version or option that schedules and prepares the next step while \
             the GPU runs (overlap or async scheduling)"
        ),
    }
}

/// The fix for long host work between launch bursts, for this kind of job.
fn host_work_fix(job: &JobContext) -> String {
    if let Some(engine) = job.serving_engine {
        engine_overlap(engine)
    } else if job.inference() {
        "move this work out of the inference loop: prepare inputs ahead on a background thread or in \
         another process, and log every N requests"
            .to_string()
    } else if job.dataloader {
        "move this work off the training loop: preprocessing into DataLoader workers, logging and \
         metrics every N steps or on a background thread"
            .to_string()
    } else {
        "move this work off the loop: precompute it, or do it on a background thread or in another \
         process; log and compute metrics every N steps"
            .to_string()
    }
}

/// Dispatch advice to a job that launches graphs already.
const GRAPHS_IN_USE: &str =
    "graphs are in use already: look for the Python work between graph launches";

/// A serving engine's own CUDA graphs, named by the option that turns them
/// off (its users launch no kernels themselves), or, where the trace shows
/// graphs, what still launches one by one.
fn engine_graphs(engine: &str, graphs: bool) -> String {
    if graphs {
        return format!(
            "{engine}: {GRAPHS_IN_USE} (scheduling, sampling), and keep batch sizes within the \
             captured ones, above which steps run eagerly; batch more requests per step"
        );
    }
    let on = match engine {
        "vLLM" => "vLLM: keep CUDA graphs on (no --enforce-eager)".to_string(),
        "SGLang" => "SGLang: keep CUDA graphs on (no --disable-cuda-graph), with \
                     --cuda-graph-max-bs at or above the running batch size"
            .to_string(),
        _ => format!("{engine}: keep its CUDA-graph capture on"),
    };
    format!("{on}, and batch more requests per step")
}

/// The fix for host CPU time between launches, for this kind of job.
fn cpu_fix(job: &JobContext) -> String {
    let graphs = if job.graphs() {
        GRAPHS_IN_USE
    } else {
        "cut launch overhead with CUDA graphs or torch.compile(mode=\"reduce-overhead\")"
    };
    match (job.serving_engine, job.mode) {
        (Some(engine), _) => engine_graphs(engine, job.graphs()),
        (None, Mode::Inference) => {
            format!("{graphs}; run larger batches; avoid per-step Python loops over tensors")
        }
        (None, _) if job.dataloader => format!(
            "move preprocessing into DataLoader workers; {graphs}; avoid per-step Python loops over tensors"
        ),
        (None, _) => format!(
            "move preprocessing out of the loop (precompute it, or produce batches in another process); \
             {graphs}; avoid per-step Python loops over tensors"
        ),
    }
}

/// Memory findings: model-fitting advice only with OOM or offload traffic;
/// allocator churn gets allocator advice.
fn memory(i: &Inputs) -> (String, String) {
    let m = i.mem;
    let (malloc, free) = alloc_api(i);
    let mut parts = Vec::new();
    if let Some((req, freeb, total)) = m.first_oom {
        parts.push(format!(
            "{} out-of-memory error{} (first: {} requested, {} free of {})",
            m.oom_count,
            if m.oom_count == 1 { "" } else { "s" },
            mib(req),
            mib(freeb),
            mib(total)
        ));
    }
    if m.free_calls > 0 {
        parts.push(format!(
            "{} {free} calls ({})",
            m.free_calls,
            secs(m.free_ns)
        ));
    }
    if m.alloc_calls > 0 {
        parts.push(format!(
            "{} {malloc} calls ({})",
            m.alloc_calls,
            secs(m.alloc_ns)
        ));
    }
    // Churn is measured per step: without steps (or with one) allocations may
    // be start-up, and say nothing about the loop.
    let steps = i.steps.steps.len();
    let per_step = if steps >= 2 {
        (m.alloc_calls + m.free_calls) as f64 / steps as f64
    } else {
        0.0
    };
    if m.alloc_calls + m.free_calls > 0 && steps >= 2 {
        parts.push(format!("{per_step:.0} per step over {steps} steps"));
    }
    if m.offload_bytes_per_step > 0 {
        parts.push(format!(
            "{} per step moved by {:.1} recurring same-size copies (offload)",
            mib(m.offload_bytes_per_step),
            m.offload_copies_per_step
        ));
    }
    if m.peak_allocated > 0 && m.device_memory > 0 {
        parts.push(format!(
            "peak allocated {} of {}",
            mib(m.peak_allocated),
            mib(m.device_memory)
        ));
    }
    let fit = m.oom_count > 0 || m.offload_bytes_per_step > 0;
    let fix = if fit && i.job.inference() {
        "make the model fit: a smaller batch or context, weight quantization (8-bit/4-bit), or a \
         paged KV cache; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation"
            .to_string()
    } else if fit {
        "make the model fit: gradient checkpointing, a smaller micro-batch with gradient accumulation, \
         8-bit optimizers or QLoRA; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against \
         fragmentation; never call torch.cuda.empty_cache() in the loop"
            .to_string()
    } else if per_step >= CHURN_PER_STEP {
        let env = if is_amd(i) {
            "PYTORCH_NO_HIP_MEMORY_CACHING"
        } else {
            "PYTORCH_NO_CUDA_MEMORY_CACHING"
        };
        format!(
            "{malloc}/{free} on every step means the caching allocator is bypassed: check that {env} \
             is unset; a library that allocates a workspace per call (MIOpen or cuDNN convolutions, \
             cuBLAS) should get it from PyTorch's allocator (e.g. a fixed workspace size), and never call \
             torch.cuda.empty_cache() in the loop"
        )
    } else {
        "move allocations out of the loop (preallocate buffers, reuse tensors), and never call \
         torch.cuda.empty_cache() in the loop"
            .to_string()
    };
    (parts.join("; "), fix)
}

/// The kernels with the most FP32/TF32 GEMM time, whole names, most first.
fn top_gemm_kernels(i: &Inputs, n: usize) -> Vec<String> {
    let mut top: Vec<(u32, Ns)> = i
        .gemm_by_name
        .iter()
        .take(i.cx.tl.strings.len())
        .enumerate()
        .filter(|(_, ns)| **ns != 0)
        .map(|(n, ns)| (n as u32, *ns))
        .collect();
    top.sort_by_key(|x| std::cmp::Reverse(x.1));
    top.iter()
        .take(n)
        .map(|(id, _)| i.cx.tl.strings.get(*id).to_string())
        .collect()
}

/// The precision finding's evidence, fix and the kernels it cites (whole
/// names; the evidence shortens them): the FP32/TF32 split, the top kernels,
/// (the speed-ups assumed are the finding's `assumption`).
pub fn precision(i: &Inputs, t: &Fp32Time, kernels: Ns) -> (String, String, Vec<String>) {
    let get = |p: Precision| {
        i.busy_by_precision
            .iter()
            .find(|x| x.0 == p)
            .map_or(0, |x| x.1)
    };
    let top = top_gemm_kernels(i, 2);
    let names: Vec<String> = top.iter().map(|n| short_name(n, 60)).collect();
    let bf16 = get(Precision::Bf16) + get(Precision::Fp16);
    let arch = Arch::of(i.gpu);
    let pct = |ns: Ns| 100.0 * ns as f64 / kernels as f64;
    let attention = if t.attention > 0 {
        format!(", {:.0}% in FP32 attention", pct(t.attention))
    } else {
        String::new()
    };
    let evidence = format!(
        "{:.0}% of kernel time in FP32 GEMM/conv and {:.0}% in TF32 ({}){attention}, {:.0}% in \
         BF16/FP16 tensor cores on {}",
        pct(t.gemm),
        pct(t.tf32),
        names.join(", "),
        pct(bf16),
        arch.name(),
    );
    let fix = t
        .fix(arch, i.job.inference())
        .map(|f| f.fix)
        .unwrap_or_else(|| "no faster matrix math on this GPU for these kernels".to_string());
    (evidence, fix, top)
}

/// The unfused-attention finding's evidence, fix and the softmax kernels
/// it cites (whole names).
pub fn attention(i: &Inputs) -> (String, String, Vec<String>) {
    let a = i.mix;
    let kernels: Ns = i.busy_by_precision.iter().map(|x| x.1).sum::<Ns>().max(1);
    let top: Vec<String> = (a.softmax_by_name.iter().take(2))
        .map(|(id, _)| i.cx.tl.strings.get(*id).to_string())
        .collect();
    let names: Vec<String> = top.iter().map(|n| short_name(n, 60)).collect();
    let evidence = format!(
        "{:.0}% of kernel time in softmax kernels ({}) and {:.0}% in fused attention: attention \
         runs as separate kernels, its score matrix written to memory and read back",
        100.0 * a.softmax_ns as f64 / kernels as f64,
        names.join(", "),
        100.0 * a.fused_ns as f64 / kernels as f64,
    );
    let fix = if i.job.serving_engine.is_some() {
        "a fused attention backend in the serving engine (FlashAttention, FlashInfer; on ROCm, \
         its CK or Triton attention) in place of the unfused fallback"
            .to_string()
    } else {
        "torch.nn.functional.scaled_dot_product_attention in place of softmax(q @ k^T) @ v (it \
         picks FlashAttention or memory-efficient kernels); Hugging Face models: \
         from_pretrained(..., attn_implementation=\"sdpa\")"
            .to_string()
    };
    (evidence, fix, top)
}

/// The FP8 option where GEMMs already run in BF16/FP16 on a GPU with FP8
/// (Hopper, Blackwell, MI300): its share of the window, evidence and fix
/// (the saving comes from the FP8 replay lane).
pub fn fp8_option(i: &Inputs, wall: Ns) -> Option<(f64, String, String)> {
    let get = |p: Precision| {
        i.busy_by_precision
            .iter()
            .find(|x| x.0 == p)
            .map_or(0, |x| x.1)
    };
    let half = get(Precision::Bf16) + get(Precision::Fp16);
    let share = 100.0 * half as f64 / wall.max(1) as f64;
    let arch = Arch::of(i.gpu);
    let f = precision::fix(Precision::Bf16, arch, i.job.inference())?;
    Some((
        share,
        format!(
            "{share:.0}% of the window in BF16/FP16 GEMM/conv on {}, which runs FP8 at twice the \
             BF16 rate",
            arch.name()
        ),
        fp8_inference_fix(i.job).unwrap_or(f.fix),
    ))
}

/// FP8 for inference the way its stack does it: Transformer Engine is for
/// training, while serving engines quantize on load (vLLM and SGLang take
/// `--quantization fp8`, TGI `--quantize fp8`, each also an FP8 checkpoint)
/// and plain PyTorch has torchao's float8 inference configs.
fn fp8_inference_fix(job: &JobContext) -> Option<String> {
    if !job.inference() {
        return None;
    }
    let validate = "validate accuracy against the BF16 model first";
    Some(match job.serving_engine {
        Some(engine) => {
            let flag = if engine == "TGI" {
                "--quantize"
            } else {
                "--quantization"
            };
            format!(
                "optional: {engine}: serve in FP8 ({flag} fp8, or an FP8 checkpoint); {validate}"
            )
        }
        None => format!(
            "optional: FP8 linear layers with torchao: quantize_(model, \
             Float8DynamicActivationFloat8WeightConfig()); {validate}"
        ),
    })
}

/// The comm finding's evidence and fix, from one rank (so the wait is an
/// estimate).
pub fn comm_wait(wait: Ns) -> (String, String) {
    (
        format!(
            "communication kernels waited about {} for their peers (estimated from the fastest \
             instances of each collective and message size on this rank)",
            secs(wait)
        ),
        "analyze all ranks together to name the slowest; balance the work across ranks and overlap \
         collectives with compute"
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp8_for_inference_comes_from_its_serving_stack() {
        let job = |mode, serving_engine| JobContext {
            mode,
            serving_engine,
            ..Default::default()
        };
        assert_eq!(fp8_inference_fix(&job(Mode::Training, None)), None);
        assert_eq!(fp8_inference_fix(&job(Mode::Unknown, Some("vLLM"))), None);
        let vllm = fp8_inference_fix(&job(Mode::Inference, Some("vLLM"))).unwrap();
        assert!(
            vllm.contains("vLLM: serve in FP8 (--quantization fp8"),
            "{vllm}"
        );
        let tgi = fp8_inference_fix(&job(Mode::Inference, Some("TGI"))).unwrap();
        assert!(tgi.contains("(--quantize fp8"), "{tgi}");
        let plain = fp8_inference_fix(&job(Mode::Inference, None)).unwrap();
        assert!(plain.contains("torchao") && !plain.contains("Transformer Engine"));
    }

    /// A serving engine's host work between steps is its own scheduling:
    /// the fix is the engine's overlap, not a background thread the user
    /// cannot add.
    #[test]
    fn host_work_in_a_serving_engine_is_for_its_scheduler_to_overlap() {
        let job = |serving_engine| JobContext {
            mode: Mode::Inference,
            serving_engine,
            ..Default::default()
        };
        let vllm = host_work_fix(&job(Some("vLLM")));
        assert!(
            vllm.starts_with("vLLM: turn on async scheduling (--async-scheduling)"),
            "{vllm}"
        );
        let sglang = host_work_fix(&job(Some("SGLang")));
        assert!(sglang.contains("no --disable-overlap-schedule"), "{sglang}");
        let tgi = host_work_fix(&job(Some("TGI")));
        assert!(tgi.starts_with("TGI: ") && tgi.contains("overlap"), "{tgi}");
        let plain = host_work_fix(&job(None));
        assert!(plain.contains("background thread"), "{plain}");
    }

    /// An engine's users launch no kernels: dispatch advice names the
    /// option that turns its graphs off, not torch.compile.
    #[test]
    fn dispatch_in_a_serving_engine_is_about_its_own_graphs() {
        let job = |serving_engine, graph_replay| JobContext {
            mode: Mode::Inference,
            serving_engine,
            graph_replay,
            ..Default::default()
        };
        let vllm = cpu_fix(&job(Some("vLLM"), false));
        assert_eq!(
            vllm,
            "vLLM: keep CUDA graphs on (no --enforce-eager), and batch more requests per step"
        );
        let sglang = cpu_fix(&job(Some("SGLang"), false));
        assert!(
            sglang.contains("--disable-cuda-graph") && sglang.contains("--cuda-graph-max-bs"),
            "{sglang}"
        );
        let replaying = cpu_fix(&job(Some("vLLM"), true));
        assert!(
            replaying.starts_with("vLLM: graphs are in use already")
                && replaying.contains("captured ones"),
            "{replaying}"
        );
        for fix in [vllm, sglang, replaying] {
            assert!(!fix.contains("torch.compile"), "{fix}");
        }
        let eager = cpu_fix(&job(None, false));
        assert!(eager.contains("torch.compile"), "{eager}");
    }
}
