//! Findings: which causes get one, and what fixing each is worth (from the
//! what-if replays in `whatif::replays`). The sentences they print come from
//! `advice`; the assumption each what-if made is stated here, beside the
//! model it describes.

use super::activity::Act;
use super::advice::{self, secs};
use super::arch::Arch;
use super::attribution::{Evidence, GpuAttribution};
use super::busy::KernelMix;
use super::context::{Context, clip, producer_processes};
use super::job::JobContext;
use super::memory::MemoryFacts;
use super::precision::{Fp32Time, bf16_speedup};
use super::types::{Cause, Combined, Finding, Steps};
use super::whatif::replays::{DataModel, Fix, GRAPH_FIXES, Replays, paced_by_batches};
use super::whatif::{BURST_GAP_NS, GRAPH_LAUNCH_NS, comm_wait_total};
use crate::model::{Gpu, Ns, Precision, Source};

/// Findings below this share of the window are left out as noise.
const MIN_SHARE_PCT: f64 = 0.5;
/// Host-side findings with less idle time than this share of the window
/// are not replayed with faster batches (`pairable`).
const PAIR_MIN_PCT: f64 = 2.0;
/// A kernel-side fix the host masks (`masked_saving`) must save at least
/// this share of the window once the other fixes are made: a finding that
/// saves ~0% alone is worth its place in the ranking only then.
const MASKED_MIN_PCT: f64 = 2.0;
/// Findings one remedy makes overlap by at least this share of the window
/// before the report says what they save together.
const OVERLAP_MIN_PCT: f64 = 1.0;
/// Findings that save less than this share of the step are minor.
pub const MINOR_STEP_PCT: f64 = 0.5;

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
    /// What some kernels are beyond their precision (`busy::KernelMix`).
    pub mix: &'a KernelMix,
    /// The replays of this GPU (None without a launching thread).
    pub replays: Option<&'a Replays>,
    pub job: &'a JobContext,
}

/// The findings, ranked by saving, the minor ones apart, and every fix at
/// once.
pub struct Built {
    pub findings: Vec<Finding>,
    pub minor: Vec<Finding>,
    /// Fixes that change the numerics (FP8), apart: not ranked with the
    /// others, nor in `combined`, since they need an accuracy check first.
    pub options: Vec<Finding>,
    pub combined: Option<Combined>,
}

/// A what-if's saving over the window and mean step after, from one ratio
/// (fixed replay over base replay), so the two agree.
pub fn estimate(ratio: f64, wall: Ns, mean_step: Ns) -> (Ns, Ns) {
    let r = ratio.clamp(0.0, 1.0);
    (
        (wall as f64 * (1.0 - r)).round() as Ns,
        (mean_step as f64 * r).round() as Ns,
    )
}

/// The ratio of a fix to an idle cause, capped so that it saves at most
/// `idle`: see `cap_of`.
fn capped(ratio: f64, idle: Ns, wall: Ns) -> f64 {
    ratio.max(1.0 - idle as f64 / wall as f64)
}

/// The most a host-side fix can save: no fix that leaves the GPU's work as
/// it is saves more than the idle time. A sync or a dependency removed lets
/// the replayed host run ahead of the GPU and hide other causes' idle time
/// too (a sync at 2% of the DLRM step claimed 14%), so those save at most
/// their own idle time, which attribution already gives the host work after
/// a sync that would overlap; graphs save at most the dispatch and launch
/// idle time (not slow launch calls: module loading stays).
fn cap_of(i: &Inputs, fix: Fix, idle: Ns) -> Ns {
    let by = |c: Cause| i.att.idle_by_cause[c.index()];
    match fix {
        Fix::Sync | Fix::Other => idle,
        Fix::CpuPython => {
            let slow = i.ev.by_label.get(&(Cause::Launch, "slow-call")).copied();
            idle + by(Cause::Launch) - slow.unwrap_or(0)
        }
        _ => i.att.idle_by_cause.iter().sum(),
    }
}

/// The sub-causes of `cpu` that CUDA graphs or torch.compile fix (Python
/// dispatch, and the run-queue delay it suffers on a busy machine, which
/// less dispatch suffers less); the others (host work outside launch
/// bursts, GIL, sleeps) are fixed by moving the work off the loop.
fn cpu_fix(sub: &str) -> Fix {
    if sub == "python" || sub == "contention" {
        Fix::CpuPython
    } else {
        Fix::HostWork
    }
}

pub fn build(i: &Inputs) -> Built {
    let (w0, w1) = i.cx.window;
    let wall = (w1 - w0).max(1);
    let mean_step = if i.steps.steps.is_empty() {
        wall
    } else {
        i.steps.mean_ns.max(1)
    };
    let ratio = |f: Fix| i.replays.map_or(1.0, |r| r.ratio(f));
    let mut out = Vec::new();
    // The fix each finding in `out` models, and whether it was paired with
    // faster batches.
    let mut modeled: Vec<(Fix, bool)> = Vec::new();
    let mut paired = false;
    let batches = producer_bound(i);
    let mut push = |cause: &str, sub: &str, idle: Ns, fix: Fix, texts: (String, String)| {
        let share = 100.0 * idle as f64 / wall as f64;
        let cap = cap_of(i, fix, idle);
        let alone = capped(ratio(fix), cap, wall);
        let swallowed = swallowed_by_batches(i, fix, idle, cap, alone);
        let alone_text = |batch_wait: Ns| {
            format!(
                "{}; alone, this fix saves {:.0}%: the loop would wait for batches instead (it \
                 waited {} for them already)",
                texts.0,
                100.0 * (1.0 - alone),
                secs(batch_wait)
            )
        };
        let (evidence, fix_text, assumed, r) = match swallowed {
            // The data fix has its own finding: this one stays about its
            // own fix, and says what the two save together.
            Some((both, _, batch_wait)) if i.replays.is_some_and(|r| r.data_advised()) => (
                format!(
                    "{}; with the data fix, the two save {:.0}%",
                    alone_text(batch_wait),
                    100.0 * (1.0 - both)
                ),
                texts.1.clone(),
                assumption(i, fix, sub),
                alone,
            ),
            Some((r, d, batch_wait)) => (
                alone_text(batch_wait),
                format!("{}; and {}", texts.1, advice::faster_batches(i, &d)),
                format!(
                    "{}; with faster batches too: {}",
                    assumption(i, fix, sub),
                    assumption(i, Fix::Data, "")
                ),
                r,
            ),
            None => (
                texts.0.clone(),
                texts.1.clone(),
                assumption(i, fix, sub),
                alone,
            ),
        };
        paired |= r < alone;
        modeled.push((fix, r < alone));
        let (saving, after) = estimate(r, wall, mean_step);
        let f = Finding {
            cause: cause.to_string(),
            sub_cause: sub.to_string(),
            share_pct: round2(share),
            step_share_pct: round2(share),
            est_saving_ns: saving,
            est_step_ns_after: after,
            assumption: assumed,
            evidence,
            fix: fix_text,
            kernels: Vec::new(),
        };
        // More workers are the one fix the producers do not bound.
        out.push(match batches {
            Some(u) if fix != Fix::Data => held_to_batches(f, u, wall, mean_step, "a faster loop"),
            _ => f,
        });
    };
    for p in planned(i) {
        let texts = advice::explain(i, p.cause, p.sub, p.idle);
        push(p.cause.name(), p.sub, p.idle, p.fix, texts);
    }
    say_graphs_overlap(i, &mut out, &modeled, wall);
    // Kernel-side findings whose saving the host masks stay findings,
    // whatever they save alone.
    let mut masked = Vec::new();
    for (f, is_masked) in [
        precision_finding(i, wall, mean_step, paired),
        attention_finding(i, wall, mean_step, paired),
    ]
    .into_iter()
    .flatten()
    {
        if is_masked {
            masked.push(f.cause.clone());
        }
        out.push(match batches {
            Some(u) => held_to_batches(f, u, wall, mean_step, "with faster kernels the loop"),
            None => f,
        });
    }
    let comm_wait = comm_wait(i);
    if let Some(f) = comm_finding(i, comm_wait, wall, mean_step) {
        out.push(match batches {
            Some(u) => held_to_batches(f, u, wall, mean_step, "with faster collectives the loop"),
            None => f,
        });
    }
    out.sort_by(|a, b| {
        b.est_saving_ns
            .cmp(&a.est_saving_ns)
            .then(b.share_pct.total_cmp(&a.share_pct))
    });
    let (findings, minor): (Vec<Finding>, Vec<Finding>) = out.into_iter().partition(|f| {
        100.0 * f.est_saving_ns as f64 / wall as f64 >= MINOR_STEP_PCT || masked.contains(&f.cause)
    });
    let combined = i.replays.map(|r| {
        // A finding paired with faster batches advises those too.
        let replayed = match r.combined_with_batches_ratio() {
            Some(x) if paired => x,
            _ => r.combined_ratio(),
        };
        let cap = combined_cap(i, paired) + comm_wait.unwrap_or(0);
        let floor = 1.0 - cap as f64 / wall as f64;
        // Never below what one of the findings saves: the ranking must not
        // read more than the whole. (The cap's terms are the findings' own
        // caps. And the replay of every fix once came out above one fix's,
        // 0.54 of the step against 0.35 for fused attention alone on a
        // generated timeline: the data fix's batch came at the start of the
        // wait, holding back a kernel the loop launched while it waited.
        // The lanes now bring it at the wait's end; this stays the guard.)
        let best = findings
            .iter()
            .chain(&minor)
            .map(|f: &Finding| 1.0 - f.est_saving_ns as f64 / wall as f64)
            .fold(1.0, f64::min);
        // Only more workers make batches come faster (see `producer_bound`).
        let ratio = replayed
            .max(floor)
            .min(best)
            .max(batches.unwrap_or(0.0).min(best));
        let (saving, after) = estimate(ratio, wall, mean_step);
        let mut assumption = "every fix at once, each as its finding assumes".to_string();
        if ratio > replayed {
            assumption.push_str(
                "; capped at the idle time the host-side fixes address plus the kernel time the \
                 others cut (the replay of all of them, its host running ahead of every wait, \
                 claimed more)",
            );
        }
        Combined {
            est_saving_ns: saving,
            est_step_ns_after: after,
            assumption,
        }
    });
    Built {
        findings,
        minor,
        combined,
        // An option that would save nothing measurable (the GPU waits on the
        // host) is not worth its numerics risk: it is left out.
        options: fp8_finding(i, wall, mean_step)
            .into_iter()
            .filter(|f| 100.0 * f.est_saving_ns as f64 / wall as f64 >= MINOR_STEP_PCT)
            .collect(),
    }
}

/// The most every fix at once can save, as each finding's own saving is
/// capped (`cap_of`): the host-side fixes leave the GPU's work as it is, so
/// together they save at most the idle time they address (each cause's
/// cap, the batch waits too where faster batches are advised with them, at
/// most all the idle time); the kernel-side ones (precision, unfused
/// attention; the collectives' wait for peers is added by the caller) at
/// most the kernel time they cut. Uncapped, a dependency fix
/// at 0.5% of an MI300X step, whose replay lets the host run ahead of every
/// wait, made "all fixes at once" claim 13% beside findings of 2% and 0.5%.
fn combined_cap(i: &Inputs, paired: bool) -> Ns {
    let by = |c: Cause| i.att.idle_by_cause[c.index()];
    let total: Ns = i.att.idle_by_cause.iter().sum();
    let mut host: Ns = planned(i).iter().map(|p| cap_of(i, p.fix, p.idle)).sum();
    if paired {
        host += by(Cause::Data);
    }
    let mut kernels = 0;
    let t = Fp32Time::of(i.busy_by_precision, i.mix);
    if t.total() > 0 {
        kernels += precision_cut(i, &t);
    }
    if super::attention::unfused(i.mix, i.busy_by_precision) {
        kernels += i.mix.softmax_ns;
    }
    host.min(total) + kernels
}

/// CUDA graphs are the fix of two findings (`GRAPH_FIXES`): the Python
/// dispatch between launches and the launch calls (more of them, where
/// graphs are in use already). Each what-if alone counts much of the
/// other's idle time (a host that dispatches faster also gets ahead of its
/// launches), so where their savings add up to more than the two replayed
/// together, both say what they save together. Not for a finding paired
/// with faster batches, whose saving is another replay's.
fn say_graphs_overlap(i: &Inputs, out: &mut [Finding], modeled: &[(Fix, bool)], wall: Ns) {
    let Some(r) = i.replays else { return };
    let Some(ratio) = r.graphs_ratio() else {
        return;
    };
    let at = |fix: Fix| modeled.iter().position(|&(f, paired)| f == fix && !paired);
    let (Some(a), Some(b)) = (at(GRAPH_FIXES[0]), at(GRAPH_FIXES[1])) else {
        return;
    };
    let total: Ns = i.att.idle_by_cause.iter().sum();
    let (both, _) = estimate(capped(ratio, total, wall), wall, wall);
    // Capped apart, either may claim a little more than the pair.
    let both = both.max(out[a].est_saving_ns).max(out[b].est_saving_ns);
    let pct = |ns: Ns| 100.0 * ns as f64 / wall as f64;
    // As the report rounds each saving, so that the sum reads as theirs.
    let sum = pct(out[a].est_saving_ns).round() + pct(out[b].est_saving_ns).round();
    if sum - pct(both) < OVERLAP_MIN_PCT {
        return;
    }
    let name = |f: &Finding| format!("{}/{}", f.cause, f.sub_cause);
    let (name_a, name_b) = (name(&out[a]), name(&out[b]));
    // With graphs in use already, the advice is more of them (and fusion).
    let remedy = if i.job.graphs() {
        "fewer launches"
    } else {
        "CUDA graphs"
    };
    for (k, other) in [(a, name_b), (b, name_a)] {
        out[k].evidence = format!(
            "{}; {remedy} cut {other} too: the two save {:.0}% together, not {sum:.0}%",
            out[k].evidence,
            pct(both),
        );
    }
}

/// Whether the batch producers swallow what `fix` frees: with batches
/// arriving as recorded, the loop reaches its next batch sooner and waits
/// there instead. That is so when the fix alone (`alone`, its capped
/// ratio) saves under half of its idle time while the fix with faster
/// batches saves a quarter of it more (and at least a minor finding's
/// share) than either fix alone. Then the pair's ratio (capped at `cap`
/// plus the data idle time), the data model, and the batch waits on the
/// critical host timeline.
fn swallowed_by_batches(
    i: &Inputs,
    fix: Fix,
    idle: Ns,
    cap: Ns,
    alone: f64,
) -> Option<(f64, DataModel, Ns)> {
    let r = i.replays?;
    let d = r.data?;
    let wall = (i.cx.window.1 - i.cx.window.0).max(1) as f64;
    let total: Ns = i.att.idle_by_cause.iter().sum();
    let cap = (cap + i.att.idle_by_cause[Cause::Data.index()]).min(total.max(cap));
    let pair = capped(r.ratio_with_batches(fix)?, cap, wall as Ns);
    let (share, solo, both) = (idle as f64 / wall, 1.0 - alone, 1.0 - pair);
    let more = (MINOR_STEP_PCT / 100.0).max(share / 4.0);
    // With the data fix advised, the pair must beat it too.
    let data = if r.data_advised() {
        1.0 - r.ratio(Fix::Data)
    } else {
        0.0
    };
    (solo < share / 2.0 && both - solo.max(data) >= more).then_some((pair, d, r.batch_wait_ns))
}

/// The least ratio any fix but more workers can reach (each finding's, in
/// `held_to_batches`, and every fix at once) where the loop never waited
/// for a batch (no data model to pace the replay) but the DataLoader's
/// worker processes had no spare time: the loop cannot take batches faster
/// than they come, and workers that never wait (for an index to load, or
/// room in the queue) give them at most 1/u as fast, u their share of time
/// at work. A balanced loop (a batch per step, just in time) was credited
/// the whole of a 30% io stall, where 2.5% was all the workers allowed.
/// The harmonic mean of u over the workers (their rates add up); None when
/// batch waits were recorded (the data model paces the replays then) or
/// nothing bounds it.
fn producer_bound(i: &Inputs) -> Option<f64> {
    let r = i.replays?;
    if r.data.is_some() || i.cx.tl.source == Source::Kineto {
        return None;
    }
    let launcher = i.att.launcher?;
    if producer_processes(i.cx.tl, launcher.0 as usize).is_empty() {
        return None;
    }
    let (w0, w1) = i.cx.window;
    let mut inverse = 0.0;
    let mut n = 0;
    for p in i.cx.producers(launcher.0, launcher.1) {
        let alive = i.cx.alive_in(p, w0, w1);
        if alive <= 0 {
            continue;
        }
        let segs = i.cx.segments(p);
        let spare: Ns = clip(&segs, w0, w1)
            .filter(|s| matches!(s.act, Act::Data | Act::Wait))
            .map(|s| s.end - s.start)
            .sum();
        let u = (1.0 - spare as f64 / alive as f64).clamp(0.01, 1.0);
        inverse += 1.0 / u;
        n += 1;
    }
    (n > 0).then(|| n as f64 / inverse)
}

/// Finding `f` held to `producer_bound`'s `u`, where it claimed more:
/// `faster` (the fixed job) would wait for batches instead.
fn held_to_batches(mut f: Finding, u: f64, wall: Ns, mean_step: Ns, faster: &str) -> Finding {
    if 1.0 - f.est_saving_ns as f64 / wall as f64 >= u {
        return f;
    }
    let (saving, after) = estimate(u, wall, mean_step);
    f.est_saving_ns = saving;
    f.est_step_ns_after = after;
    f.evidence = format!(
        "{}; the loop never waited for a batch, but its batch producers were at work {:.0}% \
         of the time: {faster} would wait for batches, so this fix alone saves at most {:.0}% \
         (more workers would let it save more)",
        f.evidence,
        100.0 * u,
        100.0 * (1.0 - u)
    );
    f.assumption = format!(
        "{}; batches come no faster than the producers' spare time allows (at work {:.0}% of \
         the time)",
        f.assumption,
        100.0 * u
    );
    f
}

/// A cause's finding to be: its top sub-cause, its idle time, and the fix
/// its what-if models.
struct Planned {
    cause: Cause,
    sub: &'static str,
    idle: Ns,
    fix: Fix,
}

/// The idle causes that get a finding (a finding or a minor one), from the
/// attribution alone: above `MIN_SHARE_PCT` of the window (memory also with
/// OOMs or offload traffic, which cost GPU time too).
fn planned(i: &Inputs) -> Vec<Planned> {
    let wall = (i.cx.window.1 - i.cx.window.0).max(1);
    let counts = |idle: Ns| counts(idle, wall);
    let mut out = Vec::new();
    for cause in Cause::ALL {
        let idle = i.att.idle_by_cause[cause.index()];
        if cause == Cause::Cpu {
            // One finding per fix: dispatch overhead, and other host work.
            for fix in [Fix::CpuPython, Fix::HostWork] {
                let (sub, idle) = top_sub_where(i.ev, cause, |s| cpu_fix(s) == fix);
                if counts(idle) {
                    out.push(Planned {
                        cause,
                        sub,
                        idle,
                        fix,
                    });
                }
            }
            continue;
        }
        let memory_facts =
            cause == Cause::Memory && (i.mem.oom_count > 0 || i.mem.offload_bytes_per_step > 0);
        if counts(idle) || memory_facts {
            let fix = match cause {
                Cause::Data => Fix::Data,
                Cause::Io => Fix::Io,
                Cause::Cpu => Fix::CpuPython,
                Cause::Memory => Fix::Memory,
                Cause::Sync => Fix::Sync,
                Cause::Transfer => Fix::Transfer,
                Cause::Launch => Fix::Launch,
                Cause::Other => Fix::Other,
            };
            let mut sub = top_sub_where(i.ev, cause, |_| true).0;
            if sub.is_empty() && memory_facts {
                // No idle time to name it by: the facts name it.
                sub = if i.mem.oom_count > 0 {
                    "oom"
                } else {
                    "offload"
                };
            }
            out.push(Planned {
                cause,
                sub,
                idle,
                fix,
            });
        }
    }
    out
}

/// The fixes the report will advise (as findings or minor ones), known
/// before any what-if is replayed: the replays model these, and `combined`
/// applies them, and only them, together. (Built from every fix the replay
/// could model, `combined` promised savings from fixes the report never
/// advised: CUDA graphs on a V100 trace whose one finding was FP16.)
/// `comm_waits`: whether the replay found collectives that waited for
/// their peers.
pub fn advised(i: &Inputs, comm_waits: bool) -> Vec<Fix> {
    let wall = (i.cx.window.1 - i.cx.window.0).max(1);
    let counts = |ns: Ns| counts(ns, wall);
    let mut out: Vec<Fix> = planned(i).iter().map(|p| p.fix).collect();
    let fp32_tf32: Ns = i
        .busy_by_precision
        .iter()
        .filter(|x| matches!(x.0, Precision::Fp32 | Precision::Tf32))
        .map(|x| x.1)
        .sum();
    if counts(fp32_tf32) {
        out.push(Fix::Precision);
    }
    if comm_waits && counts(comm_wait_total(i.cx, i.gpu)) {
        out.push(Fix::Comm);
    }
    if super::attention::unfused(i.mix, i.busy_by_precision) {
        out.push(Fix::Attention);
    }
    out
}

/// The advised host-side fixes worth replaying with faster batches too
/// (see `swallowed_by_batches`): those of a cause with at least
/// `PAIR_MIN_PCT` of the window idle. Below that, what the pair could show
/// is not worth a replay lane on every trace with batch waits.
pub fn pairable(i: &Inputs) -> Vec<Fix> {
    let wall = (i.cx.window.1 - i.cx.window.0).max(1) as f64;
    planned(i)
        .iter()
        .filter(|p| paced_by_batches(p.fix) && 100.0 * p.idle as f64 / wall >= PAIR_MIN_PCT)
        .map(|p| p.fix)
        .collect()
}

/// Whether `ns` of the window is enough for a finding (`MIN_SHARE_PCT`):
/// one test for what `advised` plans and what `build` reports.
fn counts(ns: Ns, wall: Ns) -> bool {
    100.0 * ns as f64 / wall as f64 >= MIN_SHARE_PCT
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The sub-cause with the most idle time among those `keep` accepts, and
/// their idle time together.
fn top_sub_where(ev: &Evidence, cause: Cause, keep: impl Fn(&str) -> bool) -> (&'static str, Ns) {
    let mut subs: Vec<(&'static str, Ns)> = ev
        .by_label
        .iter()
        .filter(|((c, s), _)| *c == cause && keep(s))
        .map(|((_, s), ns)| (*s, *ns))
        .collect();
    // Largest first; by name on ties, so the choice does not depend on the
    // map's order.
    subs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let total = subs.iter().map(|s| s.1).sum();
    (subs.first().map_or("", |s| s.0), total)
}

/// What the what-if of `fix` assumed, in words, for a finding of `sub`.
fn assumption(i: &Inputs, fix: Fix, sub: &str) -> String {
    let data = i.replays.and_then(|r| r.data);
    let the_loop = if i.job.inference() {
        "the inference loop"
    } else {
        "the training loop"
    };
    match fix {
        Fix::Data => match data {
            Some(d) if d.workers == Some(0) => format!(
                "{} DataLoader workers load the batches at the measured {} per batch (one every {}), \
                 {} batches ahead; {the_loop} only takes them",
                d.workers_after.unwrap_or(4),
                secs(d.cost_per_batch_ns),
                secs(d.clock.period_ns),
                d.clock.queue
            ),
            Some(d) => match (d.workers, d.workers_after) {
                (Some(n), Some(m)) => format!(
                    "num_workers {n} -> {m} at the measured {} per batch per worker{}: a batch \
                     every {} instead of every {}{}",
                    secs(d.cost_per_batch_ns),
                    if d.cpu_wait_per_batch_ns > 0 {
                        format!(
                            ", less the {} of it they waited for a CPU (the machine was loaded; \
                             the new workers are assumed to get cores)",
                            secs(d.cpu_wait_per_batch_ns)
                        )
                    } else {
                        String::new()
                    },
                    secs(d.clock.period_ns),
                    secs(d.cost_per_batch_ns / n.max(1) as Ns),
                    // The clock runs on through the epochs: the recorded
                    // cost per batch includes the workers' restarts.
                    if i.ev.producers_restarted > 0 {
                        ", kept across epochs (the recorded cost includes their restarts)"
                    } else {
                        ""
                    }
                ),
                _ => format!(
                    "twice the DataLoader workers (the trace does not show them) at the measured cost \
                     per batch: a batch every {} instead of every {}",
                    secs(d.clock.period_ns),
                    secs(d.cost_per_batch_ns)
                ),
            },
            None => {
                "batches ready whenever the loop asks (too few batch waits to measure their cost)"
                    .to_string()
            }
        },
        Fix::Io => match advice::io_writing(i) {
            Some(advice::Writing::Saves) => "the saves move to a background thread: the training \
                                             thread no longer waits for the writes, nor for \
                                             serializing the data between them"
                .to_string(),
            Some(advice::Writing::Logs) => "the log writes and their flushes move to a background \
                                            thread: the training thread no longer waits for them, \
                                            nor for formatting the records between them"
                .to_string(),
            None => "the files are read from RAM (page cache, or a local NVMe copy cached first): \
                     reads cost no wait"
                .to_string(),
        },
        Fix::CpuPython => format!(
            "CUDA graphs or torch.compile: Python dispatch between launches costs {} per launch{}; \
             CPU stretches over {} without a launch (preprocessing, logging) are kept",
            secs(GRAPH_LAUNCH_NS),
            if sub == "contention" {
                ", its wait for a CPU included"
            } else {
                ""
            },
            secs(BURST_GAP_NS)
        ),
        Fix::HostWork => {
            let moved = match (i.job.serving_engine, i.job.inference()) {
                (Some(_), _) => "overlaps the GPU: the engine prepares each step while the \
                                 GPU runs the one before"
                    .to_string(),
                (None, true) => format!(
                    "moves off {the_loop} (a background thread or process, or every N requests) and \
                     overlaps the GPU"
                ),
                (None, false) => format!(
                    "moves off {the_loop} (DataLoader workers, a background thread, or every N \
                     steps) and overlaps the GPU"
                ),
            };
            format!(
                "the host work outside launch bursts (CPU stretches over {}, GIL waits, sleeps) {moved}",
                secs(BURST_GAP_NS)
            )
        }
        Fix::Memory => {
            let (malloc, free) = advice::alloc_api(i);
            format!(
                "allocator calls ({malloc}/{free}) and offload copies gone from the steady state"
            )
        }
        Fix::Sync => "the blocking sync removed; the host work after it kept, and file reads or \
                      batch waits after it still wait for the GPU"
            .to_string(),
        // As the advice (`advice::explain`, Cause::Transfer) has it: pinned
        // memory where copies were pageable, else the copies overlapped.
        Fix::Transfer if i.mem.pageable_copies > 0 => {
            "pinned memory and asynchronous copies: the host no longer stages host-to-device copies"
                .to_string()
        }
        Fix::Transfer => match i.job.serving_engine {
            Some(_) => "the host's part of host-to-device copies overlaps the GPU: the engine \
                        prepares each step's inputs while the GPU runs the one before"
                .to_string(),
            None => "the next inputs copied ahead on a side stream: the host's part of \
                     host-to-device copies overlaps the GPU's work"
                .to_string(),
        },
        Fix::Launch => {
            "fused or graph-launched kernels: launch calls cost no host time".to_string()
        }
        Fix::Other => format!(
            "the waits on other streams and events removed: ops start once launched and their stream \
             is free ({} start latency); an upper bound, as real dependencies stay",
            secs(super::whatif::FREE_LATENCY_NS)
        ),
        Fix::Fp8 => crate::analysis::precision::fix(
            Precision::Bf16,
            crate::analysis::arch::Arch::of(i.gpu),
            i.job.inference(),
        )
        .map(|f| f.assumption)
        .unwrap_or_default(),
        Fix::Precision => {
            let t = Fp32Time::of(i.busy_by_precision, i.mix);
            let mut why: Vec<String> = Vec::new();
            let arch = Arch::of(i.gpu);
            for p in [Precision::Fp32, Precision::Tf32] {
                let gemm = if p == Precision::Fp32 { t.gemm } else { t.tf32 };
                if gemm > 0 && p == Precision::Fp32 && t.autocast_first(arch) {
                    why.push(format!(
                        "FP32 GEMMs ~{}x, as TF32 would give (BF16 autocast gives more; they \
                         are the lesser part of the FP32 time here)",
                        bf16_speedup(p, i.gpu).0
                    ));
                } else if gemm > 0 {
                    why.push(bf16_speedup(p, i.gpu).1);
                }
            }
            if t.attention > 0 {
                why.push(if t.attention_stays(arch) {
                    "FP32 attention kernels (SDPA's memory-efficient ones) keep their time: \
                     TF32 does not reach them"
                        .to_string()
                } else {
                    format!(
                        "FP32 attention moves to 16-bit fused kernels (FlashAttention, cuDNN): \
                         ~{}x assumed, as for FP32 GEMMs (9.8x measured on an H200)",
                        bf16_speedup(Precision::Fp32, i.gpu).0
                    )
                });
            }
            format!(
                "GEMM time divided by the architecture's ratio: {}",
                why.join("; ")
            )
        }
        Fix::Comm => "collectives take their transfer time only, estimated from the fastest \
                      instances of each (of each message size, where the trace gives sizes; one \
                      rank: an estimate); the wait for peers removed"
            .to_string(),
        Fix::Attention => "fused attention (SDPA, FlashAttention): the softmax kernels' time \
                           goes, as the score matrix is never written out; the QK^T and PV GEMMs \
                           and any scaling or masking kernels keep their time"
            .to_string(),
    }
}

/// Attention run unfused (`attention::unfused`): the softmax kernels'
/// busy share, and what fusing saves by its replay (else their time).
fn attention_finding(i: &Inputs, wall: Ns, mean_step: Ns, paired: bool) -> Option<(Finding, bool)> {
    let a = i.mix;
    if !super::attention::unfused(a, i.busy_by_precision) {
        return None;
    }
    let direct = a.softmax_ns as f64 / wall.max(1) as f64;
    let ratio = match i.replays {
        Some(r) if i.att.launcher.is_some() => r.ratio(Fix::Attention),
        _ => 1.0 - direct,
    };
    let (saving, after) = estimate(ratio, wall, mean_step);
    let share = 100.0 * direct;
    let (evidence, fix, kernels) = advice::attention(i);
    let masked = masked_saving(i, Fix::Attention, ratio, direct, paired, mean_step);
    let evidence = with_masked(i, evidence, ratio, masked);
    let finding = Finding {
        cause: "attention".into(),
        sub_cause: "unfused".into(),
        share_pct: round2(share),
        step_share_pct: round2(share),
        est_saving_ns: saving,
        est_step_ns_after: after,
        assumption: assumption(i, Fix::Attention, ""),
        evidence,
        fix,
        kernels,
    };
    Some((finding, matches!(masked, Some(Masked::Until(..)))))
}

/// How a host-bound loop masks a kernel-side fix (`masked_saving`).
#[derive(Clone, Copy)]
enum Masked {
    /// Once every other fix is made it saves more: the mean step with
    /// every other fix made, and with this one too.
    Until(Ns, Ns),
    /// It saves little even then: the host (or the batches it waits for)
    /// would set the pace. With the kernel time it cuts (a share of the
    /// window), and whether other fixes save anything.
    Still { direct: f64, others: bool },
}

/// Where a host-bound loop masks a kernel-side fix (see
/// `whatif::replays::masked_by_host`): the fix alone (`alone`, its ratio)
/// saves under half of the kernel time it cuts (`direct`, a share of the
/// window, at least `MASKED_MIN_PCT`). It is masked `Until` the other fixes
/// are made where it then saves a quarter of `direct` more (and at least
/// `MASKED_MIN_PCT` of the window), else `Still`.
fn masked_saving(
    i: &Inputs,
    fix: Fix,
    alone: f64,
    direct: f64,
    paired: bool,
    mean_step: Ns,
) -> Option<Masked> {
    i.att.launcher?;
    let (rest, all) = i.replays?.after_others(fix, paired)?;
    let (solo, later) = (1.0 - alone, rest - all);
    if solo >= direct / 2.0 || direct < MASKED_MIN_PCT / 100.0 {
        return None;
    }
    let more = (MASKED_MIN_PCT / 100.0).max(direct / 4.0);
    let step = |r: f64| (mean_step as f64 * r).round() as Ns;
    Some(if later - solo >= more {
        Masked::Until(step(rest), step(all))
    } else {
        Masked::Still {
            direct,
            others: rest < 0.995,
        }
    })
}

/// A kernel-side finding's evidence, with why its fix saves little alone
/// where the host masks it, and what it saves once the host keeps up where
/// that is more (`masked_saving`).
fn with_masked(i: &Inputs, evidence: String, alone: f64, masked: Option<Masked>) -> String {
    let step = if i.steps.steps.is_empty() {
        "window"
    } else {
        "step"
    };
    let solo = 100.0 * (1.0 - alone);
    // The batches are named where waiting for them is much of the host's
    // pace, not wherever a batch clock could be measured.
    let idle: Ns = i.att.idle_by_cause.iter().sum();
    let batches = i.replays.is_some_and(|r| r.data.is_some())
        && 4 * i.att.idle_by_cause[Cause::Data.index()] >= idle;
    match masked {
        Some(Masked::Until(rest, all)) => format!(
            "{evidence}; alone, this fix saves {solo:.0}%: the host{} sets the pace, and faster \
             kernels would wait for it; once the other fixes are made, it takes the {step} from \
             {} to {} ({:.0}% less)",
            if batches {
                ", waiting for its batches,"
            } else {
                ""
            },
            secs(rest),
            secs(all),
            100.0 * (1.0 - all as f64 / rest.max(1) as f64)
        ),
        Some(Masked::Still { direct, others }) => format!(
            "{evidence}; the kernels would take {:.0}% of the {step} less, but the GPU would then \
             wait for the host{}: this fix saves {solo:.0}%{}",
            100.0 * direct,
            if batches { " and its batches" } else { "" },
            if others {
                ", even once the other fixes are made"
            } else {
                ""
            }
        ),
        None => evidence,
    }
}

/// The collectives' estimated wait for peers in the window, where the
/// replay found some (`Replays::full`).
fn comm_wait(i: &Inputs) -> Option<Ns> {
    i.replays?.full.as_ref()?;
    // Two passes over every op, for nothing on a GPU without collectives.
    if !i
        .busy_by_precision
        .iter()
        .any(|&(p, ns)| p == Precision::Comm && ns > 0)
    {
        return None;
    }
    Some(comm_wait_total(i.cx, i.gpu))
}

/// The wait for peers inside communication kernels (`wait`, from
/// [`comm_wait`]), estimated on this rank.
fn comm_finding(i: &Inputs, wait: Option<Ns>, wall: Ns, mean_step: Ns) -> Option<Finding> {
    let wait = wait?;
    let share = 100.0 * wait as f64 / wall as f64;
    if !counts(wait, wall) {
        return None;
    }
    let (saving, after) = estimate(
        i.replays.map_or(1.0, |r| r.ratio(Fix::Comm)),
        wall,
        mean_step,
    );
    let (evidence, fix) = advice::comm_wait(wait);
    Some(Finding {
        cause: "comm".into(),
        sub_cause: "wait".into(),
        share_pct: round2(share),
        step_share_pct: round2(share),
        est_saving_ns: saving,
        est_step_ns_after: after,
        assumption: assumption(i, Fix::Comm, ""),
        evidence,
        fix,
        kernels: Vec::new(),
    })
}

/// FP8 as an option where BF16 is in use already (its replay is the FP8
/// lane; `whatif::replays::fp8_speedup` says where it applies).
fn fp8_finding(i: &Inputs, wall: Ns, mean_step: Ns) -> Option<Finding> {
    let r = i.replays?;
    r.by_fix[Fix::Fp8.index()].as_ref()?;
    let (saving, after) = estimate(r.ratio(Fix::Fp8), wall, mean_step);
    let (share, evidence, fix) = advice::fp8_option(i, wall)?;
    Some(Finding {
        cause: "precision".into(),
        sub_cause: "fp8".into(),
        share_pct: round2(share),
        step_share_pct: round2(share),
        est_saving_ns: saving,
        est_step_ns_after: after,
        assumption: assumption(i, Fix::Fp8, ""),
        evidence,
        fix,
        kernels: Vec::new(),
    })
}

/// The kernel time the precision fix cuts, directly: the FP32/TF32 GEMM
/// time (and FP32 attention, where the fix reaches it) less that time
/// divided by the architecture's ratio.
fn precision_cut(i: &Inputs, t: &Fp32Time) -> Ns {
    let cc = i.gpu;
    let (s32, _) = bf16_speedup(Precision::Fp32, cc);
    let (s_tf, _) = bf16_speedup(Precision::Tf32, cc);
    let s_attention = if t.attention_stays(Arch::of(cc)) {
        1.0
    } else {
        s32
    };
    let cut = (t.gemm as f64) * (1.0 - 1.0 / s32)
        + (t.attention as f64) * (1.0 - 1.0 / s_attention)
        + (t.tf32 as f64) * (1.0 - 1.0 / s_tf);
    cut.round() as Ns
}

fn precision_finding(i: &Inputs, wall: Ns, mean_step: Ns, paired: bool) -> Option<(Finding, bool)> {
    let t = Fp32Time::of(i.busy_by_precision, i.mix);
    let kernels: Ns = i.busy_by_precision.iter().map(|x| x.1).sum();
    if t.total() == 0 || kernels == 0 {
        return None;
    }
    let direct = precision_cut(i, &t) as f64 / wall as f64;
    let ratio = match i.replays {
        Some(r) if i.att.launcher.is_some() => r.ratio(Fix::Precision),
        // No replay possible.
        _ => 1.0 - direct,
    };
    let (saving, after) = estimate(ratio, wall, mean_step);
    let share = 100.0 * t.total() as f64 / wall as f64;
    if !counts(t.total(), wall) {
        return None;
    }
    let (evidence, fix, kernels) = advice::precision(i, &t, kernels);
    let masked = masked_saving(i, Fix::Precision, ratio, direct, paired, mean_step);
    let evidence = with_masked(i, evidence, ratio, masked);
    let finding = Finding {
        cause: "precision".into(),
        sub_cause: if t.from() == Precision::Fp32 {
            "fp32".into()
        } else {
            "tf32".into()
        },
        share_pct: round2(share),
        step_share_pct: round2(share),
        est_saving_ns: saving,
        est_step_ns_after: after,
        assumption: assumption(i, Fix::Precision, ""),
        evidence,
        fix,
        kernels,
    };
    Some((finding, matches!(masked, Some(Masked::Until(..)))))
}
