//! Start-up: what a job pays once before its steady state. Context creation
//! (the first cudaFree or cudaMalloc, cuInit), lazy module loading (a slow
//! first launch of a kernel, cuModuleLoad*), cudnn autotuning (cudnnFind*),
//! torch.compile, and CUDA graph capture. These are reported apart, and the
//! steady-state analyses start after them.
//!
//! Start-up is a prefix of the trace: it begins at the first CUDA call (or GPU
//! op) and extends over each start-up item that begins soon after the ones
//! before it, or before the GPU has done much (a DataLoader starting its
//! workers can hold the first iteration back for seconds). A slow call deep
//! inside the steady state does not pull the start-up there.

use std::sync::atomic::{AtomicU8, Ordering};

use rayon::prelude::*;

use super::types::{Startup, StartupItem};
use crate::model::{CorrIndex, GpuOpKind, Ns, SpanKind, Timeline};

/// A context or allocator call this slow is start-up (steady-state
/// allocations take microseconds; creating a context takes seconds).
const CONTEXT_NS: Ns = 50_000_000;
/// A first launch this slow loads a module; module loads and autotuning
/// ranges count from here.
const MODULE_NS: Ns = 1_000_000;
/// Compiler ranges this long (dynamo, inductor).
const COMPILE_NS: Ns = 10_000_000;
/// A compiled region this long compiled before it ran.
const COMPILED_REGION_NS: Ns = 1_000_000_000;
/// An item joins start-up when it begins within this of the last one's end,
/// or within a quarter of the start-up so far, if longer.
const JOIN_NS: Ns = 1_000_000_000;
/// ... or when the GPU has started less than this share of its ops before it
/// (a first iteration's worth, in a trace of a few dozen).
const EARLY_OPS: f64 = 0.05;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
enum Class {
    None,
    Context,
    ModuleLoad,
    Autotune,
    Compile,
    CompiledRegion,
    CaptureBegin,
    CaptureEnd,
}

/// What a span name says about start-up: as a range (`.0`) and as a CUDA/HIP
/// API call (`.1`). An API call is also what its name says as a range.
fn classify_both(name: &str) -> (Class, Class) {
    let lower = name.to_ascii_lowercase();
    let named = classify_range(name, &lower);
    if named != Class::None {
        return (named, named);
    }
    (Class::None, classify_api(&lower))
}

#[cfg(test)]
fn classify(name: &str, api: bool) -> Class {
    let (named, call) = classify_both(name);
    if api { call } else { named }
}

/// `lower`: `name` in lower case.
fn classify_range(name: &str, lower: &str) -> Class {
    if lower.contains("cudnnfind") || lower.contains("miopenfind") {
        return Class::Autotune;
    }
    if name.starts_with("Torch-Compiled Region") {
        return Class::CompiledRegion;
    }
    // All but one of the compiler ranges name "compile": one search rules
    // most names out.
    let compile = lower.contains("compile")
        && [
            "compile_fx",
            "compile_inner",
            "_compile.",
            "call_user_compiler",
            "inductor_compile",
            "dynamo_compile",
            "compile_to_module",
        ]
        .iter()
        .any(|k| lower.contains(k));
    if compile || lower.contains("convert_frame") {
        return Class::Compile;
    }
    Class::None
}

/// An API call's class, past what its name says as a range.
fn classify_api(lower: &str) -> Class {
    if lower.contains("begincapture") {
        return Class::CaptureBegin;
    }
    if lower.contains("endcapture") {
        return Class::CaptureEnd;
    }
    if lower.contains("moduleload") || lower.contains("libraryload") {
        return Class::ModuleLoad;
    }
    // Launches are judged by their kernel (first launches only); waiting and
    // copying calls are steady-state work at any length.
    if [
        "launch",
        "synchronize",
        "memcpy",
        "memset",
        "query",
        "wait",
        "record",
    ]
    .iter()
    .any(|k| lower.contains(k))
    {
        return Class::None;
    }
    Class::Context
}

/// The classes of the names host spans use, each worked out on its first
/// use: most of the strings table is GPU kernel names, some of them
/// kilobytes long, which no span here is named after. Threads fill it side
/// by side; a race only works the same class out twice.
struct Classes<'a> {
    strings: &'a crate::model::Strings,
    memo: Vec<AtomicU8>,
}

/// A name not classified yet.
const UNKNOWN: u8 = u8::MAX;

impl<'a> Classes<'a> {
    fn new(strings: &'a crate::model::Strings) -> Self {
        let memo = (0..strings.len()).map(|_| AtomicU8::new(UNKNOWN)).collect();
        Classes { strings, memo }
    }

    /// `id`'s class as a range and as an API call.
    fn get(&self, id: u32) -> (Class, Class) {
        let Some(slot) = self.memo.get(id as usize) else {
            return (Class::None, Class::None);
        };
        let known = slot.load(Ordering::Relaxed);
        if known != UNKNOWN {
            return (Class::from_bits(known & 15), Class::from_bits(known >> 4));
        }
        let (named, api) = classify_both(self.strings.get(id));
        slot.store(named as u8 | (api as u8) << 4, Ordering::Relaxed);
        (named, api)
    }
}

impl Class {
    /// The class stored as `bits` (see [`Classes`]).
    fn from_bits(bits: u8) -> Class {
        [
            Class::None,
            Class::Context,
            Class::ModuleLoad,
            Class::Autotune,
            Class::Compile,
            Class::CompiledRegion,
            Class::CaptureBegin,
            Class::CaptureEnd,
        ]
        .get(usize::from(bits))
        .copied()
        .unwrap_or(Class::None)
    }
}

/// What start-up is found from in the spans and ops, before the
/// correlation index is needed: the index is built beside it, then
/// [`Scan::finish`] gives the start-up of a timeline, if it shows any.
pub struct Scan {
    items: Vec<StartupItem>,
    anchor: Ns,
    extent: Extent,
    first: Vec<Option<(Ns, u32)>>,
}

/// The passes over every span and op behind the start-up.
pub fn scan(tl: &Timeline) -> Scan {
    let classes = Classes::new(&tl.strings);
    let cls = |kind: SpanKind, id: u32| -> Class {
        // Before the lookup: a hooked libc call's id is no name.
        if matches!(kind, SpanKind::Host(_)) {
            return Class::None;
        }
        let (named, api) = classes.get(id);
        match kind {
            SpanKind::CudaRuntime | SpanKind::CudaDriver => api,
            _ => named,
        }
    };
    // Items from host spans, and the first CUDA call.
    let threads: Vec<(u32, u32, &crate::model::Thread)> = tl
        .processes
        .iter()
        .flat_map(|p| p.threads.iter().map(move |t| (p.pid, t.tid, t)))
        .collect();
    // The host spans and the GPU ops are independent passes, one core
    // each; each also gives its part of `Timeline::extent`, which would be
    // a third pass over everything.
    let (per_thread, (first, ops_extent)) = rayon::join(
        || {
            threads
                .par_iter()
                .map(|&(pid, tid, t)| {
                    let mut items = Vec::new();
                    let mut first_api = None;
                    let mut capture: Option<Ns> = None;
                    let mut extent = Extent::default();
                    if let Some(s) = t.spans.first() {
                        extent.lo = s.ts;
                    }
                    if let (Some(a), Some(b)) = (t.samples.first(), t.samples.last()) {
                        extent.add(a.ts, b.ts);
                    }
                    for s in &t.spans {
                        extent.hi = extent.hi.max(s.end());
                        let api = matches!(s.kind, SpanKind::CudaRuntime | SpanKind::CudaDriver);
                        if api && first_api.is_none() {
                            first_api = Some(s.ts);
                        }
                        let c = cls(s.kind, s.id);
                        let (kind, min) = match c {
                            Class::None => continue,
                            Class::Context => ("context", CONTEXT_NS),
                            Class::ModuleLoad => ("module-load", MODULE_NS),
                            Class::Autotune => ("autotune", MODULE_NS),
                            Class::Compile => ("compile", COMPILE_NS),
                            Class::CompiledRegion => ("compile", COMPILED_REGION_NS),
                            Class::CaptureBegin => {
                                capture.get_or_insert(s.ts);
                                continue;
                            }
                            Class::CaptureEnd => {
                                if let Some(a) = capture.take() {
                                    items.push(StartupItem {
                                        kind: "graph-capture",
                                        what: tl.strings.get(s.id).to_string(),
                                        start: a,
                                        end: s.end(),
                                        pid,
                                        tid,
                                    });
                                }
                                continue;
                            }
                        };
                        if s.dur >= min {
                            items.push(StartupItem {
                                kind,
                                what: tl.strings.get(s.id).to_string(),
                                start: s.ts,
                                end: s.end(),
                                pid,
                                tid,
                            });
                        }
                    }
                    (items, first_api, extent)
                })
                .collect::<Vec<_>>()
        },
        || first_launches(tl),
    );
    let mut items: Vec<StartupItem> = Vec::new();
    // The ops' first start is also the first op.
    let mut anchor = ops_extent.lo;
    let mut extent = ops_extent;
    for (v, f, e) in per_thread {
        items.extend(v);
        anchor = anchor.min(f.unwrap_or(Ns::MAX));
        extent.add(e.lo, e.hi);
    }
    Scan {
        items,
        anchor,
        extent,
        first,
    }
}

impl Scan {
    /// The start-up, with the module loads that the first launches show.
    pub fn finish(self, tl: &Timeline, corr: &CorrIndex) -> Option<Startup> {
        let Scan {
            mut items,
            anchor,
            extent,
            first,
        } = self;
        module_loads(tl, corr, &first, &mut items);
        let (t0, t1) = extent.get()?;
        if anchor == Ns::MAX {
            return None;
        }
        let total = tl.gpu_op_count().max(1) as f64;
        let early = |t: Ns| {
            let before: usize = tl
                .gpus
                .iter()
                .flat_map(|g| &g.streams)
                .map(|s| s.ops.partition_point(|o| o.start < t))
                .sum();
            (before as f64) < EARLY_OPS * total
        };
        chain(items, anchor, t0, t1, gpu_last_start(tl), early)
    }
}

/// Long launch calls of each kernel name's first launch: lazy module loading.
/// A graph launch is left out: it launches a whole graph's kernels in one
/// call, which takes milliseconds on every replay (1.5 ms for an SGLang decode
/// graph on ROCm), and its one-time costs show in the instantiate call.
fn module_loads(
    tl: &Timeline,
    corr: &CorrIndex,
    first: &[Option<(Ns, u32)>],
    items: &mut Vec<StartupItem>,
) {
    for &(_, c) in first.iter().flatten() {
        let Some(r) = corr.get(c) else { continue };
        let p = &tl.processes[r.process as usize];
        let t = &p.threads[r.thread as usize];
        let s = &t.spans[r.span as usize];
        if s.dur >= MODULE_NS && !tl.strings.get(s.id).contains("GraphLaunch") {
            items.push(StartupItem {
                kind: "module-load",
                what: tl.strings.get(s.id).to_string(),
                start: s.ts,
                end: s.end(),
                pid: p.pid,
                tid: t.tid,
            });
        }
    }
}

/// First and last timestamp, as `Timeline::extent` takes them: the first
/// span, sample or op of each list, and the latest end.
#[derive(Clone, Copy)]
struct Extent {
    lo: Ns,
    hi: Ns,
}

impl Default for Extent {
    fn default() -> Self {
        Extent {
            lo: Ns::MAX,
            hi: Ns::MIN,
        }
    }
}

impl Extent {
    fn add(&mut self, lo: Ns, hi: Ns) {
        self.lo = self.lo.min(lo);
        self.hi = self.hi.max(hi);
    }

    fn get(self) -> Option<(Ns, Ns)> {
        (self.lo <= self.hi).then_some((self.lo, self.hi))
    }
}

/// The first launch (start, correlation id) of each kernel name, where lazy
/// module loading shows; and the extent of the ops.
fn first_launches(tl: &Timeline) -> (Vec<Option<(Ns, u32)>>, Extent) {
    let mut first: Vec<Option<(Ns, u32)>> = vec![None; tl.strings.len()];
    let mut extent = Extent::default();
    for g in &tl.gpus {
        for s in &g.streams {
            let Some(o) = s.ops.first() else { continue };
            extent.lo = extent.lo.min(o.start);
            for o in &s.ops {
                extent.hi = extent.hi.max(o.end);
                if o.kind() == GpuOpKind::Kernel
                    && let Some(f) = first.get_mut(o.name as usize)
                    && f.is_none_or(|f| o.start < f.0)
                {
                    *f = Some((o.start, o.corr));
                }
            }
        }
    }
    (first, extent)
}

/// The last start of a GPU op, if any (each stream is sorted by start).
fn gpu_last_start(tl: &Timeline) -> Option<Ns> {
    tl.gpus
        .iter()
        .flat_map(|g| &g.streams)
        .filter_map(|s| s.ops.last().map(|o| o.start))
        .max()
}

/// Start-up from its candidate items: those chained from `anchor` (the first
/// CUDA activity) by gaps under the join limit, or `early` (the GPU has done
/// little before them). `t0`/`t1` bound the trace.
pub fn chain(
    mut items: Vec<StartupItem>,
    anchor: Ns,
    t0: Ns,
    t1: Ns,
    gpu_last_start: Option<Ns>,
    early: impl Fn(Ns) -> bool,
) -> Option<Startup> {
    items.sort_by_key(|i| (i.start, i.end));
    let mut until = anchor;
    let mut kept = Vec::new();
    for it in items {
        if it.start > until + JOIN_NS.max((until - t0) / 4) && !early(it.start) {
            break;
        }
        until = until.max(it.end);
        kept.push(it);
    }
    if kept.is_empty() {
        return None;
    }
    Some(Startup {
        start: t0,
        until,
        items: kept,
        share_pct: 100.0 * (until - t0) as f64 / (t1 - t0).max(1) as f64,
        all: gpu_last_start.is_none_or(|g| g < until),
        short_rest: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Ns = 1_000_000;

    fn item(kind: &'static str, start: Ns, end: Ns) -> StartupItem {
        StartupItem {
            kind,
            what: kind.to_string(),
            start,
            end,
            pid: 1,
            tid: 1,
        }
    }

    #[test]
    fn names() {
        assert!(classify("cudaFree", true) == Class::Context);
        assert!(classify("cudaDeviceGetStreamPriorityRange", true) == Class::Context);
        assert!(classify("cudaStreamSynchronize", true) == Class::None);
        assert!(classify("cudaLaunchKernel", true) == Class::None);
        assert!(classify("cudaMemcpyAsync", true) == Class::None);
        assert!(classify("cuModuleLoadData", true) == Class::ModuleLoad);
        assert!(classify("cudaStreamBeginCapture", true) == Class::CaptureBegin);
        assert!(classify("cudaStreamEndCapture", true) == Class::CaptureEnd);
        assert!(classify("cudnnFindConvolutionForwardAlgorithmEx", false) == Class::Autotune);
        assert!(classify("Torch-Compiled Region: 0/0", false) == Class::CompiledRegion);
        assert!(classify("TorchDynamo Cache Lookup", false) == Class::None);
        assert!(classify("aten::mm", false) == Class::None);
        // A name that is a context call for the API is nothing for a range.
        assert!(classify("cudaFree", false) == Class::None);
    }

    #[test]
    fn classes_are_worked_out_once_and_agree_with_the_names() {
        let mut strings = crate::model::Strings::new();
        let names = [
            "cudaFree",
            "cuModuleLoadData",
            "cudaLaunchKernel",
            "cudnnFindConvolutionForwardAlgorithmEx",
            "Torch-Compiled Region: 0/0",
            "torch/_dynamo/convert_frame.py",
            "aten::mm",
            "cudaStreamBeginCapture",
        ];
        let ids: Vec<u32> = names.iter().map(|n| strings.intern(n)).collect();
        let classes = Classes::new(&strings);
        for (n, &id) in names.iter().zip(&ids) {
            let want = (classify(n, false), classify(n, true));
            assert_eq!(classes.get(id), want, "{n}");
            assert_eq!(classes.get(id), want, "{n}, remembered");
        }
        assert_eq!(classes.get(9999), (Class::None, Class::None));
        assert_eq!(
            classify("torch/_dynamo/convert_frame.py", false),
            Class::Compile
        );
        // Every class survives the round trip through its stored bits.
        for bits in 0..8u8 {
            assert_eq!(Class::from_bits(bits) as u8, bits);
        }
    }

    #[test]
    fn chained_prefix() {
        // Context creation, a first allocation soon after, a module load; then
        // a slow call deep in the steady state, which is not start-up.
        let s = chain(
            vec![
                item("context", 10 * MS, 3000 * MS),
                item("module-load", 3100 * MS, 3200 * MS),
                item("context", 3300 * MS, 3400 * MS),
                item("context", 9000 * MS, 9100 * MS),
            ],
            5 * MS,
            0,
            10_000 * MS,
            Some(9500 * MS),
            |_| false,
        )
        .unwrap();
        assert_eq!(s.until, 3400 * MS);
        assert_eq!(s.items.len(), 3);
        assert_eq!(s.ns(), 3400 * MS);
        assert!((s.share_pct - 34.0).abs() < 1e-9);
        assert!(!s.mostly() && !s.all);
    }

    #[test]
    fn all_start_up() {
        let s = chain(
            vec![item("context", 0, 900 * MS)],
            0,
            0,
            1000 * MS,
            Some(500 * MS),
            |_| false,
        )
        .unwrap();
        assert!(s.mostly() && s.all);
        assert!(chain(vec![], 0, 0, 1000 * MS, None, |_| true).is_none());
        // Nothing near the first CUDA call: no start-up, unless the GPU had
        // hardly begun.
        let late = || vec![item("context", 5000 * MS, 5100 * MS)];
        assert!(chain(late(), 0, 0, 9000 * MS, None, |_| false).is_none());
        let s = chain(late(), 0, 0, 9000 * MS, None, |t| t < 6000 * MS).unwrap();
        assert_eq!(s.until, 5100 * MS);
    }
}
