//! The diagnosis of a recording in progress, on a moving window.
//!
//! Each tick reads the new records ([`LiveReader`]), runs the analyzer's own
//! diagnosis ([`analysis::diagnose`]) over the last `window` of the timeline,
//! and adds what became settled since the last tick to cumulative counters:
//! busy and idle time by cause (up to the end of the window's last complete
//! step, or its last GPU op when there are no steps), and the steps that
//! ended. Events older than the window are then dropped, so memory stays
//! bounded however long the job runs. The counters are rebuilt from the
//! recording by a new monitor, so an exporter restarted on the same
//! recording reports them from its start again: they stay monotonic.

use std::collections::BTreeMap;

use crate::analysis::{self, Cause, Diagnosis};
use crate::model::{Ns, SpanKind, Timeline};
use crate::read::native::live::{LiveReader, PollStats};

/// Bucket bounds of the step-time histogram, in seconds.
pub const STEP_BUCKETS: [f64; 12] = [
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// Cumulative busy and idle time of one GPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuTotals {
    pub busy_ns: Ns,
    /// Indexed by `Cause::index()`.
    pub idle_ns: [Ns; 8],
    /// Counted up to here (CLOCK_MONOTONIC ns).
    pub until: Ns,
}

/// Everything counted since the start of the recording.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    pub gpus: BTreeMap<u32, GpuTotals>,
    pub steps: u64,
    pub step_sum_ns: Ns,
    /// Steps per bucket of [`STEP_BUCKETS`] (not cumulative), plus +Inf.
    pub step_buckets: [u64; STEP_BUCKETS.len() + 1],
    /// Time the trainer waited for batches: data-cause idle time of the GPUs.
    pub dataloader_wait_ns: Ns,
    /// Start of the last step counted.
    pub steps_until: Ns,
}

/// One process in the window (DataLoader workers show here).
#[derive(Debug, Clone, PartialEq)]
pub struct ProcCpu {
    pub pid: u32,
    pub ppid: u32,
    pub uses_gpu: bool,
    /// CPU used over the window, in percent of one core.
    pub cpu_pct: f64,
}

/// What the last tick saw.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The window's diagnosis (None before there is any GPU work).
    pub diagnosis: Option<Diagnosis>,
    /// The window's bounds.
    pub window: (Ns, Ns),
    pub processes: Vec<ProcCpu>,
    pub poll: PollStats,
    /// Every process has exited.
    pub finished: bool,
}

/// Reads a recording as it grows and keeps the counters; see the module notes.
pub struct Monitor {
    reader: LiveReader,
    window_ns: Ns,
    totals: Totals,
    last: Option<Snapshot>,
}

impl Monitor {
    pub fn new(dir: impl Into<std::path::PathBuf>, window_ns: Ns) -> Monitor {
        Monitor {
            reader: LiveReader::new(dir),
            window_ns,
            totals: Totals::default(),
            last: None,
        }
    }

    pub fn reader(&self) -> &LiveReader {
        &self.reader
    }

    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    pub fn last(&self) -> Option<&Snapshot> {
        self.last.as_ref()
    }

    /// Reads the new records only (no diagnosis): the reader's own cost.
    pub fn poll_only(&mut self) -> PollStats {
        let st = self.reader.poll();
        let cutoff = self.reader.latest().saturating_sub(self.window_ns);
        self.reader.prune(cutoff);
        st
    }

    /// Reads the new records, diagnoses the window and counts what settled.
    pub fn tick(&mut self) -> &Snapshot {
        let poll = self.reader.poll();
        let finished = self.reader.all_exited();
        let hi = self.reader.latest();
        let lo = hi.saturating_sub(self.window_ns);
        let tl = self.reader.timeline_since(lo);
        let has_gpu = tl.gpu_op_count() > 0;
        let diagnosis = has_gpu.then(|| analysis::diagnose(&tl));
        if let Some(d) = &diagnosis {
            count(&mut self.totals, d, finished);
        }
        let processes = process_cpu(&tl, (lo, hi));
        // What is not counted yet (the step in progress) is well inside it.
        self.reader.prune(lo);
        self.last = Some(Snapshot {
            diagnosis,
            window: (lo, hi),
            processes,
            poll,
            finished,
        });
        self.last.as_ref().expect("just set")
    }
}

/// Adds what the window's diagnosis settled since the last count. The last
/// step of the window is still open (its end moves until the next step's
/// first op is seen) unless the job has ended: a GPU's time is settled up to
/// the end of the step before it, and a step is counted once, by its start,
/// when it is settled. Without steps, up to the window's last GPU op.
fn count(t: &mut Totals, d: &Diagnosis, finished: bool) {
    let all = &d.steps.steps;
    let settled_steps = if finished {
        &all[..]
    } else {
        &all[..all.len().saturating_sub(1)]
    };
    for dev in &d.devices {
        let settled = match (all.is_empty(), settled_steps.last()) {
            (true, _) => dev.window.1,
            (false, Some(s)) => s.end.min(dev.window.1),
            (false, None) => continue,
        };
        let g = t.gpus.entry(dev.gpu).or_default();
        let from = g.until.max(dev.window.0);
        if settled <= from {
            continue;
        }
        let mut idle = 0;
        for gap in &dev.gaps {
            let (a, b) = (gap.start.max(from), gap.end.min(settled));
            if b > a {
                g.idle_ns[gap.cause.index()] += b - a;
                idle += b - a;
                if gap.cause == Cause::Data {
                    t.dataloader_wait_ns += b - a;
                }
            }
        }
        g.busy_ns += (settled - from).saturating_sub(idle);
        g.until = settled;
    }
    for s in settled_steps {
        if t.steps > 0 && s.start <= t.steps_until {
            continue;
        }
        t.steps += 1;
        t.step_sum_ns += s.dur();
        let secs = s.dur() as f64 / 1e9;
        let b = STEP_BUCKETS
            .iter()
            .position(|&le| secs <= le)
            .unwrap_or(STEP_BUCKETS.len());
        t.step_buckets[b] += 1;
        t.steps_until = s.start;
    }
}

/// CPU per process over the window, from the thread samples.
fn process_cpu(tl: &Timeline, (lo, hi): (Ns, Ns)) -> Vec<ProcCpu> {
    let span = (hi - lo).max(1) as f64;
    tl.processes
        .iter()
        .map(|p| {
            let cpu: u64 = p
                .threads
                .iter()
                .filter_map(|t| {
                    let a = t.samples.iter().find(|s| s.ts >= lo)?;
                    let b = t.samples.last()?;
                    Some(b.cpu_ns.saturating_sub(a.cpu_ns))
                })
                .sum();
            ProcCpu {
                pid: p.pid,
                ppid: p.ppid,
                uses_gpu: p.threads.iter().any(|t| {
                    t.spans
                        .iter()
                        .any(|s| matches!(s.kind, SpanKind::CudaRuntime | SpanKind::CudaDriver))
                }),
                cpu_pct: cpu as f64 * 100.0 / span,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::IdleGap;

    fn gap(start: Ns, end: Ns, cause: Cause) -> IdleGap {
        IdleGap {
            start,
            end,
            cause,
            sub: "",
            pid: 0,
            tid: 0,
        }
    }

    fn diagnosis(window: (Ns, Ns), gaps: Vec<IdleGap>, steps: &[(Ns, Ns)]) -> Diagnosis {
        Diagnosis {
            window,
            steps: analysis::steps::build(analysis::StepSource::ProfilerStep, steps.to_vec()),
            startup: None,
            devices: vec![analysis::DeviceDiagnosis {
                gpu: 0,
                window,
                busy_ns: 0,
                idle_ns: 0,
                gaps,
                idle_by_cause: [0; 8],
                busy_by_precision: vec![],
            }],
            findings: vec![],
            job: Default::default(),
            minor: vec![],
            options: vec![],
            host: None,
            combined: None,
        }
    }

    #[test]
    fn overlapping_windows_count_each_nanosecond_and_step_once() {
        let mut t = Totals::default();
        // Window 1: steps [0,100) [100,200), the last still open; a data
        // gap 50..80 and a cpu gap 150..160.
        let d1 = diagnosis(
            (0, 230),
            vec![gap(50, 80, Cause::Data), gap(150, 160, Cause::Cpu)],
            &[(0, 100), (100, 200)],
        );
        count(&mut t, &d1, false);
        let g = t.gpus[&0];
        assert_eq!(g.until, 100);
        assert_eq!(g.idle_ns[Cause::Data.index()], 30);
        assert_eq!(g.idle_ns[Cause::Cpu.index()], 0);
        assert_eq!(g.busy_ns, 70);
        assert_eq!(t.steps, 1);
        // Window 2 overlaps window 1; the open step has closed (its end
        // moved), another opened, and a data gap 190..260 straddles them.
        let d2 = diagnosis(
            (100, 330),
            vec![gap(150, 160, Cause::Cpu), gap(190, 260, Cause::Data)],
            &[(100, 200), (200, 300), (300, 330)],
        );
        count(&mut t, &d2, false);
        let g = t.gpus[&0];
        assert_eq!(g.until, 300);
        assert_eq!(g.idle_ns[Cause::Data.index()], 30 + 70);
        assert_eq!(g.idle_ns[Cause::Cpu.index()], 10);
        assert_eq!(g.busy_ns + g.idle_ns.iter().sum::<Ns>(), 300);
        assert_eq!(t.steps, 3);
        assert_eq!(t.dataloader_wait_ns, 100);
        assert_eq!(t.step_sum_ns, 300);
        // The same window again adds nothing; once the job ends, the last
        // step counts too.
        count(&mut t, &d2, false);
        assert_eq!((t.steps, t.gpus[&0].until), (3, 300));
        count(&mut t, &d2, true);
        assert_eq!((t.steps, t.gpus[&0].until), (4, 330));
    }
}
