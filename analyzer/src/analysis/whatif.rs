//! What-if estimates by replay, in the spirit of Daydream (Zhu et al., USENIX
//! ATC 2020): the launching thread's timeline and the GPU streams are replayed
//! with one cause's host time removed (or some kernels made faster), keeping
//! the dependencies: an op starts after its launch and after the previous op on
//! its stream; a blocking sync ends when the work launched before it is done.
//! Step times are read off the replay at the original step boundaries.
//!
//! The estimate is the measured step time scaled by (replay with the change /
//! replay without it), so the replay's own simplifications largely cancel.

use std::collections::HashMap;

use super::activity::{Act, Seg};
use super::context::{Context, ThreadRef};
use crate::model::{Gpu, GpuOp, Ns, Precision};

/// A sync call costs at least this much even when nothing is left to wait for.
const SYNC_FLOOR_NS: Ns = 5_000;
/// Launch latency counted per op, at most.
const MAX_LATENCY_NS: Ns = 1_000_000;

struct OpInfo {
    /// Index of the stream in the GPU's list.
    stream: u32,
    orig_start: Ns,
    orig_end: Ns,
    /// An op on another stream this one waited for (an event or collective).
    dep: Option<usize>,
    /// When the launching call happened, on the original host clock.
    anchor: Ns,
    /// Time from the launch call to the start, beyond queueing behind its stream.
    latency: Ns,
    dur: Ns,
    corr: u32,
    precision: Precision,
}

/// A change to replay.
pub struct Change<'a> {
    /// Host activities of the launching thread that take no time.
    pub remove: &'a [Act],
    /// Copies to drop entirely (offload).
    pub drop_ops: Option<&'a std::collections::HashSet<u32>>,
    /// Kernel time divisor per precision class (1.0 = unchanged).
    pub speedup: &'a dyn Fn(Precision) -> f64,
}

impl Change<'_> {
    pub fn none() -> Change<'static> {
        Change {
            remove: &[],
            drop_ops: None,
            speedup: &|_| 1.0,
        }
    }
}

pub struct Replay {
    streams: usize,
    segs: Vec<Seg>,
    ops: Vec<OpInfo>,
    window: (Ns, Ns),
}

impl Replay {
    /// The host side of the replay is the critical host timeline: between two
    /// consecutive launches, the activity of the thread that launched the
    /// second one (PyTorch launches backward kernels from its autograd thread
    /// and forward kernels from the Python thread, so neither alone is the
    /// critical path).
    pub fn new(cx: &Context, g: &Gpu, launcher: ThreadRef) -> Replay {
        let (w0, w1) = cx.window;
        let mut launches: Vec<(Ns, ThreadRef)> = g
            .streams
            .iter()
            .flat_map(|s| s.ops.iter())
            .filter_map(|o| cx.launch_of(o).map(|(r, span)| (span.ts, r)))
            .filter(|&(t, _)| t >= w0 && t < w1)
            .collect();
        launches.sort_unstable();
        let mut segs: Vec<Seg> = Vec::new();
        let mut from = w0;
        // Consecutive launches from one thread form one stretch of its timeline.
        let mut k = 0;
        while k < launches.len() {
            let r = launches[k].1;
            while k + 1 < launches.len() && launches[k + 1].1 == r {
                k += 1;
            }
            let t = launches[k].0;
            if t > from {
                cx.extend_segments(r, from, t, &mut segs);
                from = t;
            }
            k += 1;
        }
        if from < w1 {
            cx.extend_segments(launcher, from, w1, &mut segs);
        }
        let mut ops = Vec::new();
        for (si, s) in g.streams.iter().enumerate() {
            let mut prev_end = Ns::MIN;
            for o in &s.ops {
                if o.end <= w0 || o.start >= w1 {
                    prev_end = prev_end.max(o.end);
                    continue;
                }
                let (anchor, latency) = match cx.launch_of(o) {
                    Some((_, span)) => {
                        let ready = span.ts.max(prev_end);
                        (span.ts, (o.start - ready).clamp(0, MAX_LATENCY_NS))
                    }
                    None => (o.start, 0),
                };
                ops.push(OpInfo {
                    stream: si as u32,
                    orig_start: o.start,
                    orig_end: o.end,
                    dep: None,
                    anchor: anchor.max(w0),
                    latency,
                    dur: o.dur(),
                    corr: o.corr,
                    precision: cx.precision.of(o),
                });
                prev_end = prev_end.max(o.end);
            }
        }
        ops.sort_by_key(|o| o.anchor);
        find_dependencies(&mut ops);
        Replay {
            segs,
            ops,
            window: (w0, w1),
            streams: g.streams.len(),
        }
    }

    /// Replays the window with `change`; returns the new times of `marks`
    /// (original host times, sorted) and the new end of the window. A mark's
    /// new time also waits for the GPU work launched before it, so a host that
    /// runs ahead of the GPU does not look faster than the GPU allows.
    pub fn run(&self, change: &Change, marks: &[Ns]) -> (Vec<Ns>, Ns) {
        let (w0, w1) = self.window;
        let mut h = w0;
        let mut stream_free: Vec<Ns> = vec![w0; self.streams];
        let mut new_end: Vec<Ns> = vec![Ns::MIN; self.ops.len()];
        let mut done = w0;
        let mut out = Vec::with_capacity(marks.len());
        let (mut oi, mut mi) = (0, 0);
        let mut schedule = |i: usize, at: Ns, done: &mut Ns| {
            let op = &self.ops[i];
            let free = stream_free[op.stream as usize];
            let after_dep = op.dep.map_or(Ns::MIN, |d| new_end[d]);
            let start = (at + op.latency).max(free).max(after_dep);
            let dur = if change.drop_ops.is_some_and(|d| d.contains(&op.corr)) {
                0
            } else {
                (op.dur as f64 / (change.speedup)(op.precision).max(1e-9)) as Ns
            };
            stream_free[op.stream as usize] = start + dur;
            new_end[i] = start + dur;
            *done = (*done).max(start + dur);
        };
        for s in &self.segs {
            let removed = change.remove.contains(&s.act);
            let len = (s.end - s.start).max(1) as f64;
            let scale = if removed {
                // A merged CPU segment keeps its launch calls unless those go too.
                if s.act == Act::Cpu && !change.remove.contains(&Act::Launch) {
                    s.launch_ns as f64 / len
                } else {
                    0.0
                }
            } else if s.act == Act::Cpu && change.remove.contains(&Act::Launch) {
                1.0 - s.launch_ns as f64 / len
            } else {
                1.0
            };
            let seg_start_new = h;
            // Ops and marks inside this segment, mapped onto the new clock.
            loop {
                let next_op = self.ops.get(oi).map(|o| o.anchor).filter(|&t| t < s.end);
                let next_mark = marks.get(mi).copied().filter(|&t| t < s.end);
                match (next_op, next_mark) {
                    (Some(t), m) if m.is_none_or(|m| t < m) => {
                        let at = seg_start_new + ((t - s.start).max(0) as f64 * scale) as Ns;
                        schedule(oi, at, &mut done);
                        oi += 1;
                    }
                    (_, Some(t)) => {
                        let at = seg_start_new + ((t - s.start).max(0) as f64 * scale) as Ns;
                        out.push(at.max(done));
                        mi += 1;
                    }
                    _ => break,
                }
            }
            h = if s.act == Act::Sync && !removed {
                // Waits for everything launched so far, no longer.
                (h + SYNC_FLOOR_NS.min(s.end - s.start)).max(done)
            } else if s.act == Act::Data && !removed && s.sub != "main-process" {
                // Producers run on their own: the batch arrives when it arrived,
                // however early the consumer starts waiting.
                h.max(s.end)
            } else {
                h + (len * scale) as Ns
            };
        }
        for i in oi..self.ops.len() {
            let at = h + (self.ops[i].anchor - w1).max(0);
            schedule(i, at, &mut done);
        }
        while mi < marks.len() {
            out.push(h.max(done));
            mi += 1;
        }
        (out, h.max(done))
    }
}

/// An op that started right after an op of another stream ended, later than
/// its own launch and stream allowed, waited for it (cudaStreamWaitEvent,
/// collectives). The replay keeps that edge.
fn find_dependencies(ops: &mut [OpInfo]) {
    const EPS: Ns = 50_000;
    let mut by_stream: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, o) in ops.iter().enumerate() {
        by_stream.entry(o.stream).or_default().push(i);
    }
    for v in by_stream.values_mut() {
        v.sort_by_key(|&i| ops[i].orig_start);
    }
    for (&stream, list) in &by_stream {
        for (k, &b) in list.iter().enumerate() {
            let prev_end = k.checked_sub(1).map_or(Ns::MIN, |p| ops[list[p]].orig_end);
            let own_ready = (ops[b].anchor + ops[b].latency).max(prev_end);
            if ops[b].orig_start <= own_ready + EPS / 2 {
                continue;
            }
            let mut best: Option<(Ns, usize)> = None;
            for (&other, olist) in &by_stream {
                if other == stream {
                    continue;
                }
                let j = olist.partition_point(|&a| ops[a].orig_end <= ops[b].orig_start);
                if let Some(&a) = j.checked_sub(1).map(|j| &olist[j]) {
                    let gap = ops[b].orig_start - ops[a].orig_end;
                    if gap <= EPS && best.is_none_or(|x| gap < x.0) {
                        best = Some((gap, a));
                    }
                }
            }
            ops[b].dep = best.map(|x| x.1);
        }
    }
}

/// Step durations from replayed boundaries.
pub fn durations(bounds: &[Ns]) -> Vec<Ns> {
    bounds.windows(2).map(|w| (w[1] - w[0]).max(0)).collect()
}

/// Median of a list.
pub fn median(mut v: Vec<Ns>) -> Ns {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    v[v.len() / 2]
}

/// Ops with their precision, for tests and reports.
pub fn op_precisions<'a>(
    cx: &'a Context,
    g: &'a Gpu,
) -> impl Iterator<Item = (&'a GpuOp, Precision)> + 'a {
    g.streams
        .iter()
        .flat_map(|s| s.ops.iter())
        .map(move |o| (o, cx.precision.of(o)))
}
