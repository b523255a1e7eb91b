//! Correlation ids, made unique across a recording's processes.
//!
//! CUPTI numbers correlation ids per process, each from 1, so the GPU work of
//! two processes (DDP ranks, a worker that owns a GPU) shares ids, and a
//! kernel of one would link to an API call of the other. Each process after
//! the first has its ids moved past those of the processes before it.

use rayon::prelude::*;

use crate::model::{HostSpan, SpanKind, Timeline};

fn is_api(s: &HostSpan) -> bool {
    matches!(s.kind, SpanKind::CudaRuntime | SpanKind::CudaDriver)
        && s.arg != 0
        && s.arg <= u64::from(u32::MAX)
}

/// The largest correlation id in `tl` (0 when it has none).
fn max_id(tl: &Timeline) -> u32 {
    let spans = tl
        .processes
        .par_iter()
        .flat_map(|p| p.threads.par_iter())
        .flat_map(|t| t.spans.par_iter())
        .filter(|s| is_api(s))
        .map(|s| s.arg as u32)
        .max()
        .unwrap_or(0);
    let ops = tl
        .gpus
        .par_iter()
        .flat_map(|g| g.streams.par_iter())
        .flat_map(|s| s.ops.par_iter())
        .map(|o| o.corr)
        .max()
        .unwrap_or(0);
    let other = tl
        .gpus
        .iter()
        .flat_map(|g| {
            let syncs = g.syncs.iter().map(|s| s.corr);
            syncs.chain(g.memory.iter().map(|m| m.corr))
        })
        .max()
        .unwrap_or(0);
    spans.max(ops).max(other)
}

/// Adds `by` to every correlation id of `tl` (0, "none", stays 0). The
/// caller has checked that no id passes u32::MAX.
fn shift(tl: &mut Timeline, by: u32) {
    let up = |c: &mut u32| {
        if *c != 0 {
            *c += by;
        }
    };
    tl.processes
        .par_iter_mut()
        .flat_map(|p| p.threads.par_iter_mut())
        .for_each(|t| {
            for s in t.spans.iter_mut().filter(|s| is_api(s)) {
                s.arg += u64::from(by);
            }
        });
    for g in &mut tl.gpus {
        g.streams
            .par_iter_mut()
            .for_each(|s| s.ops.iter_mut().for_each(|o| up(&mut o.corr)));
        g.syncs.iter_mut().for_each(|s| up(&mut s.corr));
        g.memory.iter_mut().for_each(|m| up(&mut m.corr));
    }
}

/// Moves the ids of each part past those of the parts before it. Returns a
/// warning for each part whose ids could not be moved (they would pass
/// u32::MAX): its GPU ops may then link to another process's calls.
pub fn make_unique(parts: &mut [Timeline]) -> Vec<String> {
    let mut warnings = Vec::new();
    let Some((first, later)) = parts.split_first_mut() else {
        return warnings;
    };
    // The first part is scanned only when a later one has ids to move.
    let maxes: Vec<u32> = later.iter().map(max_id).collect();
    if maxes.iter().all(|&m| m == 0) {
        return warnings;
    }
    let mut top = max_id(first);
    for (part, &max) in later.iter_mut().zip(&maxes) {
        if max == 0 {
            continue;
        }
        if top == 0 {
            top = max;
            continue;
        }
        match top.checked_add(max) {
            Some(new_top) => {
                shift(part, top);
                top = new_top;
            }
            None => {
                let pids: Vec<String> = part.processes.iter().map(|p| p.pid.to_string()).collect();
                warnings.push(format!(
                    "pid {}: too many correlation ids to keep them apart from other processes'; \
                     some GPU work may be linked to the wrong process",
                    pids.join(", ")
                ));
                top = top.max(max);
            }
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CorrIndex, Gpu, GpuOp, GpuOpKind, Process, Source, Thread};

    /// One process `pid` that launched kernels with correlation ids `ids`.
    fn process(pid: u32, ids: &[u32]) -> Timeline {
        let mut tl = Timeline::new(Source::Native, format!("{pid}.sst"));
        let spans = ids
            .iter()
            .enumerate()
            .map(|(i, &c)| HostSpan {
                ts: 100 * i as i64 + pid as i64,
                dur: 5,
                arg: u64::from(c),
                id: 0,
                kind: SpanKind::CudaRuntime,
            })
            .collect();
        tl.processes.push(Process {
            pid,
            start: pid as i64,
            threads: vec![Thread {
                tid: pid,
                spans,
                ..Default::default()
            }],
            ..Default::default()
        });
        let mut g = Gpu {
            id: pid,
            ..Default::default()
        };
        for (i, &c) in ids.iter().enumerate() {
            let start = 100 * i as i64 + 50;
            g.stream_mut(7)
                .ops
                .push(GpuOp::new(GpuOpKind::Kernel, start, start + 10, c, 0));
        }
        tl.gpus.push(g);
        tl
    }

    /// The pid of the process whose call launched each op, GPU by GPU.
    fn launchers(tl: &Timeline) -> Vec<(u32, Vec<Option<u32>>)> {
        let corr = CorrIndex::build(tl);
        tl.gpus
            .iter()
            .map(|g| {
                let who = g.streams[0]
                    .ops
                    .iter()
                    .map(|o| {
                        corr.get(o.corr)
                            .map(|l| tl.processes[l.process as usize].pid)
                    })
                    .collect();
                (g.id, who)
            })
            .collect()
    }

    fn merged(mut parts: Vec<Timeline>) -> (Timeline, Vec<String>) {
        let warnings = make_unique(&mut parts);
        let mut tl = Timeline::new(Source::Native, "rec");
        for p in parts {
            super::super::merge(&mut tl, p);
        }
        tl.finalize();
        (tl, warnings)
    }

    #[test]
    fn each_process_keeps_its_own_launches() {
        // Both processes number their calls from 1, as CUPTI does.
        let (tl, warnings) = merged(vec![process(10, &[1, 2, 3]), process(20, &[1, 2])]);
        assert!(warnings.is_empty());
        assert_eq!(
            launchers(&tl),
            vec![
                (10, vec![Some(10), Some(10), Some(10)]),
                (20, vec![Some(20), Some(20)])
            ]
        );
    }

    #[test]
    fn the_first_process_keeps_its_ids_and_none_stays_none() {
        let mut parts = vec![process(10, &[4, 9]), process(20, &[0, 3])];
        assert!(make_unique(&mut parts).is_empty());
        let ids = |tl: &Timeline| -> Vec<u32> {
            tl.gpus[0].streams[0].ops.iter().map(|o| o.corr).collect()
        };
        assert_eq!(ids(&parts[0]), vec![4, 9]);
        assert_eq!(ids(&parts[1]), vec![0, 12]);
        let args: Vec<u64> = parts[1].processes[0].threads[0]
            .spans
            .iter()
            .map(|s| s.arg)
            .collect();
        assert_eq!(args, vec![0, 12]);
    }

    #[test]
    fn ids_that_cannot_move_are_left_with_a_warning() {
        let (tl, warnings) = merged(vec![
            process(10, &[u32::MAX - 1]),
            process(20, &[5]),
            process(30, &[]),
        ]);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("pid 20:"), "{warnings:?}");
        assert_eq!(tl.gpus[1].streams[0].ops[0].corr, 5);
    }
}
