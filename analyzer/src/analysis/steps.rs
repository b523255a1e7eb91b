//! Training steps, measured on the GPU. Host-side markers say which work
//! belongs to which iteration: PyTorch's ProfilerStep ranges, else another
//! range that repeats once per iteration, else DataLoader `__next__` or
//! `optimizer.step` calls, else the period of the GPU work. A step's GPU span
//! runs from the first GPU op launched inside marker N to the first launched
//! inside marker N+1: with asynchronous launches, the host-side range closes
//! long before the GPU is done with it.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::types::{DroppedStep, IdleGap, Periodic, Startup, Step, StepSource, Steps};
use crate::model::{CorrIndex, GpuOpKind, Ns, SpanKind, StrId, Timeline};

/// A step this much slower than the median is flagged as an outlier.
pub const OUTLIER_FACTOR: f64 = 1.5;
/// A first or last marker this much shorter than the median marker was cut
/// off by the start or end of the trace.
const TRUNCATED_FACTOR: f64 = 0.25;

/// A host-side [start, end) range.
type Range = (Ns, Ns);
/// A GPU op by (launch time, GPU start, GPU end).
type Launch = (Ns, Ns, Ns);

/// Host-side markers: [start, end) ranges, one per iteration, and the
/// process whose launches they hold (None: every process).
struct Markers {
    source: StepSource,
    label: String,
    ranges: Vec<(Ns, Ns)>,
    process: Option<u32>,
}

pub fn find(tl: &Timeline, corr: &CorrIndex, startup: Option<&Startup>) -> Steps {
    let markers = profiler_steps(tl)
        .map(|(pi, r)| Markers {
            source: StepSource::ProfilerStep,
            label: "ProfilerStep#".to_string(),
            ranges: r,
            process: Some(pi),
        })
        .or_else(|| repeating_range(tl, true))
        .or_else(|| loop_calls(tl))
        .or_else(|| repeating_range(tl, false))
        .or_else(|| {
            periodic_gpu_work(tl, corr).map(|(l, r)| Markers {
                source: StepSource::Detected,
                label: l,
                ranges: r,
                process: None,
            })
        });
    match markers {
        Some(m) => {
            let ops_in = stream_launches(tl, corr, m.process);
            Steps {
                label: m.label,
                ..on_gpu(m.source, &m.ranges, &ops_in, startup)
            }
        }
        None => Steps::default(),
    }
}

/// The GPU ops launched in [a, b): (earliest GPU start, latest GPU end, the
/// launch time of the earliest), or None when there are none.
pub type OpsIn<'a> = dyn Fn(Ns, Ns) -> Option<Launch> + Sync + 'a;

/// `OpsIn` over the streams process `pi` (every process when None) launched
/// onto. A stream runs its ops in launch order, so each is searched by
/// launch time, without copying or sorting its ops.
fn stream_launches<'a>(
    tl: &'a Timeline,
    corr: &'a CorrIndex,
    pi: Option<u32>,
) -> impl Fn(Ns, Ns) -> Option<Launch> + 'a {
    let launch = move |o: &crate::model::GpuOp| {
        corr.get(o.corr).map(|r| {
            let t = &tl.processes[r.process as usize].threads[r.thread as usize];
            (r.process, t.spans[r.span as usize].ts)
        })
    };
    // Streams with a linked op of the process.
    let streams: Vec<&'a [crate::model::GpuOp]> = tl
        .gpus
        .iter()
        .flat_map(|g| &g.streams)
        .filter(|s| {
            s.ops
                .iter()
                .find_map(launch)
                .is_some_and(|(p, _)| pi.is_none_or(|pi| pi == p))
        })
        .map(|s| &s.ops[..])
        .collect();
    // The search key: an unlinked op (NCCL kernels, lost API records) sorts
    // with the linked op before it, or by its start when none is near.
    let key = move |ops: &[crate::model::GpuOp], k: usize| {
        (k.saturating_sub(64)..=k)
            .rev()
            .find_map(|j| launch(&ops[j]).map(|l| l.1))
            .unwrap_or(ops[k].start)
    };
    move |a: Ns, b: Ns| {
        let mut best: Option<Launch> = None;
        for ops in &streams {
            let lo = partition(ops.len(), |k| key(ops, k) < a);
            let hi = partition(ops.len(), |k| key(ops, k) < b);
            // Only ops linked to their launch count (as before the search).
            let Some(f) = (lo..hi).find(|&k| launch(&ops[k]).is_some()) else {
                continue;
            };
            let l = (lo..hi)
                .rev()
                .find(|&k| launch(&ops[k]).is_some())
                .unwrap_or(f);
            let (first, last) = (&ops[f], &ops[l]);
            let at = key(ops, f);
            best = Some(match best {
                None => (first.start, last.end, at),
                Some((s, e, la)) => {
                    let (s, la) = if first.start < s {
                        (first.start, at)
                    } else {
                        (s, la)
                    };
                    (s, e.max(last.end), la)
                }
            });
        }
        best
    }
}

/// The first index in 0..n where `pred` is false (it is true before, false
/// after), as `slice::partition_point` does over indices.
fn partition(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Steps on the GPU from host-side marker ranges and the ops launched in
/// them (`ops_in`). Markers that launched nothing, truncated first and last
/// markers, and markers that begin inside start-up give no step; each is
/// listed in `dropped` with the reason.
pub fn on_gpu(
    source: StepSource,
    ranges: &[Range],
    ops_in: &OpsIn,
    startup: Option<&Startup>,
) -> Steps {
    let mut ranges = ranges.to_vec();
    ranges.sort_unstable();
    let mut dropped = Vec::new();
    let drop = |dropped: &mut Vec<DroppedStep>, i: usize, reason| {
        dropped.push(DroppedStep {
            index: i as u32,
            start: ranges[i].0,
            end: ranges[i].1,
            reason,
        })
    };
    // Only markers with ends of their own (ProfilerStep ranges) can be cut
    // short; ranges between two boundaries are whole.
    let own_ends = source == StepSource::ProfilerStep;
    // The median marker, leaving out the one judged (a cut-off marker must
    // not set the yardstick it is judged by).
    let cpu: Vec<Ns> = ranges.iter().map(|r| r.1 - r.0).collect();
    let short = |i: usize, min_others: usize| {
        let others: Vec<Ns> = (0..cpu.len()).filter(|&k| k != i).map(|k| cpu[k]).collect();
        others.len() >= min_others && (cpu[i] as f64) < TRUNCATED_FACTOR * median(others) as f64
    };
    // (marker, first GPU start, last GPU end, launch of the first op) of the
    // markers that give a step.
    let mut kept: Vec<(usize, Ns, Ns, Ns)> = Vec::new();
    // Each search reads ops and launch calls at random: thousands of them
    // (one per marker) wait on memory, so they run on every core, up front.
    let found: Vec<Option<Launch>> = ranges
        .par_iter()
        .with_min_len(64)
        .map(|&(a, b)| ops_in(a, b))
        .collect();
    for (i, &(a, _)) in ranges.iter().enumerate() {
        let last = i + 1 == ranges.len();
        if startup.is_some_and(|s| a < s.until) {
            drop(&mut dropped, i, "start-up");
            continue;
        }
        if i == 0 && !last && own_ends && short(i, 2) {
            drop(&mut dropped, i, "truncated-first");
            continue;
        }
        if last && i > 0 && own_ends && short(i, 1) {
            drop(&mut dropped, i, "truncated-last");
            continue;
        }
        let Some((first, end, launch)) = found[i] else {
            // The last marker launching nothing was cut off before it did.
            drop(
                &mut dropped,
                i,
                if last && i > 0 {
                    "truncated-last"
                } else {
                    "no-gpu-work"
                },
            );
            continue;
        };
        kept.push((i, first, end, launch));
    }
    // Steps keep the markers' order on the GPU too: with ops on several
    // streams, a step's first op can start after the next step's, and the
    // step then starts with that one (else the steps, and the window they
    // span, could run backwards).
    let starts: Vec<Ns> = kept
        .iter()
        .scan(Ns::MIN, |floor, k| {
            *floor = (*floor).max(k.1);
            Some(*floor)
        })
        .collect();
    let ranges: Vec<(u32, Ns, Ns, Ns)> = kept
        .iter()
        .enumerate()
        .map(|(j, &(i, _, end, launch))| {
            // Up to the next step's start; the last step ends with its work.
            let first = starts[j];
            let stop = starts.get(j + 1).copied().unwrap_or(end);
            (i as u32, first, stop.max(first), launch)
        })
        .collect();
    Steps {
        dropped,
        ..build_indexed(source, ranges)
    }
}

/// Builds steps from [start, end) ranges, computing statistics and outliers.
pub fn build(source: StepSource, mut ranges: Vec<(Ns, Ns)>) -> Steps {
    ranges.sort_unstable();
    build_indexed(
        source,
        ranges
            .iter()
            .enumerate()
            .map(|(i, &(a, b))| (i as u32, a, b, a))
            .collect(),
    )
}

/// `build` with each step's (marker index, start, end, launch) given.
fn build_indexed(source: StepSource, ranges: Vec<(u32, Ns, Ns, Ns)>) -> Steps {
    let mut steps: Vec<Step> = ranges
        .iter()
        .map(|&(index, start, end, launch)| Step {
            index,
            start,
            end,
            launch,
            outlier: false,
        })
        .collect();
    let mut durs: Vec<Ns> = steps.iter().map(Step::dur).collect();
    durs.sort_unstable();
    let median_ns = percentile(&durs, 0.5);
    let p90_ns = percentile(&durs, 0.9);
    let mean_ns = if durs.is_empty() {
        0
    } else {
        durs.iter().sum::<Ns>() / durs.len() as Ns
    };
    for s in &mut steps {
        s.outlier = steps_len_ok(durs.len()) && s.dur() as f64 > OUTLIER_FACTOR * median_ns as f64;
    }
    Steps {
        source,
        label: String::new(),
        steps,
        mean_ns,
        median_ns,
        p90_ns,
        dropped: Vec::new(),
        periodic: None,
    }
}

fn steps_len_ok(n: usize) -> bool {
    n >= 3
}

/// Nearest-rank percentile of sorted values.
pub fn percentile(sorted: &[Ns], q: f64) -> Ns {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// The median every analysis uses: the nearest-rank one (the lower of the
/// two middle values), as in `percentile`.
pub fn median(mut v: Vec<Ns>) -> Ns {
    v.sort_unstable();
    percentile(&v, 0.5)
}

/// Outlier steps that recur every k steps (a checkpoint, an evaluation, a
/// garbage collection), with the idle cause that takes most of their idle
/// time. `what` names what a gap waited on (the file, for I/O).
pub fn find_periodic(
    steps: &Steps,
    gaps: &[IdleGap],
    what: impl Fn(&IdleGap) -> String,
) -> Option<Periodic> {
    let n = steps.steps.len();
    let slow: Vec<usize> = (0..n).filter(|&i| steps.steps[i].outlier).collect();
    // Two slow steps are a coincidence; three at one spacing are a period.
    if n < 6 || slow.len() < 3 || 2 * slow.len() > n {
        return None;
    }
    let diffs: Vec<usize> = slow.windows(2).map(|w| w[1] - w[0]).collect();
    let mut count: FxHashMap<usize, usize> = FxHashMap::default();
    for &d in &diffs {
        *count.entry(d).or_default() += 1;
    }
    let (every, hits) = count.into_iter().max_by_key(|&(d, c)| (c, d))?;
    if every < 2 || 4 * hits < 3 * diffs.len() {
        return None;
    }
    let mean = |v: &mut dyn Iterator<Item = Ns>| {
        let (s, c) = v.fold((0i128, 0i128), |(s, c), x| (s + x as i128, c + 1));
        (s / c.max(1)) as Ns
    };
    let slow_mean = mean(&mut slow.iter().map(|&i| steps.steps[i].dur()));
    let rest_mean = mean(
        &mut (0..n)
            .filter(|i| !steps.steps[*i].outlier)
            .map(|i| steps.steps[i].dur()),
    );
    // The idle time of the slow steps, by label.
    let mut by: FxHashMap<(&'static str, &'static str), Ns> = FxHashMap::default();
    let mut top_gap: FxHashMap<(&'static str, &'static str), (Ns, IdleGap)> = FxHashMap::default();
    for &i in &slow {
        let st = steps.steps[i];
        let k = gaps.partition_point(|g| g.end <= st.start);
        for g in gaps[k..].iter().take_while(|g| g.start < st.end) {
            let ns = g.end.min(st.end) - g.start.max(st.start);
            let key = (g.cause.name(), g.sub);
            *by.entry(key).or_default() += ns;
            let e = top_gap.entry(key).or_insert((0, *g));
            if ns > e.0 {
                *e = (ns, *g);
            }
        }
    }
    let top = by.into_iter().max_by_key(|&(k, ns)| (ns, k));
    let (cause, sub, what) = match top {
        Some((k, _)) => (k.0, k.1, what(&top_gap[&k].1)),
        None => ("", "", String::new()),
    };
    Some(Periodic {
        every: every as u32,
        steps: slow.iter().map(|&i| i as u32).collect(),
        extra_ns: (slow_mean - rest_mean).max(0),
        cause,
        sub,
        what,
    })
}

/// What an I/O gap waited on: the name of the file its thread spent most of
/// the gap on ("" when none is known).
pub fn io_file(tl: &Timeline, g: &IdleGap) -> String {
    if g.cause != super::Cause::Io {
        return String::new();
    }
    // The image of the pid that ran then (a wrapper execs the trainer).
    let Some(p) = tl
        .processes
        .iter()
        .filter(|p| p.pid == g.pid && p.start <= g.start && p.thread(g.tid).is_some())
        .max_by_key(|p| p.start)
    else {
        return String::new();
    };
    let Some(t) = p.thread(g.tid) else {
        return String::new();
    };
    let mut by: FxHashMap<u32, Ns> = FxHashMap::default();
    // Spans are sorted by start; an I/O call is short next to a trace.
    let from = t.spans.partition_point(|s| s.ts < g.start - 10_000_000_000);
    for s in t.spans[from..].iter().take_while(|s| s.ts < g.end) {
        if matches!(s.kind, SpanKind::Host(_)) && s.id != 0 && s.end() > g.start {
            *by.entry(s.id).or_default() += s.end().min(g.end) - s.ts.max(g.start);
        }
    }
    by.into_iter()
        .max_by_key(|&(id, ns)| (ns, std::cmp::Reverse(id)))
        .and_then(|(id, _)| p.object(id))
        .map(|o| {
            let path = tl.strings.get(o.path);
            path.rsplit('/').next().unwrap_or(path).to_string()
        })
        .unwrap_or_default()
}

/// `ProfilerStep#N` ranges on the thread that has the most of them, and
/// that thread's process.
fn profiler_steps(tl: &Timeline) -> Option<(u32, Vec<(Ns, Ns)>)> {
    let is_step: Vec<bool> = tl
        .strings
        .iter()
        .map(|(_, s)| s.starts_with("ProfilerStep#"))
        .collect();
    let mut best: Option<(u32, Vec<(Ns, Ns)>)> = None;
    for (pi, p) in tl.processes.iter().enumerate() {
        for t in &p.threads {
            let r: Vec<(Ns, Ns)> = t
                .spans
                .par_chunks(1 << 16)
                .flat_map_iter(|c| {
                    c.iter()
                        .filter(|s| {
                            s.kind.is_named()
                                && is_step.get(s.id as usize).copied().unwrap_or(false)
                        })
                        .map(|s| (s.ts, s.end()))
                })
                .collect();
            if !r.is_empty() && best.as_ref().is_none_or(|b| r.len() > b.1.len()) {
                best = Some((pi as u32, r));
            }
        }
    }
    best
}

/// An annotation that recurs once per iteration: its starts are the step
/// boundaries. With `steplike`, only names that say "step" or "iter";
/// otherwise the most regular one. DataLoader and optimizer calls are left
/// to `loop_calls`.
fn repeating_range(tl: &Timeline, steplike_only: bool) -> Option<Markers> {
    // (score, process, name, starts) of the best so far.
    type Best = ((bool, i64), u32, StrId, Vec<Ns>);
    let mut best: Option<Best> = None;
    for (pi, p) in tl.processes.iter().enumerate() {
        for t in &p.threads {
            let mut by_name: FxHashMap<StrId, Vec<(Ns, Ns)>> = FxHashMap::default();
            for s in t
                .spans
                .iter()
                .filter(|s| s.kind == SpanKind::Annotation && s.dur > 0)
            {
                by_name.entry(s.id).or_default().push((s.ts, s.end()));
            }
            for (name, r) in by_name {
                if r.len() < 4 || r.windows(2).any(|w| w[1].0 < w[0].1) {
                    continue;
                }
                let n = tl.strings.get(name).to_ascii_lowercase();
                if is_loop_call(&n).is_some() {
                    continue;
                }
                let steplike = n.contains("step") || n.contains("iter");
                if steplike_only && !steplike {
                    continue;
                }
                let starts: Vec<Ns> = r.iter().map(|x| x.0).collect();
                let Some(cv) = regularity(&starts) else {
                    continue;
                };
                if cv > 0.5 {
                    continue;
                }
                // Higher is better: step-like names first, then regularity.
                let score = (steplike, -(cv * 1000.0) as i64);
                if best.as_ref().is_none_or(|b| score > b.0) {
                    best = Some((score, pi as u32, name, starts));
                }
            }
        }
    }
    let (_, pi, name, starts) = best?;
    Some(Markers {
        source: StepSource::Nvtx,
        label: tl.strings.get(name).to_string(),
        ranges: starts.windows(2).map(|w| (w[0], w[1])).collect(),
        process: Some(pi),
    })
}

/// A call the training loop makes once per iteration.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LoopCall {
    /// DataLoader `__next__`: starts an iteration.
    Next,
    /// `optimizer.zero_grad`: starts one when no `__next__` is seen.
    ZeroGrad,
    /// `optimizer.step`: ends one.
    Step,
}

/// The loop call a range is, by its lower-cased name.
fn is_loop_call(lower: &str) -> Option<LoopCall> {
    if lower.contains("dataloader") && lower.contains("__next__") {
        Some(LoopCall::Next)
    } else if lower.starts_with("optimizer.zero_grad") {
        Some(LoopCall::ZeroGrad)
    } else if lower.starts_with("optimizer.step") {
        Some(LoopCall::Step)
    } else {
        None
    }
}

/// Iterations from the loop's own calls, on the thread that makes the most:
/// each DataLoader `__next__` (else each `optimizer.zero_grad`) starts one,
/// the last one ending with the optimizer step after it; else each
/// `optimizer.step` ends one.
fn loop_calls(tl: &Timeline) -> Option<Markers> {
    let class: Vec<Option<LoopCall>> = tl
        .strings
        .iter()
        .map(|(_, s)| is_loop_call(&s.to_ascii_lowercase()))
        .collect();
    if class.iter().all(Option::is_none) {
        return None;
    }
    let mut best: Option<(usize, Markers)> = None;
    for (pi, p) in tl.processes.iter().enumerate() {
        for t in &p.threads {
            // Ranges and the first name id of each kind of call.
            let mut calls: [(Vec<Range>, Option<StrId>); 3] = Default::default();
            // Kineto's 2021 layout files `record_function` ranges as
            // operators ("Operator"), beside the aten ops.
            let ranges = t
                .spans
                .iter()
                .filter(|s| matches!(s.kind, SpanKind::Annotation | SpanKind::CpuOp));
            for s in ranges {
                if let Some(c) = class.get(s.id as usize).copied().flatten() {
                    let k = &mut calls[c as usize];
                    k.0.push((s.ts, s.end()));
                    k.1.get_or_insert(s.id);
                }
            }
            // A range filed both ways would mark two steps at one instant.
            for c in &mut calls {
                c.0.dedup_by_key(|r| r.0);
            }
            let [next, zero, opt] = &calls;
            let starts = [next, zero].into_iter().find(|c| c.0.len() >= 2);
            let (ranges, id): (Vec<(Ns, Ns)>, _) = match starts {
                Some((v, id)) => {
                    let mut r: Vec<(Ns, Ns)> = v.windows(2).map(|w| (w[0].0, w[1].0)).collect();
                    let last = v[v.len() - 1].0;
                    if let Some(o) = opt.0.iter().find(|o| o.0 >= last) {
                        r.push((last, o.1));
                    }
                    (r, *id)
                }
                None if opt.0.len() >= 2 => {
                    (opt.0.windows(2).map(|w| (w[0].1, w[1].1)).collect(), opt.1)
                }
                None => continue,
            };
            if best.as_ref().is_none_or(|b| ranges.len() > b.0) {
                best = Some((
                    ranges.len(),
                    Markers {
                        source: StepSource::LoopCalls,
                        label: id
                            .map(|i| tl.strings.get(i).to_string())
                            .unwrap_or_default(),
                        ranges,
                        process: Some(pi as u32),
                    },
                ));
            }
        }
    }
    best.map(|b| b.1)
}

/// Coefficient of variation of the intervals between sorted instants.
fn regularity(ts: &[Ns]) -> Option<f64> {
    let iv: Vec<f64> = ts.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
    let mean = iv.iter().sum::<f64>() / iv.len().max(1) as f64;
    if iv.is_empty() || mean <= 0.0 {
        return None;
    }
    let sd = (iv.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / iv.len() as f64).sqrt();
    Some(sd / mean)
}

/// Steps from the kernel that recurs once per iteration. Two signs of it,
/// either enough: in a recording of the whole job, the same number of
/// kernels launched between each of its launches and the next (the loop's
/// kernel sequence repeats, however unevenly the batches arrive or the host
/// runs ahead of the GPU: a real job's period varied by 30%); or a steady
/// period between its launches. Boundaries are its launch times (host
/// side, when known), so host time spent before the first kernel of an
/// iteration belongs to that iteration. The candidate must span most of the
/// GPU's kernel time, not most of its clock span: a real job's first kernels
/// run long before its loop (model set-up, then seconds of lazy library
/// loading).
fn periodic_gpu_work(tl: &Timeline, corr: &CorrIndex) -> Option<(String, Vec<(Ns, Ns)>)> {
    let g = tl.gpus.iter().max_by_key(|g| g.op_count())?;
    let launched = |o: &crate::model::GpuOp| {
        corr.get(o.corr)
            .map(|r| {
                tl.processes[r.process as usize].threads[r.thread as usize].spans[r.span as usize]
                    .ts
            })
            .unwrap_or(o.start)
    };
    let ops = || g.streams.iter().flat_map(|s| &s.ops);
    let lo = ops().map(|o| o.start).min()?;
    let hi = ops().map(|o| o.end).max()?;
    // The repeating kernel sequence marks iterations only in a recording of
    // the whole job: a profiler trace may hold one forward pass, whose layers
    // repeat their sequence as evenly (Qwen3-8B's 36 layers in an SGLang
    // trace, gpt-oss's 24 in a vLLM one).
    let whole_job = tl.source == crate::model::Source::Native;
    // Every kernel as (launch, GPU time, name), in launch order.
    let mut ks: Vec<(Ns, Ns, StrId)> = ops()
        .filter(|o| o.kind() == GpuOpKind::Kernel)
        .map(|o| (launched(o), o.end - o.start, o.name))
        .collect();
    ks.sort_unstable();
    // Kernel time launched before ks[i]: covered(i, j) is the share of it
    // launched from ks[i] to ks[j].
    let mut before = Vec::with_capacity(ks.len() + 1);
    before.push(0i64);
    for &(_, d, _) in &ks {
        before.push(before[before.len() - 1] + d);
    }
    let total = (*before.last()?).max(1) as f64;
    let covered = |i: usize, j: usize| (before[j + 1] - before[i]) as f64 / total;
    // Positions in launch order, per kernel name.
    let mut by_name: Vec<Vec<usize>> = vec![Vec::new(); tl.strings.len()];
    for (i, k) in ks.iter().enumerate() {
        if let Some(v) = by_name.get_mut(k.2 as usize) {
            v.push(i);
        }
    }
    // (score, launches, name, launch times) of the best so far; a higher
    // score is better, fewer launches break ties (once per iteration rather
    // than once per layer).
    type Best = ((i64, i64), usize, StrId, Vec<Ns>);
    let mut best: Option<Best> = None;
    for (name, at) in by_name.into_iter().enumerate() {
        if at.len() < 3 || covered(at[0], at[at.len() - 1]) < 0.6 {
            continue;
        }
        let ts: Vec<Ns> = at.iter().map(|&i| ks[i].0).collect();
        // An iteration launches more than this one kernel, and two or three
        // equal gaps are too few to call a pattern.
        let repeats = match repeat_share(&at) {
            (share, gap) if whole_job && gap >= 2 && at.len() >= 5 => share,
            _ => 0.0,
        };
        let cv = regularity(&ts).unwrap_or(f64::INFINITY);
        // A steady period counts where the launches span most of the GPU's
        // clock: a host far ahead of the GPU launches in a burst. (Untrimmed:
        // the layers of one forward pass keep a steady period too, but for
        // one slow interval, which would be trimmed away.)
        let steady = cv <= 0.3 && (ts[ts.len() - 1] - ts[0]) as f64 >= 0.6 * (hi - lo) as f64;
        if repeats < 0.8 && !steady {
            continue;
        }
        // Repetition in steps of 5%, then regularity in steps of 0.02.
        let score = (
            (repeats * 20.0).floor() as i64,
            -(cv.min(1e6) * 50.0) as i64,
        );
        let better = best
            .as_ref()
            .is_none_or(|b| score > b.0 || (score == b.0 && at.len() < b.1));
        if better {
            best = Some((score, at.len(), name as StrId, ts));
        }
    }
    let (_, _, name, ts) = best?;
    Some((
        tl.strings.get(name).to_string(),
        ts.windows(2).map(|w| (w[0], w[1])).collect(),
    ))
}

/// The share of the kernels from the first position to the last that lie
/// in gaps of the most common length: near 1 for a kernel launched once per
/// iteration, as every iteration launches the same sequence. A kernel
/// launched once per layer repeats its gap inside a pass but not across
/// passes (AlexNet's convolutions: gaps 5, 5, 29, 5, 5), so it scores low.
fn repeat_share(at: &[usize]) -> (f64, usize) {
    let mut gaps: Vec<usize> = at.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_unstable();
    let (count, gap) = gaps
        .chunk_by(|a, b| a == b)
        .map(|c| (c.len(), c[0]))
        .max()
        .unwrap_or((0, 0));
    let span = at.last().zip(at.first()).map_or(0, |(l, f)| l - f);
    ((count * gap) as f64 / span.max(1) as f64, gap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_once_per_iteration_repeats_its_gap_across_the_run() {
        // Once per iteration of 4 kernels, 10 iterations.
        let once: Vec<usize> = (0..10).map(|i| 2 + 4 * i).collect();
        assert_eq!(repeat_share(&once), (1.0, 4));
        // AlexNet's convolutions: three per forward pass, two passes.
        let (share, gap) = repeat_share(&[15, 20, 25, 54, 59, 64]);
        assert_eq!(gap, 5);
        assert!(share < 0.5, "{share}");
    }

    #[test]
    fn stats_and_outliers() {
        let s = build(
            StepSource::Nvtx,
            vec![(0, 100), (100, 200), (200, 300), (300, 700)],
        );
        assert_eq!(s.median_ns, 100);
        assert_eq!(s.p90_ns, 400);
        assert!(s.steps[3].outlier);
        assert!(!s.steps[0].outlier);
        assert_eq!(percentile(&[], 0.5), 0);
    }

    const MS: Ns = 1_000_000;

    /// Markers of 1 ms on the host every 10 ms, each launching one 10 ms op
    /// that the GPU runs back to back from t=5 ms: the host is far ahead.
    /// `OpsIn` over a list of (launch, start, end).
    fn list(l: &[Launch]) -> impl Fn(Ns, Ns) -> Option<Launch> + '_ {
        move |a, b| {
            let ops: Vec<&Launch> = l.iter().filter(|x| a <= x.0 && x.0 < b).collect();
            let first = ops.iter().min_by_key(|x| (x.1, x.0))?;
            Some((first.1, ops.iter().map(|x| x.2).max()?, first.0))
        }
    }

    fn async_loop(n: usize) -> (Vec<Range>, Vec<Launch>) {
        let ranges = (0..n as Ns).map(|i| (i * MS, i * MS + MS / 2)).collect();
        let launches = (0..n as Ns)
            .map(|i| (i * MS + 1, 5 * MS + i * 10 * MS, 5 * MS + (i + 1) * 10 * MS))
            .collect();
        (ranges, launches)
    }

    #[test]
    fn steps_are_measured_on_the_gpu() {
        let (r, l) = async_loop(6);
        let s = on_gpu(StepSource::ProfilerStep, &r, &list(&l), None);
        // Host markers last 0.5 ms; the GPU takes 10 ms per step.
        assert_eq!(s.steps.len(), 6);
        assert_eq!(s.mean_ns, 10 * MS);
        assert_eq!(s.median_ns, 10 * MS);
        assert_eq!(s.steps[0].start, 5 * MS);
        assert_eq!(s.steps[5].end, 65 * MS);
        assert!(s.dropped.is_empty());
    }

    #[test]
    fn truncated_and_start_up_markers_are_dropped() {
        let (mut r, mut l) = async_loop(6);
        // The last marker is cut off by the end of the trace after 49 µs and
        // launched nothing.
        r.push((6 * MS, 6 * MS + 49_000));
        let s = on_gpu(StepSource::ProfilerStep, &r, &list(&l), None);
        assert_eq!(s.steps.len(), 6);
        assert_eq!(s.dropped.len(), 1);
        assert_eq!(
            (s.dropped[0].index, s.dropped[0].reason),
            (6, "truncated-last")
        );
        assert_eq!(s.median_ns, 10 * MS);
        // Cut off, but with a launch inside: still dropped.
        l.push((6 * MS + 1, 65 * MS, 66 * MS));
        let s = on_gpu(StepSource::ProfilerStep, &r, &list(&l), None);
        assert_eq!(s.steps.len(), 6);
        assert_eq!(s.dropped[0].reason, "truncated-last");
        let (r, l) = async_loop(6);
        // Markers starting inside start-up give no step.
        let st = super::super::startup::chain(
            vec![super::super::types::StartupItem {
                kind: "context",
                what: "cudaFree".into(),
                start: 0,
                end: 2 * MS - 1,
                pid: 1,
                tid: 1,
            }],
            0,
            0,
            100 * MS,
            Some(60 * MS),
            |_| false,
        );
        let s = on_gpu(StepSource::ProfilerStep, &r, &list(&l), st.as_ref());
        assert_eq!(s.steps.len(), 4);
        assert!(
            s.dropped
                .iter()
                .all(|d| d.reason == "start-up" && d.index < 2)
        );
        // The first marker, much shorter than the others, was cut off by the
        // start of the trace.
        let (mut r, l) = async_loop(6);
        r[0].0 = r[0].1 - 10_000;
        let s = on_gpu(StepSource::ProfilerStep, &r, &list(&l), None);
        assert_eq!(s.dropped[0].reason, "truncated-first");
        assert_eq!(s.steps.len(), 5);
    }

    fn gap(start: Ns, end: Ns, cause: super::super::Cause, sub: &'static str) -> IdleGap {
        IdleGap {
            start,
            end,
            cause,
            sub,
            pid: 1,
            tid: 1,
        }
    }

    #[test]
    fn periodic_outliers_and_their_cause() {
        use super::super::Cause;
        // 16 steps of 10 ms; every 4th one 30 ms longer, idle on a file write.
        let mut ranges = Vec::new();
        let mut gaps = Vec::new();
        let mut t = 0;
        for i in 0..16 {
            let d = if i % 4 == 3 { 40 * MS } else { 10 * MS };
            ranges.push((t, t + d));
            if i % 4 == 3 {
                gaps.push(gap(t + 9 * MS, t + 39 * MS, Cause::Io, "ext4"));
            } else {
                gaps.push(gap(t + 9 * MS, t + 9 * MS + 100, Cause::Cpu, "python"));
            }
            t += d;
        }
        let s = build(StepSource::ProfilerStep, ranges);
        assert_eq!(s.mean_ns, 175 * MS / 10);
        assert_eq!(s.median_ns, 10 * MS);
        let p = find_periodic(&s, &gaps, |g| format!("{}.bin", g.sub)).unwrap();
        assert_eq!(p.every, 4);
        assert_eq!(p.steps, vec![3, 7, 11, 15]);
        assert_eq!(p.extra_ns, 30 * MS);
        assert_eq!(
            (p.cause, p.sub, p.what.as_str()),
            ("io", "ext4", "ext4.bin")
        );
        // Irregular slow steps are no period.
        let s = build(
            StepSource::ProfilerStep,
            (0..16)
                .map(|i| {
                    let d = if [1, 2, 9].contains(&i) { 40 } else { 10 };
                    (i * 100 * MS, i * 100 * MS + d * MS)
                })
                .collect(),
        );
        assert!(find_periodic(&s, &gaps, |_| String::new()).is_none());
    }

    #[test]
    fn one_median() {
        assert_eq!(median(vec![4, 1, 3, 2]), 2);
        assert_eq!(median(vec![3, 1, 2]), 2);
        assert_eq!(median(vec![]), 0);
    }
}
