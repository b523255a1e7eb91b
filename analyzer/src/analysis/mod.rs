//! Analyses over a [`Timeline`](crate::model::Timeline): GPU busy and idle time,
//! steps, idle-time attribution along the critical path, precision, memory, and
//! the ranked findings with what-if savings.

pub mod activity;
pub mod attribution;
pub mod busy;
pub mod context;
pub mod findings;
pub mod hta;
pub mod intervals;
pub mod memory;
pub mod precision;
pub mod ranks;
pub mod steps;
mod types;
pub mod whatif;

pub use types::{Cause, DeviceDiagnosis, Diagnosis, Finding, IdleGap, Step, StepSource, Steps};

use crate::model::{Ns, Timeline};

/// Runs every analysis over one timeline.
pub fn diagnose(tl: &Timeline) -> Diagnosis {
    let corr = crate::model::CorrIndex::build(tl);
    let steps = steps::find(tl, &corr);
    let window = analysis_window(tl, &steps);
    let mut cx = context::Context::with_index(tl, window, corr);
    let mem = memory::analyze(&cx, &steps);
    cx.offload = mem.offload.clone();
    let mut devices = Vec::new();
    let mut primary: Option<(
        usize,
        attribution::GpuAttribution,
        attribution::Evidence,
        Vec<_>,
    )> = None;
    for (gi, g) in tl.gpus.iter().enumerate() {
        if busy::active_window(g).is_none() {
            continue;
        }
        let mut ev = attribution::Evidence::default();
        let att = attribution::attribute(&cx, g, &mut ev);
        let by_prec = busy::busy_by_precision(g, &cx.precision, window.0, window.1);
        devices.push(DeviceDiagnosis {
            gpu: g.id,
            window: att.window,
            busy_ns: att.busy_ns,
            idle_ns: (att.window.1 - att.window.0) - att.busy_ns,
            gaps: att.gaps.clone(),
            idle_by_cause: att.idle_by_cause,
            busy_by_precision: by_prec.clone(),
        });
        let ops = g.op_count();
        if primary
            .as_ref()
            .is_none_or(|p| tl.gpus[p.0].op_count() < ops)
        {
            primary = Some((gi, att, ev, by_prec));
        }
    }
    let findings = match &primary {
        Some((gi, att, ev, by_prec)) => findings::build(&findings::Inputs {
            cx: &cx,
            gpu: &tl.gpus[*gi],
            att,
            ev,
            mem: &mem,
            steps: &steps,
            busy_by_precision: by_prec,
        }),
        None => Vec::new(),
    };
    Diagnosis {
        window,
        steps,
        devices,
        findings,
    }
}

/// Steps when there are any, else the span of GPU activity, else everything.
fn analysis_window(tl: &Timeline, steps: &Steps) -> (Ns, Ns) {
    if let (Some(a), Some(b)) = (steps.steps.first(), steps.steps.last()) {
        return (a.start, b.end);
    }
    let gpu = tl
        .gpus
        .iter()
        .filter_map(busy::active_window)
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
    gpu.or_else(|| tl.extent()).unwrap_or((0, 0))
}
