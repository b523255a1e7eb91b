//! GPU busy time: the union of kernel, copy and memset activity per device, the
//! active window, and busy time per precision class.

use super::intervals;
use super::precision;
use crate::model::{Gpu, GpuOp, GpuOpKind, Ns, Precision, StrId, Strings};

/// Precision class per interned name, computed once.
pub struct PrecisionMap(Vec<Precision>);

impl PrecisionMap {
    pub fn new(strings: &Strings) -> PrecisionMap {
        PrecisionMap(
            strings
                .iter()
                .map(|(_, s)| precision::classify(s))
                .collect(),
        )
    }

    /// The class of an op: its own if a reader set one, else by name (kernels).
    pub fn of(&self, op: &GpuOp) -> Precision {
        if op.precision != Precision::Unknown {
            return op.precision;
        }
        match op.kind {
            GpuOpKind::Kernel => self.by_name(op.name),
            _ => Precision::NonGemm,
        }
    }

    pub fn by_name(&self, name: StrId) -> Precision {
        self.0
            .get(name as usize)
            .copied()
            .unwrap_or(Precision::NonGemm)
    }
}

/// Busy intervals of one GPU, merged.
pub fn busy_intervals(g: &Gpu) -> Vec<(Ns, Ns)> {
    intervals::union(
        g.streams
            .iter()
            .flat_map(|s| s.ops.iter().map(|o| (o.start, o.end)))
            .collect(),
    )
}

/// First start and last end of any op.
pub fn active_window(g: &Gpu) -> Option<(Ns, Ns)> {
    let lo = g
        .streams
        .iter()
        .filter_map(|s| s.ops.first())
        .map(|o| o.start)
        .min()?;
    let hi = g
        .streams
        .iter()
        .flat_map(|s| s.ops.iter())
        .map(|o| o.end)
        .max()?;
    Some((lo, hi))
}

/// Busy time of kernels per class inside [lo, hi) (union within a class).
pub fn busy_by_precision(g: &Gpu, pm: &PrecisionMap, lo: Ns, hi: Ns) -> Vec<(Precision, Ns)> {
    let mut per: Vec<Vec<(Ns, Ns)>> = vec![Vec::new(); Precision::ALL.len() + 1];
    for s in &g.streams {
        for o in s.ops.iter().filter(|o| o.kind == GpuOpKind::Kernel) {
            let (a, b) = (o.start.max(lo), o.end.min(hi));
            if b > a {
                per[pm.of(o) as usize].push((a, b));
            }
        }
    }
    Precision::ALL
        .iter()
        .map(|&p| {
            (
                p,
                intervals::total(&intervals::union(std::mem::take(&mut per[p as usize]))),
            )
        })
        .collect()
}
