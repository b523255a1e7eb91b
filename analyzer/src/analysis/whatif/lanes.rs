//! The lanes of a replay: each follows the shared walk with one change
//! applied. Lanes are followed in groups, and a group keeps its lanes' state
//! in arrays, lane by lane, so that an op is read once and then scheduled in
//! every lane by one short loop (the replay's hottest code: ops times lanes).

use super::{
    BATCH_RUN_GAP_NS, BatchClock, Change, FREE_LATENCY_NS, NONE, QUEUE_RING, SYNC_FLOOR_NS,
    Special, batch_waited, in_burst, is_host_work,
};
use crate::analysis::activity::{Act, Seg, Sub};
use crate::model::{Ns, Precision};

/// What a lane needs of an op. Compact, as the walk writes one per op and
/// every group reads it back: the few ops that wait for another stream, are
/// waited for, or are offload copies refer to their stream's `Special` (kept
/// inline, it made a step 80 bytes rather than 48).
#[derive(Clone, Copy)]
pub(super) struct OpFacts {
    /// Without the wait for peers of a communication kernel.
    pub dur: Ns,
    /// A communication kernel's estimated wait for its peers.
    pub wait: Ns,
    /// At most `MAX_LATENCY_NS`.
    pub latency: u32,
    pub stream: u32,
    /// Index in the stream's specials (`StreamOps::special`), or `NONE`.
    pub special: u32,
    /// `Precision as u8`, or [`FP32_ATTENTION`].
    pub precision: u8,
    /// A softmax kernel of unfused attention (`kernels::AttnPart`).
    pub softmax: bool,
}

/// One step of the replay's walk, the same for every lane.
#[derive(Clone, Copy)]
pub(super) enum Step {
    /// A segment of the critical host timeline begins.
    Enter(Seg),
    /// An op launched this far into the current segment.
    Op(Ns, OpFacts),
    /// A mark this far into the current segment.
    Mark(Ns),
    /// The current segment ends.
    Leave,
    /// The current segment, a launch call that waited for room in a full
    /// launch queue, ends: it returned when the op this many back in launch
    /// order was done.
    LeaveBlocked(u32),
    /// An op launched this long after the window.
    After(Ns, OpFacts),
}

/// The speed class of fused attention kernels in FP32, past the
/// precisions' (`Change::keep_fp32_attention`).
pub(super) const FP32_ATTENTION: u8 = 9;

// A block of steps is written by one core and read by the others.
const _: () = assert!(size_of::<Step>() <= 48);

pub(super) fn act_index(a: Act) -> usize {
    match a {
        Act::Cpu => 0,
        Act::Io => 1,
        Act::Data => 2,
        Act::Memory => 3,
        Act::Sync => 4,
        Act::Transfer => 5,
        Act::Launch => 6,
        Act::Wait => 7,
    }
}

/// What one lane's change does: all a lane reads of its `Change`, so two
/// changes with equal ones replay alike.
#[derive(PartialEq)]
pub(super) struct LaneChange {
    remove: [bool; 8],
    remove_launch: bool,
    drop_offload: bool,
    /// Kernel time divisor per precision (index `Precision as usize`), and
    /// for FP32 attention (index `FP32_ATTENTION`).
    speed: [f64; 10],
    speed_identity: bool,
    drop_softmax: bool,
    per_launch: Option<Ns>,
    drop_host_work: bool,
    batches: Option<BatchClock>,
    drop_deps: bool,
    comm_wait: bool,
}

impl LaneChange {
    pub(super) fn new(c: &Change) -> LaneChange {
        let mut remove = [false; 8];
        for a in c.remove {
            remove[act_index(*a)] = true;
        }
        let mut speed = [1.0; 10];
        for p in Precision::ALL.iter().copied().chain([Precision::Unknown]) {
            speed[p as usize] = (c.speedup)(p).max(1e-9);
        }
        speed[FP32_ATTENTION as usize] = if c.keep_fp32_attention {
            1.0
        } else {
            speed[Precision::Fp32 as usize]
        };
        LaneChange {
            remove,
            remove_launch: c.remove.contains(&Act::Launch),
            drop_offload: c.drop_offload,
            speed_identity: speed.iter().all(|&x| x == 1.0),
            speed,
            drop_softmax: c.drop_softmax,
            per_launch: c.per_launch_ns,
            drop_host_work: c.drop_host_work,
            batches: c.batches,
            drop_deps: c.drop_deps,
            comm_wait: c.comm_wait,
        }
    }

    /// Whether op durations or latencies differ from the walk's.
    fn changes_ops(&self) -> bool {
        !self.speed_identity || self.drop_softmax || self.drop_deps || self.comm_wait
    }

    /// An op's duration under this change.
    #[inline(always)]
    fn dur(&self, op: &OpFacts) -> Ns {
        let wait = if self.comm_wait { op.wait } else { 0 };
        if self.drop_softmax && op.softmax {
            return wait;
        }
        if self.speed_identity {
            return op.dur + wait;
        }
        let f = self.speed[op.precision as usize];
        if f == 1.0 && op.dur.unsigned_abs() < 1 << 53 {
            op.dur + wait
        } else {
            (op.dur as f64 / f) as Ns + wait
        }
    }

    /// An op's start latency under this change.
    #[inline(always)]
    fn lat(&self, op: &OpFacts) -> Ns {
        if self.drop_deps {
            (op.latency as Ns).min(FREE_LATENCY_NS)
        } else {
            op.latency as Ns
        }
    }
}

/// A time into the current segment on a lane's new clock.
#[inline(always)]
fn scaled(dt: Ns, dt_f: f64, scale: f64) -> Ns {
    if scale == 1.0 {
        dt
    } else {
        (dt_f * scale) as Ns
    }
}

/// `LaneState::ready` before the first batch.
const NO_BATCH_YET: Ns = Ns::MIN / 4;

/// One lane's place in the replay.
#[derive(Clone, Copy)]
struct LaneState {
    /// The host's time on the new clock at the end of the last segment.
    h: Ns,
    /// The latest end of any op.
    done: Ns,
    /// The current segment's start on the new clock, its time scale, and
    /// whether its activity is removed.
    seg_start: Ns,
    scale: f64,
    removed: bool,
    /// Python dispatch in the current segment costs at most this per
    /// launch (`Change::per_launch_ns`); then `last_dt` is the offset of
    /// the segment's last launch and `cur` the new time since its start.
    compress: Option<Ns>,
    last_dt: Ns,
    cur: Ns,
    /// A sync was removed and nothing launched since: the next I/O or
    /// batch wait still waits for the GPU (removing the sync would not
    /// have overlapped it).
    drain: bool,
    /// When the batch clock's last batch was ready.
    ready: Ns,
    /// When the batch of the current data segment arrives, in a lane whose
    /// batch clock replaces the wait (else `Ns::MIN`): the host leaves the
    /// segment no earlier.
    arrive: Ns,
}

impl LaneState {
    /// The new time of an instant `dt` into the current segment, when
    /// compressing; with `advance`, a launch there.
    #[inline(always)]
    fn compressed(&mut self, dt: Ns, per: Ns, advance: bool) -> Ns {
        let step = (dt - self.last_dt).max(0).min(per);
        if advance {
            self.cur += step;
            self.last_dt = self.last_dt.max(dt);
            self.seg_start + self.cur
        } else {
            self.seg_start + self.cur + step
        }
    }
}

/// Lanes followed together, and the segment they are in.
pub(super) struct Group {
    changes: Vec<LaneChange>,
    /// Some lane changes op durations.
    any_speed: bool,
    /// Some lane changes op durations or latencies.
    general: bool,
    /// The lanes before this one change neither (they are kept first, so
    /// that an op is scheduled in them by the plain loop).
    plain: usize,
    /// Each lane's place in the order the group was given.
    given: Vec<usize>,
    seg: Option<Seg>,
    /// The (original) end of the last wait for a batch.
    last_data_end: Ns,
    /// See `super::batch_waited`.
    pub(super) ranges: Option<Ns>,
    /// Every lane runs the current segment at its own speed (scale 1), so
    /// no time needs scaling: the common case, worth its own path.
    unit: bool,
    /// Per lane.
    state: Vec<LaneState>,
    /// New times of the marks so far, per lane.
    out: Vec<Vec<Ns>>,
    /// How many marks there are: the last one ends the last step.
    marks: usize,
    /// Per stream or slot, then lane (index = stream * lanes + lane).
    stream_free: Vec<Ns>,
    slot_end: Vec<Ns>,
    /// With `Step::LeaveBlocked` in the walk: the ends of the last
    /// `QUEUE_RING` ops, per lane (index = lane * QUEUE_RING + op % QUEUE_RING),
    /// and how many ops were scheduled (counted only then).
    track_ends: bool,
    ends: Vec<Ns>,
    scheduled: u64,
}

impl Group {
    pub(super) fn new(
        changes: &[&Change],
        w0: Ns,
        streams: usize,
        slots: usize,
        marks: usize,
        track_ends: bool,
    ) -> Group {
        let n = changes.len();
        let changes: Vec<LaneChange> = changes.iter().map(|c| LaneChange::new(c)).collect();
        let mut given: Vec<usize> = (0..n).collect();
        given.sort_by_key(|&i| changes[i].changes_ops());
        let plain = given.partition_point(|&i| !changes[i].changes_ops());
        let mut changes: Vec<Option<LaneChange>> = changes.into_iter().map(Some).collect();
        let changes: Vec<LaneChange> = given
            .iter()
            .map(|&i| changes[i].take().expect("each lane once"))
            .collect();
        let start = LaneState {
            h: w0,
            done: w0,
            seg_start: w0,
            scale: 1.0,
            removed: false,
            compress: None,
            last_dt: 0,
            cur: 0,
            drain: false,
            ready: NO_BATCH_YET,
            arrive: Ns::MIN,
        };
        Group {
            any_speed: changes.iter().any(|c| !c.speed_identity || c.drop_softmax),
            general: changes.iter().any(|c| c.changes_ops()),
            plain,
            given,
            changes,
            seg: None,
            last_data_end: Ns::MIN / 4,
            ranges: None,
            unit: true,
            state: vec![start; n],
            out: (0..n).map(|_| Vec::with_capacity(marks)).collect(),
            marks,
            stream_free: vec![w0; streams * n],
            slot_end: vec![Ns::MIN; slots * n],
            track_ends,
            ends: if track_ends {
                vec![w0; n * QUEUE_RING]
            } else {
                Vec::new()
            },
            scheduled: 0,
        }
    }

    /// How many lanes the group follows.
    pub(super) fn lanes(&self) -> usize {
        self.state.len()
    }

    /// Whether some lane changes op durations (the walk then gives each op's
    /// precision).
    pub(super) fn needs_precision(&self) -> bool {
        self.any_speed
    }

    /// Follows a block of the walk; `specials` are the streams' specials.
    pub(super) fn follow(&mut self, steps: &[Step], specials: &[&[Special]]) {
        for step in steps {
            match step {
                Step::Enter(s) => {
                    self.seg = Some(*s);
                    self.enter(s);
                }
                Step::Op(dt, op) => {
                    let dt = (*dt).max(0);
                    if self.unit {
                        self.schedule(op, specials, |st| st.seg_start + dt);
                    } else {
                        let dt_f = dt as f64;
                        self.schedule(op, specials, |st| match st.compress {
                            Some(per) => st.compressed(dt, per, true),
                            None => st.seg_start + scaled(dt, dt_f, st.scale),
                        });
                    }
                }
                Step::Mark(dt) => {
                    let dt = (*dt).max(0);
                    let last = self.out.first().is_some_and(|o| o.len() + 1 >= self.marks);
                    let in_segment = self.seg.is_some();
                    for (st, out) in self.state.iter_mut().zip(&mut self.out) {
                        if last {
                            // The last step ends on the GPU, when the work
                            // launched before its end is done: where the
                            // host is then says nothing of it.
                            out.push(st.done);
                            continue;
                        }
                        let at = match st.compress {
                            _ if !in_segment => st.h,
                            Some(per) => st.compressed(dt, per, false),
                            None => st.seg_start + scaled(dt, dt as f64, st.scale),
                        };
                        out.push(at.max(st.done));
                    }
                }
                Step::Leave => {
                    if let Some(s) = self.seg.take() {
                        self.leave(&s);
                    }
                }
                Step::LeaveBlocked(back) => {
                    if let Some(s) = self.seg.take() {
                        self.leave_blocked(&s, *back);
                    }
                }
                Step::After(dt, op) => self.schedule(op, specials, |st| st.h + dt),
            }
        }
    }

    /// Each lane's replayed mark times (the marks not reached wait for the
    /// end), and the end of its replay.
    pub(super) fn finish(self, marks: usize) -> Vec<(Vec<Ns>, Ns)> {
        let mut lanes: Vec<(usize, (Vec<Ns>, Ns))> = self
            .out
            .into_iter()
            .zip(&self.state)
            .zip(&self.given)
            .map(|((mut out, st), &i)| {
                let end = st.h.max(st.done);
                out.resize(out.len().max(marks), end);
                (i, (out, end))
            })
            .collect();
        lanes.sort_by_key(|l| l.0);
        lanes.into_iter().map(|l| l.1).collect()
    }

    fn enter(&mut self, s: &Seg) {
        let len = (s.end - s.start).max(1) as f64;
        let new_batch = s.act == Act::Data && s.start > self.last_data_end + BATCH_RUN_GAP_NS;
        let (burst, host_work) = (in_burst(s), is_host_work(s));
        // A wait the batch was not ready for, or loading in the loop itself:
        // what the batch clock replaces. A short wait found its batch ready
        // and keeps its own cost.
        let waited =
            (s.act == Act::Data && s.sub == Sub::MAIN_PROCESS) || batch_waited(s, self.ranges);
        for (st, c) in self.state.iter_mut().zip(&self.changes) {
            let batch_lane = waited && c.batches.is_some();
            st.removed =
                c.remove[act_index(s.act)] || batch_lane || (c.drop_host_work && host_work);
            st.compress = None;
            st.scale = if st.removed {
                // A merged CPU segment keeps its launch calls unless those go
                // too; a run of short reads, the program's time between them.
                if s.act == Act::Cpu && !c.remove_launch {
                    s.launch_ns as f64 / len
                } else if s.act == Act::Io {
                    s.own_ns as f64 / len
                } else {
                    0.0
                }
            } else if s.act == Act::Cpu && c.remove_launch {
                1.0 - s.launch_ns as f64 / len
            } else {
                1.0
            };
            if !st.removed && burst && c.per_launch.is_some() {
                st.compress = c.per_launch;
                st.last_dt = 0;
                st.cur = 0;
            }
            if st.removed && s.act == Act::Sync {
                st.drain = true;
            } else if st.drain && !st.removed && matches!(s.act, Act::Io | Act::Data) {
                st.h = st.h.max(st.done);
                st.drain = false;
            }
            if let (true, Some(b)) = (new_batch, c.batches) {
                // Never later than the recording had it.
                let cap = if s.sub == Sub::MAIN_PROCESS {
                    st.h + (s.end - s.start)
                } else {
                    st.h.max(s.end)
                };
                st.ready = if st.ready == NO_BATCH_YET {
                    // The producers come into the window at their new pace
                    // with nothing queued: the first batch is at most one
                    // period away. (A full queue let a short window run at
                    // the GPU's pace, faster than the batches can come.)
                    if batch_lane {
                        cap.min(st.h + b.period_ns)
                    } else {
                        st.h
                    }
                } else {
                    // One period after the last, the producers at most
                    // `queue` batches ahead.
                    (st.ready + b.period_ns).max(st.h - b.queue as Ns * b.period_ns)
                };
                // The batch comes at the end of the wait: what the loop
                // launched while waiting still goes out at its start.
                if batch_lane {
                    st.arrive = st.ready.min(cap);
                }
            }
            st.seg_start = st.h;
        }
        self.unit = self
            .state
            .iter()
            .all(|st| st.scale == 1.0 && st.compress.is_none());
    }

    fn leave(&mut self, s: &Seg) {
        let len = (s.end - s.start).max(1);
        if s.act == Act::Data {
            self.last_data_end = s.end;
        }
        let anchored = batch_waited(s, self.ranges);
        for st in &mut self.state {
            let h = if let Some(per) = st.compress {
                st.compressed(len, per, true)
            } else if s.act == Act::Sync && !st.removed {
                // Waits for everything launched so far, no longer.
                (st.h + SYNC_FLOOR_NS.min(s.end - s.start)).max(st.done)
            } else if anchored && !st.removed {
                // The batch was not ready: producers run on their own, and
                // it arrived when they finished it, however early the
                // consumer starts waiting. (A shorter wait found it ready.)
                st.h.max(s.end)
            } else if st.scale == 1.0 && len < 1 << 53 {
                st.h + len
            } else {
                st.h + (len as f64 * st.scale) as Ns
            };
            st.h = h.max(st.arrive);
            st.arrive = Ns::MIN;
        }
    }

    /// A launch call blocked on a full launch queue returns when the op
    /// `back` launches earlier is done in the lane, after at least the
    /// call's own cost; removing launch overhead leaves the wait.
    fn leave_blocked(&mut self, s: &Seg, back: u32) {
        let len = (s.end - s.start).max(0);
        let Some(op) = self.scheduled.checked_sub(back as u64 + 1) else {
            return self.leave(s);
        };
        if !self.track_ends || self.scheduled - op > QUEUE_RING as u64 {
            return self.leave(s);
        }
        let slot = (op % QUEUE_RING as u64) as usize;
        for (l, st) in self.state.iter_mut().enumerate() {
            let own = if st.removed {
                0
            } else {
                SYNC_FLOOR_NS.min(len)
            };
            st.h = (st.seg_start + own).max(self.ends[l * QUEUE_RING + slot]);
        }
    }

    /// Schedules `op` in every lane: it starts after its launch and launch
    /// latency, when its stream is free, and after the op it waits for.
    #[inline(always)]
    fn schedule(
        &mut self,
        op: &OpFacts,
        specials: &[&[Special]],
        mut at: impl FnMut(&mut LaneState) -> Ns,
    ) {
        let n = self.state.len();
        let lat = op.latency as Ns;
        let free = &mut self.stream_free[op.stream as usize * n..][..n];
        let special =
            (op.special != NONE).then(|| &specials[op.stream as usize][op.special as usize]);
        match special {
            None if !self.general => {
                for (st, free) in self.state.iter_mut().zip(free) {
                    let start = (at(st) + lat).max(*free);
                    let end = start + op.dur;
                    *free = end;
                    st.done = st.done.max(end);
                    st.drain = false;
                }
            }
            None => {
                // The lanes that change no op first, by the plain loop.
                let (plain, rest) = self.state.split_at_mut(self.plain);
                let (free_plain, free) = free.split_at_mut(self.plain);
                for (st, free) in plain.iter_mut().zip(free_plain) {
                    let start = (at(st) + lat).max(*free);
                    let end = start + op.dur;
                    *free = end;
                    st.done = st.done.max(end);
                    st.drain = false;
                }
                for ((st, free), c) in rest.iter_mut().zip(free).zip(&self.changes[self.plain..]) {
                    let start = (at(st) + c.lat(op)).max(*free);
                    let end = start + c.dur(op);
                    *free = end;
                    st.done = st.done.max(end);
                    st.drain = false;
                }
            }
            Some(sp) => {
                for (l, ((st, free), c)) in self
                    .state
                    .iter_mut()
                    .zip(free)
                    .zip(&self.changes)
                    .enumerate()
                {
                    let (after_dep, extra) = if c.drop_deps {
                        (Ns::MIN, 0)
                    } else if sp.dep != NONE {
                        (self.slot_end[sp.dep as usize * n + l], 0)
                    } else {
                        (sp.not_before, sp.extra)
                    };
                    let start = (at(st) + c.lat(op)).max(*free).max(after_dep) + extra;
                    let dur = if c.drop_offload && sp.offload {
                        0
                    } else {
                        c.dur(op)
                    };
                    let end = start + dur;
                    *free = end;
                    if sp.target != NONE {
                        self.slot_end[sp.target as usize * n + l] = end;
                    }
                    st.done = st.done.max(end);
                    st.drain = false;
                }
            }
        }
        if self.track_ends {
            let slot = (self.scheduled % QUEUE_RING as u64) as usize;
            let free = &self.stream_free[op.stream as usize * n..][..n];
            for (l, &end) in free.iter().enumerate() {
                self.ends[l * QUEUE_RING + slot] = end;
            }
            self.scheduled += 1;
        }
    }
}
