//! The k-way merge: every track's source yields events in time order, and a
//! heap of the sources' next timestamps interleaves them into one time-ordered
//! stream. Memory is the heap plus each source's open slices, whatever the
//! trace's length. Ties go to the source made first, so output is deterministic.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;

use super::Cx;
use super::counters::{self, CounterSrc};
use super::proto::TYPE_INSTANT;
use super::slices::{List, Order, SliceSrc};
use super::tracks::{Layout, thread_label};
use super::writer::PacketWriter;

pub(super) enum Source {
    Slices(SliceSrc),
    Counter(CounterSrc),
    Ooms(OomSrc),
}

/// Every source of the timeline, in a fixed order: threads, then per GPU its
/// idle gaps and streams, then steps, counters and OOM marks.
pub(super) fn sources(cx: &Cx, layout: &mut Layout) -> Vec<Source> {
    let mut out = vec![];
    for (p, proc) in cx.tl.processes.iter().enumerate() {
        for t in 0..proc.threads.len() {
            let label = thread_label(cx.tl, p, t);
            let uuid = layout.threads[p][t];
            out.push(SliceSrc::new(cx, List::Spans { p, t }, uuid, label));
        }
    }
    let mut first_op = 0u64;
    let first_ops: Vec<u64> = cx
        .tl
        .gpus
        .iter()
        .map(|g| {
            let at = first_op;
            first_op += g.op_count() as u64;
            at
        })
        .collect();
    for gt in &layout.gpus {
        if let (Some(d), Some(uuid)) = (gt.device, gt.idle) {
            out.push(SliceSrc::new(cx, List::Gaps { d }, uuid, "idle".into()));
        }
        let Some(g) = gt.gpu else { continue };
        let mut first_op = first_ops[g];
        for (s, &uuid) in gt.streams.iter().enumerate() {
            let stream = &cx.tl.gpus[g].streams[s];
            let list = List::Ops { g, s, first_op };
            out.push(SliceSrc::new(
                cx,
                list,
                uuid,
                format!("stream {}", stream.id),
            ));
            first_op += stream.ops.len() as u64;
        }
    }
    if let Some(uuid) = layout.steps {
        out.push(SliceSrc::new(cx, List::Steps, uuid, "steps".into()));
    }
    let mut out: Vec<Source> = out.into_iter().map(Source::Slices).collect();
    out.extend(counters::build(cx, layout).into_iter().map(Source::Counter));
    if !cx.tl.ooms.is_empty() {
        out.push(Source::Ooms(OomSrc {
            order: Order::new(cx.tl.ooms.len(), |i| cx.tl.ooms[i].ts),
            next: 0,
        }));
    }
    out
}

pub(super) fn run(
    cx: &Cx,
    w: &mut PacketWriter,
    layout: &mut Layout,
    sources: &mut [Source],
) -> io::Result<()> {
    let mut heap: BinaryHeap<Reverse<(i64, usize)>> = sources
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.peek(cx).map(|ts| Reverse((ts, i))))
        .collect();
    while let Some(Reverse((_, i))) = heap.pop() {
        sources[i].step(cx, w, layout)?;
        if let Some(ts) = sources[i].peek(cx) {
            heap.push(Reverse((ts, i)));
        }
    }
    Ok(())
}

impl Source {
    pub fn peek(&self, cx: &Cx) -> Option<i64> {
        match self {
            Source::Slices(s) => s.peek(cx),
            Source::Counter(c) => c.peek(cx),
            Source::Ooms(o) => o.peek(cx),
        }
    }

    /// Model items this source will write (for progress).
    pub fn units(&self, cx: &Cx) -> u64 {
        match self {
            Source::Slices(s) => s.units(),
            Source::Counter(c) => c.units(cx),
            Source::Ooms(_) => cx.tl.ooms.len() as u64,
        }
    }

    fn step(&mut self, cx: &Cx, w: &mut PacketWriter, layout: &mut Layout) -> io::Result<()> {
        match self {
            Source::Slices(s) => s.step(cx, w, layout),
            Source::Counter(c) => c.step(cx, w),
            Source::Ooms(o) => o.step(cx, w, layout),
        }
    }
}

/// Failed allocations, as instants on the thread that asked (else its process).
pub(super) struct OomSrc {
    order: Order,
    next: usize,
}

impl OomSrc {
    fn peek(&self, cx: &Cx) -> Option<i64> {
        (self.next < cx.tl.ooms.len()).then(|| cx.tl.ooms[self.order.at(self.next)].ts)
    }

    fn step(&mut self, cx: &Cx, w: &mut PacketWriter, layout: &Layout) -> io::Result<()> {
        let oom = &cx.tl.ooms[self.order.at(self.next)];
        self.next += 1;
        w.advance(1);
        let procs = cx
            .tl
            .processes
            .iter()
            .enumerate()
            .filter(|(_, p)| p.pid == oom.pid);
        let mut track = None;
        for (pi, p) in procs {
            match p.threads.iter().position(|t| t.tid == oom.tid) {
                Some(ti) => {
                    track = Some(layout.threads[pi][ti]);
                    break;
                }
                None => track = track.or(Some(layout.processes[pi])),
            }
        }
        let Some(uuid) = track else {
            return Ok(());
        };
        let name = w.intern.name_text("OOM");
        w.start(TYPE_INSTANT, uuid, name, "memory");
        w.arg_uint("requested", oom.requested);
        w.arg_uint("free", oom.free);
        w.arg_uint("total", oom.total);
        if !oom.api.is_empty() {
            w.arg_text("api", &oom.api);
        }
        w.stats.instants += 1;
        w.emit(oom.ts)
    }
}
