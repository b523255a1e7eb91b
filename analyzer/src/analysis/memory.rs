//! Memory facts: OOM events, allocator churn, offload-style transfers that
//! recur every step, pageable copies, and peak allocated memory.

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use super::activity::{Act, Sub};
use super::context::Context;
use super::types::Steps;
use crate::model::{CopyKind, GpuOpKind, MemKind, Ns, SpanKind};

/// Copies at least this large can be offload traffic.
const OFFLOAD_MIN_BYTES: u64 = 1 << 20;

#[derive(Debug, Default, Clone)]
pub struct MemoryFacts {
    pub oom_count: usize,
    /// (requested, free, total) of the first OOM.
    pub first_oom: Option<(u64, u64, u64)>,
    pub alloc_calls: usize,
    pub alloc_ns: Ns,
    pub free_calls: usize,
    pub free_ns: Ns,
    /// Correlation ids of copies that recur every step.
    pub offload: FxHashSet<u32>,
    pub offload_bytes_per_step: u64,
    pub offload_copies_per_step: f64,
    pub pageable_copies: usize,
    pub pageable_bytes: u64,
    pub pageable_ns: Ns,
    pub peak_allocated: u64,
    pub device_memory: u64,
}

pub fn analyze(cx: &Context, steps: &Steps) -> MemoryFacts {
    let tl = cx.tl;
    let (w0, w1) = cx.window;
    let mut f = MemoryFacts {
        oom_count: tl.ooms.len(),
        ..Default::default()
    };
    f.first_oom = tl.ooms.first().map(|o| (o.requested, o.free, o.total));
    // Allocation and free calls in the window.
    let calls = tl
        .processes
        .par_iter()
        .flat_map(|p| p.threads.par_iter())
        .flat_map(|t| t.spans.par_chunks(1 << 16))
        .map(|spans| {
            let mut c = (0usize, 0 as Ns, 0usize, 0 as Ns);
            for s in spans
                .iter()
                .filter(|s| matches!(s.kind, SpanKind::CudaRuntime | SpanKind::CudaDriver))
            {
                if s.ts >= w1 || s.end() <= w0 {
                    continue;
                }
                if let Some((Act::Memory, sub)) = cx.names.get(s.id) {
                    if sub == Sub::FREE {
                        c.2 += 1;
                        c.3 += s.dur;
                    } else {
                        c.0 += 1;
                        c.1 += s.dur;
                    }
                }
            }
            c
        })
        .reduce(
            || (0, 0, 0, 0),
            |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3 + b.3),
        );
    (f.alloc_calls, f.alloc_ns, f.free_calls, f.free_ns) = calls;
    // Recurring same-size copies.
    let mut by_size: FxHashMap<(u8, u64), Vec<u32>> = FxHashMap::default();
    for g in &tl.gpus {
        f.device_memory = f.device_memory.max(g.memory_bytes);
        for s in &g.streams {
            for o in s
                .ops
                .iter()
                .filter(|o| o.kind() == GpuOpKind::Memcpy && o.start < w1 && o.end > w0)
            {
                if o.copy() == CopyKind::HTOD && o.src() == MemKind::PAGEABLE {
                    f.pageable_copies += 1;
                    f.pageable_bytes += o.bytes();
                    f.pageable_ns += o.dur();
                }
                if o.bytes() >= OFFLOAD_MIN_BYTES
                    && matches!(o.copy(), CopyKind::HTOD | CopyKind::DTOH)
                {
                    by_size
                        .entry((o.copy().0, o.bytes()))
                        .or_default()
                        .push(o.corr);
                }
            }
        }
        f.peak_allocated = f.peak_allocated.max(peak(g));
    }
    let n_steps = steps.steps.len();
    if n_steps >= 3 {
        let recurring: Vec<(&(u8, u64), &Vec<u32>)> = by_size
            .iter()
            .filter(|(_, v)| v.len() * 10 >= n_steps * 8 && v.len() <= n_steps * 8)
            .collect();
        let kinds: FxHashSet<u8> = recurring.iter().map(|((k, _), _)| *k).collect();
        let per_step_copies: f64 =
            recurring.iter().map(|(_, v)| v.len() as f64).sum::<f64>() / n_steps as f64;
        // One recurring copy per step is an input batch; several, or copies in
        // both directions, are weights or optimizer state moving back and forth.
        if per_step_copies >= 2.0 || kinds.len() == 2 {
            for ((_, bytes), v) in &recurring {
                f.offload.extend(v.iter().copied().filter(|&c| c != 0));
                f.offload_bytes_per_step += bytes * v.len() as u64 / n_steps as u64;
            }
            f.offload_copies_per_step = per_step_copies;
        }
    }
    f
}

/// Highest sum of live allocations.
fn peak(g: &crate::model::Gpu) -> u64 {
    let mut live: FxHashMap<u64, u64> = FxHashMap::default();
    let (mut cur, mut peak) = (0u64, 0u64);
    for m in &g.memory {
        if m.alloc {
            if let Some(old) = live.insert(m.address, m.bytes) {
                cur = cur.saturating_sub(old);
            }
            cur += m.bytes;
            peak = peak.max(cur);
        } else if let Some(b) = live.remove(&m.address) {
            cur = cur.saturating_sub(b);
        }
    }
    peak
}
