//! Analyses over a [`Timeline`]: GPU busy and idle time,
//! steps, idle-time attribution along the critical path, precision, memory, and
//! the ranked findings with what-if savings.

pub mod activity;
pub mod advice;
pub mod arch;
pub mod attention;
pub mod attribution;
pub mod busy;
pub mod context;
#[cfg(test)]
mod equivalence;
pub mod findings;
pub mod host;
pub mod hta;
pub mod intervals;
pub mod job;
pub mod kernels;
pub mod lead_in;
pub mod memory;
pub mod precision;
pub mod ranks;
#[cfg(test)]
mod reference;
pub mod saves;
pub mod startup;
pub mod steps;
mod types;
pub mod whatif;

pub use types::{
    Cause, Combined, DeviceDiagnosis, Diagnosis, DroppedStep, Finding, IdleGap, Periodic, Startup,
    StartupItem, Step, StepSource, Steps,
};

use rayon::prelude::*;

use crate::model::{Ns, Timeline};

/// Runs every analysis over one timeline.
pub fn diagnose(tl: &Timeline) -> Diagnosis {
    // STALLSCOPE_TIMING=1 also prints when each phase ended, for benchmarks.
    let t0 = std::time::Instant::now();
    let timing = std::env::var_os("STALLSCOPE_TIMING").is_some();
    let lap = |what: &str| {
        if timing {
            eprintln!(
                "timing:   {what} done at {:.3} s",
                t0.elapsed().as_secs_f64()
            );
        }
    };
    // The correlation index and the steps, next to the lookups that need
    // neither.
    let ((corr, mut startup, mut steps), (lookups, mut job)) = rayon::join(
        || {
            // Start-up's passes over the spans and ops need no index.
            let (corr, scan) =
                rayon::join(|| crate::model::CorrIndex::build(tl), || startup::scan(tl));
            lap("corr");
            let startup = scan.finish(tl, &corr);
            let steps = steps::find(tl, &corr, startup.as_ref());
            lap("steps");
            (corr, startup, steps)
        },
        || rayon::join(|| context::Lookups::build(tl), || job::detect(tl)),
    );
    let (window, lead_in) = analysis_window(tl, &steps, startup.as_ref(), &corr);
    if let Some(s) = startup.as_mut() {
        s.judge_rest(!steps.steps.is_empty(), window);
    }
    let mut cx = context::Context::from_parts(tl, window, corr, lookups);
    lap("cx");
    // The GPU the findings are about: the first with the most ops.
    let active: Vec<bool> = tl
        .gpus
        .iter()
        .map(|g| busy::active_window(g).is_some())
        .collect();
    let mut primary_gpu: Option<usize> = None;
    for (gi, g) in tl.gpus.iter().enumerate() {
        if active[gi] && primary_gpu.is_none_or(|p| tl.gpus[p].op_count() < g.op_count()) {
            primary_gpu = Some(gi);
        }
    }
    // What needs neither the memory findings nor a launcher's host timeline
    // (each GPU's launching thread, busy time by precision and idle gaps),
    // beside the memory findings and the host side (which needs only the
    // window): both serial, and together about as long.
    let ((mem, host), mut per_gpu) = rayon::join(
        || (memory::analyze(&cx, &steps), host::analyze(tl, window)),
        || {
            tl.gpus
                .par_iter()
                .zip(&active)
                .map(|(g, &on)| {
                    on.then(|| {
                        // One pass over the ops for the idle gaps, the busy
                        // time by precision and the launching thread.
                        let mut prec = busy::PrecisionBusy::new(window.0, window.1);
                        let mut launches = attribution::Launches::new(&cx);
                        let idle = attribution::idle_gaps(&cx, g, |o| {
                            prec.add(o, &cx.precision);
                            launches.add(o);
                        });
                        let (by_prec, gemm_by_name, mix) = prec.finish();
                        (launches.main(), by_prec, gemm_by_name, mix, idle)
                    })
                })
                .collect::<Vec<_>>()
        },
    );
    cx.offload = mem.offload.clone();
    lap("mem+launchers");
    if job.mode == job::Mode::Unknown {
        let (training, kernels) = per_gpu.iter().flatten().fold((0, 0), |(t, k), g| {
            (t + g.3.training_ns, k + g.1.iter().map(|x| x.1).sum::<Ns>())
        });
        job.from_kernels(training, kernels);
    }
    let mut devices = Vec::new();
    let mut primary = None;
    for (gi, g) in tl.gpus.iter().enumerate() {
        let Some((launcher, by_prec, gemm_by_name, mix, idle)) = per_gpu[gi].take() else {
            continue;
        };
        // The launching thread's segments (attribution and replay read them)
        // next to the GPU side of the replay; then the attribution of the
        // idle gaps next to the replay's host side.
        let is_primary = primary_gpu == Some(gi) && launcher.is_some();
        let (_, scan) = rayon::join(
            || launcher.map(|l| cx.segments(l)),
            || {
                let scan = is_primary.then(|| whatif::Replay::scan(&cx, g));
                lap("replay-scan");
                scan
            },
        );
        lap("segs+scan");
        let mut ev = attribution::Evidence::default();
        let marks = whatif::replays::step_marks(&steps, window);
        // The attribution of the idle gaps next to the replay's host side;
        // then the replays of the fixes the findings will advise, which the
        // attribution decides.
        let (mut att, replay) = rayon::join(
            || {
                let a = attribution::attribute_gaps(&cx, idle, launcher, &mut ev);
                lap("attr");
                a
            },
            || match (scan, launcher) {
                (Some(s), Some(l)) => Some((s.finish(&cx, l), l)),
                _ => None,
            },
        );
        let replays = replay.map(|(r, l)| {
            let inputs = findings::Inputs {
                cx: &cx,
                gpu: g,
                att: &att,
                ev: &ev,
                mem: &mem,
                steps: &steps,
                busy_by_precision: &by_prec,
                gemm_by_name: &gemm_by_name,
                mix: &mix,
                replays: None,
                job: &job,
            };
            let advised = findings::advised(&inputs, r.comm_waits());
            let pairable = findings::pairable(&inputs);
            let kernels = whatif::replays::GpuKernels {
                gpu: g,
                busy_by_precision: &by_prec,
                mix: &mix,
            };
            let rs =
                whatif::replays::Replays::run(&cx, &r, l, &marks, &kernels, &advised, &pairable);
            lap("replays");
            rs
        });
        devices.push(DeviceDiagnosis {
            gpu: g.id,
            window: att.window,
            busy_ns: att.busy_ns,
            idle_ns: (att.window.1 - att.window.0) - att.busy_ns,
            // The findings need the totals only.
            gaps: std::mem::take(&mut att.gaps),
            idle_by_cause: att.idle_by_cause,
            busy_by_precision: by_prec.clone(),
            low_bit_gemm_ns: mix.low_bit_gemm_ns,
        });
        if primary_gpu == Some(gi) {
            primary = Some((gi, att, ev, by_prec, gemm_by_name, mix, replays));
        }
    }
    if let Some(gi) = primary_gpu
        && let Some(d) = devices.iter().find(|d| d.gpu == tl.gpus[gi].id)
    {
        steps.periodic = steps::find_periodic(&steps, &d.gaps, |g| steps::io_file(tl, g));
    }
    let built = match &primary {
        // A trace that is all start-up, or nearly, has no steady state to
        // advise on.
        _ if startup.as_ref().is_some_and(|s| s.no_steady_state()) => findings::Built {
            findings: Vec::new(),
            minor: Vec::new(),
            combined: None,
            options: Vec::new(),
        },
        Some((gi, att, ev, by_prec, gemm_by_name, mix, replays)) => {
            findings::build(&findings::Inputs {
                cx: &cx,
                gpu: &tl.gpus[*gi],
                att,
                ev,
                mem: &mem,
                steps: &steps,
                busy_by_precision: by_prec,
                gemm_by_name,
                mix,
                replays: replays.as_ref(),
                job: &job,
            })
        }
        None => findings::Built {
            findings: Vec::new(),
            minor: Vec::new(),
            combined: None,
            options: Vec::new(),
        },
    };
    lap("findings");
    Diagnosis {
        window,
        steps,
        startup,
        lead_in,
        devices,
        findings: built.findings,
        minor: built.minor,
        options: built.options,
        combined: built.combined,
        job,
        host: Some(host),
    }
}

/// Steps when there are any, else the span of GPU activity after start-up
/// (all of it when there is nothing after) and after the lead-in of every
/// active GPU (see [`lead_in`]), else everything.
fn analysis_window(
    tl: &Timeline,
    steps: &Steps,
    startup: Option<&Startup>,
    corr: &crate::model::CorrIndex,
) -> ((Ns, Ns), Vec<lead_in::LeadIn>) {
    if let (Some(a), Some(b)) = (steps.steps.first(), steps.steps.last()) {
        return ((a.start, b.end), Vec::new());
    }
    let gpu = tl
        .gpus
        .iter()
        .filter_map(busy::active_window)
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
    let w = match (gpu, startup) {
        (Some((a, b)), Some(s)) if s.until > a && s.until < b && !s.all => (s.until, b),
        (Some(w), _) => w,
        (None, _) => return (tl.extent().unwrap_or((0, 0)), Vec::new()),
    };
    // Every GPU with work in the window must have one: the window starts
    // when the first recorded work does.
    let leads: Option<Vec<_>> = tl
        .gpus
        .iter()
        .filter(|g| busy::active_window(g).is_some_and(|(_, end)| end > w.0))
        .map(|g| lead_in::find(tl, corr, g, w.0))
        .collect();
    match leads.and_then(|l| Some((l.iter().map(|l| l.end).min()?, l))) {
        Some((start, l)) if start < w.1 => ((start, w.1), l),
        _ => (w, Vec::new()),
    }
}
