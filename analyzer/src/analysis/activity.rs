//! What a host thread was doing at each moment, as the critical path needs it.
//!
//! Spans are turned into classified intervals; where several cover one moment
//! the most specific wins (a CUDA API call over a libc wait inside it; a libc
//! call over the framework op around it). Time no span explains is CPU work,
//! unless the sampler saw the thread blocked (D state: I/O; sleeping without a
//! recorded wait: an unhooked wait).

use std::cmp::Reverse;

use rustc_hash::{FxHashMap, FxHashSet};
use stallscope_format::{FdClass, HostOp};

use super::saves::{self, SAVE_GAP_NS};

use crate::model::{
    CopyKind, GpuOpKind, HostSpan, MemKind, Ns, Process, RunSpan, Sample, SpanKind, StrId, Strings,
    Thread, Timeline,
};

/// What the thread was doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Act {
    /// Running code (Python, framework, preprocessing).
    Cpu,
    /// Reading or writing files, mapping them, faulting them in.
    Io,
    /// Waiting for another thread or process to hand over work.
    Data,
    /// CUDA allocation or free.
    Memory,
    /// Blocked until the GPU finished.
    Sync,
    /// Staging a host-to-device copy.
    Transfer,
    /// Inside a kernel-launch call.
    Launch,
    /// Blocked on something no hook saw.
    Wait,
}

/// The detail of an activity ("pipe", "gil", "sleep", "pageable"...), as a
/// small code: segments are compared and copied by the million.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Sub(u8);

impl Sub {
    pub const NONE: Sub = Sub(0);
    pub const READ: Sub = Sub(1);
    pub const PIPE: Sub = Sub(2);
    pub const SOCKET: Sub = Sub(3);
    pub const WRITE: Sub = Sub(4);
    pub const PIPE_WRITE: Sub = Sub(5);
    pub const OPEN: Sub = Sub(6);
    pub const MMAP: Sub = Sub(7);
    pub const POLL: Sub = Sub(8);
    pub const QUEUE: Sub = Sub(9);
    pub const GIL: Sub = Sub(10);
    pub const SLEEP: Sub = Sub(11);
    pub const STREAM: Sub = Sub(12);
    pub const ITEM: Sub = Sub(13);
    pub const FREE: Sub = Sub(14);
    pub const ALLOC: Sub = Sub(15);
    pub const PINNED_ALLOC: Sub = Sub(16);
    pub const COPY: Sub = Sub(17);
    pub const MAIN_PROCESS: Sub = Sub(18);
    pub const DATALOADER: Sub = Sub(19);
    pub const OFFLOAD: Sub = Sub(20);
    pub const D2H_COPY: Sub = Sub(21);
    pub const PAGEABLE: Sub = Sub(22);
    pub const H2D: Sub = Sub(23);
    pub const FAULT: Sub = Sub(24);
    /// CPU time without a launch that the thread mostly spent waiting for
    /// a CPU (see `mark_queued`).
    pub const QUEUED: Sub = Sub(25);
    /// Time the sampler saw the thread in D state (uninterruptible sleep)
    /// with no major fault: a kernel wait on a disk, a network filesystem
    /// or a driver, in no recorded call.
    pub const DSTATE: Sub = Sub(26);

    const NAMES: [&'static str; 27] = [
        "",
        "read",
        "pipe",
        "socket",
        "write",
        "pipe-write",
        "open",
        "mmap",
        "poll",
        "queue",
        "gil",
        "sleep",
        "stream",
        "item",
        "free",
        "alloc",
        "pinned-alloc",
        "copy",
        "main-process",
        "dataloader",
        "offload",
        "d2h-copy",
        "pageable",
        "h2d",
        "fault",
        "queued",
        "d-state",
    ];
}

impl Sub {
    pub fn name(self) -> &'static str {
        Self::NAMES[self.0 as usize]
    }

    /// The code of a detail text; texts outside the list read as `NONE`.
    pub fn of(text: &str) -> Sub {
        Self::NAMES
            .iter()
            .position(|n| *n == text)
            .map_or(Sub::NONE, |i| Sub(i as u8))
    }
}

/// One classified stretch of a thread's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seg {
    pub start: Ns,
    pub end: Ns,
    /// The object (I/O) or name (API, op) behind it; 0 if none.
    pub what: u32,
    /// For CPU segments: how much of it was spent inside launch calls. Runs of
    /// CPU work and launch calls are merged (up to `MERGE_CAP_NS`) so a
    /// launch-heavy thread yields a few segments per millisecond, not two per
    /// kernel.
    pub launch_ns: u32,
    /// For I/O segments over runs of short calls (`RunSpan`): the time
    /// between the calls, the program's own (its Python, a decode), which
    /// faster storage leaves in place.
    pub own_ns: u32,
    pub act: Act,
    /// Extra detail: "pipe", "gil", "sleep", "pageable", the fs name...
    pub sub: Sub,
}

/// Gives the I/O segments over runs of short calls their `own_ns`: each
/// run's time between its calls (its extent less its `busy_ns`), spread
/// evenly over the run, for the part of it a segment covers. A loop over
/// small files spends that time opening the next one in Python: a faster
/// disk keeps it. Runs of one thread follow each other, sorted by start.
pub fn mark_run_gaps(segs: &mut [Seg], runs: &[RunSpan]) {
    if runs.is_empty() {
        return;
    }
    let mut k = 0;
    for s in segs.iter_mut().filter(|s| s.act == Act::Io) {
        while k < runs.len() && runs[k].ts + runs[k].dur <= s.start {
            k += 1;
        }
        let mut own = 0.0;
        for r in runs[k..].iter().take_while(|r| r.ts < s.end) {
            let overlap = (r.ts + r.dur).min(s.end) - r.ts.max(s.start);
            if overlap > 0 {
                let gaps = (r.dur as u64).saturating_sub(r.busy_ns) as f64 / r.dur as f64;
                own += gaps * overlap as f64;
            }
        }
        s.own_ns = own.min((s.end - s.start) as f64).min(u32::MAX as f64) as u32;
    }
}

/// Marks CPU stretches without a launch that the thread's run-queue delay
/// explains as `Sub::QUEUED`: longer than `gap`, but not once the delay of the
/// sample intervals around them is taken out. A dispatch loop preempted
/// between two launches leaves such a stretch (wall time, not CPU time), and
/// samples 10 ms apart cannot say where in their interval the wait fell, so
/// a stretch may take all of it; stretches in the same intervals share it.
pub fn mark_queued(segs: &mut [Seg], samples: &[Sample], gap: Ns) {
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
        return;
    };
    if first.run_delay_ns == last.run_delay_ns {
        return;
    }
    // Sample intervals [i, j] around the stretch, and the delay earlier
    // stretches took from intervals up to `used_to`.
    let (mut i, mut used, mut used_to) = (0, 0, 0);
    for s in segs.iter_mut() {
        let len = s.end - s.start;
        if s.act != Act::Cpu || s.sub != Sub::NONE || s.launch_ns != 0 || len <= gap {
            continue;
        }
        while i + 1 < samples.len() && samples[i + 1].ts <= s.start {
            i += 1;
        }
        let mut j = i;
        while j + 1 < samples.len() && samples[j].ts < s.end {
            j += 1;
        }
        if i >= used_to {
            used = 0;
        }
        let delay = samples[j]
            .run_delay_ns
            .saturating_sub(samples[i].run_delay_ns) as Ns
            - used;
        if len - delay <= gap {
            s.sub = Sub::QUEUED;
            used += len - gap;
            used_to = used_to.max(j);
        }
    }
}

/// Longest merged CPU+launch segment.
pub const MERGE_CAP_NS: Ns = 1_000_000;

/// A classified span during the sweep.
#[derive(Debug, Clone, Copy)]
struct Mark {
    start: Ns,
    end: Ns,
    what: u32,
    act: Act,
    sub: Sub,
    prio: u8,
}

impl Mark {
    /// The segment [start, end) of this mark's activity.
    #[inline(always)]
    fn seg(&self, start: Ns, end: Ns) -> Seg {
        Seg {
            start,
            end,
            what: self.what,
            launch_ns: 0,
            own_ns: 0,
            act: self.act,
            sub: self.sub,
        }
    }
}

/// Threads with fewer spans than this in a sweep's range are swept in one
/// piece (tests cut small ones, so that cutting is checked everywhere).
const SPLIT_MIN: usize = if cfg!(test) { 16 } else { 1 << 18 };

/// A stream's sweep, with what a cut needs to check.
struct Streamed {
    out: Vec<Seg>,
    sorted: bool,
    /// The latest end of any span swept (unclipped).
    max_end: Ns,
}

/// The marks of a stream of spans, while they are in order and before `hi`.
struct Stream<'c, 's> {
    classifier: &'c Classifier<'c>,
    objects: ObjectCache<'c>,
    spans: std::slice::Iter<'s, HostSpan>,
    prev: Option<&'s HostSpan>,
    lo: Ns,
    hi: Ns,
    /// No span out of order so far.
    sorted: bool,
    /// The latest end of any span with a mark (unclipped).
    max_end: Ns,
}

impl Iterator for Stream<'_, '_> {
    type Item = Mark;

    #[inline(always)]
    fn next(&mut self) -> Option<Mark> {
        for s in self.spans.by_ref() {
            if self.prev.is_some_and(|p| span_key(p) > span_key(s)) {
                self.sorted = false;
                self.spans = [].iter();
                return None;
            }
            self.prev = Some(s);
            if s.ts >= self.hi {
                self.spans = [].iter();
                return None;
            }
            if let Some(m) = self.classifier.mark(s, &mut self.objects, self.lo, self.hi) {
                self.max_end = self.max_end.max(s.end());
                return Some(m);
            }
        }
        None
    }
}

/// The order `Timeline::finalize` leaves a thread's spans in.
fn span_key(s: &HostSpan) -> (Ns, Reverse<Ns>) {
    (s.ts, Reverse(s.dur))
}

/// Segments `push_merged` lets continue the one before, when contiguous: the
/// same activity, detail and object (not launches, which merge as CPU work).
#[inline(always)]
fn continues(l: &Seg, seg: &Seg) -> bool {
    l.act == seg.act && l.sub == seg.sub && l.what == seg.what && l.act != Act::Launch
}

#[inline(always)]
fn cpu_like(s: &Seg) -> bool {
    (s.act == Act::Cpu && s.sub == Sub::NONE)
        || (s.act == Act::Launch && s.end - s.start <= SLOW_LAUNCH_APART_NS)
}

/// A launch call slower than this stays a segment of its own, not folded
/// into CPU work: it may have waited for room in a full launch queue, which
/// the replay shortens where the GPU gets faster (`whatif::QUEUE_FULL_OPS`).
/// On an H200 such waits took 0.1-0.6 ms each where kernels took 0.1 ms; a
/// launch's own cost is 5-20 µs.
pub const SLOW_LAUNCH_APART_NS: Ns = 50_000;

/// CPU work and launch calls that `push_merged` folds into one CPU segment,
/// when contiguous (up to `MERGE_CAP_NS`).
#[inline(always)]
fn merge_as_cpu(l: &Seg, seg: &Seg) -> bool {
    cpu_like(l) && cpu_like(seg) && seg.end - l.start <= MERGE_CAP_NS
}

/// Whether `push_merged` would fold `seg` into `l` (contiguous).
fn joins(l: &Seg, seg: &Seg) -> bool {
    continues(l, seg) || merge_as_cpu(l, seg)
}

/// Appends a segment, joining it to the previous one when they continue each
/// other: the same activity and object, or CPU work and launch calls.
#[inline(always)]
fn push_merged(out: &mut Vec<Seg>, seg: Seg) {
    if seg.end <= seg.start {
        return;
    }
    if let Some(l) = out.last_mut()
        && l.end == seg.start
    {
        if continues(l, &seg) {
            l.end = seg.end;
            if l.act == Act::Cpu {
                l.launch_ns += seg.launch_ns;
            }
            return;
        }
        if merge_as_cpu(l, &seg) {
            let launch = |s: &Seg| {
                if s.act == Act::Launch {
                    (s.end - s.start) as u32
                } else {
                    s.launch_ns
                }
            };
            let total = launch(l) + launch(&seg);
            *l = Seg {
                start: l.start,
                end: seg.end,
                what: 0,
                launch_ns: total,
                own_ns: 0,
                act: Act::Cpu,
                sub: Sub::NONE,
            };
            return;
        }
    }
    out.push(seg);
}

/// How API function names map to activities; shared by native and Kineto
/// traces. A table indexed by string id: it is looked up once per span.
#[derive(Debug, Default)]
pub struct NameTable {
    acts: Vec<Option<(Act, Sub)>>,
}

impl NameTable {
    pub fn new(strings: &Strings) -> NameTable {
        NameTable {
            acts: strings
                .iter()
                .map(|(_, s)| classify_name(s).map(|(a, sub)| (a, Sub::of(sub))))
                .collect(),
        }
    }

    #[inline]
    pub fn get(&self, id: StrId) -> Option<(Act, Sub)> {
        self.acts.get(id as usize).copied().flatten()
    }
}

/// Activity implied by an API or op name, if any.
pub fn classify_name(name: &str) -> Option<(Act, &'static str)> {
    let n = name.trim();
    let base = n.split(['(', '_']).next().unwrap_or(n);
    let is = |prefixes: &[&str]| prefixes.iter().any(|p| n.starts_with(p) || base == *p);
    if is(&[
        "cudaStreamSynchronize",
        "cudaDeviceSynchronize",
        "cudaEventSynchronize",
        "cudaStreamQuery",
        "cuStreamSynchronize",
        "cuCtxSynchronize",
        "cuEventSynchronize",
        "hipStreamSynchronize",
        "hipDeviceSynchronize",
        "hipEventSynchronize",
    ]) {
        return Some((Act::Sync, "stream"));
    }
    if n == "aten::item" || n == "aten::_local_scalar_dense" {
        return Some((Act::Sync, "item"));
    }
    if is(&[
        "cudaMalloc",
        "cudaFree",
        "cuMemAlloc",
        "cuMemFree",
        "cuMemCreate",
        "cuMemRelease",
        "hipMalloc",
        "hipFree",
    ]) {
        return Some((
            Act::Memory,
            if n.contains("Free") || n.contains("Release") {
                "free"
            } else {
                "alloc"
            },
        ));
    }
    if is(&[
        "cudaHostAlloc",
        "cuMemHostAlloc",
        "cuMemAllocHost",
        "hipHostMalloc",
    ]) {
        return Some((Act::Memory, "pinned-alloc"));
    }
    if is(&["cudaMemcpy", "cuMemcpy", "hipMemcpy"]) {
        // Direction comes from the correlated copy; see `Classifier::api`.
        return Some((Act::Transfer, "copy"));
    }
    if is(&[
        "cudaLaunchKernel",
        "cudaLaunchCooperativeKernel",
        "cuLaunchKernel",
        "cudaGraphLaunch",
        "cuGraphLaunch",
        "hipLaunchKernel",
        "hipModuleLaunchKernel",
        "hipExtModuleLaunchKernel",
        "cudaMemsetAsync",
        "cudaMemset",
    ]) {
        return Some((Act::Launch, ""));
    }
    let lower = n.to_ascii_lowercase();
    // The profiler's DataLoader annotation, not the Python frames of
    // torch/utils/data/dataloader.py beneath it (traces taken with
    // with_stack=True): those say nothing of the loader's mode, and as the
    // innermost spans they would hide the annotation's num_workers=0.
    if lower.contains("dataloader")
        && (lower.contains("__next__") || lower.contains("enumerate"))
        && !is_python_frame(n)
    {
        // With num_workers=0 the training process loads batches itself.
        let sub = if lower.contains("singleprocess") {
            "main-process"
        } else {
            "dataloader"
        };
        return Some((Act::Data, sub));
    }
    None
}

/// A Python function span as the profiler names it with with_stack=True:
/// `path/to/file.py(123): function`.
fn is_python_frame(name: &str) -> bool {
    name.split_once(".py(").is_some_and(|(_, rest)| {
        rest.split_once("): ")
            .is_some_and(|(line, _)| !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// Correlation id -> (kind, direction, source memory) of the GPU op it launched.
pub type CopyIndex = FxHashMap<u32, (GpuOpKind, CopyKind, MemKind)>;

pub fn copy_index(tl: &Timeline) -> CopyIndex {
    let mut m = FxHashMap::default();
    for g in &tl.gpus {
        for s in &g.streams {
            for o in &s.ops {
                if o.corr != 0 && o.kind() != GpuOpKind::Kernel {
                    m.insert(o.corr, (o.kind(), o.copy(), o.src()));
                }
            }
        }
    }
    m
}

/// Turns a thread's spans and samples into segments.
pub struct Classifier<'a> {
    pub names: &'a NameTable,
    pub copies: &'a CopyIndex,
    /// Correlation ids of offload copies (see `memory`): their calls are memory traffic.
    pub offload: &'a FxHashSet<u32>,
}

impl Classifier<'_> {
    /// Activity of one span, with a priority (higher wins).
    #[inline]
    pub fn span_activity(&self, p: &Process, s: &HostSpan) -> Option<(Act, Sub, u8)> {
        match s.kind {
            SpanKind::Host(op) => Some(host_activity(op, p.object(s.id).map(|o| o.class))),
            _ => self.named_activity(s),
        }
    }

    /// Activity of a span of a named kind (API call, op, range).
    #[inline(always)]
    fn named_activity(&self, s: &HostSpan) -> Option<(Act, Sub, u8)> {
        match s.kind {
            SpanKind::Host(_) => None,
            SpanKind::CudaRuntime | SpanKind::CudaDriver => {
                let (act, sub) = self.names.get(s.id)?;
                Some(match act {
                    Act::Transfer if self.offload.contains(&(s.arg as u32)) => {
                        (Act::Memory, Sub::OFFLOAD, 3)
                    }
                    Act::Transfer => {
                        let (act, sub) = match self.copies.get(&(s.arg as u32)) {
                            Some((GpuOpKind::Memcpy, CopyKind::DTOH, _)) => {
                                (Act::Sync, Sub::D2H_COPY)
                            }
                            Some((GpuOpKind::Memcpy, CopyKind::HTOD, MemKind::PAGEABLE)) => {
                                (Act::Transfer, Sub::PAGEABLE)
                            }
                            Some((GpuOpKind::Memcpy, CopyKind::HTOD, _)) => {
                                (Act::Transfer, Sub::H2D)
                            }
                            Some((GpuOpKind::Memset, _, _)) => (Act::Launch, Sub::NONE),
                            _ => (Act::Transfer, Sub::COPY),
                        };
                        (act, sub, 3)
                    }
                    _ => (act, sub, 3),
                })
            }
            SpanKind::CpuOp | SpanKind::PyFunction | SpanKind::Annotation | SpanKind::Other => {
                let (act, sub) = self.names.get(s.id)?;
                Some((act, sub, 1))
            }
        }
    }

    /// Segments of thread `th` covering [lo, hi), in order and without gaps.
    ///
    /// A sweep over the classified spans in (start, longest first) order with
    /// the set of open ones: at each stretch the highest-priority, innermost
    /// (latest-starting) open span wins; time no span explains goes to the
    /// sampler's view. Spans are sorted that way already (`Timeline::finalize`),
    /// so they are streamed, not collected: only the few that start before
    /// `lo` (clipped to it) are sorted apart.
    pub fn segments(&self, p: &Process, th: &Thread, lo: Ns, hi: Ns) -> Vec<Seg> {
        let spans = &th.spans;
        // Sorted input is streamed; its order is checked on the way (a full
        // pass just to check was a sixth of the sweep's time), and any
        // disorder among the spans used sends it to the sorting path.
        let first_after = spans.partition_point(|s| s.ts <= lo);
        if spans[..first_after].is_sorted_by_key(span_key) {
            // Spans that start by `lo` all start at `lo` once clipped; among
            // them the longest comes first.
            let mut objects = ObjectCache::new(p);
            let mut head: Vec<Mark> = Vec::new();
            for s in &spans[..first_after] {
                if s.end() > lo && s.ts < hi {
                    head.extend(self.mark(s, &mut objects, lo, hi));
                }
            }
            head.sort_by_key(|m| Reverse(m.end));
            let prev = first_after.checked_sub(1).map(|i| &spans[i]);
            if let Some(out) = self.segments_split(p, th, &head, first_after, lo, hi) {
                return out;
            }
            let s = self.stream(p, th, head, &spans[first_after..], prev, lo, hi);
            if s.sorted {
                return s.out;
            }
        }
        // Unsorted input (a hand-built timeline): collect and sort.
        let mut objects = ObjectCache::new(p);
        let mut marks: Vec<Mark> = Vec::new();
        for s in spans {
            if s.ts >= hi {
                break;
            }
            if s.end() <= lo {
                continue;
            }
            marks.extend(self.mark(s, &mut objects, lo, hi));
        }
        marks.sort_by_key(|m| (m.start, Reverse(m.end)));
        let mut samples = SampleCursor::new(th, lo);
        let mut out = Vec::new();
        sweep(
            Vec::new(),
            &mut marks.into_iter(),
            lo,
            hi,
            &mut samples,
            &mut out,
        );
        out
    }

    /// A span's mark, clipped to [lo, hi); None if it has no activity.
    #[inline(always)]
    fn mark(&self, s: &HostSpan, objects: &mut ObjectCache, lo: Ns, hi: Ns) -> Option<Mark> {
        let (act, sub, prio) = match s.kind {
            SpanKind::Host(op) => host_activity(op, objects.class(s.id)),
            _ => self.named_activity(s)?,
        };
        Some(Mark {
            start: s.ts.max(lo),
            end: s.end().min(hi),
            what: s.id,
            act,
            sub,
            prio,
        })
    }

    /// The sweep over `head` (marks open at `lo`) then `stream`, spans in
    /// order after `prev`, up to the first at or after `hi`, or the first
    /// out of order.
    #[allow(clippy::too_many_arguments)]
    fn stream<'s>(
        &self,
        p: &Process,
        th: &Thread,
        head: Vec<Mark>,
        stream: &'s [HostSpan],
        prev: Option<&'s HostSpan>,
        lo: Ns,
        hi: Ns,
    ) -> Streamed {
        let max_end = head.iter().map(|m| m.end).max().unwrap_or(Ns::MIN);
        let mut rest = Stream {
            classifier: self,
            objects: ObjectCache::new(p),
            spans: stream.iter(),
            prev,
            lo,
            hi,
            sorted: true,
            max_end,
        };
        let mut samples = SampleCursor::new(th, lo);
        let mut out = Vec::new();
        sweep(head, &mut rest, lo, hi, &mut samples, &mut out);
        Streamed {
            out,
            sorted: rest.sorted,
            max_end: rest.max_end,
        }
    }

    /// `segments` of a long thread on two cores: the sweep's outcome at an
    /// instant depends only on the marks open then (and on the segment
    /// before, through merging), so [lo, hi) is cut at the start of a span
    /// with nothing open across it, and the halves are swept apart. The cut
    /// is checked afterwards: no mark of the first half may reach past it,
    /// and the halves' segments must not join there. None if there is no
    /// such cut (or the spans are out of order): the caller sweeps in one.
    fn segments_split(
        &self,
        p: &Process,
        th: &Thread,
        head: &[Mark],
        first_after: usize,
        lo: Ns,
        hi: Ns,
    ) -> Option<Vec<Seg>> {
        let spans = &th.spans;
        let end = first_after + spans[first_after..].partition_point(|s| s.ts < hi);
        if end - first_after < SPLIT_MIN {
            return None;
        }
        let k = self.cut(p, spans, (first_after + end) / 2, end)?;
        let x = spans[k].ts;
        let (a, b) = rayon::join(
            || {
                let prev = first_after.checked_sub(1).map(|i| &spans[i]);
                self.stream(p, th, head.to_vec(), &spans[first_after..k], prev, lo, x)
            },
            || self.stream(p, th, Vec::new(), &spans[k..], Some(&spans[k - 1]), x, hi),
        );
        let joins = match (a.out.last(), b.out.first()) {
            (Some(l), Some(f)) => l.end == f.start && joins(l, f),
            _ => false,
        };
        if !(a.sorted && b.sorted && a.max_end <= x && !joins) {
            return None;
        }
        let mut out = a.out;
        out.extend(b.out);
        Some(out)
    }

    /// A span from `from` on (before `to`) to cut a sweep at: the first of
    /// those starting at its time, with a mark that joins no segment before
    /// it (I/O, a wait, ...), and no span of the millisecond before it
    /// reaching past its start.
    fn cut(&self, p: &Process, spans: &[HostSpan], from: usize, to: usize) -> Option<usize> {
        const SEARCH: usize = 1 << 16;
        const LOOK_BACK: usize = 1 << 12;
        let mut objects = ObjectCache::new(p);
        (from.max(1)..to.min(from + SEARCH)).find(|&k| {
            let x = spans[k].ts;
            spans[k - 1].ts < x
                && self
                    .mark(&spans[k], &mut objects, x, Ns::MAX)
                    .is_some_and(|m| !matches!(m.act, Act::Cpu | Act::Launch))
                && spans[k.saturating_sub(LOOK_BACK)..k]
                    .iter()
                    .rev()
                    .take_while(|s| s.ts >= x - LongSpans::LIMIT)
                    .all(|s| s.end() <= x)
                && (k < LOOK_BACK || spans[k - LOOK_BACK].ts < x - LongSpans::LIMIT)
        })
    }
    /// Time spent on I/O (reads, writes, page faults...) by thread `th` in
    /// [x, y): the I/O segments of `segments(p, th, lo, hi)` clipped to [x, y),
    /// computed from the spans around [x, y) only (the sweep's outcome at an
    /// instant depends only on the spans covering it).
    #[allow(clippy::too_many_arguments)]
    pub fn io_in(
        &self,
        p: &Process,
        th: &Thread,
        long: &LongSpans,
        lo: Ns,
        hi: Ns,
        x: Ns,
        y: Ns,
    ) -> Ns {
        let (x, y) = (x.max(lo), y.min(hi));
        if x >= y {
            return 0;
        }
        // The sweep runs over [x, y) widened by a save's longest gap: whether
        // a CPU stretch in [x, y) belongs to a save depends on the file calls
        // around it (see `saves`).
        let asked = (x, y);
        let (x, y) = ((x - SAVE_GAP_NS).max(lo), (y + SAVE_GAP_NS).min(hi));
        let spans = &th.spans;
        // Spans overlapping [x, y): those starting in it, short ones that
        // started just before, and long ones.
        let mut idx: Vec<usize> = long.covering(spans, x);
        let from = spans.partition_point(|s| s.ts < x - long.limit);
        let to = spans.partition_point(|s| s.ts < y);
        idx.extend((from..to).filter(|&i| spans[i].end() > x));
        idx.sort_unstable();
        idx.dedup();
        let mut objects = ObjectCache::new(p);
        let mut marks: Vec<(Mark, usize)> = Vec::with_capacity(idx.len());
        for i in idx {
            let s = &spans[i];
            if s.ts >= hi || s.end() <= lo {
                continue;
            }
            if let Some(m) = self.mark(s, &mut objects, lo, hi) {
                marks.push((m, i));
            }
        }
        marks.sort_by_key(|(m, i)| (m.start, Reverse(m.end), *i));
        let mut samples = SampleCursor::new(th, x);
        let mut out = Vec::new();
        sweep(
            Vec::new(),
            &mut marks.into_iter().map(|m| m.0),
            x,
            y,
            &mut samples,
            &mut out,
        );
        saves::absorb(&mut out);
        out.iter()
            .filter(|s| s.act == Act::Io)
            .map(|s| s.end.min(asked.1) - s.start.max(asked.0))
            .filter(|&d| d > 0)
            .sum()
    }
}

/// Spans longer than `limit` of one thread, for finding the spans that cover
/// an instant without scanning from the start.
#[derive(Debug, Default)]
pub struct LongSpans {
    limit: Ns,
    /// Indices of spans longer than `limit`, in span order.
    index: Vec<u32>,
    /// Running maximum of their ends.
    max_end: Vec<Ns>,
}

impl LongSpans {
    /// Spans longer than this are long.
    const LIMIT: Ns = 1_000_000;

    pub fn new(th: &Thread) -> LongSpans {
        let limit = Self::LIMIT;
        let mut l = LongSpans {
            limit,
            ..Default::default()
        };
        let mut m = Ns::MIN;
        for (i, s) in th.spans.iter().enumerate() {
            if s.dur > limit {
                m = m.max(s.end());
                l.index.push(i as u32);
                l.max_end.push(m);
            }
        }
        l
    }

    /// Long spans that started before `x` and end after it.
    fn covering(&self, spans: &[HostSpan], x: Ns) -> Vec<usize> {
        let mut out = Vec::new();
        let mut k = self.index.partition_point(|&i| spans[i as usize].ts < x);
        while k > 0 && self.max_end[k - 1] > x {
            k -= 1;
            let i = self.index[k] as usize;
            if spans[i].end() > x {
                out.push(i);
            }
        }
        out
    }
}

/// The activity of a hooked libc call on an fd of class `class`.
#[inline]
fn host_activity(op: HostOp, class: Option<FdClass>) -> (Act, Sub, u8) {
    let act = match op {
        HostOp::Read | HostOp::Pread | HostOp::Readv | HostOp::Preadv => match class {
            Some(FdClass::File | FdClass::BlockDevice | FdClass::Dir) | None => {
                (Act::Io, Sub::READ)
            }
            Some(FdClass::Pipe) => (Act::Data, Sub::PIPE),
            Some(c) if c.is_socket() => (Act::Data, Sub::SOCKET),
            Some(_) => (Act::Io, Sub::READ),
        },
        HostOp::Write | HostOp::Pwrite | HostOp::Fsync | HostOp::Fdatasync => match class {
            Some(FdClass::File | FdClass::BlockDevice) => (Act::Io, Sub::WRITE),
            // Writing into a full pipe waits for its reader.
            _ => (Act::Data, Sub::PIPE_WRITE),
        },
        HostOp::Open | HostOp::Close => (Act::Io, Sub::OPEN),
        HostOp::Mmap => (Act::Io, Sub::MMAP),
        HostOp::Poll | HostOp::Select | HostOp::EpollWait => match class {
            Some(FdClass::Pipe) => (Act::Data, Sub::PIPE),
            Some(c) if c.is_socket() => (Act::Data, Sub::SOCKET),
            _ => (Act::Data, Sub::POLL),
        },
        HostOp::Recv => (Act::Data, Sub::SOCKET),
        HostOp::SemWait => (Act::Data, Sub::QUEUE),
        // CPython hands the GIL over through a condition variable:
        // waiting on one is mostly another thread computing.
        HostOp::CondWait => (Act::Cpu, Sub::GIL),
        HostOp::Sleep => (Act::Cpu, Sub::SLEEP),
    };
    (act.0, act.1, 2)
}

/// The class of an I/O object, remembering the last one asked for (a thread
/// mostly works on one fd at a time).
struct ObjectCache<'p> {
    p: &'p Process,
    last: Option<(u32, Option<FdClass>)>,
}

impl<'p> ObjectCache<'p> {
    fn new(p: &'p Process) -> Self {
        ObjectCache { p, last: None }
    }

    #[inline]
    fn class(&mut self, id: u32) -> Option<FdClass> {
        match self.last {
            Some((i, c)) if i == id => c,
            _ => {
                let c = self.p.object(id).map(|o| o.class);
                self.last = Some((id, c));
                c
            }
        }
    }
}

/// The sweep behind `Classifier::segments`, over marks in (start, longest
/// first) order, from `t0` to `hi`: marks starting by `t0` are open at once.
/// `open` holds those already known to be (the same as passing them first).
fn sweep<I: Iterator<Item = Mark>>(
    mut open: Vec<Mark>,
    marks: &mut I,
    t0: Ns,
    hi: Ns,
    samples: &mut SampleCursor,
    out: &mut Vec<Seg>,
) {
    let mut pending = marks.next();
    let mut t = t0;
    while t < hi {
        while let Some(m) = pending.filter(|m| m.start <= t) {
            open.push(m);
            pending = marks.next();
        }
        let next_start = pending.map_or(hi, |m| m.start).min(hi);
        // Mostly one span is open, or none: the general case below, short.
        if open.len() <= 1 {
            match open.first() {
                Some(m) if m.end > t => {
                    let until = next_start.min(m.end);
                    push_merged(out, m.seg(t, until));
                    t = until;
                }
                _ => {
                    open.clear();
                    samples.unexplained(t, next_start, out);
                    t = next_start;
                }
            }
            continue;
        }
        open.retain(|m| m.end > t);
        // The highest priority, latest start; the last of equals.
        let mut win: Option<&Mark> = None;
        let mut until = next_start;
        for m in &open {
            if win.is_none_or(|w| (m.prio, m.start) >= (w.prio, w.start)) {
                win = Some(m);
            }
            until = until.min(m.end);
        }
        match win {
            None => {
                samples.unexplained(t, next_start, out);
                t = next_start;
            }
            Some(m) => {
                push_merged(out, m.seg(t, until));
                t = until;
            }
        }
    }
}

/// What the sampler saw between samples `j - 1` and `j`.
fn interval_class(samples: &[Sample], j: usize) -> (Act, Sub) {
    match (j.checked_sub(1).map(|k| &samples[k]), samples.get(j)) {
        (Some(prev), Some(next)) => {
            let dt = (next.ts - prev.ts).max(1) as f64;
            let ran = next.cpu_ns.saturating_sub(prev.cpu_ns) as f64 / dt;
            if next.majflt > prev.majflt {
                (Act::Io, Sub::FAULT)
            } else if next.state == b'D' {
                (Act::Io, Sub::DSTATE)
            } else if ran < 0.2 && next.state != b'R' {
                (Act::Wait, Sub::NONE)
            } else {
                (Act::Cpu, Sub::NONE)
            }
        }
        _ => (Act::Cpu, Sub::NONE),
    }
}

/// A thread's samples, read forward as the sweep moves.
struct SampleCursor<'t> {
    samples: &'t [Sample],
    /// First sample after the last instant asked for.
    i: usize,
    /// The class of the last interval asked about.
    class: Option<(usize, Act, Sub)>,
}

impl<'t> SampleCursor<'t> {
    /// A cursor for a sweep starting at `t`.
    fn new(th: &'t Thread, t: Ns) -> Self {
        SampleCursor {
            samples: &th.samples,
            i: th.samples.partition_point(|s| s.ts <= t),
            class: None,
        }
    }

    /// The class of the interval before sample `j`, remembered.
    #[inline]
    fn class_of(&mut self, j: usize) -> (Act, Sub) {
        match self.class {
            Some((k, act, sub)) if k == j => (act, sub),
            _ => {
                let c = interval_class(self.samples, j);
                self.class = Some((j, c.0, c.1));
                c
            }
        }
    }

    /// Time no span explains, [a, b): the sampler's view, else CPU. `a` never
    /// goes back between calls.
    #[inline]
    fn unexplained(&mut self, a: Ns, b: Ns, out: &mut Vec<Seg>) {
        // Mostly all of it lies before the next sample (samples before
        // `self.i` are at or before `a` already).
        let samples = self.samples;
        if samples.len() >= 2 && b > a && samples.get(self.i).is_none_or(|s| b <= s.ts) {
            let (act, sub) = self.class_of(self.i);
            push_merged(
                out,
                Seg {
                    start: a,
                    end: b,
                    what: 0,
                    launch_ns: 0,
                    own_ns: 0,
                    act,
                    sub,
                },
            );
            return;
        }
        self.unexplained_slow(a, b, out);
    }

    #[inline(never)]
    fn unexplained_slow(&mut self, a: Ns, b: Ns, out: &mut Vec<Seg>) {
        let cpu = Seg {
            start: a,
            end: b,
            what: 0,
            launch_ns: 0,
            own_ns: 0,
            act: Act::Cpu,
            sub: Sub::NONE,
        };
        let samples = self.samples;
        if samples.len() < 2 {
            push_merged(out, cpu);
            return;
        }
        // Each sample describes the interval since the previous one.
        while self.i < samples.len() && samples[self.i].ts <= a {
            self.i += 1;
        }
        let mut start = a;
        for j in self.i..=samples.len() {
            let end = if j < samples.len() {
                samples[j].ts.min(b)
            } else {
                b
            };
            if end > start {
                let (act, sub) = self.class_of(j);
                push_merged(
                    out,
                    Seg {
                        start,
                        end,
                        what: 0,
                        launch_ns: 0,
                        own_ns: 0,
                        act,
                        sub,
                    },
                );
                start = end;
            }
            if end >= b {
                break;
            }
        }
        if start < b {
            push_merged(out, Seg { start, ..cpu });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// D state is a page fault only when the thread took major faults; else
    /// a kernel wait of its own (a fast disk's short reads were once called
    /// page faults).
    #[test]
    fn d_state_is_a_page_fault_only_with_major_faults() {
        let s = |ts, majflt, state| Sample {
            ts,
            majflt,
            state,
            ..Default::default()
        };
        let v = [
            s(0, 0, b'R'),
            s(10, 0, b'D'),
            s(20, 3, b'R'),
            s(30, 3, b'S'),
        ];
        assert_eq!(interval_class(&v, 1), (Act::Io, Sub::DSTATE));
        assert_eq!(interval_class(&v, 2), (Act::Io, Sub::FAULT));
        assert_eq!(interval_class(&v, 3), (Act::Wait, Sub::NONE));
        assert_eq!(Sub::of(Sub::DSTATE.name()), Sub::DSTATE);
        assert_eq!(Sub::DSTATE.name(), "d-state");
    }

    #[test]
    fn dataloader_annotations_are_data_and_python_frames_are_not() {
        assert_eq!(
            classify_name("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"),
            Some((Act::Data, "main-process"))
        );
        assert_eq!(
            classify_name("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"),
            Some((Act::Data, "dataloader"))
        );
        // Beneath either annotation with with_stack=True (TraceLens's OWLv2
        // traces): the innermost span must not decide the loader's mode.
        assert_eq!(
            classify_name("torch/utils/data/dataloader.py(728): __next__"),
            None
        );
        assert_eq!(
            classify_name("torch/utils/data/dataloader.py(787): _next_data"),
            None
        );
        assert!(is_python_frame("a/b.py(1): f"));
        assert!(!is_python_frame(
            "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"
        ));
        assert!(!is_python_frame("x.py(abc): f"));
        assert!(!is_python_frame("x.py(): f"));
    }

    fn cpu(start: Ns, end: Ns, launch_ns: u32) -> Seg {
        Seg {
            start,
            end,
            what: 0,
            launch_ns,
            own_ns: 0,
            act: Act::Cpu,
            sub: Sub::NONE,
        }
    }

    /// A long thread has millions of segments: `own_ns` fits in what was
    /// padding.
    #[test]
    fn a_segment_is_32_bytes() {
        assert_eq!(size_of::<Seg>(), 32);
    }

    /// A run's time between its calls goes to the I/O segments over it, in
    /// proportion to how much of the run each covers.
    #[test]
    fn io_segments_over_runs_hold_the_time_between_calls() {
        let io = |start, end| Seg {
            act: Act::Io,
            ..cpu(start, end, 0)
        };
        let run = |ts, dur, busy_ns| RunSpan {
            ts,
            dur,
            op: HostOp::Read,
            obj: 1,
            calls: 10,
            files: 10,
            busy_ns,
        };
        // A run of 1000 with 600 in calls, cut in two by a sample; a CPU
        // segment between; a second run all in calls; an I/O span alone.
        let mut segs = vec![
            io(0, 400),
            io(400, 1000),
            cpu(1000, 1100, 0),
            io(1100, 1300),
            io(2000, 2100),
        ];
        mark_run_gaps(&mut segs, &[run(0, 1000, 600), run(1100, 200, 200)]);
        let own: Vec<u32> = segs.iter().map(|s| s.own_ns).collect();
        assert_eq!(own, [160, 240, 0, 0, 0]);
    }

    /// Samples every 10 ms, with the run-queue delay each interval adds.
    fn delays(per_interval: &[u64]) -> Vec<Sample> {
        let mut total = 0;
        let mut v = vec![Sample {
            ts: 0,
            cpu_ns: 0,
            run_delay_ns: 0,
            majflt: 0,
            minflt: 0,
            state: b'R',
        }];
        for (k, d) in per_interval.iter().enumerate() {
            total += d;
            v.push(Sample {
                ts: (k as Ns + 1) * 10_000_000,
                run_delay_ns: total,
                ..v[0]
            });
        }
        v
    }

    #[test]
    fn stretches_the_run_queue_delay_explains_are_queued() {
        const MS: Ns = 1_000_000;
        const GAP: Ns = 200_000;
        let subs = |segs: &[Seg]| segs.iter().map(|s| s.sub).collect::<Vec<_>>();
        // Interval 0 waited 6 ms: the first 4 ms stretch takes 3.8 ms of it;
        // the second, in the same interval, finds 2.2 ms and is CPU work.
        // Interval 1 waited 1 ms: its 4 ms stretch is CPU work. Interval 2
        // waited 3 ms: a fresh budget for its stretch (across 2 and 3).
        let mut segs = [
            cpu(MS, 5 * MS, 0),
            cpu(6 * MS, 10 * MS, 0),
            cpu(12 * MS, 16 * MS, 0),
            cpu(18 * MS, 19 * MS, 40_000),
            cpu(19 * MS, 19 * MS + GAP, 0),
            cpu(28 * MS, 33 * MS, 0),
        ];
        mark_queued(
            &mut segs,
            &delays(&[6 * MS as u64, MS as u64, 3 * MS as u64, 2 * MS as u64]),
            GAP,
        );
        let q = Sub::QUEUED;
        let n = Sub::NONE;
        assert_eq!(subs(&segs), [q, n, n, n, n, q]);
        // No run-queue delay anywhere: nothing to mark.
        let mut segs = [cpu(MS, 5 * MS, 0)];
        mark_queued(&mut segs, &delays(&[0, 0]), GAP);
        assert_eq!(subs(&segs), [n]);
        mark_queued(&mut segs, &[], GAP);
        assert_eq!(subs(&segs), [n]);
    }
}
