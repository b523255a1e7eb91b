//! What a host thread was doing at each moment, as the critical path needs it.
//!
//! Spans are turned into classified intervals; where several cover one moment
//! the most specific wins (a CUDA API call over a libc wait inside it; a libc
//! call over the framework op around it). Time no span explains is CPU work,
//! unless the sampler saw the thread blocked (D state: I/O; sleeping without a
//! recorded wait: an unhooked wait).

use std::collections::HashMap;

use stallscope_format::{FdClass, HostOp};

use crate::model::{
    CopyKind, GpuOpKind, MemKind, Ns, Process, SpanKind, StrId, Strings, Thread, Timeline,
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

/// One classified stretch of a thread's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seg {
    pub start: Ns,
    pub end: Ns,
    pub act: Act,
    /// Extra detail: "pipe", "gil", "sleep", "pageable", the fs name...
    pub sub: &'static str,
    /// The object (I/O) or name (API, op) behind it; 0 if none.
    pub what: u32,
    /// Index of the span in the thread, if a span explains the segment.
    pub span: Option<u32>,
    /// For CPU segments: how much of it was spent inside launch calls. Runs of
    /// CPU work and launch calls are merged (up to `MERGE_CAP_NS`) so a
    /// launch-heavy thread yields a few segments per millisecond, not two per
    /// kernel.
    pub launch_ns: u32,
}

/// Longest merged CPU+launch segment.
pub const MERGE_CAP_NS: Ns = 1_000_000;

/// A classified span during the sweep.
struct Mark {
    start: Ns,
    end: Ns,
    act: Act,
    sub: &'static str,
    prio: u8,
    what: u32,
    span: u32,
}

/// Appends a segment, joining it to the previous one when they continue each
/// other: the same activity and object, or CPU work and launch calls.
fn push_merged(out: &mut Vec<Seg>, seg: Seg) {
    if seg.end <= seg.start {
        return;
    }
    let cpu_like = |s: &Seg| (s.act == Act::Cpu && s.sub.is_empty()) || s.act == Act::Launch;
    if let Some(l) = out.last_mut() {
        if l.end == seg.start {
            if l.act == seg.act && l.sub == seg.sub && l.what == seg.what && l.act != Act::Launch {
                l.end = seg.end;
                if l.act == Act::Cpu {
                    l.launch_ns += seg.launch_ns;
                }
                return;
            }
            if cpu_like(l) && cpu_like(&seg) && seg.end - l.start <= MERGE_CAP_NS {
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
                    act: Act::Cpu,
                    sub: "",
                    what: 0,
                    span: None,
                    launch_ns: total,
                };
                return;
            }
        }
    }
    out.push(seg);
}

/// How API function names map to activities; shared by native and Kineto traces.
#[derive(Debug, Default)]
pub struct NameTable {
    acts: HashMap<StrId, (Act, &'static str)>,
}

impl NameTable {
    pub fn new(strings: &Strings) -> NameTable {
        let mut acts = HashMap::new();
        for (id, s) in strings.iter() {
            if let Some(a) = classify_name(s) {
                acts.insert(id, a);
            }
        }
        NameTable { acts }
    }

    pub fn get(&self, id: StrId) -> Option<(Act, &'static str)> {
        self.acts.get(&id).copied()
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
    if lower.contains("dataloader") && (lower.contains("__next__") || lower.contains("enumerate")) {
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

/// Correlation id -> (kind, direction, source memory) of the GPU op it launched.
pub type CopyIndex = HashMap<u32, (GpuOpKind, CopyKind, MemKind)>;

pub fn copy_index(tl: &Timeline) -> CopyIndex {
    let mut m = HashMap::new();
    for g in &tl.gpus {
        for s in &g.streams {
            for o in &s.ops {
                if o.corr != 0 && o.kind != GpuOpKind::Kernel {
                    m.insert(o.corr, (o.kind, o.copy, o.src));
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
    pub offload: &'a std::collections::HashSet<u32>,
}

impl Classifier<'_> {
    /// Activity of one span, with a priority (higher wins).
    pub fn span_activity(
        &self,
        p: &Process,
        s: &crate::model::HostSpan,
    ) -> Option<(Act, &'static str, u8)> {
        match s.kind {
            SpanKind::Host(op) => {
                let class = p.object(s.id).map(|o| o.class);
                let act = match op {
                    HostOp::Read | HostOp::Pread | HostOp::Readv | HostOp::Preadv => match class {
                        Some(FdClass::File | FdClass::BlockDevice | FdClass::Dir) | None => {
                            (Act::Io, "read")
                        }
                        Some(FdClass::Pipe) => (Act::Data, "pipe"),
                        Some(c) if c.is_socket() => (Act::Data, "socket"),
                        Some(_) => (Act::Io, "read"),
                    },
                    HostOp::Write | HostOp::Pwrite | HostOp::Fsync | HostOp::Fdatasync => {
                        match class {
                            Some(FdClass::File | FdClass::BlockDevice) => (Act::Io, "write"),
                            // Writing into a full pipe waits for its reader.
                            _ => (Act::Data, "pipe-write"),
                        }
                    }
                    HostOp::Open | HostOp::Close => (Act::Io, "open"),
                    HostOp::Mmap => (Act::Io, "mmap"),
                    HostOp::Poll | HostOp::Select | HostOp::EpollWait => match class {
                        Some(FdClass::Pipe) => (Act::Data, "pipe"),
                        Some(c) if c.is_socket() => (Act::Data, "socket"),
                        _ => (Act::Data, "poll"),
                    },
                    HostOp::Recv => (Act::Data, "socket"),
                    HostOp::SemWait => (Act::Data, "queue"),
                    // CPython hands the GIL over through a condition variable:
                    // waiting on one is mostly another thread computing.
                    HostOp::CondWait => (Act::Cpu, "gil"),
                    HostOp::Sleep => (Act::Cpu, "sleep"),
                };
                Some((act.0, act.1, 2))
            }
            SpanKind::CudaRuntime | SpanKind::CudaDriver => {
                let (act, sub) = self.names.get(s.id)?;
                Some(match act {
                    Act::Transfer if self.offload.contains(&(s.arg as u32)) => {
                        (Act::Memory, "offload", 3)
                    }
                    Act::Transfer => {
                        let (act, sub) = match self.copies.get(&(s.arg as u32)) {
                            Some((GpuOpKind::Memcpy, CopyKind::DTOH, _)) => (Act::Sync, "d2h-copy"),
                            Some((GpuOpKind::Memcpy, CopyKind::HTOD, MemKind::PAGEABLE)) => {
                                (Act::Transfer, "pageable")
                            }
                            Some((GpuOpKind::Memcpy, CopyKind::HTOD, _)) => (Act::Transfer, "h2d"),
                            Some((GpuOpKind::Memset, _, _)) => (Act::Launch, ""),
                            _ => (Act::Transfer, "copy"),
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
    pub fn segments(&self, p: &Process, th: &Thread, lo: Ns, hi: Ns) -> Vec<Seg> {
        // Classified spans overlapping the window. Any earlier span may still
        // cover `lo` (a long wait, an enclosing op), so the scan starts at the
        // beginning; callers classify a thread once for a whole window.
        let mut marks: Vec<Mark> = Vec::new();
        for (i, s) in th.spans.iter().enumerate() {
            if s.ts >= hi {
                break;
            }
            if s.end() <= lo {
                continue;
            }
            if let Some((act, sub, prio)) = self.span_activity(p, s) {
                marks.push(Mark {
                    start: s.ts.max(lo),
                    end: s.end().min(hi),
                    act,
                    sub,
                    prio,
                    what: s.id,
                    span: i as u32,
                });
            }
        }
        // Sweep in start order with the set of open marks; at each stretch the
        // highest-priority, innermost (latest-starting) open mark wins. Nesting
        // is shallow, so the open set stays small.
        marks.sort_by_key(|m| (m.start, std::cmp::Reverse(m.end)));
        let mut out: Vec<Seg> = Vec::new();
        let mut open: Vec<usize> = Vec::new();
        let mut t = lo;
        let mut next = 0;
        while t < hi {
            while next < marks.len() && marks[next].start <= t {
                open.push(next);
                next += 1;
            }
            open.retain(|&i| marks[i].end > t);
            let next_start = marks.get(next).map_or(hi, |m| m.start).min(hi);
            match open
                .iter()
                .copied()
                .max_by_key(|&i| (marks[i].prio, marks[i].start))
            {
                None => {
                    for seg in self.unexplained(th, t, next_start) {
                        push_merged(&mut out, seg);
                    }
                    t = next_start;
                }
                Some(i) => {
                    let m = &marks[i];
                    let until = open
                        .iter()
                        .map(|&j| marks[j].end)
                        .min()
                        .unwrap_or(hi)
                        .min(next_start);
                    let seg = Seg {
                        start: t,
                        end: until,
                        act: m.act,
                        sub: m.sub,
                        what: m.what,
                        span: Some(m.span),
                        launch_ns: 0,
                    };
                    push_merged(&mut out, seg);
                    t = until;
                }
            }
        }
        out
    }

    /// Time no span explains: the sampler's view, else CPU.
    fn unexplained(&self, t: &Thread, a: Ns, b: Ns) -> Vec<Seg> {
        let cpu = Seg {
            start: a,
            end: b,
            act: Act::Cpu,
            sub: "",
            what: 0,
            span: None,
            launch_ns: 0,
        };
        if t.samples.len() < 2 {
            return vec![cpu];
        }
        let mut out = Vec::new();
        // Each sample describes the interval since the previous one.
        let i0 = t.samples.partition_point(|s| s.ts <= a);
        let mut start = a;
        for j in i0..=t.samples.len() {
            let end = if j < t.samples.len() {
                t.samples[j].ts.min(b)
            } else {
                b
            };
            if end > start {
                let act = match (j.checked_sub(1).map(|k| &t.samples[k]), t.samples.get(j)) {
                    (Some(prev), Some(next)) => {
                        let dt = (next.ts - prev.ts).max(1) as f64;
                        let ran = next.cpu_ns.saturating_sub(prev.cpu_ns) as f64 / dt;
                        if next.state == b'D' || next.majflt > prev.majflt {
                            (Act::Io, "fault")
                        } else if ran < 0.2 && next.state != b'R' {
                            (Act::Wait, "")
                        } else {
                            (Act::Cpu, "")
                        }
                    }
                    _ => (Act::Cpu, ""),
                };
                out.push(Seg {
                    start,
                    end,
                    act: act.0,
                    sub: act.1,
                    what: 0,
                    span: None,
                    launch_ns: 0,
                });
                start = end;
            }
            if end >= b {
                break;
            }
        }
        if start < b {
            out.push(Seg {
                start,
                end: b,
                ..cpu
            });
        }
        out
    }
}
