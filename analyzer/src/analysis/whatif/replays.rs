//! Which replays the findings need, run in one walk: the base, one per
//! cause with host time on the critical timeline, and the precision change.
//! This is the orchestration of the what-ifs; `findings` reads their results.

use super::{Change, Replay};
use crate::analysis::activity::Act;
use crate::analysis::precision::bf16_speedup;
use crate::analysis::types::{Cause, Steps};
use crate::model::{Gpu, Ns, Precision};

/// The boundaries the replays report: the host-side launch of each step's
/// first op (a mark also waits for the GPU work launched before it) and the
/// last step's end, else the window.
pub fn step_marks(steps: &Steps, (w0, w1): (Ns, Ns)) -> Vec<Ns> {
    if steps.steps.is_empty() {
        vec![w0, w1]
    } else {
        let mut m: Vec<Ns> = steps.steps.iter().map(|s| s.launch).collect();
        m.push(steps.steps.last().map_or(w1, |s| s.end));
        m
    }
}

/// The host activities a cause's fix removes (none for `Other`).
fn removed_by(c: Cause) -> &'static [Act] {
    match c {
        Cause::Data => &[Act::Data],
        Cause::Io => &[Act::Io],
        Cause::Cpu => &[Act::Cpu],
        Cause::Memory => &[Act::Memory],
        Cause::Sync => &[Act::Sync],
        Cause::Transfer => &[Act::Transfer],
        Cause::Launch => &[Act::Launch],
        Cause::Other => &[],
    }
}

/// Replay results: without change, without each cause, and with BF16 GEMMs.
pub struct Replays {
    pub base: (Vec<Ns>, Ns),
    /// Indexed by `Cause::index()`; None where the replay would equal `base`
    /// (nothing of that cause on the critical host timeline).
    pub by_cause: [Option<(Vec<Ns>, Ns)>; 8],
    pub precision: Option<(Vec<Ns>, Ns)>,
}

impl Replays {
    /// Replays every change a finding may need, in one walk over the ops:
    /// this runs while the idle time is still being attributed, before the
    /// findings (and so the causes worth a replay) are known. Causes with
    /// nothing on the critical host timeline replay as the base does, and are
    /// not walked.
    pub fn run(
        r: &Replay,
        marks: &[Ns],
        gpu: &Gpu,
        busy_by_precision: &[(Precision, Ns)],
    ) -> Replays {
        let present = r.present();
        let causes: Vec<Cause> = Cause::ALL
            .into_iter()
            .filter(|&c| c != Cause::Other && present(removed_by(c), c == Cause::Memory))
            .collect();
        let prec = precision_speedups(gpu, busy_by_precision);
        let speedup = |p: Precision| match (&prec, p) {
            (Some(x), Precision::Fp32) => x.0,
            (Some(x), Precision::Tf32) => x.1,
            _ => 1.0,
        };
        let mut changes: Vec<Change> = vec![Change::none()];
        for &c in &causes {
            changes.push(Change {
                remove: removed_by(c),
                drop_offload: c == Cause::Memory,
                speedup: &|_| 1.0,
            });
        }
        if prec.is_some() {
            changes.push(Change {
                remove: &[],
                drop_offload: false,
                speedup: &speedup,
            });
        }
        let refs: Vec<&Change> = changes.iter().collect();
        let mut out = r.run_all(&refs, marks).into_iter();
        let base = out.next().expect("the base lane");
        let mut by_cause: [Option<(Vec<Ns>, Ns)>; 8] = Default::default();
        for c in causes {
            by_cause[c.index()] = out.next();
        }
        Replays {
            base,
            by_cause,
            precision: out.next(),
        }
    }
}

/// The assumed speed-ups of FP32 and TF32 GEMM time when moved to BF16, if
/// the GPU ran any.
pub fn precision_speedups(gpu: &Gpu, busy_by_precision: &[(Precision, Ns)]) -> Option<(f64, f64)> {
    let get = |p: Precision| {
        busy_by_precision
            .iter()
            .find(|x| x.0 == p)
            .map_or(0, |x| x.1)
    };
    let kernels: Ns = busy_by_precision.iter().map(|x| x.1).sum();
    if get(Precision::Fp32) + get(Precision::Tf32) == 0 || kernels == 0 {
        return None;
    }
    Some((
        bf16_speedup(Precision::Fp32, gpu).0,
        bf16_speedup(Precision::Tf32, gpu).0,
    ))
}
