//! Counter tracks: GPU busy % and allocated device memory per GPU, file-read
//! MB/s per process, CPU % and major faults/s per sampled thread.
//!
//! Rates over many events (busy %, MB/s) are binned over the timeline's extent
//! with an adaptive width (about `TARGET_BINS` bins, a 1-2-5 multiple, at least
//! `MIN_BIN_NS`), so their memory is bounded by the bin count, not the trace.
//! Sample-based counters are one point per sampling interval. Every counter
//! writes a point only when its value changes.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::io;

use stallscope_format::{FdClass, HostOp};

use super::Cx;
use super::slices::Order;
use super::tracks::{Layout, RANK_BUSY, RANK_MEMORY, Unit, thread_label};
use super::writer::PacketWriter;
use crate::model::{Gpu, MemEvent, Process, SpanKind, Timeline};

const TARGET_BINS: i64 = 4000;
const MIN_BIN_NS: i64 = 10_000;

/// Bins over [lo, hi].
#[derive(Clone, Copy)]
pub(super) struct BinSpec {
    lo: i64,
    hi: i64,
    width: i64,
    count: usize,
}

impl BinSpec {
    pub fn new(lo: i64, hi: i64) -> BinSpec {
        let span = hi.saturating_sub(lo).max(0);
        // A 1-2-5 multiple of a power of ten: readable bin widths in the UI.
        let raw = (span / TARGET_BINS).max(MIN_BIN_NS);
        let width = (0..18)
            .map(|e| 10i64.pow(e))
            .flat_map(|m| [m, 2 * m, 5 * m])
            .find(|&v| v >= raw)
            .unwrap_or(raw);
        let count = (span / width + 1).clamp(1, TARGET_BINS * 10) as usize;
        BinSpec {
            lo,
            hi,
            width,
            count,
        }
    }

    fn bin(&self, t: i64) -> usize {
        (t.saturating_sub(self.lo).max(0) / self.width).min(self.count as i64 - 1) as usize
    }

    fn start(&self, b: usize) -> i64 {
        self.lo.saturating_add(self.width.saturating_mul(b as i64))
    }

    /// Length of bin `b` inside [lo, hi] (the last one is partial); at least 1.
    fn len(&self, b: usize) -> i64 {
        let s = self.start(b);
        self.width.min(self.hi.saturating_sub(s)).max(1)
    }

    /// Adds `total` spread evenly over [s, e) to the bins; an empty interval
    /// puts it all in the bin of `s`.
    fn spread(&self, acc: &mut [f64], s: i64, e: i64, total: f64) {
        if e <= s {
            acc[self.bin(s)] += total;
            return;
        }
        let dur = e.saturating_sub(s) as f64;
        for (b, slot) in acc.iter_mut().enumerate().skip(self.bin(s)) {
            let bs = self.start(b);
            let be = bs.saturating_add(self.width);
            let overlap = e.min(be).saturating_sub(s.max(bs));
            if overlap > 0 {
                *slot += total * overlap as f64 / dur;
            }
            if be >= e {
                break;
            }
        }
    }
}

pub(super) enum CounterSrc {
    Bins {
        uuid: u64,
        spec: BinSpec,
        values: Vec<f64>,
        next: usize,
        last: Option<f64>,
    },
    Samples {
        uuid: u64,
        p: usize,
        t: usize,
        faults: bool,
        order: Order,
        /// The next interval ends at sample `k` (1-based); `k == n` writes
        /// the closing 0.
        k: usize,
    },
    Memory {
        uuid: u64,
        g: usize,
        order: Order,
        next: usize,
        value: i64,
        live: HashMap<u64, u64>,
        last: Option<i64>,
    },
}

/// Makes the counter tracks (descriptors go to `layout`) and their sources.
pub(super) fn build(cx: &Cx, layout: &mut Layout) -> Vec<CounterSrc> {
    let mut out = vec![];
    let spec = extent(cx.tl).map(|(lo, hi)| BinSpec::new(lo, hi));
    for gi in 0..layout.gpus.len() {
        let (group, gpu) = (layout.gpus[gi].group, layout.gpus[gi].gpu);
        let Some(g) = gpu else { continue };
        let dev = &cx.tl.gpus[g];
        if let Some(spec) = spec.filter(|_| dev.op_count() > 0) {
            let uuid = layout.counter(group, "busy %".into(), Unit::Named("%"), Some(RANK_BUSY));
            let mut values = busy_ns(dev, spec);
            for (b, v) in values.iter_mut().enumerate() {
                *v = 100.0 * *v / spec.len(b) as f64;
            }
            out.push(bins(uuid, spec, values));
        }
        if !dev.memory.is_empty() {
            let uuid = layout.counter(group, "allocated".into(), Unit::Bytes, Some(RANK_MEMORY));
            let order = Order::new(dev.memory.len(), |i| dev.memory[i].ts);
            let value = memory_baseline(&dev.memory, &order);
            out.push(CounterSrc::Memory {
                uuid,
                g,
                order,
                next: 0,
                value,
                live: HashMap::new(),
                last: None,
            });
        }
    }
    for (pi, p) in cx.tl.processes.iter().enumerate() {
        if let Some(spec) = spec {
            let mut values = vec![0.0; spec.count];
            if read_bytes(p, spec, &mut values) {
                for (b, v) in values.iter_mut().enumerate() {
                    *v = *v / 1e6 / (spec.len(b) as f64 / 1e9);
                }
                let uuid = layout.counter(
                    layout.processes[pi],
                    "file reads MB/s".into(),
                    Unit::Named("MB/s"),
                    None,
                );
                out.push(bins(uuid, spec, values));
            }
        }
        for (ti, t) in p.threads.iter().enumerate() {
            if t.samples.len() < 2 {
                continue;
            }
            let parent = layout.threads[pi][ti];
            let label = thread_label(cx.tl, pi, ti);
            let sample_src = |uuid, faults| CounterSrc::Samples {
                uuid,
                p: pi,
                t: ti,
                faults,
                order: Order::new(t.samples.len(), |i| t.samples[i].ts),
                k: 1,
            };
            let uuid = layout.counter(parent, format!("{label} CPU %"), Unit::Named("%"), None);
            out.push(sample_src(uuid, false));
            let faults =
                t.samples.iter().map(|s| s.majflt).max() > t.samples.iter().map(|s| s.majflt).min();
            if faults {
                let name = format!("{label} major faults/s");
                let uuid = layout.counter(parent, name, Unit::Named("faults/s"), None);
                out.push(sample_src(uuid, true));
            }
        }
    }
    out
}

/// Like `Timeline::extent`, but saturating: odd imported times must not panic.
fn extent(tl: &Timeline) -> Option<(i64, i64)> {
    let mut lo = i64::MAX;
    let mut hi = i64::MIN;
    let mut add = |s: i64, e: i64| {
        lo = lo.min(s);
        hi = hi.max(e.max(s));
    };
    for t in tl.processes.iter().flat_map(|p| &p.threads) {
        t.spans
            .iter()
            .for_each(|s| add(s.ts, s.ts.saturating_add(s.dur)));
        t.samples.iter().for_each(|s| add(s.ts, s.ts));
    }
    for o in tl.gpus.iter().flat_map(|g| &g.streams).flat_map(|s| &s.ops) {
        add(o.start, o.end);
    }
    (lo <= hi).then_some((lo, hi))
}

fn bins(uuid: u64, spec: BinSpec, values: Vec<f64>) -> CounterSrc {
    CounterSrc::Bins {
        uuid,
        spec,
        values,
        next: 0,
        last: None,
    }
}

/// Busy ns per bin: the union of all streams' ops (overlapping ops on two
/// streams count once), merged by start time.
fn busy_ns(g: &Gpu, spec: BinSpec) -> Vec<f64> {
    let mut acc = vec![0.0; spec.count];
    let orders: Vec<Order> = g
        .streams
        .iter()
        .map(|s| Order::new(s.ops.len(), |i| s.ops[i].start))
        .collect();
    let bounds = |si: usize, k: usize| {
        let op = &g.streams[si].ops[orders[si].at(k)];
        (op.start, op.end.max(op.start))
    };
    let mut heap = BinaryHeap::new();
    for (si, s) in g.streams.iter().enumerate() {
        if !s.ops.is_empty() {
            heap.push(Reverse((bounds(si, 0).0, si, 0usize)));
        }
    }
    let mut cur: Option<(i64, i64)> = None;
    while let Some(Reverse((_, si, k))) = heap.pop() {
        let (s, e) = bounds(si, k);
        if k + 1 < g.streams[si].ops.len() {
            heap.push(Reverse((bounds(si, k + 1).0, si, k + 1)));
        }
        cur = match cur {
            Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                spec.spread(&mut acc, cs, ce, ce.saturating_sub(cs) as f64);
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    if let Some((cs, ce)) = cur {
        spec.spread(&mut acc, cs, ce, ce.saturating_sub(cs) as f64);
    }
    acc
}

/// Bytes of regular-file reads per bin; false when there are none.
fn read_bytes(p: &Process, spec: BinSpec, acc: &mut [f64]) -> bool {
    let mut any = false;
    for t in &p.threads {
        for sp in &t.spans {
            let SpanKind::Host(op) = sp.kind else {
                continue;
            };
            if !op.is_read() || op == HostOp::Recv || sp.arg == 0 {
                continue;
            }
            let class = p.object(sp.id).map(|o| o.class);
            if class.is_some_and(|c| c == FdClass::Pipe || c.is_socket()) {
                continue;
            }
            any = true;
            spec.spread(
                acc,
                sp.ts,
                sp.ts.saturating_add(sp.dur.max(0)),
                sp.arg as f64,
            );
        }
    }
    any
}

/// Applies one alloc/free; a free without a size takes its allocation's.
fn apply(ev: &MemEvent, live: &mut HashMap<u64, u64>, value: i64) -> i64 {
    if ev.alloc {
        live.insert(ev.address, ev.bytes);
        value.saturating_add(i64::try_from(ev.bytes).unwrap_or(i64::MAX))
    } else {
        let known = live.remove(&ev.address).unwrap_or(0);
        let bytes = if ev.bytes > 0 { ev.bytes } else { known };
        value.saturating_sub(i64::try_from(bytes).unwrap_or(i64::MAX))
    }
}

/// Memory allocated before the trace began: frees of unseen allocations would
/// take the running total below 0, so start it high enough to stay at >= 0.
fn memory_baseline(events: &[MemEvent], order: &Order) -> i64 {
    let mut live = HashMap::new();
    let (mut value, mut min) = (0i64, 0i64);
    for k in 0..events.len() {
        value = apply(&events[order.at(k)], &mut live, value);
        min = min.min(value);
    }
    min.saturating_neg()
}

impl CounterSrc {
    pub fn units(&self, cx: &Cx) -> u64 {
        match self {
            CounterSrc::Bins { values, .. } => values.len() as u64,
            CounterSrc::Samples { p, t, .. } => {
                cx.tl.processes[*p].threads[*t].samples.len() as u64
            }
            CounterSrc::Memory { g, .. } => cx.tl.gpus[*g].memory.len() as u64,
        }
    }

    pub fn peek(&self, cx: &Cx) -> Option<i64> {
        match self {
            CounterSrc::Bins {
                spec, values, next, ..
            } => (*next < values.len()).then(|| spec.start(*next)),
            CounterSrc::Samples { p, t, order, k, .. } => {
                let samples = &cx.tl.processes[*p].threads[*t].samples;
                (*k <= samples.len()).then(|| samples[order.at(*k - 1)].ts)
            }
            CounterSrc::Memory { g, order, next, .. } => {
                let mem = &cx.tl.gpus[*g].memory;
                (*next < mem.len()).then(|| mem[order.at(*next)].ts)
            }
        }
    }

    pub fn step(&mut self, cx: &Cx, w: &mut PacketWriter) -> io::Result<()> {
        match self {
            CounterSrc::Bins {
                uuid,
                spec,
                values,
                next,
                last,
            } => {
                let (ts, v) = (spec.start(*next), values[*next]);
                *next += 1;
                w.advance(1);
                if *last != Some(v) {
                    *last = Some(v);
                    return w.counter_f(ts, *uuid, v);
                }
                Ok(())
            }
            CounterSrc::Samples {
                uuid,
                p,
                t,
                faults,
                order,
                k,
            } => {
                let samples = &cx.tl.processes[*p].threads[*t].samples;
                let a = samples[order.at(*k - 1)];
                let at_end = *k == samples.len();
                *k += 1;
                w.advance(1);
                if at_end {
                    // Nothing is known past the last sample.
                    return w.counter_f(a.ts, *uuid, 0.0);
                }
                let b = samples[order.at(*k - 1)];
                let dt = b.ts.saturating_sub(a.ts);
                if dt <= 0 {
                    return Ok(());
                }
                let v = if *faults {
                    b.majflt.saturating_sub(a.majflt) as f64 * 1e9 / dt as f64
                } else {
                    100.0 * b.cpu_ns.saturating_sub(a.cpu_ns) as f64 / dt as f64
                };
                w.counter_f(a.ts, *uuid, v)
            }
            CounterSrc::Memory {
                uuid,
                g,
                order,
                next,
                value,
                live,
                last,
            } => {
                // All events at one time make one point.
                let mem = &cx.tl.gpus[*g].memory;
                let ts = mem[order.at(*next)].ts;
                while *next < mem.len() && mem[order.at(*next)].ts == ts {
                    *value = apply(&mem[order.at(*next)], live, *value);
                    *next += 1;
                    w.advance(1);
                }
                if *last != Some(*value) {
                    *last = Some(*value);
                    return w.counter_i(ts, *uuid, *value);
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_nice_and_bounded() {
        let s = BinSpec::new(0, 62_300_000_000);
        assert_eq!(s.width, 20_000_000);
        assert!(s.count <= TARGET_BINS as usize + 1);
        let tiny = BinSpec::new(5, 5);
        assert_eq!((tiny.count, tiny.len(0)), (1, 1));
        let mut acc = vec![0.0; tiny.count];
        tiny.spread(&mut acc, 5, 5, 7.0);
        assert_eq!(acc, [7.0]);
        let huge = BinSpec::new(i64::MIN, i64::MAX);
        assert!(huge.count >= 1);
        let s = BinSpec::new(0, 100_000);
        assert_eq!(s.width, MIN_BIN_NS);
        let mut acc = vec![0.0; s.count];
        s.spread(&mut acc, 5_000, 25_000, 20.0);
        assert_eq!(&acc[..4], &[5.0, 10.0, 5.0, 0.0]);
    }
}
