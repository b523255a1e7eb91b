//! Slice sources: one per track that carries slices (a thread, a GPU stream,
//! a GPU's idle gaps, the steps). Each turns its list of intervals into BEGIN
//! and END events in time order, so that every BEGIN has its END on the same
//! track and slices nest properly.
//!
//! Host spans may nest (annotations around ops), but imported traces also hold
//! spans that overlap without nesting. Clamping them would hide time, so such a
//! span moves to an extra "overlap" lane track instead. GPU ops, gaps and steps
//! never nest: an op that overlaps another on its stream also goes to a lane.

use std::cmp::Reverse;
use std::io;

use super::tracks::Layout;
use super::writer::PacketWriter;
use super::{Cx, render};

/// The order in which to visit a model list: as is when already sorted (the
/// normal case after `Timeline::finalize`), else a sorted permutation.
pub(super) enum Order {
    Ident,
    Perm(Vec<u32>),
}

impl Order {
    pub fn new<K: Ord>(len: usize, key: impl Fn(usize) -> K) -> Order {
        if (1..len).all(|i| key(i - 1) <= key(i)) {
            return Order::Ident;
        }
        let mut perm: Vec<u32> = (0..len as u32).collect();
        perm.sort_by_key(|&i| key(i as usize));
        Order::Perm(perm)
    }

    pub fn at(&self, k: usize) -> usize {
        match self {
            Order::Ident => k,
            Order::Perm(p) => p[k] as usize,
        }
    }
}

/// Which model list a slice source walks.
#[derive(Clone, Copy)]
pub(super) enum List {
    /// `processes[p].threads[t].spans`.
    Spans { p: usize, t: usize },
    /// `gpus[g].streams[s].ops`; `first_op` is the global ordinal of op 0
    /// (flow ids are op ordinals).
    Ops { g: usize, s: usize, first_op: u64 },
    /// `diag.devices[d].gaps`.
    Gaps { d: usize },
    /// `diag.steps.steps`.
    Steps,
}

impl List {
    fn len(self, cx: &Cx) -> usize {
        match self {
            List::Spans { p, t } => cx.tl.processes[p].threads[t].spans.len(),
            List::Ops { g, s, .. } => cx.tl.gpus[g].streams[s].ops.len(),
            List::Gaps { d } => cx.diag.map_or(0, |x| x.devices[d].gaps.len()),
            List::Steps => cx.diag.map_or(0, |x| x.steps.steps.len()),
        }
    }

    /// Start and end of item `i`; a negative duration reads as zero.
    pub fn bounds(self, cx: &Cx, i: usize) -> (i64, i64) {
        let (s, e) = match self {
            List::Spans { p, t } => {
                let sp = &cx.tl.processes[p].threads[t].spans[i];
                (sp.ts, sp.ts.saturating_add(sp.dur))
            }
            List::Ops { g, s, .. } => {
                let op = &cx.tl.gpus[g].streams[s].ops[i];
                (op.start, op.end)
            }
            List::Gaps { d } => cx.diag.map_or((0, 0), |x| {
                (x.devices[d].gaps[i].start, x.devices[d].gaps[i].end)
            }),
            List::Steps => cx
                .diag
                .map_or((0, 0), |x| (x.steps.steps[i].start, x.steps.steps[i].end)),
        };
        (s, e.max(s))
    }
}

struct Lane {
    uuid: u64,
    /// Open slices (start, end), innermost last.
    open: Vec<(i64, i64)>,
}

pub(super) struct SliceSrc {
    list: List,
    order: Order,
    next: usize,
    len: usize,
    nest: bool,
    base: u64,
    /// Names the extra lanes: "<label> (overlap N)".
    label: String,
    lanes: Vec<Lane>,
}

impl SliceSrc {
    pub fn new(cx: &Cx, list: List, uuid: u64, label: String) -> SliceSrc {
        let len = list.len(cx);
        let nest = matches!(list, List::Spans { .. });
        // Outer spans first when two start together, as Timeline::finalize does.
        let order = if nest {
            Order::new(len, |i| {
                let (s, e) = list.bounds(cx, i);
                (s, Reverse(e))
            })
        } else {
            Order::new(len, |i| list.bounds(cx, i))
        };
        SliceSrc {
            list,
            order,
            next: 0,
            len,
            nest,
            base: uuid,
            label,
            lanes: vec![Lane { uuid, open: vec![] }],
        }
    }

    pub fn units(&self) -> u64 {
        self.len as u64
    }

    fn next_begin(&self, cx: &Cx) -> Option<(usize, i64, i64)> {
        (self.next < self.len).then(|| {
            let i = self.order.at(self.next);
            let (s, e) = self.list.bounds(cx, i);
            (i, s, e)
        })
    }

    /// The open slice that ends first: (end, lane).
    fn next_end(&self) -> Option<(i64, usize)> {
        self.lanes
            .iter()
            .enumerate()
            .filter_map(|(li, l)| l.open.last().map(|&(_, e)| (e, li)))
            .min()
    }

    pub fn peek(&self, cx: &Cx) -> Option<i64> {
        let b = self.next_begin(cx).map(|(_, s, _)| s);
        let e = self.next_end().map(|(e, _)| e);
        match (b, e) {
            (Some(b), Some(e)) => Some(b.min(e)),
            (b, e) => b.or(e),
        }
    }

    /// Writes the next event: an END when one is due no later than the next
    /// BEGIN (so back-to-back slices stay siblings), else the next BEGIN.
    pub fn step(&mut self, cx: &Cx, w: &mut PacketWriter, layout: &mut Layout) -> io::Result<()> {
        let begin = self.next_begin(cx);
        if let Some((end, li)) = self.next_end()
            && begin.is_none_or(|(_, s, _)| end <= s)
        {
            self.lanes[li].open.pop();
            return w.end(end, self.lanes[li].uuid);
        }
        let Some((i, s, e)) = begin else {
            return Ok(());
        };
        self.next += 1;
        let li = self.pick_lane(s, e, w, layout)?;
        self.lanes[li].open.push((s, e));
        render::begin(cx, w, self.list, i, self.lanes[li].uuid, s)?;
        w.advance(1);
        Ok(())
    }

    /// Innermost open slice that contains [s, e] (when nesting is allowed),
    /// else the first idle lane, else a new lane.
    fn pick_lane(
        &mut self,
        s: i64,
        e: i64,
        w: &mut PacketWriter,
        layout: &mut Layout,
    ) -> io::Result<usize> {
        if self.nest {
            let inner = self
                .lanes
                .iter()
                .enumerate()
                .filter_map(|(li, l)| l.open.last().map(|&(ps, pe)| (ps, pe, li)))
                .filter(|&(ps, pe, _)| ps <= s && e <= pe)
                .max_by_key(|&(ps, _, li)| (ps, Reverse(li)));
            if let Some((_, _, li)) = inner {
                return Ok(li);
            }
        }
        if let Some(li) = self.lanes.iter().position(|l| l.open.is_empty()) {
            return Ok(li);
        }
        let n = self.lanes.len();
        let (uuid, desc) = layout.lane(self.base, format!("{} (overlap {n})", self.label));
        w.descriptor(desc)?;
        w.stats.lanes += 1;
        self.lanes.push(Lane { uuid, open: vec![] });
        Ok(n)
    }
}
