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
use std::collections::{BTreeMap, BinaryHeap};
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

/// Lanes and their open slices, indexed so that an event costs O(log n)
/// whatever the number of lanes: ops that start together on one stream each
/// need a lane, and scanning the lanes per event was quadratic (issue 14: 40k
/// kernels with one timestamp took 10-14 s). The nesting lookup of host spans
/// scans while there are few lanes (the usual case, and the cheapest); past
/// `SCAN_LANES` it walks an index from the latest-started lane down to the
/// first fit.
struct Lanes {
    lanes: Vec<Lane>,
    /// (end, lane) of every open slice. Within a lane, slices nest, so the
    /// smallest entry of a lane is its innermost slice's.
    ends: BinaryHeap<Reverse<(i64, usize)>>,
    /// Lanes that were idle when pushed; an entry whose lane has become busy
    /// again is dropped when it reaches the top. `queued` keeps one entry per
    /// lane.
    idle: BinaryHeap<Reverse<usize>>,
    queued: Vec<bool>,
    /// With nesting and many lanes: the innermost open slice of each busy
    /// lane, by (start, Reverse(lane)) -> end.
    tops: Option<BTreeMap<(i64, Reverse<usize>), i64>>,
    nest: bool,
}

/// Up to this many lanes, the nesting lookup scans them.
const SCAN_LANES: usize = 8;

impl Lanes {
    fn new(uuid: u64, nest: bool) -> Lanes {
        Lanes {
            lanes: vec![Lane { uuid, open: vec![] }],
            ends: BinaryHeap::new(),
            idle: BinaryHeap::from([Reverse(0)]),
            queued: vec![true],
            tops: None,
            nest,
        }
    }

    /// The open slice that ends first: (end, lane).
    fn next_end(&self) -> Option<(i64, usize)> {
        self.ends.peek().map(|&Reverse(x)| x)
    }

    fn set_top(&mut self, li: usize) {
        if let (Some(t), Some(&(s, e))) = (&mut self.tops, self.lanes[li].open.last()) {
            t.insert((s, Reverse(li)), e);
        }
    }

    fn clear_top(&mut self, li: usize) {
        if let (Some(t), Some(&(s, _))) = (&mut self.tops, self.lanes[li].open.last()) {
            t.remove(&(s, Reverse(li)));
        }
    }

    /// Closes the slice that ends first; returns (end, lane).
    fn pop(&mut self) -> Option<(i64, usize)> {
        let Reverse((end, li)) = self.ends.pop()?;
        self.clear_top(li);
        self.lanes[li].open.pop();
        if self.lanes[li].open.is_empty() {
            if !self.queued[li] {
                self.queued[li] = true;
                self.idle.push(Reverse(li));
            }
        } else {
            self.set_top(li);
        }
        Some((end, li))
    }

    fn push(&mut self, li: usize, s: i64, e: i64) {
        self.clear_top(li);
        self.lanes[li].open.push((s, e));
        self.set_top(li);
        self.ends.push(Reverse((e, li)));
    }

    /// Innermost open slice that contains [s, e] (when nesting is allowed),
    /// else the first idle lane; None when a new lane is needed.
    fn choose(&mut self, nest: bool, s: i64, e: i64) -> Option<usize> {
        if nest && let Some(li) = self.containing(s, e) {
            return Some(li);
        }
        while let Some(&Reverse(li)) = self.idle.peek() {
            if self.lanes[li].open.is_empty() {
                return Some(li);
            }
            self.idle.pop();
            self.queued[li] = false;
        }
        None
    }

    /// Makes an idle lane (the caller has written its descriptor).
    fn add(&mut self, uuid: u64) -> usize {
        let li = self.lanes.len();
        self.lanes.push(Lane { uuid, open: vec![] });
        self.queued.push(true);
        self.idle.push(Reverse(li));
        if self.nest && self.tops.is_none() && self.lanes.len() > SCAN_LANES {
            let mut t = BTreeMap::new();
            for (li, l) in self.lanes.iter().enumerate() {
                if let Some(&(s, e)) = l.open.last() {
                    t.insert((s, Reverse(li)), e);
                }
            }
            self.tops = Some(t);
        }
        li
    }

    /// The lane whose innermost slice contains [s, e] and started last (the
    /// lowest such lane on a tie). Every open slice started at or before `s`
    /// (begins come in start order), so the walk stops at the first fit.
    fn containing(&self, s: i64, e: i64) -> Option<usize> {
        match &self.tops {
            Some(t) => t
                .range(..=(s, Reverse(0)))
                .rev()
                .find(|&(_, &pe)| e <= pe)
                .map(|(&(_, Reverse(li)), _)| li),
            None => self
                .lanes
                .iter()
                .enumerate()
                .filter_map(|(li, l)| l.open.last().map(|&(ps, pe)| (ps, pe, li)))
                .filter(|&(ps, pe, _)| ps <= s && e <= pe)
                .max_by_key(|&(ps, _, li)| (ps, Reverse(li)))
                .map(|(_, _, li)| li),
        }
    }
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
    lanes: Lanes,
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
            lanes: Lanes::new(uuid, nest),
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

    pub fn peek(&self, cx: &Cx) -> Option<i64> {
        let b = self.next_begin(cx).map(|(_, s, _)| s);
        let e = self.lanes.next_end().map(|(e, _)| e);
        match (b, e) {
            (Some(b), Some(e)) => Some(b.min(e)),
            (b, e) => b.or(e),
        }
    }

    /// Writes the next event: an END when one is due no later than the next
    /// BEGIN (so back-to-back slices stay siblings), else the next BEGIN.
    pub fn step(&mut self, cx: &Cx, w: &mut PacketWriter, layout: &mut Layout) -> io::Result<()> {
        let begin = self.next_begin(cx);
        if let Some((end, _)) = self.lanes.next_end()
            && begin.is_none_or(|(_, s, _)| end <= s)
            && let Some((end, li)) = self.lanes.pop()
        {
            return w.end(end, self.lanes.lanes[li].uuid);
        }
        let Some((i, s, e)) = begin else {
            return Ok(());
        };
        self.next += 1;
        let li = self.pick_lane(s, e, w, layout)?;
        self.lanes.push(li, s, e);
        render::begin(cx, w, self.list, i, self.lanes.lanes[li].uuid, s)?;
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
        if let Some(li) = self.lanes.choose(self.nest, s, e) {
            return Ok(li);
        }
        let n = self.lanes.lanes.len();
        let (uuid, desc) = layout.lane(self.base, format!("{} (overlap {n})", self.label));
        w.descriptor(desc)?;
        w.stats.lanes += 1;
        Ok(self.lanes.add(uuid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The lane choice before the index: a scan over every lane per event.
    struct Scan(Vec<Vec<(i64, i64)>>);

    impl Scan {
        fn next_end(&self) -> Option<(i64, usize)> {
            self.0
                .iter()
                .enumerate()
                .filter_map(|(li, l)| l.last().map(|&(_, e)| (e, li)))
                .min()
        }

        fn choose(&self, nest: bool, s: i64, e: i64) -> Option<usize> {
            if nest {
                let inner = self
                    .0
                    .iter()
                    .enumerate()
                    .filter_map(|(li, l)| l.last().map(|&(ps, pe)| (ps, pe, li)))
                    .filter(|&(ps, pe, _)| ps <= s && e <= pe)
                    .max_by_key(|&(ps, _, li)| (ps, Reverse(li)));
                if let Some((_, _, li)) = inner {
                    return Some(li);
                }
            }
            self.0.iter().position(|l| l.is_empty())
        }
    }

    /// Plays the slice source's event loop on both and compares every step.
    fn same_choices(mut items: Vec<(i64, i64)>, nest: bool) -> Result<usize, TestCaseError> {
        if nest {
            items.sort_by_key(|&(s, e)| (s, Reverse(e)));
        } else {
            items.sort();
        }
        let mut fast = Lanes::new(0, nest);
        let mut scan = Scan(vec![vec![]]);
        let mut next = 0;
        loop {
            let end = fast.next_end();
            prop_assert_eq!(end, scan.next_end());
            let begin = items.get(next).copied();
            if let Some((e, _)) = end
                && begin.is_none_or(|(s, _)| e <= s)
            {
                let (_, li) = fast.pop().expect("an open slice");
                prop_assert_eq!(scan.0[li].pop().map(|x| x.1), Some(e));
                continue;
            }
            let Some((s, e)) = begin else { break };
            next += 1;
            let li = fast.choose(nest, s, e);
            prop_assert_eq!(li, scan.choose(nest, s, e));
            let li = li.unwrap_or_else(|| {
                scan.0.push(vec![]);
                fast.add(0)
            });
            fast.push(li, s, e);
            scan.0[li].push((s, e));
        }
        Ok(fast.lanes.len())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// The indexed lanes make the choices the scan made, with nesting
        /// (host spans) and without (GPU ops), on crowded timestamps.
        #[test]
        fn indexed_lanes_choose_as_the_scan_did(
            items in proptest::collection::vec((0i64..40, 0i64..25), 0..300),
            nest in any::<bool>(),
        ) {
            let items = items.into_iter().map(|(s, d)| (s, s + d)).collect();
            same_choices(items, nest)?;
        }
    }

    /// Ops that all start and end together each get a lane; zero-length ones
    /// at the same instant share one.
    #[test]
    fn equal_timestamps_get_one_lane_each() {
        let lanes = same_choices(vec![(5, 9); 3000], false).expect("same choices");
        assert_eq!(lanes, 3000);
        let lanes = same_choices(vec![(5, 5); 3000], false).expect("same choices");
        assert_eq!(lanes, 1);
        // With nesting, equal spans nest in one lane.
        let lanes = same_choices(vec![(5, 9); 3000], true).expect("same choices");
        assert_eq!(lanes, 1);
    }
}
