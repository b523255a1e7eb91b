//! Training steps: from PyTorch's ProfilerStep ranges, else from another range
//! that repeats once per iteration, else from the period of the GPU work.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::types::{Step, StepSource, Steps};
use crate::model::{CorrIndex, GpuOpKind, Ns, SpanKind, StrId, Timeline};

/// A step this much slower than the median is flagged as an outlier.
pub const OUTLIER_FACTOR: f64 = 1.5;

pub fn find(tl: &Timeline, corr: &CorrIndex) -> Steps {
    let ranges = profiler_steps(tl)
        .map(|r| (StepSource::ProfilerStep, "ProfilerStep#".to_string(), r))
        .or_else(|| repeating_range(tl).map(|(l, r)| (StepSource::Nvtx, l, r)))
        .or_else(|| periodic_gpu_work(tl, corr).map(|(l, r)| (StepSource::Detected, l, r)));
    match ranges {
        Some((source, label, r)) => Steps {
            label,
            ..build(source, r)
        },
        None => Steps {
            source: StepSource::None,
            label: String::new(),
            steps: vec![],
            mean_ns: 0,
            median_ns: 0,
            p90_ns: 0,
        },
    }
}

/// Builds steps from [start, end) ranges, computing statistics and outliers.
pub fn build(source: StepSource, mut ranges: Vec<(Ns, Ns)>) -> Steps {
    ranges.sort_unstable();
    let mut steps: Vec<Step> = ranges
        .iter()
        .enumerate()
        .map(|(i, &(start, end))| Step {
            index: i as u32,
            start,
            end,
            outlier: false,
        })
        .collect();
    let mut durs: Vec<Ns> = steps.iter().map(Step::dur).collect();
    durs.sort_unstable();
    let median_ns = percentile(&durs, 0.5);
    let mean_ns = mean(&durs);
    let p90_ns = percentile(&durs, 0.9);
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
    }
}

/// The mean of step durations (0 when there are none).
pub fn mean(durs: &[Ns]) -> Ns {
    if durs.is_empty() {
        0
    } else {
        (durs.iter().map(|&d| d as i128).sum::<i128>() / durs.len() as i128) as Ns
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

/// `ProfilerStep#N` ranges on the thread that has the most of them.
fn profiler_steps(tl: &Timeline) -> Option<Vec<(Ns, Ns)>> {
    let is_step: Vec<bool> = tl
        .strings
        .iter()
        .map(|(_, s)| s.starts_with("ProfilerStep#"))
        .collect();
    let mut best: Option<Vec<(Ns, Ns)>> = None;
    for p in &tl.processes {
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
            if !r.is_empty() && best.as_ref().is_none_or(|b| r.len() > b.len()) {
                best = Some(r);
            }
        }
    }
    best
}

/// An annotation that recurs once per iteration: its starts are the step
/// boundaries (a range like `DataLoader.__next__` or `Optimizer.step` marks
/// one point of every iteration without covering it). Names that say "step"
/// or "iter" win; otherwise the most regular one does.
fn repeating_range(tl: &Timeline) -> Option<(String, Vec<(Ns, Ns)>)> {
    let mut best: Option<((bool, i64), StrId, Vec<Ns>)> = None;
    for p in &tl.processes {
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
                let starts: Vec<Ns> = r.iter().map(|x| x.0).collect();
                let Some(cv) = regularity(&starts) else {
                    continue;
                };
                if cv > 0.5 {
                    continue;
                }
                let n = tl.strings.get(name).to_ascii_lowercase();
                let steplike =
                    (n.contains("step") || n.contains("iter")) && !n.starts_with("optimizer");
                // Higher is better: step-like names first, then regularity.
                let score = (steplike, -(cv * 1000.0) as i64);
                if best.as_ref().is_none_or(|b| score > b.0) {
                    best = Some((score, name, starts));
                }
            }
        }
    }
    let (_, name, starts) = best?;
    Some((
        tl.strings.get(name).to_string(),
        starts.windows(2).map(|w| (w[0], w[1])).collect(),
    ))
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

/// Steps from the most regular kernel: a kernel launched once per iteration
/// recurs with a steady period. Boundaries are its launch times (host side,
/// when known), so host time spent before the first kernel of an iteration
/// belongs to that iteration.
fn periodic_gpu_work(tl: &Timeline, corr: &CorrIndex) -> Option<(String, Vec<(Ns, Ns)>)> {
    let g = tl.gpus.iter().max_by_key(|g| g.op_count())?;
    let (lo, hi) = (
        g.streams
            .iter()
            .filter_map(|s| s.ops.first())
            .map(|o| o.start)
            .min()?,
        g.streams.iter().flat_map(|s| &s.ops).map(|o| o.end).max()?,
    );
    // Launch times per kernel name, in a table by name id.
    let mut by_name: Vec<Vec<Ns>> = vec![Vec::new(); tl.strings.len()];
    for s in &g.streams {
        for o in s.ops.iter().filter(|o| o.kind() == GpuOpKind::Kernel) {
            let t = corr
                .get(o.corr)
                .map(|r| {
                    tl.processes[r.process as usize].threads[r.thread as usize].spans
                        [r.span as usize]
                        .ts
                })
                .unwrap_or(o.start);
            if let Some(v) = by_name.get_mut(o.name as usize) {
                v.push(t);
            }
        }
    }
    let by_name = by_name
        .into_iter()
        .enumerate()
        .map(|(n, v)| (n as StrId, v));
    let mut best: Option<(f64, usize, StrId, Vec<Ns>)> = None;
    for (name, mut ts) in by_name {
        if ts.len() < 3 {
            continue;
        }
        ts.sort_unstable();
        let Some(cv) = regularity(&ts) else { continue };
        let coverage = (ts[ts.len() - 1] - ts[0]) as f64 / (hi - lo).max(1) as f64;
        if cv > 0.3 || coverage < 0.6 {
            continue;
        }
        let better = match &best {
            None => true,
            Some((bcv, bn, _, _)) => {
                cv < *bcv - 0.02 || ((cv - *bcv).abs() <= 0.02 && ts.len() < *bn)
            }
        };
        if better {
            best = Some((cv, ts.len(), name, ts));
        }
    }
    let (_, _, name, ts) = best?;
    Some((
        tl.strings.get(name).to_string(),
        ts.windows(2).map(|w| (w[0], w[1])).collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
