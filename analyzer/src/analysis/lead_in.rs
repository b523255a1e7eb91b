//! The lead-in: GPU work the trace does not show, launched before it began
//! (or by another process), holding back its first recorded ops. A profiler
//! started in the middle of a job records only what is launched after it
//! starts (CUPTI and roctracer log an activity for a launch they saw); a
//! queue of earlier work then runs unrecorded, and the first recorded ops
//! wait for it. On the trace that looks like idle GPU time at the start of
//! the window: a few tiny ops, then an op launched early that starts long
//! after its quick launch call returned, the GPU idle between (a stream
//! waiting on an event, or queued behind earlier kernels). Counting that
//! stretch as idle would put a fix on a GPU that was most likely busy, so the
//! window starts after it. Only a window without steps is trimmed: a step's
//! boundaries come from the job's own markers.

use super::attribution::{HELD_NS, stream_waits};
use crate::model::{CorrIndex, Gpu, GpuOp, Ns, SpanKind, Timeline};

/// A gap shorter than this at the start of the window is left as it is.
const MIN_GAP_NS: Ns = 1_000_000;
/// The recorded work before the gap is at most this share of the gap: a
/// few tiny ops (a profiler warm-up, an index kernel), not a first step.
const MAX_BUSY_SHARE: f64 = 0.01;
/// Ops looked at before giving up on finding a lead-in.
const MAX_OPS: usize = 10_000;

/// A stretch at the start of a GPU's window in which it ran unrecorded work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeadIn {
    pub gpu: u32,
    /// The window's start before the lead-in was left out (the first op).
    pub start: Ns,
    /// Where the first recorded op after it started.
    pub end: Ns,
    /// The held op's stream.
    pub stream: u64,
    /// How long the op waited after its launch call returned.
    pub held_ns: Ns,
    /// The host called cudaStreamWaitEvent (hipStreamWaitEvent) before the
    /// launch: the stream waited for an event recorded on unrecorded work.
    pub event_wait: bool,
}

impl LeadIn {
    pub fn ns(&self) -> Ns {
        self.end - self.start
    }
}

/// The lead-in of `g` from `from` (the window's start), if it has one.
pub fn find(tl: &Timeline, corr: &CorrIndex, g: &Gpu, from: Ns) -> Option<LeadIn> {
    let (start, op, stream) = first_gap(g, from)?;
    let launch = corr.get(op.corr)?;
    let thread = &tl.processes[launch.process as usize].threads[launch.thread as usize];
    let call = thread.spans.get(launch.span as usize)?;
    // Held on the GPU side, as attribution judges a hold.
    let held_ns = op.start - call.end();
    if held_ns < HELD_NS {
        return None;
    }
    // A wait the GPU records (CUDA) or the host call that set it up (ROCm
    // traces give hipStreamWaitEvent no stream), since the window's start.
    let gpu_wait = stream_waits(g)
        .iter()
        .any(|&(t, s)| s == stream && t >= start && t <= call.ts);
    let from = thread.spans.partition_point(|s| s.ts < start - HELD_NS);
    let host_wait = thread.spans[from..]
        .iter()
        .take_while(|s| s.ts <= call.ts)
        .any(|s| {
            matches!(s.kind, SpanKind::CudaRuntime | SpanKind::CudaDriver)
                && tl.strings.get(s.id).contains("StreamWaitEvent")
        });
    Some(LeadIn {
        gpu: g.id,
        start,
        end: op.start,
        stream,
        held_ns,
        event_wait: gpu_wait || host_wait,
    })
}

/// From the first op at or after `from`, in start order over all streams:
/// that op's start, and the op after the first gap of at least `MIN_GAP_NS`
/// with its stream, when the work before the gap is at most `MAX_BUSY_SHARE`
/// of it.
fn first_gap(g: &Gpu, from: Ns) -> Option<(Ns, &GpuOp, u64)> {
    let mut at: Vec<usize> = g
        .streams
        .iter()
        .map(|s| s.ops.partition_point(|o| o.start < from))
        .collect();
    let mut span: Option<(Ns, Ns)> = None;
    let mut busy = 0;
    for _ in 0..MAX_OPS {
        // The next op in start order (few streams: a scan is enough).
        let (si, op) = g
            .streams
            .iter()
            .enumerate()
            .filter_map(|(si, s)| s.ops.get(at[si]).map(|o| (si, o)))
            .min_by_key(|(_, o)| o.start)?;
        at[si] += 1;
        let (start, end) = span.unwrap_or((op.start, op.start));
        if span.is_some() && op.start >= end + MIN_GAP_NS {
            let quiet = busy as f64 <= MAX_BUSY_SHARE * (op.start - end) as f64;
            return quiet.then_some((start, op, g.streams[si].id));
        }
        // In start order, an op adds to the union only past the end so far.
        busy += (op.end - op.start.max(end)).max(0);
        span = Some((start, end.max(op.end)));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{GpuOpKind, Stream};

    const MS: Ns = 1_000_000;

    fn gpu(streams: &[(u64, &[(Ns, Ns)])]) -> Gpu {
        Gpu {
            streams: streams
                .iter()
                .map(|&(id, ops)| Stream {
                    id,
                    ops: ops
                        .iter()
                        .map(|&(a, b)| GpuOp::new(GpuOpKind::Kernel, a, b, 0, 0))
                        .collect(),
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn the_first_long_gap_counts_when_the_work_before_it_is_a_warm_up() {
        // Overlapping warm-up ops on two streams (10 µs of union), then 100 ms
        // of nothing: the op after the gap, on stream 3.
        let g = gpu(&[
            (2, &[(0, 8_000), (4_000, 10_000)]),
            (3, &[(110 * MS, 120 * MS)]),
        ]);
        let (start, op, stream) = first_gap(&g, 0).unwrap();
        assert_eq!((start, op.start, stream), (0, 110 * MS, 3));
        // From a later window start, the first op seen is the one after.
        assert!(first_gap(&g, 50 * MS).is_none());
        // A first step's worth of work before the gap (2 ms of 100) is not.
        let g = gpu(&[(2, &[(0, MS), (MS, 2 * MS)]), (3, &[(102 * MS, 103 * MS)])]);
        assert!(first_gap(&g, 0).is_none());
        // Gaps under 1 ms are not looked at; the first long one is.
        let g = gpu(&[(2, &[(0, 1_000), (500_000, 501_000), (300 * MS, 301 * MS)])]);
        assert_eq!(first_gap(&g, 0).map(|x| x.1.start), Some(300 * MS));
    }
}
