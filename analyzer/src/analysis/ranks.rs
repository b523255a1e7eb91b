//! Comparison across the ranks of a distributed job: one timeline per rank.
//!
//! - A summary per rank: wall time, GPU busy share, communication share, steps.
//! - The slowest rank: the straggler the others waited for at collectives,
//!   when there is one; else the longest median ProfilerStep, else the longest
//!   GPU window. (Ranks in step wait for each other, so the longest step is
//!   often the rank that waited most, not the one that was waited for.)
//! - Stragglers at collectives. The k-th NCCL kernel of a given name on each
//!   rank is taken to be the same collective instance. Ranks may sit on hosts
//!   whose clocks differ, so arrival times are aligned on the collectives'
//!   ends (a collective finishes on every rank at about the same moment): each
//!   rank's clock offset is the median of its end-time differences to the
//!   first rank. Lateness is then the aligned start minus the earliest
//!   aligned start; the rank with the largest is the one everyone waited for.
//!   A rank last at half or more of the collectives, with a median lateness of
//!   at least [`STRAGGLER_MIN_LATE_NS`], is a straggler.

use std::collections::HashMap;

use serde::Serialize;

use crate::model::{GpuOp, GpuOpKind, Ns, Precision, SpanKind, Timeline};
// The name test is the Kineto reader's; native timelines may lack `Comm`.
use super::busy::PrecisionMap;

/// Median lateness below this is noise (launch jitter), not a straggler.
pub const STRAGGLER_MIN_LATE_NS: Ns = 20_000;
/// Worst collective instances reported.
const WORST_INSTANCES: usize = 10;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankComparison {
    pub ranks: Vec<RankSummary>,
    pub slowest: Option<Slowest>,
    /// Per collective name: how many instances matched on every rank.
    pub collectives: Vec<CollectiveKind>,
    /// Per rank: how late it arrived at matched collectives.
    pub lateness: Vec<RankLateness>,
    pub stragglers: Vec<u32>,
    /// The matched instances with the largest arrival spread, largest first.
    pub worst_instances: Vec<CollectiveInstance>,
    /// `comm/straggler`: the slowest rank, and the waiting it caused the
    /// others (measured against the peers, not estimated).
    pub findings: Vec<RankFinding>,
}

/// A finding about the ranks together.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankFinding {
    pub cause: &'static str,
    pub sub_cause: &'static str,
    /// The rank everyone waited for.
    pub rank: u32,
    /// What the other ranks' collectives spent waiting for it, together.
    pub others_waited_ns: Ns,
    pub evidence: String,
    pub fix: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankSummary {
    /// The trace's distributed rank, else its position in the input.
    pub rank: u32,
    pub name: String,
    /// First to last event of the trace.
    pub wall_ns: Ns,
    /// First GPU op start to last GPU op end.
    pub gpu_window_ns: Ns,
    /// Union of all GPU ops.
    pub gpu_busy_ns: Ns,
    /// gpu_busy_ns over gpu_window_ns, in percent.
    pub gpu_busy_pct: f64,
    /// Union of NCCL/RCCL kernels (communication).
    pub comm_ns: Ns,
    pub comm_pct: f64,
    pub comm_kernels: usize,
    pub steps: usize,
    pub step_median_ns: Option<Ns>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Slowest {
    pub rank: u32,
    /// "collectives", "step_median" or "gpu_window".
    pub by: &'static str,
    /// With "collectives", what the other ranks' collectives waited for it;
    /// else its median step or GPU window.
    pub value_ns: Ns,
    /// How much longer than the median rank, in percent (not with
    /// "collectives").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub over_median_pct: Option<f64>,
    /// With "collectives": that waiting as a share of all communication
    /// kernel time, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comm_share_pct: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CollectiveKind {
    /// Kernel name up to its argument list.
    pub name: String,
    pub matched: usize,
    pub median_dur_ns: Ns,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankLateness {
    pub rank: u32,
    /// Clock offset to the first rank, estimated from collective ends.
    pub clock_offset_ns: Ns,
    pub last_count: usize,
    pub last_share_pct: f64,
    pub median_late_ns: Ns,
    pub max_late_ns: Ns,
    /// Time its collectives spent waiting for the last rank to arrive (the
    /// waiting part of their kernel time).
    pub waited_ns: Ns,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CollectiveInstance {
    pub name: String,
    /// The k-th instance of this name on each rank.
    pub index: usize,
    pub last_rank: u32,
    /// Last aligned arrival minus first.
    pub spread_ns: Ns,
}

/// One communication kernel on one rank.
#[derive(Clone, Copy)]
struct Comm {
    start: Ns,
    end: Ns,
}

/// Compares the ranks of one job (one timeline per rank).
pub fn compare_ranks(tls: &[Timeline]) -> RankComparison {
    let ids: Vec<u32> = tls
        .iter()
        .enumerate()
        .map(|(i, t)| t.processes.iter().find_map(|p| p.rank).unwrap_or(i as u32))
        .collect();
    let ranks: Vec<RankSummary> = tls.iter().zip(&ids).map(|(t, &r)| summary(t, r)).collect();
    let comms: Vec<HashMap<String, Vec<Comm>>> = tls.iter().map(comm_kernels).collect();
    let (collectives, lateness, worst) = arrivals(&comms, &ids);
    let matched: usize = collectives.iter().map(|c| c.matched).sum();
    let stragglers: Vec<u32> = lateness
        .iter()
        .filter(|l| {
            matched >= 3 && l.last_share_pct >= 50.0 && l.median_late_ns >= STRAGGLER_MIN_LATE_NS
        })
        .map(|l| l.rank)
        .collect();
    let findings = straggler_findings(&lateness, &stragglers, &comms);
    let slowest = waited_for(&findings, &comms).or_else(|| slowest(&ranks));
    RankComparison {
        ranks,
        slowest,
        collectives,
        lateness,
        stragglers,
        worst_instances: worst,
        findings,
    }
}

/// The straggler the others waited for longest, if any.
fn waited_for(findings: &[RankFinding], comms: &[HashMap<String, Vec<Comm>>]) -> Option<Slowest> {
    let f = findings.iter().max_by_key(|f| f.others_waited_ns)?;
    Some(Slowest {
        rank: f.rank,
        by: "collectives",
        value_ns: f.others_waited_ns,
        over_median_pct: None,
        comm_share_pct: Some(pct(f.others_waited_ns, comm_ns(comms))),
    })
}

/// The communication kernels' time on every rank, together.
fn comm_ns(comms: &[HashMap<String, Vec<Comm>>]) -> Ns {
    comms
        .iter()
        .flat_map(|c| c.values())
        .flatten()
        .map(|c| c.end - c.start)
        .sum()
}

/// `comm/straggler` for each straggler: the others' waiting, measured.
fn straggler_findings(
    lateness: &[RankLateness],
    stragglers: &[u32],
    comms: &[HashMap<String, Vec<Comm>>],
) -> Vec<RankFinding> {
    let comm_ns = comm_ns(comms);
    stragglers
        .iter()
        .filter_map(|&s| {
            let me = lateness.iter().find(|l| l.rank == s)?;
            let others: Ns = lateness
                .iter()
                .filter(|l| l.rank != s)
                .map(|l| l.waited_ns)
                .sum();
            Some(RankFinding {
                cause: "comm",
                sub_cause: "straggler",
                rank: s,
                others_waited_ns: others,
                evidence: format!(
                    "rank {s} arrived last at {} collectives ({:.0}%), a median {:.0} µs after the \
                     first; the other ranks' collectives waited {:.1} ms for it ({:.0}% of all \
                     communication kernel time)",
                    me.last_count,
                    me.last_share_pct,
                    me.median_late_ns as f64 / 1e3,
                    others as f64 / 1e6,
                    pct(others, comm_ns),
                ),
                fix: format!(
                    "find what makes rank {s} late before its collectives (its data loading, host \
                     work or a larger shard) and balance it; overlap communication with compute"
                ),
            })
        })
        .collect()
}

/// NCCL/RCCL and the peer-memory all-reduces alike: what the readers set,
/// else the kernel table's class.
fn is_comm(pm: &PrecisionMap, o: &GpuOp) -> bool {
    o.kind() == GpuOpKind::Kernel && pm.of(o) == Precision::Comm
}

/// Sum of the union of intervals.
fn union_ns(mut iv: Vec<(Ns, Ns)>) -> Ns {
    iv.sort_unstable();
    let mut sum = 0;
    let mut cur: Option<(Ns, Ns)> = None;
    for (s, e) in iv {
        cur = match cur {
            Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                sum += ce - cs;
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    sum + cur.map_or(0, |(s, e)| e - s)
}

fn median(v: &mut [Ns]) -> Option<Ns> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    Some(v[v.len() / 2])
}

fn pct(part: Ns, whole: Ns) -> f64 {
    if whole <= 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

fn summary(tl: &Timeline, rank: u32) -> RankSummary {
    let ops = tl.gpus.iter().flat_map(|g| &g.streams).flat_map(|s| &s.ops);
    let all: Vec<(Ns, Ns)> = ops.clone().map(|o| (o.start, o.end)).collect();
    let pm = PrecisionMap::new(&tl.strings);
    let comm: Vec<(Ns, Ns)> = ops
        .filter(|o| is_comm(&pm, o))
        .map(|o| (o.start, o.end))
        .collect();
    let gpu_window = match (all.iter().map(|x| x.0).min(), all.iter().map(|x| x.1).max()) {
        (Some(a), Some(b)) => b - a,
        _ => 0,
    };
    let mut steps: Vec<Ns> = tl
        .processes
        .iter()
        .flat_map(|p| &p.threads)
        .flat_map(|t| &t.spans)
        .filter(|s| {
            s.kind == SpanKind::Annotation && tl.strings.get(s.id).starts_with("ProfilerStep#")
        })
        .map(|s| s.dur)
        .collect();
    let busy = union_ns(all);
    let comm_kernels = comm.len();
    let comm_ns = union_ns(comm);
    RankSummary {
        rank,
        name: tl.name.clone(),
        wall_ns: tl.extent().map_or(0, |(a, b)| b - a),
        gpu_window_ns: gpu_window,
        gpu_busy_ns: busy,
        gpu_busy_pct: pct(busy, gpu_window),
        comm_ns,
        comm_pct: pct(comm_ns, gpu_window),
        comm_kernels,
        steps: steps.len(),
        step_median_ns: median(&mut steps),
    }
}

fn slowest(ranks: &[RankSummary]) -> Option<Slowest> {
    let by_steps = ranks.iter().all(|r| r.step_median_ns.is_some());
    let (by, value): (&'static str, fn(&RankSummary) -> Ns) = if by_steps {
        ("step_median", |r| r.step_median_ns.unwrap_or(0))
    } else {
        ("gpu_window", |r| r.gpu_window_ns)
    };
    let worst = ranks.iter().max_by_key(|r| value(r))?;
    let mut all: Vec<Ns> = ranks.iter().map(value).collect();
    let med = median(&mut all).unwrap_or(0);
    Some(Slowest {
        rank: worst.rank,
        by,
        value_ns: value(worst),
        over_median_pct: Some(pct(value(worst) - med, med)),
        comm_share_pct: None,
    })
}

/// A rank's communication kernels by short name, in start order.
fn comm_kernels(tl: &Timeline) -> HashMap<String, Vec<Comm>> {
    let mut out: HashMap<String, Vec<Comm>> = HashMap::new();
    let pm = PrecisionMap::new(&tl.strings);
    for o in tl.gpus.iter().flat_map(|g| &g.streams).flat_map(|s| &s.ops) {
        let name = tl.strings.get(o.name);
        if is_comm(&pm, o) {
            let short = name.split('(').next().unwrap_or(name).trim();
            out.entry(short.to_owned()).or_default().push(Comm {
                start: o.start,
                end: o.end,
            });
        }
    }
    for v in out.values_mut() {
        v.sort_by_key(|c| c.start);
    }
    out
}

type Arrivals = (
    Vec<CollectiveKind>,
    Vec<RankLateness>,
    Vec<CollectiveInstance>,
);

fn arrivals(comms: &[HashMap<String, Vec<Comm>>], ids: &[u32]) -> Arrivals {
    let n = comms.len();
    if n < 2 {
        return (vec![], vec![], vec![]);
    }
    // Names present on every rank, matched up to the smallest count.
    let mut names: Vec<&String> = comms[0]
        .keys()
        .filter(|k| comms.iter().all(|c| c.contains_key(*k)))
        .collect();
    names.sort();
    let matched = |name: &String| comms.iter().map(|c| c[name].len()).min().unwrap_or(0);

    // Clock offsets from collective ends, relative to the first rank.
    let offsets: Vec<Ns> = (0..n)
        .map(|r| {
            let mut d: Vec<Ns> = names
                .iter()
                .flat_map(|name| {
                    (0..matched(name)).map(move |k| comms[r][*name][k].end - comms[0][*name][k].end)
                })
                .collect();
            median(&mut d).unwrap_or(0)
        })
        .collect();

    let mut kinds = vec![];
    let mut late: Vec<Vec<Ns>> = vec![vec![]; n];
    let mut waited: Vec<Ns> = vec![0; n];
    let mut last_count = vec![0usize; n];
    let mut instances = vec![];
    for name in names {
        let m = matched(name);
        let mut durs: Vec<Ns> = vec![];
        let lists: Vec<&[Comm]> = comms.iter().map(|c| &c[name][..m]).collect();
        for k in 0..m {
            let arrive: Vec<Ns> = lists
                .iter()
                .zip(&offsets)
                .map(|(l, o)| l[k].start - o)
                .collect();
            let first = arrive.iter().copied().min().unwrap_or(0);
            let (last_r, &last) = arrive
                .iter()
                .enumerate()
                .max_by_key(|(_, a)| **a)
                .unwrap_or((0, &first));
            for (r, ((l, a), lat)) in lists.iter().zip(&arrive).zip(late.iter_mut()).enumerate() {
                lat.push(a - first);
                durs.push(l[k].end - l[k].start);
                // Waiting for the last arrival, within this kernel's time.
                waited[r] += (last - a).clamp(0, l[k].end - l[k].start);
            }
            last_count[last_r] += 1;
            instances.push(CollectiveInstance {
                name: name.clone(),
                index: k,
                last_rank: ids[last_r],
                spread_ns: last - first,
            });
        }
        kinds.push(CollectiveKind {
            name: name.clone(),
            matched: m,
            median_dur_ns: median(&mut durs).unwrap_or(0),
        });
    }
    let total = instances.len();
    let lateness = (0..n)
        .map(|r| RankLateness {
            rank: ids[r],
            clock_offset_ns: offsets[r],
            last_count: last_count[r],
            last_share_pct: pct(last_count[r] as Ns, total as Ns),
            median_late_ns: median(&mut late[r]).unwrap_or(0),
            max_late_ns: late[r].iter().copied().max().unwrap_or(0),
            waited_ns: waited[r],
        })
        .collect();
    instances.sort_by_key(|i| std::cmp::Reverse(i.spread_ns));
    instances.truncate(WORST_INSTANCES);
    (kinds, lateness, instances)
}
