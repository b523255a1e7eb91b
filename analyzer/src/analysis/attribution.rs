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

use std::collections::HashMap;

use stallscope_format::fs_name;

use super::activity::{Act, Seg};
use super::busy;
use super::context::{Context, ThreadRef, clip};
use super::intervals;
use super::types::{Cause, IdleGap};
use crate::model::{Gpu, GpuOp, GpuOpKind, Ns};

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
    pub by_label: HashMap<(Cause, &'static str), Ns>,
    /// Idle time per cause and thread.
    pub threads: HashMap<(Cause, ThreadRef), Ns>,
    /// Idle time per cause and (process, object or name id) behind it.
    pub what: HashMap<(Cause, u32, u32), Ns>,
    /// For data waits: producer CPU and I/O time, and capacity, over the waits.
    pub producer_cpu_ns: f64,
    pub producer_io_ns: f64,
    pub producer_capacity_ns: f64,
    pub producer_count: usize,
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
    let (w0, w1) = cx.window;
    let busy = busy::busy_intervals(g);
    let busy_ns = intervals::overlap(&busy, w0, w1);
    let mut ops: Vec<&GpuOp> = g.streams.iter().flat_map(|s| s.ops.iter()).collect();
    ops.sort_unstable_by_key(|o| (o.start, o.end));
    let launcher = main_launcher(cx, &ops);
    let mut pieces: Vec<IdleGap> = Vec::new();
    for (a, b) in intervals::gaps(&busy, w0, w1) {
        let next = ops.get(ops.partition_point(|o| o.start < b)).copied();
        attribute_gap(cx, a, b, next, launcher, ev, &mut pieces);
    }
    let gaps = merge(pieces);
    let mut idle_by_cause = [0; 8];
    for gp in &gaps {
        idle_by_cause[gp.cause.index()] += gp.dur();
        *ev.by_label.entry((gp.cause, gp.sub)).or_default() += gp.dur();
    }
    GpuAttribution {
        window: (w0, w1),
        busy_ns,
        gaps,
        idle_by_cause,
        launcher,
    }
}

/// The thread whose API calls launched the most ops.
fn main_launcher(cx: &Context, ops: &[&GpuOp]) -> Option<ThreadRef> {
    let mut count: HashMap<ThreadRef, usize> = HashMap::new();
    for o in ops {
        if let Some((r, _)) = cx.launch_of(o) {
            *count.entry(r).or_default() += 1;
        }
    }
    count
        .into_iter()
        .max_by_key(|&(r, n)| (n, std::cmp::Reverse(r)))
        .map(|(r, _)| r)
}

#[allow(clippy::too_many_arguments)]
fn attribute_gap(
    cx: &Context,
    a: Ns,
    b: Ns,
    next: Option<&GpuOp>,
    launcher: Option<ThreadRef>,
    ev: &mut Evidence,
    out: &mut Vec<IdleGap>,
) {
    let launch = next.and_then(|o| cx.launch_of(o));
    let segs_of = |r: ThreadRef| cx.segments(r);
    let (who, l) = match (launch, launcher) {
        (Some((r, span)), _) => (r, span.ts.min(b)),
        // No link to a launch (trailing idle, missing API records): judge by
        // the main launcher up to the end of the gap.
        (None, Some(r)) => (r, b),
        (None, None) => {
            push(out, ev, cx, a, b, Cause::Other, "unlinked", None, 0);
            return;
        }
    };
    if l <= a {
        push(out, ev, cx, a, b, Cause::Other, "dependency", Some(who), 0);
        return;
    }
    // Back-to-back tiny kernels: the host launches as fast as it can.
    if let Some(op) = next {
        if b - a <= LAUNCH_GAP_NS && op.kind == GpuOpKind::Kernel && op.dur() <= 2 * LAUNCH_GAP_NS {
            let segs = segs_of(who);
            if clip(&segs, a, l).all(|s| matches!(s.act, Act::Cpu | Act::Launch)) {
                push(
                    out,
                    ev,
                    cx,
                    a,
                    b,
                    Cause::Launch,
                    "tiny-kernels",
                    Some(who),
                    0,
                );
                return;
            }
        }
    }
    let segs = segs_of(who);
    // The sync that drained the GPU, and how long it waited (unclipped).
    let i = segs.partition_point(|s| s.end <= a - SYNC_SLACK_NS);
    let drain = segs[i..]
        .iter()
        .take_while(|s| s.start < a + SYNC_SLACK_NS)
        .filter(|s| s.act == Act::Sync && s.end >= a - SYNC_SLACK_NS)
        .last()
        .map(|s| (s.sub, s.end - s.start));
    let mut budget = drain.map_or(0, |d| d.1);
    for s in clip(&segs, a, l) {
        let (cause, sub) = classify_piece(cx, who, &s, ev);
        let overlappable = matches!(cause, Cause::Cpu | Cause::Launch | Cause::Other);
        match drain {
            Some((sync_sub, _)) if overlappable && budget > 0 => {
                let take = budget.min(s.end - s.start);
                budget -= take;
                push(
                    out,
                    ev,
                    cx,
                    s.start,
                    s.start + take,
                    Cause::Sync,
                    sync_sub,
                    Some(who),
                    0,
                );
                push(
                    out,
                    ev,
                    cx,
                    s.start + take,
                    s.end,
                    cause,
                    sub,
                    Some(who),
                    s.what,
                );
            }
            _ => push(out, ev, cx, s.start, s.end, cause, sub, Some(who), s.what),
        }
    }
    let drained_by_sync = drain.filter(|_| budget > 0).map(|d| d.0);
    if l < b {
        // The launch call itself, up to the op's start.
        let (cause, sub) = match launch {
            Some((r, span)) => match cx.api_act(r, span) {
                (Act::Transfer, sub) => (Cause::Transfer, sub),
                (Act::Memory, sub) => (Cause::Memory, sub),
                (Act::Sync, sub) => (Cause::Sync, sub),
                // A launch call this slow is not launch overhead but lazy
                // module loading, JIT compilation or a full launch queue.
                _ if span.dur > SLOW_CALL_NS => (Cause::Launch, "slow-call"),
                _ => (Cause::Launch, "latency"),
            },
            None => (Cause::Launch, "latency"),
        };
        let (cause, sub) = match (drained_by_sync, cause) {
            (Some(s), Cause::Launch) => (Cause::Sync, s),
            _ => (cause, sub),
        };
        push(out, ev, cx, l, b, cause, sub, Some(who), 0);
    }
}

fn classify_piece(
    cx: &Context,
    who: ThreadRef,
    s: &Seg,
    ev: &mut Evidence,
) -> (Cause, &'static str) {
    let p = cx.process(who);
    match s.act {
        Act::Io => {
            let fs = p
                .object(s.what)
                .map(|o| fs_name(o.fs_magic))
                .filter(|f| *f != "unknown");
            (
                Cause::Io,
                fs.unwrap_or(if s.sub == "fault" {
                    "page-faults"
                } else {
                    s.sub
                }),
            )
        }
        Act::Data if s.sub == "main-process" => (Cause::Data, "cpu"),
        Act::Data => (Cause::Data, data_sub(cx, who, s.start, s.end, ev)),
        Act::Memory => (Cause::Memory, s.sub),
        Act::Sync => (Cause::Sync, s.sub),
        Act::Transfer => (Cause::Transfer, s.sub),
        Act::Launch => (Cause::Launch, "latency"),
        Act::Wait => (Cause::Other, "wait"),
        Act::Cpu => {
            let len = (s.end - s.start).max(1) as f64;
            let delayed = cx.run_delay_at(who, s.end) - cx.run_delay_at(who, s.start);
            let sub = if s.sub == "gil" {
                "gil"
            } else if delayed > 0.25 * len {
                "contention"
            } else if s.sub == "sleep" {
                "sleep"
            } else {
                "python"
            };
            (Cause::Cpu, sub)
        }
    }
}

/// What the producers of `who` did while it waited over [x, y).
fn data_sub(cx: &Context, who: ThreadRef, x: Ns, y: Ns, ev: &mut Evidence) -> &'static str {
    if cx.tl.source == crate::model::Source::Kineto {
        // Profiler traces do not show the worker processes.
        return "workers";
    }
    let producers = cx.producers(who.0, who.1);
    if producers.is_empty() {
        return "starved";
    }
    let len = (y - x).max(1) as f64;
    let (mut cpu, mut io) = (0.0, 0.0);
    for &r in &producers {
        let io_here: Ns = clip(&cx.segments(r), x, y)
            .filter(|s| s.act == Act::Io)
            .map(|s| s.end - s.start)
            .sum();
        io += io_here as f64;
        cpu += (cx.cpu_at(r, y) - cx.cpu_at(r, x)).clamp(0.0, len);
    }
    let cap = len * producers.len() as f64;
    ev.producer_cpu_ns += cpu;
    ev.producer_io_ns += io;
    ev.producer_capacity_ns += cap;
    ev.producer_count = ev.producer_count.max(producers.len());
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

#[allow(clippy::too_many_arguments)]
fn push(
    out: &mut Vec<IdleGap>,
    ev: &mut Evidence,
    cx: &Context,
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
    let (pid, tid) = who.map_or((0, 0), |r| (cx.process(r).pid, cx.thread(r).tid));
    if let Some(r) = who {
        *ev.threads.entry((cause, r)).or_default() += end - start;
        if what != 0 {
            *ev.what.entry((cause, r.0, what)).or_default() += end - start;
        }
    }
    out.push(IdleGap {
        start,
        end,
        cause,
        sub,
        pid,
        tid,
    });
}

/// Joins touching pieces with the same label and thread.
fn merge(mut v: Vec<IdleGap>) -> Vec<IdleGap> {
    v.sort_by_key(|g| g.start);
    let mut out: Vec<IdleGap> = Vec::with_capacity(v.len());
    for g in v {
        match out.last_mut() {
            Some(l)
                if l.end == g.start
                    && l.cause == g.cause
                    && l.sub == g.sub
                    && l.tid == g.tid
                    && l.pid == g.pid =>
            {
                l.end = g.end
            }
            _ => out.push(g),
        }
    }
    out
}
