//! Straightforward versions of the analyses' hot paths, as they were before
//! they were made fast (whole-list collects and sorts, per-gap searches, a
//! table per replayed op). Tests compare the fast versions against these on
//! random timelines; nothing else uses them.

use std::collections::{BTreeMap, HashMap};

use stallscope_format::fs_name;

use super::activity::{Act, Classifier, MERGE_CAP_NS, Seg, Sub};
use super::attribution::Evidence;
use super::attribution::{held_after, launch_call_cause};
use super::context::{Context, ThreadRef, clip, clip_one};
use super::kernels::AttnPart;
use super::types::{Cause, IdleGap};
use super::whatif::{
    BATCH_RUN_GAP_NS, BATCH_WAITED_NS, Change, FREE_LATENCY_NS, READY_COST_MAX_NS, in_burst,
    is_host_work,
};
use crate::model::{Gpu, GpuOp, GpuOpKind, Ns, Precision, Process, Thread};

fn push_merged(out: &mut Vec<Seg>, seg: Seg) {
    if seg.end <= seg.start {
        return;
    }
    let cpu_like = |s: &Seg| (s.act == Act::Cpu && s.sub == Sub::NONE) || s.act == Act::Launch;
    if let Some(l) = out.last_mut()
        && l.end == seg.start
    {
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

/// Segments: all classified spans collected and sorted, then the sweep.
pub fn segments(c: &Classifier, p: &Process, th: &Thread, lo: Ns, hi: Ns) -> Vec<Seg> {
    struct Mark {
        start: Ns,
        end: Ns,
        act: Act,
        sub: Sub,
        prio: u8,
        what: u32,
    }
    let mut marks: Vec<Mark> = Vec::new();
    for s in &th.spans {
        if s.ts >= hi {
            break;
        }
        if s.end() <= lo {
            continue;
        }
        if let Some((act, sub, prio)) = c.span_activity(p, s) {
            marks.push(Mark {
                start: s.ts.max(lo),
                end: s.end().min(hi),
                act,
                sub,
                prio,
                what: s.id,
            });
        }
    }
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
                for seg in unexplained(th, t, next_start) {
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
                push_merged(
                    &mut out,
                    Seg {
                        start: t,
                        end: until,
                        what: m.what,
                        launch_ns: 0,
                        own_ns: 0,
                        act: m.act,
                        sub: m.sub,
                    },
                );
                t = until;
            }
        }
    }
    super::saves::absorb(&mut out);
    super::activity::mark_queued(&mut out, &th.samples, super::whatif::BURST_GAP_NS);
    super::activity::mark_run_gaps(&mut out, &th.runs);
    out
}

fn unexplained(t: &Thread, a: Ns, b: Ns) -> Vec<Seg> {
    let cpu = Seg {
        start: a,
        end: b,
        what: 0,
        launch_ns: 0,
        own_ns: 0,
        act: Act::Cpu,
        sub: Sub::NONE,
    };
    if t.samples.len() < 2 {
        return vec![cpu];
    }
    let mut out = Vec::new();
    let i0 = t.samples.partition_point(|s| s.ts <= a);
    let mut start = a;
    for j in i0..=t.samples.len() {
        let end = if j < t.samples.len() {
            t.samples[j].ts.min(b)
        } else {
            b
        };
        if end > start {
            let (act, sub) = match (j.checked_sub(1).map(|k| &t.samples[k]), t.samples.get(j)) {
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
            };
            out.push(Seg {
                start,
                end,
                what: 0,
                launch_ns: 0,
                own_ns: 0,
                act,
                sub,
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

const LAUNCH_GAP_NS: Ns = 30_000;
const SYNC_SLACK_NS: Ns = 200_000;

fn union(mut v: Vec<(Ns, Ns)>) -> Vec<(Ns, Ns)> {
    v.retain(|&(a, b)| b > a);
    v.sort_unstable();
    let mut out: Vec<(Ns, Ns)> = Vec::new();
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

fn gaps(merged: &[(Ns, Ns)], lo: Ns, hi: Ns) -> Vec<(Ns, Ns)> {
    let mut out = Vec::new();
    let mut t = lo;
    for &(a, b) in merged {
        if b <= t {
            continue;
        }
        if a >= hi {
            break;
        }
        if a > t {
            out.push((t, a.min(hi)));
        }
        t = t.max(b);
        if t >= hi {
            break;
        }
    }
    if t < hi {
        out.push((t, hi));
    }
    out
}

fn overlap(merged: &[(Ns, Ns)], lo: Ns, hi: Ns) -> Ns {
    merged
        .iter()
        .map(|&(a, b)| b.min(hi) - a.max(lo))
        .filter(|&d| d > 0)
        .sum()
}

/// Busy time per precision class: per class, all intervals collected and
/// unioned.
pub fn busy_by_precision(g: &Gpu, cx: &Context, lo: Ns, hi: Ns) -> Vec<(Precision, Ns)> {
    let mut per: Vec<Vec<(Ns, Ns)>> = vec![Vec::new(); Precision::ALL.len() + 1];
    for s in &g.streams {
        for o in s.ops.iter().filter(|o| o.kind() == GpuOpKind::Kernel) {
            let (a, b) = (o.start.max(lo), o.end.min(hi));
            if b > a {
                per[cx.precision.of(o) as usize].push((a, b));
            }
        }
    }
    Precision::ALL
        .iter()
        .map(|&p| {
            let u = union(std::mem::take(&mut per[p as usize]));
            (p, u.iter().map(|&(a, b)| b - a).sum())
        })
        .collect()
}

/// Attribution: the union of all ops, every op sorted (stably, so ties go
/// to the first stream), segments searched per gap, pieces merged at the end.
pub fn attribute(cx: &Context, g: &Gpu, ev: &mut Evidence) -> (Vec<IdleGap>, [Ns; 8], Ns) {
    let (w0, w1) = cx.window;
    let busy = union(
        g.streams
            .iter()
            .flat_map(|s| s.ops.iter().map(|o| (o.start, o.end)))
            .collect(),
    );
    let busy_ns = overlap(&busy, w0, w1);
    let mut ops: Vec<&GpuOp> = g.streams.iter().flat_map(|s| s.ops.iter()).collect();
    ops.sort_by_key(|o| (o.start, o.end));
    let mut count: HashMap<ThreadRef, usize> = HashMap::new();
    for o in &ops {
        if let Some((r, _)) = cx.launch_of(o) {
            *count.entry(r).or_default() += 1;
        }
    }
    let launcher = count
        .into_iter()
        .max_by_key(|&(r, n)| (n, std::cmp::Reverse(r)))
        .map(|(r, _)| r);
    let mut pieces: Vec<IdleGap> = Vec::new();
    let waits = super::attribution::stream_waits(g);
    let stream_of = |o: &GpuOp| {
        g.streams
            .iter()
            .find(|s| s.ops.iter().any(|x| std::ptr::eq(x, o)))
            .map_or(0, |s| s.id)
    };
    for (a, b) in gaps(&busy, w0, w1) {
        let next = ops.get(ops.partition_point(|o| o.start < b)).copied();
        let next = next.map(|o| (o, stream_of(o)));
        attribute_gap(cx, a, b, next, launcher, &waits, ev, &mut pieces);
    }
    pieces.sort_by_key(|g| g.start);
    let mut out: Vec<IdleGap> = Vec::new();
    for g in pieces {
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
    let mut idle_by_cause = [0; 8];
    for gp in &out {
        idle_by_cause[gp.cause.index()] += gp.dur();
        *ev.by_label.entry((gp.cause, gp.sub)).or_default() += gp.dur();
    }
    (out, idle_by_cause, busy_ns)
}

#[allow(clippy::too_many_arguments)]
fn attribute_gap(
    cx: &Context,
    a: Ns,
    b: Ns,
    next: Option<(&GpuOp, u64)>,
    launcher: Option<ThreadRef>,
    waits: &[(Ns, u64)],
    ev: &mut Evidence,
    out: &mut Vec<IdleGap>,
) {
    let stream = next.map(|n| n.1);
    let next = next.map(|n| n.0);
    let launch = next.and_then(|o| cx.launch_of(o));
    let (who, l) = match (launch, launcher) {
        (Some((r, span)), _) => (r, span.ts.min(b)),
        (None, Some(r)) => (r, b),
        (None, None) => {
            push(out, ev, cx, a, b, Cause::Other, "unlinked", None, 0);
            return;
        }
    };
    let event_wait = |to: Ns| {
        stream.is_some_and(|st| {
            waits
                .iter()
                .any(|w| w.1 == st && w.0 >= a - SYNC_SLACK_NS && w.0 <= to)
        })
    };
    if l <= a {
        let mut from = a;
        if let Some((r, span)) = launch
            && span.end() > a
        {
            from = span.end().min(b);
            let (cause, sub) = launch_call_cause(cx, r, span);
            push(out, ev, cx, a, from, cause, sub, Some(who), 0);
        }
        if from < b {
            if let Some(st) = stream.filter(|&st| {
                waits
                    .iter()
                    .any(|w| w.1 == st && w.0 >= l - SYNC_SLACK_NS && w.0 <= l.max(a))
            }) {
                *ev.waited_streams.entry(st).or_default() += b - from;
            }
            push(
                out,
                ev,
                cx,
                from,
                b,
                Cause::Other,
                "dependency",
                Some(who),
                0,
            );
        }
        return;
    }
    let segs = cx.segments(who);
    if let Some(op) = next
        && b - a <= LAUNCH_GAP_NS
        && op.kind() == GpuOpKind::Kernel
        && op.dur() <= 2 * LAUNCH_GAP_NS
        && clip(&segs, a, l).all(|s| matches!(s.act, Act::Cpu | Act::Launch))
    {
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
    let i = segs.partition_point(|s| s.end <= a - SYNC_SLACK_NS);
    let drain = segs[i..]
        .iter()
        .take_while(|s| s.start < a + SYNC_SLACK_NS)
        .filter(|s| s.act == Act::Sync && s.end >= a - SYNC_SLACK_NS)
        .last()
        .map(|s| (s.sub.name(), (s.end - s.start.max(cx.window.0)).max(0)));
    let mut budget = drain.map_or(0, |d| d.1);
    let pieces: Vec<(Seg, bool)> = segs
        .iter()
        .filter(|s| s.end > a && s.start < l)
        .map(|s| (clip_one(s, a, l), is_host_work(s)))
        .collect();
    for (s, host_work) in pieces {
        let (cause, sub) = classify_piece(cx, who, &s, host_work, ev);
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
        let (cause, sub) = match launch {
            Some((r, span)) => launch_call_cause(cx, r, span),
            None => (Cause::Launch, "latency"),
        };
        let (cause, sub) = match (drained_by_sync, cause) {
            // A slow call (module loading, JIT) is the launch's own, sync
            // or not.
            (Some(s), Cause::Launch) if sub != "slow-call" => (Cause::Sync, s),
            (None, Cause::Launch) if sub == "latency" && event_wait(l) => {
                if let Some(st) = stream {
                    *ev.waited_streams.entry(st).or_default() += b - l;
                }
                (Cause::Other, "dependency")
            }
            _ => (cause, sub),
        };
        match held_after(launch.map(|x| x.1), l, b) {
            Some(h) if (cause, sub) == (Cause::Launch, "latency") => {
                push(out, ev, cx, l, h, cause, sub, Some(who), 0);
                push(out, ev, cx, h, b, Cause::Other, "dependency", Some(who), 0);
            }
            _ => push(out, ev, cx, l, b, cause, sub, Some(who), 0),
        }
    }
}

fn classify_piece(
    cx: &Context,
    who: ThreadRef,
    s: &Seg,
    host_work: bool,
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
                fs.unwrap_or(if s.sub == Sub::FAULT {
                    "page-faults"
                } else {
                    s.sub.name()
                }),
            )
        }
        Act::Data if s.sub == Sub::MAIN_PROCESS => (Cause::Data, "cpu"),
        Act::Data => (Cause::Data, data_sub(cx, who, s.start, s.end, ev)),
        Act::Memory => (Cause::Memory, s.sub.name()),
        Act::Sync => (Cause::Sync, s.sub.name()),
        Act::Transfer => (Cause::Transfer, s.sub.name()),
        Act::Launch => (Cause::Launch, "latency"),
        Act::Wait => (Cause::Other, "wait"),
        Act::Cpu => {
            let len = (s.end - s.start).max(1) as f64;
            let delayed = cx.run_delay_at(who, s.end) - cx.run_delay_at(who, s.start);
            let sub = if s.sub == Sub::GIL {
                "gil"
            } else if s.sub == Sub::SLEEP {
                "sleep"
            } else if s.sub == Sub::QUEUED {
                "contention"
            } else if host_work {
                "host-work"
            } else if delayed > 0.25 * len {
                "contention"
            } else {
                "python"
            };
            (Cause::Cpu, sub)
        }
    }
}

fn data_sub(cx: &Context, who: ThreadRef, x: Ns, y: Ns, ev: &mut Evidence) -> &'static str {
    if cx.tl.source == crate::model::Source::Kineto {
        return "workers";
    }
    let producers = cx.producers(who.0, who.1);
    if producers.is_empty() {
        return "starved";
    }
    let (mut cpu, mut io, mut cap, mut alive) = (0.0, 0.0, 0.0, 0);
    for &r in &producers {
        // Only while its process lived (workers of another epoch did not).
        let len = cx.alive_in(r, x, y) as f64;
        if len <= 0.0 {
            continue;
        }
        // The producer's whole segments, clipped.
        let io_here: Ns = clip(&cx.segments(r), x, y)
            .filter(|s| s.act == Act::Io)
            .map(|s| s.end - s.start)
            .sum();
        io += io_here as f64;
        // Running or waiting for a CPU.
        let ran = cx.cpu_at(r, y) - cx.cpu_at(r, x);
        let queued = cx.run_delay_at(r, y) - cx.run_delay_at(r, x);
        cpu += (ran + queued).clamp(0.0, len);
        cap += len;
        alive += 1;
    }
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

const SYNC_FLOOR_NS: Ns = 5_000;
const MAX_LATENCY_NS: Ns = 1_000_000;

struct OpInfo {
    stream: u32,
    orig_start: Ns,
    orig_end: Ns,
    dep: Option<usize>,
    anchor: Ns,
    latency: Ns,
    dur: Ns,
    corr: u32,
    precision: Precision,
    name: u32,
    /// A collective late with no other stream's op to explain it: its
    /// recorded start.
    pinned: Option<Ns>,
    /// Another op late with nothing in the trace to explain it: by how
    /// much after it was ready.
    extra: Ns,
    /// A communication kernel.
    comm: bool,
}

/// The replay with a table of all ops sorted by launch, and all segments of
/// the critical host timeline copied out.
pub struct Replay {
    streams: usize,
    segs: Vec<Seg>,
    ops: Vec<OpInfo>,
    window: (Ns, Ns),
}

impl Replay {
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
        let mut k = 0;
        while k < launches.len() {
            let r = launches[k].1;
            while k + 1 < launches.len() && launches[k + 1].1 == r {
                k += 1;
            }
            let t = launches[k].0;
            if t > from {
                segs.extend(clip(&cx.segments(r), from, t));
                from = t;
            }
            k += 1;
        }
        if from < w1 {
            segs.extend(clip(&cx.segments(launcher), from, w1));
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
                        let ts = super::whatif::launch_time(span, o.start);
                        let ready = ts.max(prev_end).max(w0);
                        (ts, (o.start - ready).clamp(0, MAX_LATENCY_NS))
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
                    name: o.name,
                    pinned: None,
                    extra: 0,
                    comm: o.kind() == GpuOpKind::Kernel && cx.precision.of(o) == Precision::Comm,
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

    /// How many ops wait on an op of another stream.
    pub fn dependencies(&self) -> usize {
        self.ops.iter().filter(|o| o.dep.is_some()).count()
    }

    pub fn run(&self, cx: &Context, change: &Change, marks: &[Ns]) -> (Vec<Ns>, Ns) {
        let (w0, w1) = self.window;
        let mut h = w0;
        let mut stream_free: Vec<Ns> = vec![w0; self.streams];
        let mut new_end: Vec<Ns> = vec![Ns::MIN; self.ops.len()];
        let mut done = w0;
        let mut out = Vec::with_capacity(marks.len());
        let (mut oi, mut mi) = (0, 0);
        let mut drain = false;
        let mut ready = Ns::MIN / 4;
        let mut batches_seen = 0u32;
        let mut last_data_end = Ns::MIN / 4;
        let ranges = (cx.tl.source == crate::model::Source::Kineto).then(|| {
            let mut lens: Vec<Ns> = (self.segs.iter())
                .filter(|s| s.act == Act::Data && s.sub == Sub::DATALOADER)
                .map(|s| s.end - s.start)
                .collect();
            lens.sort_unstable();
            lens.get(lens.len() / 2)
                .map_or(0, |&m| m.min(READY_COST_MAX_NS))
        });
        let comm = comm_transfer(cx, &self.ops);
        let mut schedule = |i: usize, at: Ns, done: &mut Ns| {
            let op = &self.ops[i];
            let free = stream_free[op.stream as usize];
            let after_dep = match (op.dep, op.pinned) {
                _ if change.drop_deps => Ns::MIN,
                (Some(d), _) => new_end[d],
                (None, Some(t)) => t,
                (None, None) => Ns::MIN,
            };
            let extra = if change.drop_deps { 0 } else { op.extra };
            let latency = if change.drop_deps {
                op.latency.min(FREE_LATENCY_NS)
            } else {
                op.latency
            };
            let start = (at + latency).max(free).max(after_dep) + extra;
            let wait = comm.get(&op.name).map_or(0, |&t| (op.dur - t).max(0));
            let attention = cx.precision.attention_part(op.name);
            let softmax = attention == AttnPart::Softmax;
            let speed = if change.keep_fp32_attention
                && op.precision == Precision::Fp32
                && attention == AttnPart::Fused
            {
                1.0
            } else {
                (change.speedup)(op.precision)
            };
            let dur = if change.drop_offload && cx.offload.contains(&op.corr) {
                0
            } else if change.drop_softmax && softmax {
                if change.comm_wait { wait } else { 0 }
            } else {
                ((op.dur - wait) as f64 / speed.max(1e-9)) as Ns
                    + if change.comm_wait { wait } else { 0 }
            };
            stream_free[op.stream as usize] = start + dur;
            new_end[i] = start + dur;
            *done = (*done).max(start + dur);
        };
        for s in &self.segs {
            let len = (s.end - s.start).max(1) as f64;
            let mut arrive = Ns::MIN;
            let new_batch = s.act == Act::Data && s.start > last_data_end + BATCH_RUN_GAP_NS;
            // A profiler's DataLoader range holds what a ready batch costs
            // (the median range, capped): waiting is what is past that.
            let floor = match ranges {
                None if s.sub == Sub::DATALOADER => Ns::MAX / 2,
                Some(ready) if s.sub == Sub::DATALOADER => ready,
                _ => 0,
            };
            let anchored = s.act == Act::Data
                && s.sub != Sub::MAIN_PROCESS
                && s.end - s.start > BATCH_WAITED_NS + floor;
            let waited = (s.act == Act::Data && s.sub == Sub::MAIN_PROCESS) || anchored;
            let batch_lane = waited && change.batches.is_some();
            let removed = change.remove.contains(&s.act)
                || batch_lane
                || (change.drop_host_work && is_host_work(s));
            let scale = if removed {
                if s.act == Act::Cpu && !change.remove.contains(&Act::Launch) {
                    s.launch_ns as f64 / len
                } else if s.act == Act::Io {
                    s.own_ns as f64 / len
                } else {
                    0.0
                }
            } else if s.act == Act::Cpu && change.remove.contains(&Act::Launch) {
                1.0 - s.launch_ns as f64 / len
            } else {
                1.0
            };
            let compress = if !removed && in_burst(s) {
                change.per_launch_ns
            } else {
                None
            };
            // Each gap between launches (or a launch and the segment's
            // edge) costs at most `per`.
            let squeeze = |gap: Ns, per: Ns| gap.min(per);
            if removed && s.act == Act::Sync {
                drain = true;
            } else if drain && !removed && matches!(s.act, Act::Io | Act::Data) {
                h = h.max(done);
                drain = false;
            }
            if let (true, Some(b)) = (new_batch, change.batches) {
                let cap = if s.sub == Sub::MAIN_PROCESS {
                    h + (s.end - s.start)
                } else {
                    h.max(s.end)
                };
                // The first batch within a period of the ask, or now if the
                // recording found it ready; later ones a period apart.
                ready = match batches_seen {
                    0 if batch_lane => (h + b.period_ns).min(cap),
                    0 => h,
                    _ => (ready + b.period_ns).max(h - b.queue as Ns * b.period_ns),
                };
                batches_seen += 1;
                // At the end of the wait: launches during it go out first.
                if batch_lane {
                    arrive = ready.min(cap);
                }
            }
            let seg_start_new = h;
            // Compression: the offset of the segment's last launch, and the
            // new time since its start.
            let (mut last_dt, mut cur) = (0, 0);
            loop {
                let next_op = self.ops.get(oi).map(|o| o.anchor).filter(|&t| t < s.end);
                let next_mark = marks.get(mi).copied().filter(|&t| t < s.end);
                match (next_op, next_mark) {
                    (Some(t), m) if m.is_none_or(|m| t < m) => {
                        let dt = (t - s.start).max(0);
                        let at = match compress {
                            Some(per) => {
                                cur += squeeze((dt - last_dt).max(0), per);
                                last_dt = last_dt.max(dt);
                                seg_start_new + cur
                            }
                            None => seg_start_new + (dt as f64 * scale) as Ns,
                        };
                        schedule(oi, at, &mut done);
                        drain = false;
                        oi += 1;
                    }
                    (_, Some(t)) => {
                        let dt = (t - s.start).max(0);
                        let at = match compress {
                            Some(per) => seg_start_new + cur + squeeze((dt - last_dt).max(0), per),
                            None => seg_start_new + (dt as f64 * scale) as Ns,
                        };
                        out.push(if mi + 1 == marks.len() {
                            done
                        } else {
                            at.max(done)
                        });
                        mi += 1;
                    }
                    _ => break,
                }
            }
            if s.act == Act::Data {
                last_data_end = s.end;
            }
            let left = if let Some(per) = compress {
                let len = (s.end - s.start).max(1);
                seg_start_new + cur + squeeze((len - last_dt).max(0), per)
            } else if s.act == Act::Sync && !removed {
                (h + SYNC_FLOOR_NS.min(s.end - s.start)).max(done)
            } else if anchored && !removed {
                h.max(s.end)
            } else {
                h + (len * scale) as Ns
            };
            h = left.max(arrive);
        }
        // Marks past the last segment come before the ops launched after
        // the window; the last one is when the GPU is done.
        while mi < marks.len() {
            out.push(if mi + 1 == marks.len() {
                done
            } else {
                h.max(done)
            });
            mi += 1;
        }
        for i in oi..self.ops.len() {
            let at = h + (self.ops[i].anchor - w1).max(0);
            schedule(i, at, &mut done);
        }
        (out, h.max(done))
    }
}

/// Transfer time per communication kernel name: the 10th percentile
/// (nearest rank) of its in-window durations, for names with two or more
/// that differ, when it is not zero.
fn comm_transfer(cx: &Context, ops: &[OpInfo]) -> HashMap<u32, Ns> {
    let mut by_name: HashMap<u32, Vec<Ns>> = HashMap::new();
    for o in ops.iter().filter(|o| o.comm) {
        by_name.entry(o.name).or_default().push(o.dur);
    }
    let _ = cx;
    by_name
        .into_iter()
        .filter_map(|(name, mut d)| {
            d.sort_unstable();
            let rank = ((0.1 * d.len() as f64).ceil() as usize).clamp(1, d.len());
            let fast = d[rank - 1];
            (d.len() >= 2 && d[d.len() - 1] != fast && fast > 0).then_some((name, fast))
        })
        .collect()
}

/// Streams are visited in order (a BTreeMap, not the hash map this once
/// was, whose order made ties between equally close ops random).
fn find_dependencies(ops: &mut [OpInfo]) {
    const EPS: Ns = 50_000;
    let mut by_stream: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
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
            if best.is_none() && ops[b].comm {
                ops[b].pinned = Some(ops[b].orig_start);
            } else if best.is_none() {
                ops[b].extra = ops[b].orig_start - own_ready;
            }
        }
    }
}
