//! Idle-time attribution along the critical path.
//!
//! For each idle gap of a GPU, the op that ended it was launched by host thread
//! T at time L (its API call, found through the correlation id). What T did
//! between the start of the gap and L decides the cause; the launch call itself
//! (L up to the op's start) is launch latency, or copy staging, or allocation.
//! If the op was launched before the gap began, the GPU waited on something
//! else (another stream, an event): `other/dependency`.
//!
//! Two causes can explain one stretch; the one whose removal would shorten the
//! gap most takes it:
//! * CPU work right after a blocking sync is the sync's, up to as long as the
//!   sync waited: without the sync, that much host work would have overlapped
//!   the GPU work it waited for. CPU work beyond that is CPU-bound either way.
//!   Waiting for data or files after a sync stays data or I/O: removing the
//!   sync would not fill the gap.
//! * Waiting for batches is resolved through the producers over the same
//!   interval: workers on a CPU (data/cpu), reading files (data/io), or idle
//!   themselves (data/starved).

use std::sync::Arc;

use rustc_hash::FxHashMap;
use stallscope_format::fs_name;

use super::activity::{Act, Seg, Sub};
use super::busy;
use super::context::{Context, ThreadRef, clip_one};
use super::types::{Cause, IdleGap};
use super::whatif::is_host_work;
use crate::model::{Gpu, GpuOp, GpuOpKind, HostSpan, Ns, SyncKind};

/// Gaps shorter than this between short kernels are launch-bound.
const LAUNCH_GAP_NS: Ns = 30_000;
/// A launch call longer than this is more than launch overhead.
const SLOW_CALL_NS: Ns = 1_000_000;
/// A sync that returned this close to the start of a gap drained the GPU.
const SYNC_SLACK_NS: Ns = 200_000;

/// Per-cause evidence gathered while attributing.
#[derive(Debug, Default, Clone)]
pub struct Evidence {
    /// Idle time per (cause, sub).
    pub by_label: FxHashMap<(Cause, &'static str), Ns>,
    /// Idle time per cause and thread.
    pub threads: FxHashMap<(Cause, ThreadRef), Ns>,
    /// Idle time per cause and (process, object or name id) behind it.
    pub what: FxHashMap<(Cause, u32, u32), Ns>,
    /// For data waits: producer CPU and I/O time, and capacity, over the waits.
    pub producer_cpu_ns: f64,
    pub producer_io_ns: f64,
    pub producer_capacity_ns: f64,
    /// The most producers alive during one wait.
    pub producer_count: usize,
    /// Producer processes started after the window began: workers created
    /// again for a later epoch (`Context::started_in_window`).
    pub producers_restarted: usize,
    /// Idle time per stream (id) whose op waited for an event
    /// (cudaStreamWaitEvent) on another stream.
    pub waited_streams: FxHashMap<u64, Ns>,
}

/// The result for one GPU.
pub struct GpuAttribution {
    pub window: (Ns, Ns),
    pub busy_ns: Ns,
    pub gaps: Vec<IdleGap>,
    pub idle_by_cause: [Ns; 8],
    /// The thread that launched most of this GPU's work.
    pub launcher: Option<ThreadRef>,
}

/// Attributes every idle nanosecond of `g` inside the context's window.
pub fn attribute(cx: &Context, g: &Gpu, ev: &mut Evidence) -> GpuAttribution {
    attribute_with(cx, g, main_launcher(cx, g), ev)
}

/// `attribute`, with the main launcher already known.
pub fn attribute_with(
    cx: &Context,
    g: &Gpu,
    launcher: Option<ThreadRef>,
    ev: &mut Evidence,
) -> GpuAttribution {
    attribute_gaps(cx, idle_gaps(cx, g, |_| {}), launcher, ev)
}

/// The idle gaps of one GPU in the context's window, in order, each with the
/// op that ends it; and the GPU's busy time there. Finding them walks every
/// op but needs no host timeline, so it can run while that is built.
pub struct IdleGaps<'g> {
    busy_ns: Ns,
    /// Each gap, with the op that ends it and that op's stream id.
    gaps: Vec<(Ns, Ns, Option<NextOp<'g>>)>,
    /// Host calls that made a stream wait for an event: (start, stream id),
    /// sorted.
    waits: Vec<(Ns, u64)>,
}

/// The op that ends a gap, and its stream's id.
type NextOp<'g> = (&'g GpuOp, u64);

/// `op` sees every op of `g` in start order (see `busy::for_each_gap`).
pub fn idle_gaps<'g>(cx: &Context, g: &'g Gpu, op: impl FnMut(&GpuOp)) -> IdleGaps<'g> {
    let (w0, w1) = cx.window;
    let mut gaps = Vec::new();
    // The op that ends each gap: the first op (in (start, end) order, stream
    // order on ties) starting at or after the gap's end. Gaps come in order,
    // so each stream is scanned once.
    let mut pos = vec![0usize; g.streams.len()];
    let busy_ns = busy::for_each_gap(
        g,
        w0,
        w1,
        |a, b| {
            let mut next: Option<NextOp> = None;
            for (si, s) in g.streams.iter().enumerate() {
                let ops = &s.ops;
                let mut i = pos[si];
                while i < ops.len() && ops[i].start < b {
                    i += 1;
                }
                pos[si] = i;
                if let Some(o) = ops.get(i)
                    && next.is_none_or(|(n, _)| (o.start, o.end) < (n.start, n.end))
                {
                    next = Some((o, s.id));
                }
            }
            gaps.push((a, b, next));
        },
        op,
    );
    IdleGaps {
        busy_ns,
        gaps,
        waits: stream_waits(g),
    }
}

/// The host calls that made a stream wait for an event: (start, stream
/// id), sorted.
pub fn stream_waits(g: &Gpu) -> Vec<(Ns, u64)> {
    let mut w: Vec<(Ns, u64)> = g
        .syncs
        .iter()
        .filter(|s| s.kind == SyncKind::StreamWaitEvent)
        .map(|s| (s.start, s.stream))
        .collect();
    w.sort_unstable();
    w
}

/// Whether stream `stream` was made to wait for an event by a call in
/// [from, to].
pub fn waited_on_event(waits: &[(Ns, u64)], stream: u64, from: Ns, to: Ns) -> bool {
    let i = waits.partition_point(|w| w.0 < from);
    waits[i..]
        .iter()
        .take_while(|w| w.0 <= to)
        .any(|w| w.1 == stream)
}

/// The cause of a launch call's own time (from its start, or the gap's, up
/// to the op's start).
pub fn launch_call_cause(cx: &Context, r: ThreadRef, span: &HostSpan) -> (Cause, &'static str) {
    match cx.api_act(r, span) {
        (Act::Transfer, sub) => (Cause::Transfer, sub.name()),
        (Act::Memory, sub) => (Cause::Memory, sub.name()),
        (Act::Sync, sub) => (Cause::Sync, sub.name()),
        // A slow call that mostly waited for a CPU (a loaded machine) is
        // contention, not the launch's own cost.
        _ if span.dur > SLOW_CALL_NS
            && cx.run_delay_at(r, span.end()) - cx.run_delay_at(r, span.ts)
                > 0.5 * span.dur as f64 =>
        {
            (Cause::Cpu, "contention")
        }
        // A launch call this slow is not launch overhead but lazy module
        // loading, JIT compilation or a full launch queue.
        _ if span.dur > SLOW_CALL_NS => (Cause::Launch, "slow-call"),
        _ => (Cause::Launch, "latency"),
    }
}

/// A quick launch call that returned long before its op started on an idle
/// GPU: the op was held by something on the GPU side (an event wait the
/// trace does not show, as ROCm traces give hipStreamWaitEvent no stream;
/// work of another process), not by the launch. Returns where the launch's
/// share of [l, b) ends.
pub fn held_after(launch: Option<&HostSpan>, l: Ns, b: Ns) -> Option<Ns> {
    let span = launch?;
    let h = (span.end() + HELD_NS).max(l);
    (span.dur <= SLOW_CALL_NS && h < b).then_some(h)
}

/// An op starting this long after its launch call returned, the GPU idle,
/// was held by something else.
pub(crate) const HELD_NS: Ns = 200_000;

/// Attributes the idle gaps found by `idle_gaps`.
pub fn attribute_gaps(
    cx: &Context,
    idle: IdleGaps,
    launcher: Option<ThreadRef>,
    ev: &mut Evidence,
) -> GpuAttribution {
    let mut st = State {
        cx,
        ev,
        out: Vec::new(),
        segs: Vec::new(),
        producers: FxHashMap::default(),
        delay_free: Vec::new(),
    };
    for (a, b, next) in idle.gaps {
        st.gap(a, b, next, launcher, &idle.waits);
    }
    let gaps = st.out;
    let mut idle_by_cause = [0; 8];
    for gp in &gaps {
        idle_by_cause[gp.cause.index()] += gp.dur();
        *ev.by_label.entry((gp.cause, gp.sub)).or_default() += gp.dur();
    }
    GpuAttribution {
        window: cx.window,
        busy_ns: idle.busy_ns,
        gaps,
        idle_by_cause,
        launcher,
    }
}

/// The thread whose API calls launched the most ops of `g` (the first in
/// (process, thread) order on ties).
pub fn main_launcher(cx: &Context, g: &Gpu) -> Option<ThreadRef> {
    use rayon::prelude::*;
    let n = cx.corr.threads().len();
    let count = g
        .streams
        .par_iter()
        .flat_map(|s| s.ops.par_chunks(1 << 16))
        .fold(
            || Launches::new(cx),
            |mut c, ops| {
                for o in ops {
                    c.add(o);
                }
                c
            },
        )
        .reduce(
            || Launches::new(cx),
            |mut a, b| {
                for (x, y) in a.count.iter_mut().zip(b.count) {
                    *x += y;
                }
                a
            },
        );
    debug_assert_eq!(count.count.len(), n);
    count.main()
}

/// Ops counted by the thread that launched them, for `main_launcher`; fed
/// every op of a GPU by a pass that reads them anyway (the idle gaps'), it
/// saves that pass over the ops.
pub struct Launches<'c> {
    cx: &'c Context<'c>,
    /// Per thread of `corr.threads()`.
    count: Vec<usize>,
}

impl<'c> Launches<'c> {
    pub fn new(cx: &'c Context<'c>) -> Launches<'c> {
        Launches {
            cx,
            count: vec![0; cx.corr.threads().len()],
        }
    }

    #[inline]
    pub fn add(&mut self, o: &GpuOp) {
        if let Some(t) = self.cx.corr.thread_of(o.corr) {
            self.count[t as usize] += 1;
        }
    }

    /// The threads with ops, and how many, in (process, thread) order.
    #[cfg(test)]
    pub fn counts(&self) -> Vec<(ThreadRef, usize)> {
        let threads = self.cx.corr.threads();
        (0..self.count.len())
            .filter(|&t| self.count[t] > 0)
            .map(|t| (threads[t], self.count[t]))
            .collect()
    }

    /// The thread with the most ops (the first on ties), if any.
    pub fn main(&self) -> Option<ThreadRef> {
        let mut best: Option<(usize, usize)> = None;
        for (t, &c) in self.count.iter().enumerate() {
            if c > 0 && best.is_none_or(|b| c > b.1) {
                best = Some((t, c));
            }
        }
        best.map(|(t, _)| self.cx.corr.threads()[t])
    }
}

/// What attribution keeps between gaps.
struct State<'c, 'a, 'e> {
    cx: &'c Context<'a>,
    ev: &'e mut Evidence,
    out: Vec<IdleGap>,
    /// Segments of the threads asked for, each with a cursor: the first
    /// segment ending after the last gap's start minus `SYNC_SLACK_NS` (gaps
    /// come in order, so the cursors only move forward).
    segs: Vec<(ThreadRef, Arc<Vec<Seg>>, usize)>,
    /// Producers of each (process, thread).
    producers: FxHashMap<ThreadRef, Arc<Vec<ThreadRef>>>,
    /// Threads asked about, and whether their samples show no run-queue
    /// delay at all (then no piece of theirs waited for a CPU).
    delay_free: Vec<(ThreadRef, bool)>,
}

impl State<'_, '_, '_> {
    /// The segments of `r`, and the index of its first segment ending after
    /// `from` (which never decreases between calls for one thread).
    fn segs_from(&mut self, r: ThreadRef, from: Ns) -> (Arc<Vec<Seg>>, usize) {
        let k = match self.segs.iter().position(|x| x.0 == r) {
            Some(k) => k,
            None => {
                self.segs.push((r, self.cx.segments(r), 0));
                self.segs.len() - 1
            }
        };
        let (_, segs, cur) = &mut self.segs[k];
        // Forward from the last position; by binary search if that is far.
        if segs.get(*cur + 64).is_some_and(|s| s.end <= from) {
            *cur += segs[*cur..].partition_point(|s| s.end <= from);
        }
        while *cur < segs.len() && segs[*cur].end <= from {
            *cur += 1;
        }
        (segs.clone(), *cur)
    }

    fn gap(
        &mut self,
        a: Ns,
        b: Ns,
        next: Option<NextOp>,
        launcher: Option<ThreadRef>,
        waits: &[(Ns, u64)],
    ) {
        let cx = self.cx;
        let stream = next.map(|n| n.1);
        let next = next.map(|n| n.0);
        let launch = next.and_then(|o| cx.launch_of(o));
        let (who, l) = match (launch, launcher) {
            (Some((r, span)), _) => (r, span.ts.min(b)),
            // No link to a launch (trailing idle, missing API records): judge by
            // the main launcher up to the end of the gap.
            (None, Some(r)) => (r, b),
            (None, None) => {
                self.push(a, b, Cause::Other, "unlinked", None, 0);
                return;
            }
        };
        // The op waited for an event on another stream, set up since the
        // gap's start (or just before it).
        let event_wait =
            |to: Ns| stream.is_some_and(|st| waited_on_event(waits, st, a - SYNC_SLACK_NS, to));
        if l <= a {
            // The launch call was still running when the GPU went idle: its
            // whole duration is the launch's (a slow first launch loads the
            // module). Only then did the op wait for something else.
            let mut from = a;
            if let Some((r, span)) = launch
                && span.end() > a
            {
                from = span.end().min(b);
                let (cause, sub) = launch_call_cause(cx, r, span);
                self.push(a, from, cause, sub, Some(who), 0);
            }
            if from < b {
                // The wait was set up just before the launch, which came
                // before the gap.
                if let Some(st) =
                    stream.filter(|&st| waited_on_event(waits, st, l - SYNC_SLACK_NS, l.max(a)))
                {
                    *self.ev.waited_streams.entry(st).or_default() += b - from;
                }
                self.push(from, b, Cause::Other, "dependency", Some(who), 0);
            }
            return;
        }
        let (segs, i) = self.segs_from(who, a - SYNC_SLACK_NS);
        // The segments overlapping [a, l), clipped to it (`clip`, from the
        // cursor).
        let mut j = i;
        while j < segs.len() && segs[j].end <= a {
            j += 1;
        }
        let within = |segs: &Arc<Vec<Seg>>| {
            let segs = segs.clone();
            (j..segs.len()).map_while(move |k| {
                (segs[k].start < l).then(|| (clip_one(&segs[k], a, l), is_host_work(&segs[k])))
            })
        };
        // Back-to-back tiny kernels: the host launches as fast as it can.
        if let Some(op) = next
            && b - a <= LAUNCH_GAP_NS
            && op.kind() == GpuOpKind::Kernel
            && op.dur() <= 2 * LAUNCH_GAP_NS
            && within(&segs).all(|(s, _)| matches!(s.act, Act::Cpu | Act::Launch))
        {
            self.push(a, b, Cause::Launch, "tiny-kernels", Some(who), 0);
            return;
        }
        // The sync that drained the GPU, and how long it waited inside the
        // window: the host work after it could have overlapped that much
        // (the replay, which starts at the window, removes no more of it).
        let w0 = self.cx.window.0;
        let drain = segs[i..]
            .iter()
            .take_while(|s| s.start < a + SYNC_SLACK_NS)
            .filter(|s| s.act == Act::Sync && s.end >= a - SYNC_SLACK_NS)
            .last()
            .map(|s| (s.sub.name(), (s.end - s.start.max(w0)).max(0)));
        let mut budget = drain.map_or(0, |d| d.1);
        for (s, host_work) in within(&segs) {
            let (cause, sub) = self.classify_piece(who, &s, host_work);
            let overlappable = matches!(cause, Cause::Cpu | Cause::Launch | Cause::Other);
            match drain {
                Some((sync_sub, _)) if overlappable && budget > 0 => {
                    let take = budget.min(s.end - s.start);
                    budget -= take;
                    self.push(s.start, s.start + take, Cause::Sync, sync_sub, Some(who), 0);
                    self.push(s.start + take, s.end, cause, sub, Some(who), s.what);
                }
                _ => self.push(s.start, s.end, cause, sub, Some(who), s.what),
            }
        }
        let drained_by_sync = drain.filter(|_| budget > 0).map(|d| d.0);
        if l < b {
            // The launch call itself, up to the op's start.
            let (cause, sub) = match launch {
                Some((r, span)) => launch_call_cause(cx, r, span),
                None => (Cause::Launch, "latency"),
            };
            let (cause, sub) = match (drained_by_sync, cause) {
                // A slow call (module loading, JIT) is the launch's own, sync
                // or not.
                (Some(s), Cause::Launch) if sub != "slow-call" => (Cause::Sync, s),
                // An op held by a wait for an event on another stream: the
                // GPU waited on that stream, not on the launch.
                (None, Cause::Launch) if sub == "latency" && event_wait(l) => {
                    if let Some(st) = stream {
                        *self.ev.waited_streams.entry(st).or_default() += b - l;
                    }
                    (Cause::Other, "dependency")
                }
                _ => (cause, sub),
            };
            match held_after(launch.map(|x| x.1), l, b) {
                Some(h) if (cause, sub) == (Cause::Launch, "latency") => {
                    self.push(l, h, cause, sub, Some(who), 0);
                    self.push(h, b, Cause::Other, "dependency", Some(who), 0);
                }
                _ => self.push(l, b, cause, sub, Some(who), 0),
            }
        }
    }

    fn classify_piece(
        &mut self,
        who: ThreadRef,
        s: &Seg,
        host_work: bool,
    ) -> (Cause, &'static str) {
        let cx = self.cx;
        let p = cx.process(who);
        match s.act {
            Act::Io => {
                let fs = p
                    .object(s.what)
                    .map(|o| fs_name(o.fs_magic))
                    .filter(|f| *f != "unknown");
                (
                    Cause::Io,
                    fs.unwrap_or(if s.sub == Sub::FAULT {
                        "page-faults"
                    } else {
                        s.sub.name()
                    }),
                )
            }
            Act::Data if s.sub == Sub::MAIN_PROCESS => (Cause::Data, "cpu"),
            Act::Data => (Cause::Data, self.data_sub(who, s.start, s.end)),
            Act::Memory => (Cause::Memory, s.sub.name()),
            Act::Sync => (Cause::Sync, s.sub.name()),
            Act::Transfer => (Cause::Transfer, s.sub.name()),
            Act::Launch => (Cause::Launch, "latency"),
            Act::Wait => (Cause::Other, "wait"),
            Act::Cpu => {
                let len = (s.end - s.start).max(1) as f64;
                // Looked up only when needed: pieces number millions.
                let free = match self.delay_free.iter().find(|x| x.0 == who) {
                    Some(x) => x.1,
                    None => {
                        let v = &cx.thread(who).samples;
                        let free = v.iter().all(|x| x.run_delay_ns == v[0].run_delay_ns);
                        self.delay_free.push((who, free));
                        free
                    }
                };
                let delayed = || {
                    if free {
                        0.0
                    } else {
                        cx.run_delay_at(who, s.end) - cx.run_delay_at(who, s.start)
                    }
                };
                // A long stretch without launches is host work whether or
                // not it waited for a CPU: its fix (off the loop) is the same,
                // and its what-if is the host-work lane. Run-queue delay
                // names dispatch in a launch burst (see `whatif::in_burst`).
                let sub = if s.sub == Sub::GIL {
                    "gil"
                } else if s.sub == Sub::SLEEP {
                    "sleep"
                } else if s.sub == Sub::QUEUED {
                    "contention"
                } else if host_work {
                    "host-work"
                } else if delayed() > 0.25 * len {
                    "contention"
                } else {
                    "python"
                };
                (Cause::Cpu, sub)
            }
        }
    }

    /// What the producers of `who` did while it waited over [x, y).
    fn data_sub(&mut self, who: ThreadRef, x: Ns, y: Ns) -> &'static str {
        let cx = self.cx;
        if cx.tl.source == crate::model::Source::Kineto {
            // Profiler traces do not show the worker processes.
            return "workers";
        }
        let producers = self
            .producers
            .entry(who)
            .or_insert_with(|| Arc::new(cx.producers(who.0, who.1)))
            .clone();
        if producers.is_empty() {
            return "starved";
        }
        let (mut cpu, mut io, mut cap, mut alive) = (0.0, 0.0, 0.0, 0);
        for &r in producers.iter() {
            // Each producer over the part of the wait it was alive.
            let len = cx.alive_in(r, x, y) as f64;
            if len <= 0.0 {
                continue;
            }
            io += cx.io_in(r, x, y) as f64;
            // Waiting for a CPU (run-queue delay) is CPU demand too: workers
            // crowded onto too few cores are CPU-bound, not starved.
            let ran = cx.cpu_at(r, y) - cx.cpu_at(r, x);
            let queued = cx.run_delay_at(r, y) - cx.run_delay_at(r, x);
            cpu += (ran + queued).clamp(0.0, len);
            cap += len;
            alive += 1;
        }
        let ev = &mut *self.ev;
        ev.producer_cpu_ns += cpu;
        ev.producer_io_ns += io;
        ev.producer_capacity_ns += cap;
        ev.producer_count = ev.producer_count.max(alive);
        ev.producers_restarted = ev
            .producers_restarted
            .max(cx.started_in_window(who.0, &producers));
        let cap = cap.max(1.0);
        if io >= cpu && io > 0.15 * cap {
            "io"
        } else if cpu > 0.3 * cap {
            "cpu"
        } else if io > 0.15 * cap {
            "io"
        } else {
            "starved"
        }
    }

    fn push(
        &mut self,
        start: Ns,
        end: Ns,
        cause: Cause,
        sub: &'static str,
        who: Option<ThreadRef>,
        what: u32,
    ) {
        if end <= start {
            return;
        }
        let cx = self.cx;
        let (pid, tid) = who.map_or((0, 0), |r| (cx.process(r).pid, cx.thread(r).tid));
        if let Some(r) = who {
            *self.ev.threads.entry((cause, r)).or_default() += end - start;
            if what != 0 {
                *self.ev.what.entry((cause, r.0, what)).or_default() += end - start;
            }
        }
        // Pieces come in time order; touching ones with the same label and
        // thread are joined as they arrive.
        if let Some(l) = self.out.last_mut() {
            debug_assert!(l.end <= start);
            if l.end == start && l.cause == cause && l.sub == sub && l.tid == tid && l.pid == pid {
                l.end = end;
                return;
            }
        }
        self.out.push(IdleGap {
            start,
            end,
            cause,
            sub,
            pid,
            tid,
        });
    }
}
