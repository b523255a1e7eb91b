//! Flows from a launching API call to its GPU work.
//!
//! The link is `CorrIndex`'s: an op's correlation id names the first CUDA API
//! span with that id in (process, thread, span) order (a driver call under a
//! runtime call shares the id; the runtime call wins). This index resolves the
//! same links without a hash map, because the writer asks once per span and
//! once per op: a sorted (corr, launch) table while building, then one bit per
//! op ("has a launch") and per span ("is the launch"), plus a sorted
//! (corr, op ordinal) table, 8 bytes per linked op, so the launch can list its
//! ops' flows before the ops are written. A test keeps it equal to `CorrIndex`.
//!
//! One call can launch several ops (a graph launch), and a flow has one source
//! and one destination, so each op has its own flow id: its ordinal + 1.

use crate::model::{SpanKind, Timeline};

pub(super) struct FlowIndex {
    by_corr: Vec<(u32, u32)>,
    linked_ops: Bits,
    /// Per process, per thread: which spans start flows.
    launches: Vec<Vec<Bits>>,
}

impl FlowIndex {
    /// Ordinals follow `Timeline::gpus` / `streams` / `ops` order.
    pub fn build(tl: &Timeline) -> FlowIndex {
        let mut picks: Vec<(u32, u32, u32, u32)> = vec![];
        for (p, proc) in tl.processes.iter().enumerate() {
            for (t, th) in proc.threads.iter().enumerate() {
                for (s, sp) in th.spans.iter().enumerate() {
                    if matches!(sp.kind, SpanKind::CudaRuntime | SpanKind::CudaDriver)
                        && sp.arg != 0
                    {
                        picks.push((sp.arg as u32, p as u32, t as u32, s as u32));
                    }
                }
            }
        }
        // The first span per id in (process, thread, span) order, as CorrIndex.
        picks.sort_unstable();
        picks.dedup_by_key(|e| e.0);
        let mut by_corr = vec![];
        let mut linked_ops = Bits::new(tl.gpu_op_count());
        let mut ordinal: u32 = 0;
        for op in tl.gpus.iter().flat_map(|g| &g.streams).flat_map(|s| &s.ops) {
            if op.corr != 0 && picks.binary_search_by_key(&op.corr, |e| e.0).is_ok() {
                by_corr.push((op.corr, ordinal));
                linked_ops.set(ordinal as usize);
            }
            ordinal = ordinal.wrapping_add(1);
        }
        by_corr.sort_unstable();
        let mut launches: Vec<Vec<Bits>> = tl
            .processes
            .iter()
            .map(|p| p.threads.iter().map(|t| Bits::new(t.spans.len())).collect())
            .collect();
        for &(corr, p, t, s) in &picks {
            if by_corr.binary_search_by_key(&corr, |e| e.0).is_ok() {
                launches[p as usize][t as usize].set(s as usize);
            }
        }
        FlowIndex {
            by_corr,
            linked_ops,
            launches,
        }
    }

    pub fn flow_id(ordinal: u32) -> u64 {
        ordinal as u64 + 1
    }

    /// Whether span `s` of thread `t` of process `p` launched linked GPU work.
    pub fn is_launch(&self, p: usize, t: usize, s: usize) -> bool {
        self.launches[p][t].get(s)
    }

    /// Whether the op with this ordinal has a launching call.
    pub fn is_linked(&self, ordinal: u32) -> bool {
        self.linked_ops.get(ordinal as usize)
    }

    /// Flow ids of the ops launched under `corr`.
    pub fn targets(&self, corr: u32) -> impl Iterator<Item = u64> + '_ {
        let lo = self.by_corr.partition_point(|e| e.0 < corr);
        self.by_corr[lo..]
            .iter()
            .take_while(move |e| e.0 == corr)
            .map(|e| Self::flow_id(e.1))
    }
}

struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }

    fn set(&mut self, i: usize) {
        if let Some(w) = self.0.get_mut(i / 64) {
            *w |= 1 << (i % 64);
        }
    }

    fn get(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;

    fn span(ts: Ns, kind: SpanKind, arg: u64) -> HostSpan {
        HostSpan {
            ts,
            dur: 10,
            arg,
            id: 0,
            kind,
        }
    }

    fn op(start: Ns, corr: u32) -> GpuOp {
        GpuOp::new(GpuOpKind::Kernel, start, start + 5, corr, 0)
    }

    /// The same links as CorrIndex: shared ids, ids on two threads, ids
    /// without ops, ops without launches, one launch with two ops.
    #[test]
    fn agrees_with_corr_index() {
        let (rt, drv) = (SpanKind::CudaRuntime, SpanKind::CudaDriver);
        let mut tl = Timeline::new(Source::Native, "t");
        let thread = |tid, spans| Thread {
            tid,
            spans,
            ..Thread::default()
        };
        tl.processes = vec![
            Process {
                threads: vec![
                    thread(1, vec![span(0, rt, 1), span(1, drv, 1), span(5, rt, 3)]),
                    thread(
                        2,
                        vec![span(2, rt, 3), span(3, drv, 4), span(4, SpanKind::Other, 5)],
                    ),
                ],
                ..Process::default()
            },
            Process {
                threads: vec![thread(3, vec![span(0, drv, 2), span(1, rt, 1)])],
                ..Process::default()
            },
        ];
        tl.gpus = vec![Gpu {
            streams: vec![
                Stream {
                    id: 1,
                    ops: vec![op(10, 1), op(11, 1), op(12, 5), op(13, 0)],
                },
                Stream {
                    id: 2,
                    ops: vec![op(10, 3), op(14, 2), op(15, 9)],
                },
            ],
            ..Gpu::default()
        }];
        let corr = CorrIndex::build(&tl);
        let idx = FlowIndex::build(&tl);
        let ops: Vec<_> = tl.gpus[0].streams.iter().flat_map(|s| &s.ops).collect();
        for (o, op) in ops.iter().enumerate() {
            let want = op.corr != 0 && corr.get(op.corr).is_some();
            assert_eq!(idx.is_linked(o as u32), want, "op {o}");
        }
        for (p, proc) in tl.processes.iter().enumerate() {
            for (t, th) in proc.threads.iter().enumerate() {
                for (s, sp) in th.spans.iter().enumerate() {
                    let me = LaunchRef {
                        process: p as u32,
                        thread: t as u32,
                        span: s as u32,
                    };
                    let has_ops = ops.iter().any(|o| o.corr as u64 == sp.arg);
                    let want = matches!(sp.kind, SpanKind::CudaRuntime | SpanKind::CudaDriver)
                        && sp.arg != 0
                        && has_ops
                        && corr.get(sp.arg as u32) == Some(me);
                    assert_eq!(idx.is_launch(p, t, s), want, "span {p}/{t}/{s}");
                }
            }
        }
        assert_eq!(idx.targets(1).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(idx.targets(9).count(), 0);
    }
}
