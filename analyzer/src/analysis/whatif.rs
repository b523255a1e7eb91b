//! What-if estimates by replay, in the spirit of Daydream (Zhu et al., USENIX
//! ATC 2020): the launching thread's timeline and the GPU streams are replayed
//! with one cause's host time removed (or some kernels made faster), keeping
//! the dependencies: an op starts after its launch and after the previous op on
//! its stream; a blocking sync ends when the work launched before it is done.
//! Step times are read off the replay at the original step boundaries.
//!
//! The estimate is the measured step time scaled by (replay with the change /
//! replay without it), so the replay's own simplifications largely cancel.
//!
//! A replay walks tens of millions of ops, so it keeps no per-op table: ops are
//! read from the streams in launch order (each stream is in launch order
//! already, so this is a merge), and several changes are replayed in one walk,
//! each in its own lane.

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

mod lanes;
pub mod replays;
mod share;

use self::lanes::{Group, LaneChange, OpFacts, Step, act_index};
use super::activity::{Act, SLOW_LAUNCH_APART_NS, Seg, Sub};
use super::busy::PrecisionMap;
use super::context::{Context, ThreadRef, clip, clip_one};
use super::kernels::AttnPart;
use crate::model::{Gpu, GpuOp, GpuOpKind, HostSpan, Ns, Precision};

/// A sync call costs at least this much even when nothing is left to wait for.
const SYNC_FLOOR_NS: Ns = 5_000;
/// Launch latency counted per op, at most. An op later than that waits for
/// another stream's op; a collective with none found waits for its peers,
/// and starts no earlier than it did, except in the other/dependency
/// what-if.
const MAX_LATENCY_NS: Ns = 1_000_000;
/// Dependency detection: how close an op's start must follow another's end.
const DEP_EPS_NS: Ns = 50_000;
/// A slow launch call (over `SLOW_LAUNCH_APART_NS`) with at least this many
/// launched ops not done when it returned waited for room in a full launch
/// queue: it returns when an earlier op ends, so a faster GPU shortens it.
/// CUDA holds about 1024 pending launches (1022 seen on an H200 when such
/// calls returned, tests/gpu/whatif.sh precision; 512 on a V100 trace); far
/// fewer pending means the call was slow for its own reasons (lazy module
/// loading, JIT compilation).
const QUEUE_FULL_OPS: u64 = 256;
/// Ops the lanes remember the ends of, for calls blocked on a full launch
/// queue (a power of two, above CUDA's queue depth).
pub(crate) const QUEUE_RING: usize = 4096;

/// Python dispatch: CPU work merged with launch calls (see
/// `activity::MERGE_CAP_NS`), or CPU work no longer than this. Longer CPU
/// stretches without a launch are other host work (preprocessing, logging),
/// which CUDA graphs or torch.compile do not remove.
pub const BURST_GAP_NS: Ns = 200_000;
/// Host cost per kernel launch under CUDA graphs or torch.compile (the
/// cpu/python what-if).
pub const GRAPH_LAUNCH_NS: Ns = 3_000;
/// A wait for a batch longer than this means the batch was not ready: it
/// arrived when its producer finished it. A shorter one found it waiting.
pub const BATCH_WAITED_NS: Ns = 500_000;
/// Waits for batches closer than this to each other are one batch.
pub const BATCH_RUN_GAP_NS: Ns = 200_000;
/// GPU-side start latency of an op once nothing holds it back (the
/// other/dependency what-if).
pub const FREE_LATENCY_NS: Ns = 5_000;

/// Whether a segment is Python dispatch in a launch burst (see
/// `BURST_GAP_NS`; a longer stretch without a launch is too when waiting for
/// a CPU made it long, `Sub::QUEUED`), or a launch call no longer than that
/// (a slower one loads a module or compiles: not dispatch).
#[inline]
pub fn in_burst(s: &Seg) -> bool {
    match s.act {
        Act::Launch => s.end - s.start <= BURST_GAP_NS,
        Act::Cpu => {
            (s.sub == Sub::NONE && (s.launch_ns > 0 || s.end - s.start <= BURST_GAP_NS))
                || s.sub == Sub::QUEUED
        }
        _ => false,
    }
}

/// Whether a segment is host work outside launch bursts (CPU stretches
/// without a launch longer than `BURST_GAP_NS`, GIL waits, sleeps): what
/// moving work off the training loop removes.
#[inline]
pub fn is_host_work(s: &Seg) -> bool {
    s.act == Act::Cpu && !in_burst(s)
}

/// Batches from producers at a modeled rate (the data what-if).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchClock {
    /// One batch per this long.
    pub period_ns: Ns,
    /// Batches the producers may have ready ahead of the consumer.
    pub queue: u32,
}

/// A change to replay.
pub struct Change<'a> {
    /// Host activities of the launching thread that take no time.
    pub remove: &'a [Act],
    /// Drop the offload copies (`Context::offload`) entirely.
    pub drop_offload: bool,
    /// Kernel time divisor per precision class (1.0 = unchanged).
    pub speedup: &'a (dyn Fn(Precision) -> f64 + Sync),
    /// FP32 fused attention keeps its time whatever `speedup` says of FP32
    /// (TF32 matmuls do not reach SDPA's FP32 kernels; `precision`).
    pub keep_fp32_attention: bool,
    /// Fused attention: the softmax kernels of unfused attention take no
    /// time (`kernels::AttnPart::Softmax`).
    pub drop_softmax: bool,
    /// CUDA graphs or torch.compile: Python dispatch in launch bursts (see
    /// `in_burst`) costs at most this much per launch.
    pub per_launch_ns: Option<Ns>,
    /// Host work outside launch bursts (`is_host_work`) moves off the loop.
    pub drop_host_work: bool,
    /// Batches arrive from producers at this rate, not as recorded.
    pub batches: Option<BatchClock>,
    /// Ops start when launched and their stream is free: no waits for
    /// other streams, and no unexplained start latency.
    pub drop_deps: bool,
    /// Communication kernels keep their waiting for peers; otherwise they
    /// take their transfer time only (`Replay::comm_waits`).
    pub comm_wait: bool,
}

impl Change<'_> {
    pub fn none() -> Change<'static> {
        Change {
            remove: &[],
            drop_offload: false,
            speedup: &|_| 1.0,
            keep_fp32_attention: false,
            drop_softmax: false,
            per_launch_ns: None,
            drop_host_work: false,
            batches: None,
            drop_deps: false,
            comm_wait: false,
        }
    }
}

/// Extra facts about a few ops, by position in their stream's window.
#[derive(Debug, Clone, Copy)]
struct Special {
    pos: u32,
    /// Slot of the op this one waits for (`NONE` if none).
    dep: u32,
    /// Slot where this op's new end is kept for others (`NONE` if none).
    target: u32,
    /// An offload copy.
    offload: bool,
    /// Late for a reason outside the trace: starts no earlier than this
    /// (its recorded start; `Ns::MIN` if not).
    not_before: Ns,
    /// Late for a reason outside the trace: starts this long after it is
    /// ready (0 if not).
    extra: Ns,
}

const NONE: u32 = u32::MAX;

/// Launch codes: an op without a launch call, and one whose launch time is
/// in `StreamOps::escapes`; any other code is the time since the previous
/// op's launch call.
const NO_LAUNCH: u32 = u32::MAX;
const ESCAPE: u32 = u32::MAX - 1;

/// The ops of one stream in the window. The replay reads the model's ops
/// directly; what it would have to look up per op and walk (the launch call's
/// time, through the correlation id) is kept here, four bytes per op.
struct StreamOps<'a> {
    ops: &'a [GpuOp],
    /// The model's range holding the in-window ops.
    lo: usize,
    hi: usize,
    /// Latest end of the ops before `lo`.
    prev_end: Ns,
    /// Every op of [lo, hi) is in the window.
    all_in: bool,
    /// Per in-window op, in stream order: its launch code.
    launch: Vec<u32>,
    /// (position, launch time) for `ESCAPE` codes.
    escapes: Vec<(u32, Ns)>,
    /// Sorted by position.
    special: Vec<Special>,
    /// Message elements of the in-window collectives that have a size, by
    /// model index.
    comm_elems: FxHashMap<u32, u64>,
}

/// An op in replay order.
#[derive(Debug, Clone, Copy)]
struct OpView {
    stream: u32,
    /// Index in the model's stream, and position among the in-window ops.
    idx: u32,
    pos: u32,
    anchor: Ns,
    latency: Ns,
}

/// What one pass over a stream finds.
struct StreamScan<'a> {
    ops: StreamOps<'a>,
    /// Model indices of the in-window ops, when some op of [lo, hi) is not.
    win_idx: Option<Vec<u32>>,
    /// The dependency search order ((start, launch) order) when it is not
    /// the stream's own: model indices.
    dep_list: Option<Vec<u32>>,
    /// Launches never go back along the stream.
    in_order: bool,
    /// Model indices of ops that started later than their launch and stream
    /// allowed, and by how much.
    late: Vec<(u32, Ns)>,
    /// Launch calls in the window, per thread of `corr.threads()`: bit sets
    /// over the thread's spans.
    launched: Vec<Vec<u64>>,
    /// (name, message elements or 0, duration) of the in-window
    /// communication kernels.
    comm: Vec<(u32, u64, Ns)>,
}

pub struct Replay<'a> {
    window: (Ns, Ns),
    /// The critical host timeline: stretches of threads' segments.
    stretches: Vec<(Arc<Vec<Seg>>, Ns, Ns)>,
    streams: Vec<StreamOps<'a>>,
    /// Launch order, when some stream's ops are not in launch order (rare):
    /// every op, sorted.
    order: Option<Vec<OpView>>,
    slots: usize,
    precision: &'a PrecisionMap<'a>,
    /// The collectives' transfer times (`comm_transfer`).
    comm: CommTable,
    /// See `batch_waited`.
    ranges: Option<Ns>,
    /// Some launch call on the critical host timeline is slow enough to have
    /// waited for a full launch queue (`QUEUE_FULL_OPS`).
    slow_launches: bool,
}

/// Whether a wait for a batch found it not ready, so that it arrived when
/// its producer finished it: a blocking read, poll or queue wait longer than
/// `BATCH_WAITED_NS`. In a stallscope recording, the time in a DataLoader
/// range outside those is the loop's own work (unpickling, pinning), never
/// waiting. A profiler trace shows only the range (`ranges` is then what a
/// ready batch costs in one, see `ready_cost`): one that long and
/// `BATCH_WAITED_NS` more counts as a wait.
#[inline]
pub fn batch_waited(s: &Seg, ranges: Option<Ns>) -> bool {
    let floor = match ranges {
        None if s.sub == Sub::DATALOADER => return false,
        Some(ready) if s.sub == Sub::DATALOADER => ready,
        _ => 0,
    };
    s.act == Act::Data && s.sub != Sub::MAIN_PROCESS && s.end - s.start > BATCH_WAITED_NS + floor
}

/// What a DataLoader range costs when its batch is ready (taking it from
/// the queue, rebuilding its tensors from shared memory): the median range
/// on the critical host timeline, at most `READY_COST_MAX_NS`. Receiving
/// the same batch shape costs about the same each step, so ranges alike and
/// over `BATCH_WAITED_NS` (1.3-1.5 ms for ResNet-50 batches on V100
/// machines, pytorch/kineto's samples) are that cost, not waiting; producers
/// that fall behind leave longer ranges.
pub fn ready_cost(segs: impl Iterator<Item = Seg>) -> Ns {
    let mut lens: Vec<Ns> = segs
        .filter(|s| s.act == Act::Data && s.sub == Sub::DATALOADER)
        .map(|s| s.end - s.start)
        .collect();
    if lens.is_empty() {
        return 0;
    }
    let mid = lens.len() / 2;
    let (_, m, _) = lens.select_nth_unstable(mid);
    (*m).min(READY_COST_MAX_NS)
}

/// See `ready_cost`: a loader that needs longer for a ready batch is slow
/// in the loop itself, which the data finding shows either way.
pub const READY_COST_MAX_NS: Ns = 2_000_000;

impl<'a> Replay<'a> {
    /// The host side of the replay is the critical host timeline: between two
    /// consecutive launches, the activity of the thread that launched the
    /// second one (PyTorch launches backward kernels from its autograd thread
    /// and forward kernels from the Python thread, so neither alone is the
    /// critical path).
    pub fn new(cx: &'a Context, g: &'a Gpu, launcher: ThreadRef) -> Replay<'a> {
        Replay::scan(cx, g).finish(cx, launcher)
    }

    /// The GPU side of `new`, which needs no host segments (so it can run
    /// while they are computed).
    pub fn scan(cx: &'a Context, g: &'a Gpu) -> ReplayScan<'a> {
        let (w0, w1) = cx.window;
        let spans: Vec<&[HostSpan]> = cx
            .corr
            .threads()
            .iter()
            .map(|&(p, t)| &cx.tl.processes[p as usize].threads[t as usize].spans[..])
            .collect();
        let scans: Vec<StreamScan> = g
            .streams
            .par_iter()
            .map(|s| {
                scan_stream(cx, &spans, &s.ops, |t| {
                    g.comm_elems.get(&(s.id, t)).copied()
                })
            })
            .collect();

        // Dependencies: the op of another stream that ended closest before.
        let pos_of = |sc: &StreamScan, idx: u32| -> u32 {
            match &sc.win_idx {
                None => idx - sc.ops.lo as u32,
                Some(w) => w.binary_search(&idx).map_or(NONE, |p| p as u32),
            }
        };
        let is_comm =
            |o: &GpuOp| o.kind() == GpuOpKind::Kernel && cx.precision.of(o) == Precision::Comm;
        let mut deps: Vec<((u32, u32), (u32, u32))> = Vec::new();
        let mut pinned: Vec<((u32, u32), Ns)> = Vec::new();
        let mut delayed: Vec<((u32, u32), Ns)> = Vec::new();
        for (si, sc) in scans.iter().enumerate() {
            for &(i, extra) in &sc.late {
                let start = g.streams[si].ops[i as usize].start;
                let mut best: Option<(Ns, (u32, u32))> = None;
                for (oi, other) in scans.iter().enumerate() {
                    if oi == si {
                        continue;
                    }
                    let ops = &g.streams[oi].ops;
                    let found = match &other.dep_list {
                        None => {
                            let win = &ops[other.ops.lo..other.ops.hi];
                            let j = win.partition_point(|a| a.end <= start);
                            j.checked_sub(1).map(|j| (other.ops.lo + j) as u32)
                        }
                        Some(list) => {
                            let j = list.partition_point(|&a| ops[a as usize].end <= start);
                            j.checked_sub(1).map(|j| list[j])
                        }
                    };
                    if let Some(a) = found {
                        let gap = start - ops[a as usize].end;
                        if gap <= DEP_EPS_NS && best.is_none_or(|x| gap < x.0) {
                            best = Some((gap, (oi as u32, a)));
                        }
                    }
                }
                match best {
                    Some((_, (oi, a))) => deps.push((
                        (si as u32, pos_of(sc, i)),
                        (oi, pos_of(&scans[oi as usize], a)),
                    )),
                    // A collective late for no reason in the trace waited for
                    // its peers to launch it: it starts no earlier.
                    None if is_comm(&g.streams[si].ops[i as usize]) => {
                        pinned.push(((si as u32, pos_of(sc, i)), start))
                    }
                    // Late for a reason outside the trace: as late after
                    // it was ready in every replay but other/dependency's.
                    None => delayed.push(((si as u32, pos_of(sc, i)), extra)),
                }
            }
        }
        let mut specials: FxHashMap<(u32, u32), Special> = FxHashMap::default();
        let blank = |pos: u32| Special {
            pos,
            dep: NONE,
            target: NONE,
            offload: false,
            not_before: Ns::MIN,
            extra: 0,
        };
        for (b, t) in pinned {
            specials.entry(b).or_insert_with(|| blank(b.1)).not_before = t;
        }
        for (b, t) in delayed {
            specials.entry(b).or_insert_with(|| blank(b.1)).extra = t;
        }
        let mut slots = 0;
        for (b, a) in deps {
            let target = specials.entry(a).or_insert_with(|| blank(a.1));
            if target.target == NONE {
                target.target = slots as u32;
                slots += 1;
            }
            let slot = target.target;
            specials.entry(b).or_insert_with(|| blank(b.1)).dep = slot;
        }
        let in_order = scans.iter().all(|s| s.in_order);
        let comm = comm_transfer(scans.iter().flat_map(|s| &s.comm));
        let mut launched: Vec<Vec<u64>> = vec![Vec::new(); spans.len()];
        let mut streams: Vec<StreamOps> = Vec::with_capacity(scans.len());
        for (si, sc) in scans.into_iter().enumerate() {
            for (t, bits) in sc.launched.into_iter().enumerate() {
                if bits.is_empty() {
                    continue;
                }
                if launched[t].is_empty() {
                    launched[t] = bits;
                } else {
                    for (x, y) in launched[t].iter_mut().zip(bits) {
                        *x |= y;
                    }
                }
            }
            let mut so = sc.ops;
            for sp in &so.special {
                specials
                    .entry((si as u32, sp.pos))
                    .or_insert_with(|| blank(sp.pos))
                    .offload = true;
            }
            so.special.clear();
            streams.push(so);
        }
        for ((si, pos), sp) in specials {
            if pos != NONE {
                streams[si as usize].special.push(sp);
            }
        }
        for so in &mut streams {
            so.special.sort_by_key(|x| x.pos);
        }
        let order = (!in_order).then(|| {
            // A stable sort of all ops, stream after stream, by launch.
            let mut v: Vec<OpView> = Vec::new();
            for (si, so) in streams.iter().enumerate() {
                let mut c = Cursor::new(so);
                while let Some(o) = c.advance(so, si, (w0, w1)) {
                    v.push(o);
                }
            }
            v.sort_by_key(|o| o.anchor);
            v
        });

        ReplayScan {
            window: (w0, w1),
            streams,
            order,
            slots,
            launched,
            spans,
            precision: &cx.precision,
            comm,
        }
    }
}

/// `Replay::scan`'s result.
pub struct ReplayScan<'a> {
    window: (Ns, Ns),
    streams: Vec<StreamOps<'a>>,
    order: Option<Vec<OpView>>,
    slots: usize,
    launched: Vec<Vec<u64>>,
    spans: Vec<&'a [HostSpan]>,
    precision: &'a PrecisionMap<'a>,
    comm: CommTable,
}

impl<'a> ReplayScan<'a> {
    /// The host side: the critical host timeline.
    pub fn finish(self, cx: &Context, launcher: ThreadRef) -> Replay<'a> {
        let (w0, w1) = self.window;
        let (launched, spans) = (&self.launched, &self.spans);
        // Consecutive launches from one thread form one stretch of its
        // timeline (launch calls in time order, thread order on ties).
        let mut stretches = Vec::new();
        let mut from = w0;
        let next_bit = |bits: &[u64], mut i: usize| -> Option<usize> {
            while i / 64 < bits.len() {
                let w = bits[i / 64] >> (i % 64);
                if w != 0 {
                    return Some(i + w.trailing_zeros() as usize);
                }
                i = (i / 64 + 1) * 64;
            }
            None
        };
        let mut cursors: Vec<(usize, usize)> = launched
            .iter()
            .enumerate()
            .filter_map(|(t, b)| next_bit(b, 0).map(|i| (t, i)))
            .collect();
        let mut current: Option<(usize, Ns)> = None;
        let close = |current: Option<(usize, Ns)>, from: &mut Ns, stretches: &mut Vec<_>| {
            if let Some((ct, cts)) = current
                && cts > *from
            {
                stretches.push((cx.segments(cx.corr.threads()[ct]), *from, cts));
                *from = cts;
            }
        };
        if let [(t, _)] = cursors[..] {
            // One launching thread: one stretch, up to its last launch.
            let bits = &launched[t];
            let w = bits.iter().rposition(|&w| w != 0).expect("a launch");
            let last = w * 64 + 63 - bits[w].leading_zeros() as usize;
            current = Some((t, spans[t][last].ts));
            cursors.clear();
        }
        loop {
            // The earliest next launch; the first thread on ties.
            let mut best: Option<(usize, Ns)> = None;
            for (k, &(t, i)) in cursors.iter().enumerate() {
                let ts = spans[t][i].ts;
                if best.is_none_or(|b| ts < b.1) {
                    best = Some((k, ts));
                }
            }
            let Some((k, ts)) = best else { break };
            let t = cursors[k].0;
            if current.is_some_and(|c| c.0 != t) {
                close(current, &mut from, &mut stretches);
            }
            current = Some((t, ts));
            match next_bit(&launched[t], cursors[k].1 + 1) {
                Some(i) => cursors[k].1 = i,
                None => {
                    cursors.remove(k);
                }
            }
        }
        close(current, &mut from, &mut stretches);
        if from < w1 {
            stretches.push((cx.segments(launcher), from, w1));
        }
        let ranges = (cx.tl.source == crate::model::Source::Kineto).then(|| {
            ready_cost(
                stretches
                    .iter()
                    .flat_map(|(segs, from, to)| clip(segs, *from, *to)),
            )
        });
        let slow_launches = stretches.iter().any(|(segs, from, to)| {
            clip(segs, *from, *to)
                .any(|s| s.act == Act::Launch && s.end - s.start > SLOW_LAUNCH_APART_NS)
        });
        Replay {
            window: (w0, w1),
            slow_launches,
            stretches,
            streams: self.streams,
            order: self.order,
            slots: self.slots,
            precision: self.precision,
            comm: self.comm,
            ranges,
        }
    }
}

impl Replay<'_> {
    /// A test for whether removing activities `acts` (and, with `offload`,
    /// dropping the offload copies) changes anything: whether any of them is
    /// on the critical host timeline (launch time inside merged CPU segments
    /// counts for `Launch`).
    /// Whether some communication kernel waited for its peers (by the
    /// estimate of `comm_transfer`).
    pub fn comm_waits(&self) -> bool {
        !self.comm.is_empty()
    }

    /// Whether some op waits for another stream.
    pub fn has_deps(&self) -> bool {
        self.slots > 0
    }

    /// Whether the critical host timeline has segments `f` accepts.
    pub fn has_segment(&self, f: impl Fn(&Seg) -> bool) -> bool {
        self.stretches
            .iter()
            .any(|(segs, from, to)| clip(segs, *from, *to).any(|s| f(&s)))
    }

    /// The waits for batches on the critical host timeline, one per batch
    /// (waits closer than `BATCH_RUN_GAP_NS` joined): (start, end, loaded
    /// by the launching process itself).
    pub fn batch_waits(&self) -> Vec<(Ns, Ns, bool)> {
        let mut out: Vec<(Ns, Ns, bool)> = Vec::new();
        for (segs, from, to) in &self.stretches {
            for s in clip(segs, *from, *to).filter(|s| s.act == Act::Data) {
                let main = s.sub == Sub::MAIN_PROCESS;
                match out.last_mut() {
                    Some(l) if s.start <= l.1 + BATCH_RUN_GAP_NS => {
                        l.1 = s.end;
                        l.2 &= main;
                    }
                    _ => out.push((s.start, s.end, main)),
                }
            }
        }
        out
    }

    pub fn present(&self) -> impl Fn(&[Act], bool) -> bool + use<> {
        let mut seen = [false; 8];
        let mut launch_in_cpu = false;
        for (segs, from, to) in &self.stretches {
            for s in clip(segs, *from, *to) {
                seen[act_index(s.act)] = true;
                launch_in_cpu |= s.act == Act::Cpu && s.launch_ns > 0;
            }
        }
        let offload = self
            .streams
            .iter()
            .any(|s| s.special.iter().any(|x| x.offload));
        move |acts: &[Act], drop_offload: bool| {
            (drop_offload && offload)
                || acts
                    .iter()
                    .any(|&a| seen[act_index(a)] || (a == Act::Launch && launch_in_cpu))
        }
    }

    /// About how many steps the walk hands out: one per op, and two per
    /// segment of the critical host timeline.
    fn steps_estimate(&self) -> usize {
        let ops: usize = self.streams.iter().map(|s| s.launch.len()).sum();
        let segs: usize = self
            .stretches
            .iter()
            .map(|(segs, from, to)| {
                let first = segs.partition_point(|s| s.end <= *from);
                segs.partition_point(|s| s.start < *to)
                    .saturating_sub(first)
            })
            .sum();
        ops + 2 * segs
    }

    /// Replays the window with `change`; returns the new times of `marks`
    /// (original host times, sorted) and the new end of the window. A mark's
    /// new time also waits for the GPU work launched before it, so a host that
    /// runs ahead of the GPU does not look faster than the GPU allows.
    pub fn run(&self, change: &Change, marks: &[Ns]) -> (Vec<Ns>, Ns) {
        self.run_all(&[change], marks).pop().expect("one lane")
    }

    /// `run` for several changes, in one walk over the ops. The walk (which
    /// op comes next, and where it falls on the host timeline) is shared; the
    /// lanes follow it a block of steps behind, in groups, so the walk and
    /// the groups run on different cores.
    pub fn run_all(&self, changes: &[&Change], marks: &[Ns]) -> Vec<(Vec<Ns>, Ns)> {
        // Changes that replay alike are followed once: with one fix
        // advised, every fix at once is that fix's own lane.
        let does: Vec<LaneChange> = changes.iter().map(|c| LaneChange::new(c)).collect();
        let first: Vec<usize> = (0..does.len())
            .map(|i| (0..i).find(|&j| does[j] == does[i]).unwrap_or(i))
            .collect();
        let distinct: Vec<&Change> = (0..changes.len())
            .filter(|&i| first[i] == i)
            .map(|i| changes[i])
            .collect();
        if distinct.len() == changes.len() {
            return self.run_distinct(changes, marks);
        }
        let mut lanes = self.run_distinct(&distinct, marks).into_iter();
        let mut out: Vec<(Vec<Ns>, Ns)> = Vec::with_capacity(changes.len());
        for (i, &f) in first.iter().enumerate() {
            let lane = if f == i {
                lanes.next().expect("a lane per distinct change")
            } else {
                out[f].clone()
            };
            out.push(lane);
        }
        out
    }

    /// `run_all` for changes that differ.
    fn run_distinct(&self, changes: &[&Change], marks: &[Ns]) -> Vec<(Vec<Ns>, Ns)> {
        let w0 = self.window.0;
        // Lanes that shorten CPU segments scale the times of most launches;
        // the others, grouped apart, take the path without scaling there.
        let shortens_cpu = |c: &Change| {
            c.per_launch_ns.is_some()
                || c.drop_host_work
                || c.remove.iter().any(|a| matches!(a, Act::Cpu | Act::Launch))
        };
        let mut order: Vec<usize> = (0..changes.len()).collect();
        order.sort_by_key(|&i| shortens_cpu(changes[i]));
        let sorted: Vec<&Change> = order.iter().map(|&i| changes[i]).collect();
        let split = sorted.partition_point(|c| !shortens_cpu(c));
        let threads = rayon::current_num_threads();
        let mut parts: Vec<&[&Change]> = Vec::new();
        for kind in [&sorted[..split], &sorted[split..]] {
            let mut rest = kind;
            for n in share::group_sizes(kind.len(), sorted.len(), threads) {
                let (part, after) = rest.split_at(n);
                parts.push(part);
                rest = after;
            }
        }
        let mut groups: Vec<Group> = parts
            .into_iter()
            .map(|c| {
                let mut g = Group::new(
                    c,
                    w0,
                    self.streams.len(),
                    self.slots,
                    marks.len(),
                    self.slow_launches,
                );
                g.ranges = self.ranges;
                g
            })
            .collect();
        let need_precision = groups.iter().any(|g| g.needs_precision());
        let specials: Vec<&[Special]> = self.streams.iter().map(|s| &s.special[..]).collect();
        let mut walk = Walk::new(self, marks, need_precision);
        // Blocks small enough that the walk and the lanes overlap on a short
        // replay too, and large enough to pay for their hand-overs.
        walk.block = (self.steps_estimate() / BLOCKS_PER_REPLAY).clamp(MIN_BLOCK, BLOCK);
        let (mut ready, mut next) = (
            Vec::with_capacity(walk.block),
            Vec::with_capacity(walk.block),
        );
        // Nanoseconds each group took on the last blocks (at first: lanes).
        let mut cost: Vec<u64> = groups.iter().map(|g| g.lanes() as u64).collect();
        walk.fill(&mut ready);
        while !ready.is_empty() {
            let mut order: Vec<(&mut Group, &mut u64)> = groups.iter_mut().zip(&mut cost).collect();
            share::longest_first(&mut order);
            rayon::join(
                || walk.fill(&mut next),
                || {
                    order.par_iter_mut().for_each(|(g, c)| {
                        let t = Instant::now();
                        g.follow(&ready, &specials);
                        **c = share::smoothed(**c, t.elapsed().as_nanos() as u64);
                    })
                },
            );
            std::mem::swap(&mut ready, &mut next);
        }
        let mut out: Vec<(Vec<Ns>, Ns)> = vec![Default::default(); changes.len()];
        let lanes = groups.into_iter().flat_map(|g| g.finish(marks.len()));
        for (&i, lane) in order.iter().zip(lanes) {
            out[i] = lane;
        }
        out
    }
}

/// Steps the walk hands to the lanes at a time (about 1 MB). Each block costs
/// a hand-over between cores: blocks of 4K steps made the 50M-event replay a
/// third slower, and 64K steps gained nothing over 16K. Tests use tiny blocks,
/// so that the walk stops and resumes everywhere (mid-segment, between marks).
const BLOCK: usize = if cfg!(test) { 61 } else { 16 << 10 };
/// Blocks a shorter replay is cut into, of at least `MIN_BLOCK` steps: in one
/// block, the lanes of a replay of 13K steps (a 10 MB profiler trace) waited
/// for the whole walk (1.0 ms against 0.6 ms in 1K-step blocks); 4, 8 and 32
/// blocks measured alike.
const BLOCKS_PER_REPLAY: usize = 16;
const MIN_BLOCK: usize = if cfg!(test) { BLOCK } else { 1 << 10 };

/// The walk: the critical host timeline's segments in order, with the ops
/// and marks that fall in each, then the ops launched after the window. It
/// stops after each block and resumes where it was.
struct Walk<'r, 'a> {
    r: &'r Replay<'a>,
    marks: &'r [Ns],
    need_precision: bool,
    ops: OpSource,
    next: Option<OpView>,
    mi: usize,
    /// The stretch being walked, and its next segment (None until started).
    stretch: usize,
    seg: Option<usize>,
    /// The segment being walked (clipped to its stretch).
    current: Option<Seg>,
    /// With slow launch calls only (`queue_full`): the ops handed out so
    /// far, the per-stream state, and the stream and GPU start of the last
    /// op launched in the current segment.
    emitted: u64,
    queue: Option<QueueTrack>,
    launched_here: Option<(u32, Ns)>,
    /// Steps per block (at most `BLOCK`).
    block: usize,
}

/// See `Walk::queue_full`. Per stream: its ops handed out, the first op not
/// done by the last slow call's return, and the launch order of its last
/// `QUEUE_RING` ops.
struct QueueTrack {
    emitted: Vec<u64>,
    done_upto: Vec<usize>,
    order: Vec<u64>,
}

impl<'r, 'a> Walk<'r, 'a> {
    fn new(r: &'r Replay<'a>, marks: &'r [Ns], need_precision: bool) -> Self {
        let mut ops = OpSource::new(r);
        let next = ops.next(r);
        Walk {
            r,
            marks,
            need_precision,
            ops,
            next,
            mi: 0,
            stretch: 0,
            seg: None,
            current: None,
            emitted: 0,
            queue: r.slow_launches.then(|| QueueTrack {
                emitted: vec![0; r.streams.len()],
                done_upto: r.streams.iter().map(|so| so.lo).collect(),
                order: vec![0; r.streams.len() * QUEUE_RING],
            }),
            launched_here: None,
            block: BLOCK,
        }
    }

    /// Counts an op handed out, where slow launch calls need it.
    #[inline(always)]
    fn emit(&mut self, v: OpView) {
        if let Some(q) = &mut self.queue {
            let s = v.stream as usize;
            q.order[s * QUEUE_RING + (q.emitted[s] % QUEUE_RING as u64) as usize] = self.emitted;
            q.emitted[s] += 1;
            self.emitted += 1;
            let start = self.r.streams[s].ops[v.idx as usize].start;
            self.launched_here = Some((v.stream, start));
        }
    }

    /// For a launch call that waited for room in a full launch queue: how
    /// many ops back (in launch order) the op is whose end let it return, the
    /// last op of the call's stream done by then. The queue is taken as full
    /// with `QUEUE_FULL_OPS` of that stream's ops launched and not done.
    fn queue_full(&mut self, s: &Seg) -> Option<u32> {
        let q = self.queue.as_mut()?;
        if s.act != Act::Launch || s.end - s.start <= SLOW_LAUNCH_APART_NS {
            return None;
        }
        // The call's op, anchored at the call's end when it is slow
        // (`launch_time`), else at its start, inside the segment: it started
        // after the call returned. (A graph launch's ops start while it runs:
        // it is slow from enqueuing them, not from waiting.)
        let st = match self.next.filter(|o| o.anchor == s.end) {
            Some(o) => o.stream,
            None => self.launched_here.filter(|l| l.1 >= s.end)?.0,
        } as usize;
        let so = &self.r.streams[st];
        let upto = &mut q.done_upto[st];
        *upto += so.ops[*upto..so.hi].partition_point(|o| o.end <= s.end);
        let done = (*upto - so.lo) as u64;
        let pending = q.emitted[st].checked_sub(done)?;
        // And the call returned just after an op of its stream ended.
        if !(QUEUE_FULL_OPS..QUEUE_RING as u64).contains(&pending)
            || done == 0
            || s.end - so.ops[*upto - 1].end > DEP_EPS_NS
        {
            return None;
        }
        let release = q.order[st * QUEUE_RING + ((done - 1) % QUEUE_RING as u64) as usize];
        let back = self.emitted.checked_sub(release + 1)?;
        (back < QUEUE_RING as u64 - 1).then_some(back as u32)
    }

    /// The next segment of the critical host timeline.
    fn next_segment(&mut self) -> Option<Seg> {
        while let Some((segs, from, to)) = self.r.stretches.get(self.stretch) {
            let i = *self
                .seg
                .get_or_insert_with(|| segs.partition_point(|s| s.end <= *from));
            match segs.get(i).filter(|s| s.start < *to) {
                Some(s) => {
                    self.seg = Some(i + 1);
                    return Some(clip_one(s, *from, *to));
                }
                None => {
                    self.stretch += 1;
                    self.seg = None;
                }
            }
        }
        None
    }

    /// Replaces `out` with the next block of steps; empty when done.
    fn fill(&mut self, out: &mut Vec<Step>) {
        out.clear();
        let r = self.r;
        while out.len() < self.block {
            if let Some(s) = self.current {
                // Ops and marks inside this segment; an op before a mark at
                // the same time.
                let op_t = self.next.map(|o| o.anchor).filter(|&t| t < s.end);
                let mark_t = self.marks.get(self.mi).copied().filter(|&t| t < s.end);
                match (op_t, mark_t) {
                    (Some(t), m) if m.is_none_or(|m| t < m) => {
                        let op = self
                            .ops
                            .facts(r, self.next.expect("some"), self.need_precision);
                        out.push(Step::Op(t - s.start, op));
                        self.emit(self.next.expect("some"));
                        self.next = self.ops.next(r);
                    }
                    (_, Some(t)) => {
                        out.push(Step::Mark(t - s.start));
                        self.mi += 1;
                    }
                    _ => {
                        out.push(match self.queue_full(&s) {
                            Some(back) => Step::LeaveBlocked(back),
                            None => Step::Leave,
                        });
                        self.current = None;
                    }
                }
            } else if let Some(s) = self.next_segment() {
                out.push(Step::Enter(s));
                self.current = Some(s);
                self.launched_here = None;
            } else if self.mi < self.marks.len() {
                // Marks at or past the window's end (the last step ends
                // there), before the ops launched after it.
                out.push(Step::Mark(0));
                self.mi += 1;
            } else if let Some(o) = self.next {
                let op = self.ops.facts(r, o, self.need_precision);
                out.push(Step::After((o.anchor - r.window.1).max(0), op));
                self.emit(o);
                self.next = self.ops.next(r);
            } else {
                break;
            }
        }
    }
}

/// One pass over a stream's ops: the window's range, launch times and
/// latencies, the ops that may wait on another stream, and which launch
/// calls fall in the window.
fn scan_stream<'a>(
    cx: &Context,
    spans: &[&[HostSpan]],
    ops: &'a [GpuOp],
    elems: impl Fn(Ns) -> Option<u64>,
) -> StreamScan<'a> {
    let (w0, w1) = cx.window;
    let mut launched: Vec<Vec<u64>> = vec![Vec::new(); spans.len()];
    let mut lo = 0;
    let mut prev_end = Ns::MIN;
    while lo < ops.len() && ops[lo].end <= w0 {
        prev_end = prev_end.max(ops[lo].end);
        lo += 1;
    }
    let hi = lo + ops[lo..].partition_point(|o| o.start < w1);
    let mut out = StreamOps {
        ops,
        lo,
        hi,
        prev_end,
        all_in: true,
        launch: Vec::with_capacity(hi - lo),
        escapes: Vec::new(),
        special: Vec::new(),
        comm_elems: FxHashMap::default(),
    };
    // Model indices of the in-window ops, once one of [lo, hi) is not.
    let mut win_idx: Vec<u32> = Vec::new();
    // Ops starting together are in launch order (the dependency search
    // order is then the stream's own).
    let mut ties_in_order = true;
    let mut in_order = true;
    let mut late = Vec::new();
    // (start, end, launch) of the previous in-window op.
    let mut last: Option<(Ns, Ns, Ns)> = None;
    let mut prev_ts: Ns = 0;
    let check_offload = !cx.offload.is_empty();
    let mut comm = Vec::new();
    for (i, o) in ops.iter().enumerate() {
        let launch = cx.corr.get_raw(o.corr);
        let call = launch.map(|(t, s)| &spans[t as usize][s as usize]);
        if let (Some((t, si)), Some(call)) = (launch, call)
            && call.ts >= w0
            && call.ts < w1
        {
            let bits = &mut launched[t as usize];
            if bits.is_empty() {
                bits.resize(spans[t as usize].len().div_ceil(64), 0);
            }
            bits[si as usize / 64] |= 1 << (si % 64);
        }
        if i < lo || i >= hi {
            continue;
        }
        if o.end <= w0 || o.start >= w1 {
            prev_end = prev_end.max(o.end);
            if out.all_in {
                win_idx.extend(lo as u32..i as u32);
                out.all_in = false;
            }
            continue;
        }
        if !out.all_in {
            win_idx.push(i as u32);
        }
        let pos = out.launch.len() as u32;
        // The op is enqueued when its call returns from a slow launch.
        let launch_ts = call.map(|c| launch_time(c, o.start));
        out.launch.push(match launch_ts {
            None => NO_LAUNCH,
            Some(ts) => {
                let d = ts.wrapping_sub(prev_ts);
                prev_ts = ts;
                if (0..ESCAPE as Ns).contains(&d) {
                    d as u32
                } else {
                    out.escapes.push((pos, ts));
                    ESCAPE
                }
            }
        });
        let (anchor, latency) = anchor_latency(o, prev_end, w0, launch_ts);
        prev_end = prev_end.max(o.end);
        if let Some((ps, pe, pa)) = last {
            in_order &= anchor >= pa;
            ties_in_order &= !(o.start == ps && anchor < pa);
            if o.start > (anchor + latency).max(pe) + DEP_EPS_NS / 2 {
                late.push((i as u32, o.start - (anchor + latency).max(pe)));
            }
        } else if o.start > anchor + latency + DEP_EPS_NS / 2 {
            late.push((i as u32, o.start - (anchor + latency)));
        }
        last = Some((o.start, o.end, anchor));
        if o.kind() == GpuOpKind::Kernel && cx.precision.of(o) == Precision::Comm {
            let n = elems(o.start).unwrap_or(0);
            if n > 0 {
                out.comm_elems.insert(i as u32, n);
            }
            comm.push((o.name, n, o.dur()));
        }
        if check_offload && cx.offload.contains(&o.corr) {
            // Marked here, moved into the stream's specials by the caller.
            out.special.push(Special {
                pos,
                dep: NONE,
                target: NONE,
                offload: true,
                not_before: Ns::MIN,
                extra: 0,
            });
        }
    }
    let mut dep_list = None;
    if !out.all_in || !ties_in_order {
        // The dependency list is the stream's in-window ops in (start,
        // launch) order, stream order on ties: check it again.
        late.clear();
        let mut v: Vec<(Ns, Ns, Ns, u32)> = Vec::with_capacity(out.launch.len());
        let mut c = Cursor::new(&out);
        while let Some(o) = c.advance(&out, 0, (w0, w1)) {
            v.push((ops[o.idx as usize].start, o.anchor, o.latency, o.idx));
        }
        v.sort_by_key(|x| (x.0, x.1, x.3));
        let mut pe = Ns::MIN;
        for &(start, anchor, latency, i) in &v {
            if start > (anchor + latency).max(pe) + DEP_EPS_NS / 2 {
                late.push((i, start - (anchor + latency).max(pe)));
            }
            pe = ops[i as usize].end;
        }
        dep_list = Some(v.iter().map(|x| x.3).collect());
    }
    StreamScan {
        win_idx: (!out.all_in).then_some(win_idx),
        ops: out,
        dep_list,
        in_order,
        late,
        launched,
        comm,
    }
}

/// The transfer time of each collective: the 10th percentile of its
/// durations, as the fastest instances waited least for their peers. Where
/// the trace gives message sizes, per (kernel name, size): one kernel name
/// (NCCL's `ncclDevKernel_Generic`, RCCL's) runs every collective, and a
/// 9600-element broadcast beside an 8.8 M-element all-reduce made the
/// all-reduce look like 6.6 ms of waiting (an MI300X ResNet trace). Without
/// sizes, per name: an estimate, as instances may move different sizes.
#[derive(Debug)]
pub(crate) struct CommTable {
    /// Per kernel name id, for instances without a size (0: none).
    by_name: Vec<Ns>,
    /// Per (name, elements); a size seen once has no faster instance to
    /// compare with, and waits 0.
    by_size: FxHashMap<(u32, u64), Ns>,
    /// No collective waited by this estimate (asked once per op).
    empty: bool,
}

impl CommTable {
    /// Whether no collective waited for its peers by this estimate.
    #[inline]
    fn is_empty(&self) -> bool {
        self.empty
    }

    /// The estimated wait for peers in `o`, moving `elems` elements (0:
    /// unknown); 0 for other ops.
    #[inline]
    fn wait(&self, o: &GpuOp, elems: u64) -> Ns {
        if o.kind() != GpuOpKind::Kernel {
            return 0;
        }
        let t = if elems > 0 {
            self.by_size.get(&(o.name, elems)).copied()
        } else {
            self.by_name.get(o.name as usize).copied()
        };
        match t {
            Some(t) if t > 0 => (o.dur() - t).max(0),
            _ => 0,
        }
    }
}

fn comm_transfer<'x>(comm: impl Iterator<Item = &'x (u32, u64, Ns)>) -> CommTable {
    let mut groups: FxHashMap<(u32, u64), Vec<Ns>> = FxHashMap::default();
    for &(name, elems, dur) in comm {
        groups.entry((name, elems)).or_default().push(dur);
    }
    let mut out = CommTable {
        by_name: Vec::new(),
        by_size: FxHashMap::default(),
        empty: true,
    };
    for ((name, elems), mut durs) in groups {
        durs.sort_unstable();
        let fast = crate::analysis::steps::percentile(&durs, 0.1);
        let differ = durs.len() >= 2 && durs[durs.len() - 1] != fast && fast > 0;
        if elems > 0 {
            out.by_size
                .insert((name, elems), if differ { fast } else { 0 });
        } else if differ {
            if out.by_name.len() <= name as usize {
                out.by_name.resize(name as usize + 1, 0);
            }
            out.by_name[name as usize] = fast;
        }
    }
    out.empty = out.by_name.is_empty() && out.by_size.values().all(|&t| t == 0);
    out
}

/// The estimated wait for peers of every communication kernel of `g` in
/// the window (by the same estimate as the replay).
pub fn comm_wait_total(cx: &Context, g: &Gpu) -> Ns {
    let comm: Vec<(u32, u64, Ns)> = window_collectives(cx, g)
        .map(|(o, n)| (o.name, n, o.dur()))
        .collect();
    let table = comm_transfer(comm.iter());
    window_collectives(cx, g)
        .map(|(o, n)| table.wait(o, n))
        .sum()
}

/// The communication kernels of `g` in the window, with their message
/// elements (0: none given).
fn window_collectives<'g>(
    cx: &'g Context,
    g: &'g Gpu,
) -> impl Iterator<Item = (&'g GpuOp, u64)> + 'g {
    let (w0, w1) = cx.window;
    g.streams
        .iter()
        .flat_map(|s| s.ops.iter().map(move |o| (s.id, o)))
        .filter(move |(_, o)| o.start < w1 && o.end > w0)
        .filter(|(_, o)| o.kind() == GpuOpKind::Kernel && cx.precision.of(o) == Precision::Comm)
        .map(|(id, o)| (o, g.comm_elems.get(&(id, o.start)).copied().unwrap_or(0)))
}

/// When a launch call enqueued its op, which started at `op_start`: the
/// call's start, or, for a call longer than `SLOW_LAUNCH_NS` (lazy module
/// loading, JIT), its end, unless the op started before then. A graph launch
/// is slow because it enqueues many ops, and they start while it runs
/// (SGLang's decode graph on ROCm: 544 kernels from one 1.6 ms call, the
/// first 14 µs in); anchored at its end, they would replay late.
#[inline]
pub(crate) fn launch_time(span: &HostSpan, op_start: Ns) -> Ns {
    if span.dur > SLOW_LAUNCH_NS && op_start >= span.ts + span.dur {
        span.ts + span.dur
    } else {
        span.ts
    }
}

/// See `launch_time`.
const SLOW_LAUNCH_NS: Ns = 1_000_000;

#[inline]
fn anchor_latency(o: &GpuOp, prev_end: Ns, w0: Ns, launch_ts: Option<Ns>) -> (Ns, Ns) {
    let (anchor, latency) = match launch_ts {
        // An op launched before the window is anchored at its start, and
        // its latency runs from there too (a trace that begins mid-job).
        Some(ts) => {
            let ready = ts.max(prev_end).max(w0);
            (ts, (o.start - ready).clamp(0, MAX_LATENCY_NS))
        }
        None => (o.start, 0),
    };
    (anchor.max(w0), latency)
}

/// Reads one stream's in-window ops in order.
#[derive(Debug, Clone)]
struct Cursor {
    /// Next model index, and next position.
    i: usize,
    pos: u32,
    /// The previous launch time, and the ops' latest end so far.
    prev_ts: Ns,
    prev_end: Ns,
    /// Next escape and next special.
    esc: usize,
    spec: usize,
}

impl Cursor {
    fn new(so: &StreamOps) -> Cursor {
        Cursor {
            i: so.lo,
            pos: 0,
            prev_ts: 0,
            prev_end: so.prev_end,
            esc: 0,
            spec: 0,
        }
    }

    #[inline(always)]
    fn advance(&mut self, so: &StreamOps, si: usize, (w0, w1): (Ns, Ns)) -> Option<OpView> {
        while self.i < so.hi {
            let i = self.i;
            let o = &so.ops[i];
            self.i += 1;
            if !so.all_in && (o.end <= w0 || o.start >= w1) {
                self.prev_end = self.prev_end.max(o.end);
                continue;
            }
            let pos = self.pos;
            self.pos += 1;
            let launch_ts = match so.launch[pos as usize] {
                NO_LAUNCH => None,
                ESCAPE => {
                    while so.escapes[self.esc].0 < pos {
                        self.esc += 1;
                    }
                    self.prev_ts = so.escapes[self.esc].1;
                    Some(self.prev_ts)
                }
                d => {
                    self.prev_ts += d as Ns;
                    Some(self.prev_ts)
                }
            };
            let (anchor, latency) = anchor_latency(o, self.prev_end, w0, launch_ts);
            self.prev_end = self.prev_end.max(o.end);
            return Some(OpView {
                stream: si as u32,
                idx: i as u32,
                pos,
                anchor,
                latency,
            });
        }
        None
    }
}

/// Ops in replay order: merged from the streams, or from the sorted list.
struct OpSource {
    cursors: Vec<Cursor>,
    /// The streams with ops left, in stream order, with their next op.
    live: Vec<OpView>,
    pos: usize,
}

impl OpSource {
    fn new(r: &Replay) -> OpSource {
        let mut cursors: Vec<Cursor> = r.streams.iter().map(Cursor::new).collect();
        let live = if r.order.is_some() {
            Vec::new()
        } else {
            cursors
                .iter_mut()
                .enumerate()
                .filter_map(|(si, c)| c.advance(&r.streams[si], si, r.window))
                .collect()
        };
        OpSource {
            cursors,
            live,
            pos: 0,
        }
    }

    #[inline(always)]
    fn next(&mut self, r: &Replay) -> Option<OpView> {
        if let Some(order) = &r.order {
            let v = order.get(self.pos).copied();
            self.pos += 1;
            return v;
        }
        // The earliest launch; the first stream on ties.
        let (first, rest) = self.live.split_first()?;
        let (mut k, mut best) = (0, first.anchor);
        for (j, h) in rest.iter().enumerate() {
            if h.anchor < best {
                (k, best) = (j + 1, h.anchor);
            }
        }
        let v = self.live[k];
        let si = v.stream as usize;
        match self.cursors[si].advance(&r.streams[si], si, r.window) {
            Some(n) => self.live[k] = n,
            None => {
                self.live.remove(k);
            }
        }
        Some(v)
    }

    #[inline(always)]
    fn facts(&mut self, r: &Replay, v: OpView, need_precision: bool) -> OpFacts {
        let si = v.stream as usize;
        let so = &r.streams[si];
        let o = &so.ops[v.idx as usize];
        let special = if so.special.is_empty() {
            None
        } else if r.order.is_some() {
            so.special.binary_search_by_key(&v.pos, |x| x.pos).ok()
        } else {
            let c = &mut self.cursors[si].spec;
            while *c < so.special.len() && so.special[*c].pos < v.pos {
                *c += 1;
            }
            Some(*c).filter(|&k| so.special.get(k).is_some_and(|x| x.pos == v.pos))
        };
        let wait = if r.comm.is_empty() {
            0
        } else {
            let elems = if so.comm_elems.is_empty() {
                0
            } else {
                so.comm_elems.get(&v.idx).copied().unwrap_or(0)
            };
            r.comm.wait(o, elems)
        };
        let (precision, softmax) = if need_precision {
            let f = r.precision.facts(o);
            let class = match (f.precision, f.attention) {
                (Precision::Fp32, AttnPart::Fused) => lanes::FP32_ATTENTION,
                (p, _) => p as u8,
            };
            (class, f.attention == AttnPart::Softmax)
        } else {
            (0, false)
        };
        OpFacts {
            dur: o.dur() - wait,
            wait,
            latency: v.latency as u32,
            stream: si as u32,
            special: special.map_or(NONE, |k| k as u32),
            precision,
            softmax,
        }
    }
}

/// Step durations from replayed boundaries.
pub fn durations(bounds: &[Ns]) -> Vec<Ns> {
    bounds.windows(2).map(|w| (w[1] - w[0]).max(0)).collect()
}

/// Median of a list: the one convention, `steps::median`.
pub fn median(v: Vec<Ns>) -> Ns {
    super::steps::median(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_collective_is_compared_with_instances_of_its_own_size() {
        // One kernel name runs every collective: 15 µs broadcasts of 9600
        // elements and 6.7-6.9 ms all-reduces of 2.9 M (an MI300X trace).
        let us = 1_000;
        let comm = [
            (7, 9600, 15 * us),
            (7, 2_873_320, 6_900 * us),
            (7, 9600, 14 * us),
            (7, 2_873_320, 6_700 * us),
            (7, 2_873_320, 6_750 * us),
            (7, 8_816_192, 9_000 * us),
        ];
        let t = comm_transfer(comm.iter());
        let k = |start, dur| GpuOp::new(GpuOpKind::Kernel, start, start + dur, 1, 7);
        assert_eq!(t.wait(&k(0, 6_900 * us), 2_873_320), 200 * us);
        assert_eq!(t.wait(&k(0, 15 * us), 9600), us);
        // A size seen once has nothing to compare with.
        assert_eq!(t.wait(&k(0, 9_000 * us), 8_816_192), 0);
        assert!(!t.is_empty());
        // Without sizes, by name: the all-reduce looks like waiting.
        let named: Vec<(u32, u64, Ns)> = comm.iter().map(|&(n, _, d)| (n, 0, d)).collect();
        let t = comm_transfer(named.iter());
        assert_eq!(t.wait(&k(0, 6_900 * us), 0), 6_886 * us);
    }

    fn data(start: Ns, len: Ns, sub: Sub) -> Seg {
        Seg {
            start,
            end: start + len,
            what: 0,
            launch_ns: 0,
            own_ns: 0,
            act: Act::Data,
            sub,
        }
    }

    #[test]
    fn a_profiler_range_waited_past_what_a_ready_batch_costs() {
        const US: Ns = 1_000;
        let loader = |lens: &[Ns]| -> Vec<Seg> {
            (lens.iter().enumerate())
                .map(|(i, &l)| data(i as Ns * 100_000 * US, l * US, Sub::DATALOADER))
                .collect()
        };
        // Ready batches cost about 1.4 ms each: the median.
        let segs = loader(&[4_300, 80, 1_350, 1_420, 1_380]);
        let ready = ready_cost(segs.iter().copied());
        assert_eq!(ready, 1_380 * US);
        let waited: Vec<bool> = segs.iter().map(|s| batch_waited(s, Some(ready))).collect();
        assert_eq!(waited, [true, false, false, false, false]);
        // Starved: every range is a wait; the median is capped.
        let segs = loader(&[30_000, 45_000, 2_600]);
        let ready = ready_cost(segs.iter().copied());
        assert_eq!(ready, READY_COST_MAX_NS);
        assert!(segs.iter().all(|s| batch_waited(s, Some(ready))));
        assert_eq!(ready_cost(std::iter::empty()), 0);
        // A recording's DataLoader range is never a wait (its blocking
        // reads are); its queue waits are, past 500 µs.
        assert!(!batch_waited(&segs[0], None));
        assert!(batch_waited(&data(0, 600 * US, Sub::QUEUE), None));
        assert!(!batch_waited(&data(0, 400 * US, Sub::QUEUE), None));
        assert!(batch_waited(&data(0, 600 * US, Sub::QUEUE), Some(ready)));
    }
}
