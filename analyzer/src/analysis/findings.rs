//! Findings: which causes get one, and what fixing each is worth (from the
//! what-if replays in `whatif::replays`). The sentences they print come from
//! `advice`.

use super::advice;
use super::attribution::{Evidence, GpuAttribution};
use super::context::Context;
use super::job::JobContext;
use super::memory::MemoryFacts;
use super::precision::bf16_speedup;
use super::types::{Cause, Finding, Steps};
use super::whatif::replays::Replays;
use super::whatif::{durations, median};
use crate::model::{Gpu, Ns, Precision};

/// Findings below both of these are left out as noise.
const MIN_SHARE_PCT: f64 = 0.5;

pub struct Inputs<'a> {
    pub cx: &'a Context<'a>,
    pub gpu: &'a Gpu,
    pub att: &'a GpuAttribution,
    pub ev: &'a Evidence,
    pub mem: &'a MemoryFacts,
    pub steps: &'a Steps,
    pub busy_by_precision: &'a [(Precision, Ns)],
    /// FP32 and TF32 GEMM time per kernel name id (`busy::PrecisionBusy`).
    pub gemm_by_name: &'a [Ns],
    /// The replays of this GPU (None without a launching thread).
    pub replays: Option<&'a Replays>,
    pub job: &'a JobContext,
}

pub fn build(i: &Inputs) -> Vec<Finding> {
    let (w0, w1) = i.cx.window;
    let wall = (w1 - w0).max(1);
    let measured_step = if i.steps.steps.is_empty() {
        wall
    } else {
        i.steps.median_ns
    };

    // Which causes get a finding.
    let mut causes: Vec<Cause> = Vec::new();
    for cause in Cause::ALL {
        let idle = i.att.idle_by_cause[cause.index()];
        let share = 100.0 * idle as f64 / wall as f64;
        // Offload and OOM-retry cost GPU time too, not only idle time.
        let memory_facts =
            cause == Cause::Memory && (i.mem.oom_count > 0 || i.mem.offload_bytes_per_step > 0);
        if share >= MIN_SHARE_PCT || memory_facts {
            causes.push(cause);
        }
    }
    // (saving, step after) of a replay.
    let estimate = |m: Option<&(Vec<Ns>, Ns)>| -> (Ns, Ns) {
        match (i.replays, m) {
            (Some(r), Some((m, _))) => {
                let b_marks = &r.base.0;
                let base_step = median(durations(b_marks)).max(1);
                let step = median(durations(m));
                let after = (measured_step as f64 * step as f64 / base_step as f64) as Ns;
                let span = |v: &[Ns]| {
                    (v.last().copied().unwrap_or(0) - v.first().copied().unwrap_or(0)).max(1) as f64
                };
                let saving = (wall as f64 * (1.0 - span(m) / span(b_marks))).max(0.0) as Ns;
                (saving, after.min(measured_step))
            }
            _ => (0, measured_step),
        }
    };
    let of_cause = |c: Cause| {
        i.replays
            .map(|r| r.by_cause[c.index()].as_ref().unwrap_or(&r.base))
    };
    let mut out = Vec::new();
    for &cause in &causes {
        let idle = i.att.idle_by_cause[cause.index()];
        let share = 100.0 * idle as f64 / wall as f64;
        let (saving, after) = match cause {
            // Nothing on the host to remove: at best the idle time itself.
            Cause::Other => (
                idle,
                measured_step - (measured_step as f64 * share / 100.0) as Ns,
            ),
            _ => estimate(of_cause(cause)),
        };
        let sub = top_sub(i.ev, cause);
        let (evidence, fix) = advice::explain(i, cause, sub, idle);
        out.push(Finding {
            cause: cause.name().to_string(),
            sub_cause: sub.to_string(),
            share_pct: round2(share),
            step_share_pct: round2(share),
            est_saving_ns: saving,
            est_step_ns_after: after,
            evidence,
            fix,
            kernels: Vec::new(),
        });
    }
    out.extend(advice::fp8_option(i, wall, measured_step));
    if let Some(f) = precision_finding(
        i,
        wall,
        measured_step,
        estimate(i.replays.and_then(|r| r.precision.as_ref())),
    ) {
        out.push(f);
    }
    out.sort_by(|a, b| {
        b.est_saving_ns
            .cmp(&a.est_saving_ns)
            .then(b.share_pct.total_cmp(&a.share_pct))
    });
    out
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The sub-cause with the most idle time.
fn top_sub(ev: &Evidence, cause: Cause) -> &'static str {
    ev.by_label
        .iter()
        .filter(|((c, _), _)| *c == cause)
        .max_by_key(|(_, ns)| **ns)
        .map(|((_, s), _)| *s)
        .unwrap_or("")
}

fn precision_finding(
    i: &Inputs,
    wall: Ns,
    measured_step: Ns,
    estimate: (Ns, Ns),
) -> Option<Finding> {
    let get = |p: Precision| {
        i.busy_by_precision
            .iter()
            .find(|x| x.0 == p)
            .map_or(0, |x| x.1)
    };
    let (fp32, tf32) = (get(Precision::Fp32), get(Precision::Tf32));
    let kernels: Ns = i.busy_by_precision.iter().map(|x| x.1).sum();
    if fp32 + tf32 == 0 || kernels == 0 {
        return None;
    }
    let cc = i.gpu;
    let (s32, why32) = bf16_speedup(Precision::Fp32, cc);
    let (s_tf, why_tf) = bf16_speedup(Precision::Tf32, cc);
    let (mut saving, mut after) = estimate;
    if i.att.launcher.is_none() {
        // No replay possible: the GEMM time saved, directly.
        saving = ((fp32 as f64) * (1.0 - 1.0 / s32) + (tf32 as f64) * (1.0 - 1.0 / s_tf)) as Ns;
        after = measured_step - (measured_step as f64 * saving as f64 / wall as f64) as Ns;
    }
    let share = 100.0 * (fp32 + tf32) as f64 / wall as f64;
    if share < MIN_SHARE_PCT {
        return None;
    }
    let (evidence, fix, kernels) = advice::precision(i, fp32, tf32, kernels, &why32, &why_tf);
    Some(Finding {
        cause: "precision".into(),
        sub_cause: if fp32 >= tf32 {
            "fp32".into()
        } else {
            "tf32".into()
        },
        share_pct: round2(share),
        step_share_pct: round2(share),
        est_saving_ns: saving,
        est_step_ns_after: after,
        evidence,
        fix,
        kernels,
    })
}
