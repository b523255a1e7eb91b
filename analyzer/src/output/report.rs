//! The report (schema `stallscope.report.v1`, documented in the README): built
//! once from a timeline and its diagnosis, then written as JSON or rendered as
//! text and Markdown, so every output tells the same story.

use serde::Serialize;

use crate::analysis::arch::Arch;
use crate::analysis::job::JobContext;
use crate::analysis::{Cause, Diagnosis, StepSource, Steps};
use crate::model::{GpuCapture, NoteLevel, Precision, Timeline};

pub const SCHEMA: &str = "stallscope.report.v1";

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub source: &'static str,
    pub name: String,
    pub command: String,
    pub wall_ns: i64,
    pub window_ns: [i64; 2],
    pub processes: ProcessSummary,
    pub steps: StepSummary,
    /// Start-up cost before the steady state; absent when none was seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startup: Option<StartupReport>,
    pub devices: Vec<DeviceReport>,
    pub findings: Vec<FindingReport>,
    /// Findings that save less than half a percent of the step.
    pub minor: Vec<FindingReport>,
    /// Fixes that change the numerics (FP8): validate accuracy first; not
    /// ranked with the findings, nor in `combined`.
    pub options: Vec<FindingReport>,
    /// Every advised fix at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub combined: Option<CombinedReport>,
    pub notes: Vec<String>,
    /// Training or inference, serving engine, graphs, DataLoader.
    pub job: JobContext,
    /// The host side: I/O wait, CPU and roles by process, lost records.
    pub host: HostReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hta_compat: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProcessSummary {
    pub count: usize,
    /// Processes that launched GPU work.
    pub trainers: usize,
    /// Processes that feed a trainer: its descendants forked after it started
    /// (DataLoader workers, typically) and pipe peers; never its launchers.
    pub workers: usize,
    /// The most workers alive at once: fewer than `workers` where a
    /// DataLoader started new ones each epoch.
    pub workers_at_once: usize,
    pub gpu_capture: Vec<String>,
}

impl ProcessSummary {
    /// ", 2 at a time" where fewer workers lived at once than there were
    /// (a DataLoader that started new ones each epoch); else nothing.
    pub fn at_a_time(&self) -> String {
        match self.workers_at_once {
            n if n > 0 && n < self.workers => format!(", {n} at a time"),
            _ => String::new(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct StepSummary {
    pub count: usize,
    /// The headline: mean GPU-side step (throughput).
    pub mean_ns: i64,
    pub median_ns: i64,
    pub p90_ns: i64,
    /// "profiler_step", "nvtx", "detected" or "none".
    pub source: &'static str,
    /// The range or kernel name that marked the steps.
    pub marked_by: String,
    /// Indices of steps much slower than the median.
    pub outliers: Vec<u32>,
    /// Step markers that gave no step: truncated by the trace, inside
    /// start-up, or without GPU work.
    pub dropped: Vec<DroppedReport>,
    /// Slow steps that recur every `every` steps, and their cause.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub periodic: Option<PeriodicReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DroppedReport {
    /// The marker's position among all markers.
    pub index: u32,
    /// "truncated-first", "truncated-last", "no-gpu-work" or "start-up".
    pub reason: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct PeriodicReport {
    pub every: u32,
    /// Mean extra time of a slow step over the others.
    pub extra_ns: i64,
    pub steps: Vec<u32>,
    /// The idle cause of the slow steps ("" when unknown).
    pub cause: String,
    pub sub_cause: String,
    /// What the cause was about: the file, for io.
    pub what: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct StartupReport {
    /// From the start of the trace to the steady state.
    pub ns: i64,
    pub until_ns: i64,
    /// Share of the trace, in percent.
    pub share_pct: f64,
    /// Start-up covers at least half of the trace.
    pub mostly: bool,
    /// Nothing runs on the GPU after start-up: no steady state to advise on.
    pub all: bool,
    /// Start-up is most of the trace and what follows it is too short to
    /// advise on (no steps, under 10 ms): no findings either.
    pub short_rest: bool,
    /// Grouped by kind and call, longest first.
    pub items: Vec<StartupItemReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StartupItemReport {
    /// "context", "module-load", "autotune", "compile" or "graph-capture".
    pub kind: &'static str,
    pub what: String,
    pub count: usize,
    pub ns: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct DeviceReport {
    pub id: String,
    pub name: String,
    /// "NVIDIA Ampere", "AMD CDNA3", ... ("an unknown GPU" without device properties).
    pub arch: &'static str,
    pub busy_ns: i64,
    pub idle_ns: i64,
    pub idle_by_cause_ns: serde_json::Map<String, serde_json::Value>,
    pub busy_by_precision_ns: serde_json::Map<String, serde_json::Value>,
    /// GEMMs with 4-bit weights (MXFP4, NVFP4, INT4), already counted in
    /// `busy_by_precision_ns` under their activations' type.
    #[serde(skip_serializing_if = "is_zero")]
    pub low_bit_gemm_ns: i64,
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

#[derive(Debug, Clone, Serialize)]
pub struct FindingReport {
    pub cause: String,
    pub sub_cause: String,
    pub share_pct: f64,
    pub est_saving_ns: i64,
    pub est_step_ns_after: i64,
    pub assumption: String,
    pub evidence: String,
    pub fix: String,
    /// Whole names of the kernels the evidence cites (shortened there).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<String>,
}

/// The host side of a recording, shown in every report and the whole of a
/// host-only one. Kineto traces fill only what they hold.
///
/// I/O and CPU figures cover the analysis window (`window_ns`), as the
/// findings do; a host-only recording's window is all of it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HostReport {
    /// I/O wait by filesystem ("ext4", "nfs", "fuse", ...), longest first.
    pub io_by_fs: Vec<IoWaitReport>,
    /// I/O wait by file, longest first (the top files; the rest are summed
    /// into the filesystem rows).
    pub io_by_file: Vec<IoWaitReport>,
    /// Every process, by CPU time, most first.
    pub processes: Vec<HostProcessReport>,
    /// Records the shim could not write (ring full), over all processes.
    pub dropped_records: u64,
    /// Damage found while reading: files or chunks skipped, with where.
    pub damage: Vec<String>,
    /// Files beyond the top ones in `io_by_file`.
    pub more_files: usize,
    /// Reads and writes (any fd) shorter than the span threshold, over the
    /// whole recording: counted by the shim per thread, so in no row above.
    pub io_below_threshold: IoBelowThreshold,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct IoBelowThreshold {
    pub calls: u64,
    pub bytes: u64,
    pub ns: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct IoWaitReport {
    /// A filesystem name, or a file's path.
    pub what: String,
    /// The filesystem (for a file row, the one it lives on).
    pub fs: String,
    /// Time threads spent blocked in reads and writes on it.
    pub wait_ns: i64,
    /// Moved by reads and writes (`read_bytes` + `write_bytes`).
    pub bytes: u64,
    pub calls: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Bytes over wait time: the throughput the job actually got.
    pub mb_per_s: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct HostProcessReport {
    pub pid: u32,
    pub ppid: u32,
    /// "trainer", "worker", "launcher" or "other"; host-only recordings
    /// (no trainer) have a "main" process, with its descendants as workers.
    pub role: &'static str,
    pub command: String,
    pub cpu_ns: i64,
    pub io_wait_ns: i64,
    pub start_ns: i64,
    pub end_ns: i64,
    /// Bytes its file reads and writes moved.
    pub io_bytes: u64,
    /// Time its threads were runnable but waited for a CPU.
    pub run_delay_ns: i64,
    pub dropped_records: u64,
}

/// How many files `io_by_file` keeps.
pub const TOP_FILES: usize = 10;

impl HostReport {
    pub fn build(tl: &Timeline, window: (i64, i64)) -> HostReport {
        HostReport::from_summary(tl, &crate::analysis::host::analyze(tl, window))
    }

    /// The report of a host analysis already made (see `Diagnosis::host`).
    pub fn from_summary(tl: &Timeline, h: &crate::analysis::host::HostSummary) -> HostReport {
        let io = |w: &crate::analysis::host::IoWait| IoWaitReport {
            what: w.what.clone(),
            fs: w.fs.to_string(),
            wait_ns: w.wait_ns,
            bytes: w.bytes,
            calls: w.calls,
            read_bytes: w.read_bytes,
            write_bytes: w.write_bytes,
            mb_per_s: (w.mb_per_s() * 10.0).round() / 10.0,
        };
        let mut processes: Vec<HostProcessReport> = h
            .processes
            .iter()
            .map(|ph| {
                let p = &tl.processes[ph.index];
                HostProcessReport {
                    pid: p.pid,
                    ppid: p.ppid,
                    role: ph.role.name(),
                    command: p.cmdline.clone(),
                    cpu_ns: ph.cpu_ns,
                    io_wait_ns: ph.io_wait_ns,
                    start_ns: p.start,
                    end_ns: p.end,
                    io_bytes: ph.io_bytes,
                    run_delay_ns: ph.run_delay_ns,
                    dropped_records: p.dropped_records,
                }
            })
            .collect();
        // Stable: ties keep the timeline's order (by start).
        processes.sort_by_key(|p| std::cmp::Reverse(p.cpu_ns));
        HostReport {
            io_by_fs: h.io_by_fs.iter().map(io).collect(),
            io_by_file: h.io_by_file.iter().take(TOP_FILES).map(io).collect(),
            more_files: h.io_by_file.len().saturating_sub(TOP_FILES),
            processes,
            dropped_records: h.dropped_records,
            damage: h.damage.clone(),
            io_below_threshold: IoBelowThreshold {
                calls: h.unattributed.calls,
                bytes: h.unattributed.bytes,
                ns: h.unattributed.ns,
            },
        }
    }

    /// CPU time of the processes with this role.
    pub fn cpu_of(&self, role: &str) -> (usize, i64) {
        self.processes
            .iter()
            .filter(|p| p.role == role)
            .fold((0, 0), |(n, ns), p| (n + 1, ns + p.cpu_ns))
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CombinedReport {
    pub est_step_ns_after: i64,
    pub est_saving_ns: i64,
    pub assumption: String,
}

impl FindingReport {
    /// "cause/sub_cause", or the cause alone.
    pub fn label(&self) -> String {
        if self.sub_cause.is_empty() {
            self.cause.clone()
        } else {
            format!("{}/{}", self.cause, self.sub_cause)
        }
    }

    fn of(f: &crate::analysis::Finding) -> FindingReport {
        FindingReport {
            cause: f.cause.clone(),
            sub_cause: f.sub_cause.clone(),
            share_pct: f.share_pct,
            est_saving_ns: f.est_saving_ns,
            est_step_ns_after: f.est_step_ns_after,
            assumption: f.assumption.clone(),
            evidence: f.evidence.clone(),
            fix: f.fix.clone(),
            kernels: f.kernels.clone(),
        }
    }
}

impl DeviceReport {
    /// The causes with idle time, most first.
    pub fn idle_causes(&self) -> Vec<(&'static str, i64)> {
        let mut causes: Vec<(&'static str, i64)> = Cause::ALL
            .iter()
            .map(|c| {
                let ns = self.idle_by_cause_ns.get(c.name()).and_then(|v| v.as_i64());
                (c.name(), ns.unwrap_or(0))
            })
            .filter(|(_, v)| *v > 0)
            .collect();
        causes.sort_by_key(|c| std::cmp::Reverse(c.1));
        causes
    }
}

/// The ranks of one job compared (one timeline and report each, in the same
/// order), and each report's `comm/wait` fix then names the rank the others
/// wait for.
pub fn compare_ranks(
    tls: &[Timeline],
    reports: &mut [Report],
) -> crate::analysis::ranks::RankComparison {
    let cmp = crate::analysis::ranks::compare_ranks(tls);
    for (r, summary) in reports.iter_mut().zip(&cmp.ranks) {
        r.name_the_slowest(summary.rank, &cmp);
    }
    cmp
}

impl Report {
    /// With every rank analyzed together, the `comm/wait` fix names the rank
    /// the others wait for, instead of asking for all ranks. `rank` is this
    /// report's.
    fn name_the_slowest(&mut self, rank: u32, cmp: &crate::analysis::ranks::RankComparison) {
        let Some(s) = &cmp.slowest else { return };
        let fix = match (s.by, s.rank == rank) {
            ("collectives", true) => "the other ranks wait for this one at collectives: cut its \
                own work before them (data loading, host work, a larger shard); overlap \
                collectives with compute"
                .to_string(),
            ("collectives", false) => format!(
                "rank {} is the one the others wait for at collectives (see the comparison): \
                 balance its work; overlap collectives with compute",
                s.rank
            ),
            _ => format!(
                "rank {} has the longest steps: balance the work across ranks and overlap \
                 collectives with compute",
                s.rank
            ),
        };
        for f in self.findings.iter_mut().chain(&mut self.minor) {
            if f.cause == "comm" && f.sub_cause == "wait" {
                f.fix = fix.clone();
            }
        }
    }

    pub fn build(tl: &Timeline, d: &Diagnosis) -> Report {
        let (w0, w1) = d.window;
        // Processes (images: a wrapper that execs keeps the pid) that
        // launched GPU work, found once: a worker without launches is read
        // to its last span.
        let trainer_ix: Vec<usize> = (0..tl.processes.len())
            .filter(|&i| crate::analysis::host::is_trainer(&tl.processes[i]))
            .collect();
        let trainers: Vec<u32> = trainer_ix.iter().map(|&i| tl.processes[i].pid).collect();
        // Producers, not every child: a wrapper's helpers are not workers.
        let (workers, workers_at_once) =
            crate::analysis::context::trainer_workers(tl, &trainer_ix, d.window);
        let command = trainer_ix
            .first()
            .map(|&i| &tl.processes[i])
            .or_else(|| tl.processes.first())
            .map(|p| p.cmdline.clone())
            .unwrap_or_default();
        let mut gpu_capture: Vec<String> = tl
            .processes
            .iter()
            .filter_map(|p| match &p.gpu_capture {
                GpuCapture::Unavailable(r) => {
                    Some(format!("pid {}: GPU capture unavailable: {r}", p.pid))
                }
                GpuCapture::Partial(r) => Some(format!("pid {}: GPU capture partial: {r}", p.pid)),
                _ => None,
            })
            .collect();
        gpu_capture.dedup();
        let devices = d
            .devices
            .iter()
            .map(|dd| {
                let g = tl.gpus.iter().find(|g| g.id == dd.gpu);
                let mut idle = serde_json::Map::new();
                for c in Cause::ALL {
                    idle.insert(c.name().into(), dd.idle_by_cause[c.index()].into());
                }
                let mut prec = serde_json::Map::new();
                for p in Precision::ALL {
                    let v = dd
                        .busy_by_precision
                        .iter()
                        .find(|x| x.0 == p)
                        .map_or(0, |x| x.1);
                    prec.insert(p.name().into(), v.into());
                }
                DeviceReport {
                    id: dd.gpu.to_string(),
                    name: g.map(|g| g.name.clone()).unwrap_or_default(),
                    arch: g.map_or(Arch::Unknown, Arch::of).name(),
                    busy_ns: dd.busy_ns,
                    idle_ns: dd.idle_ns,
                    idle_by_cause_ns: idle,
                    busy_by_precision_ns: prec,
                    low_bit_gemm_ns: dd.low_bit_gemm_ns,
                }
            })
            .collect();
        Report {
            schema: SCHEMA,
            source: tl.source.name(),
            name: tl.name.clone(),
            command,
            wall_ns: w1 - w0,
            window_ns: [w0, w1],
            processes: ProcessSummary {
                count: tl.processes.len(),
                trainers: trainers.len(),
                workers,
                workers_at_once,
                gpu_capture,
            },
            steps: StepSummary {
                count: d.steps.steps.len(),
                mean_ns: d.steps.mean_ns,
                median_ns: d.steps.median_ns,
                p90_ns: d.steps.p90_ns,
                source: match d.steps.source {
                    StepSource::ProfilerStep => "profiler_step",
                    StepSource::Nvtx => "nvtx",
                    StepSource::LoopCalls => "loop_calls",
                    StepSource::Detected => "detected",
                    StepSource::None => "none",
                },
                outliers: d
                    .steps
                    .steps
                    .iter()
                    .filter(|s| s.outlier)
                    .map(|s| s.index)
                    .collect(),
                marked_by: d.steps.label.clone(),
                dropped: d
                    .steps
                    .dropped
                    .iter()
                    .map(|x| DroppedReport {
                        index: x.index,
                        reason: x.reason,
                    })
                    .collect(),
                periodic: d.steps.periodic.as_ref().map(|p| PeriodicReport {
                    every: p.every,
                    extra_ns: p.extra_ns,
                    steps: p.steps.clone(),
                    cause: p.cause.to_string(),
                    sub_cause: p.sub.to_string(),
                    what: p.what.clone(),
                }),
            },
            startup: d.startup.as_ref().map(|s| {
                let mut items: Vec<StartupItemReport> = Vec::new();
                for it in &s.items {
                    match items
                        .iter_mut()
                        .find(|x| x.kind == it.kind && x.what == it.what)
                    {
                        Some(x) => {
                            x.count += 1;
                            x.ns += it.dur();
                        }
                        None => items.push(StartupItemReport {
                            kind: it.kind,
                            what: it.what.clone(),
                            count: 1,
                            ns: it.dur(),
                        }),
                    }
                }
                items.sort_by_key(|x| std::cmp::Reverse(x.ns));
                StartupReport {
                    ns: s.ns(),
                    until_ns: s.until,
                    share_pct: s.share_pct,
                    mostly: s.mostly(),
                    all: s.all,
                    short_rest: s.short_rest,
                    items,
                }
            }),
            devices,
            findings: d.findings.iter().map(FindingReport::of).collect(),
            minor: d.minor.iter().map(FindingReport::of).collect(),
            options: d.options.iter().map(FindingReport::of).collect(),
            combined: d.combined.as_ref().map(|c| CombinedReport {
                est_step_ns_after: c.est_step_ns_after,
                est_saving_ns: c.est_saving_ns,
                assumption: c.assumption.clone(),
            }),
            notes: tl
                .notes
                .iter()
                .map(|n| match n.level {
                    NoteLevel::Warning => format!("warning: {}", n.text),
                    NoteLevel::Info => n.text.clone(),
                })
                .chain(step_notes(&d.steps))
                .chain(d.lead_in.iter().map(lead_in_note))
                .chain(d.startup.as_ref().and_then(|s| {
                    if s.all {
                        Some(format!(
                            "no GPU work follows start-up ({:.0}% of the trace, {}): \
                             no steady state to diagnose",
                            s.share_pct,
                            super::text::dur(s.ns())
                        ))
                    } else if s.short_rest {
                        Some(format!(
                            "the trace is mostly start-up ({:.0}% of it, {}); too little follows \
                             it to diagnose ({})",
                            s.share_pct,
                            super::text::dur(s.ns()),
                            super::text::dur(d.window.1 - d.window.0)
                        ))
                    } else if s.mostly() {
                        Some(format!(
                            "the trace is mostly start-up ({:.0}% of it, {}); \
                             the findings cover the rest only",
                            s.share_pct,
                            super::text::dur(s.ns())
                        ))
                    } else {
                        None
                    }
                }))
                .collect(),
            job: d.job.clone(),
            host: match &d.host {
                Some(h) => HostReport::from_summary(tl, h),
                None => HostReport::build(tl, d.window),
            },
            hta_compat: None,
        }
    }

    /// The one-line step headline: "mean 85 ms (median 12 ms, p90 310 ms);
    /// every 4th step +290 ms: io on ckpt.bin". `dur` formats a duration.
    pub fn steps_headline(&self, dur: impl Fn(i64) -> String) -> String {
        let s = &self.steps;
        let mut out = format!(
            "steps {}, mean {} (median {}, p90 {})",
            s.count,
            dur(s.mean_ns),
            dur(s.median_ns),
            dur(s.p90_ns)
        );
        if let Some(p) = self.periodic_text(&dur) {
            out += &format!("; {p}");
        }
        out
    }

    /// "every 4th step +290 ms: io/ext4 on ckpt.bin", when slow steps recur.
    pub fn periodic_text(&self, dur: impl Fn(i64) -> String) -> Option<String> {
        let p = self.steps.periodic.as_ref()?;
        let th = match (p.every % 10, p.every % 100) {
            (_, 11..=13) => "th",
            (1, _) => "st",
            (2, _) => "nd",
            (3, _) => "rd",
            _ => "th",
        };
        let mut out = format!("every {}{th} step +{}", p.every, dur(p.extra_ns));
        if !p.cause.is_empty() {
            let label = if p.sub_cause.is_empty() {
                p.cause.clone()
            } else {
                format!("{}/{}", p.cause, p.sub_cause)
            };
            out += &format!(": {label}");
            if !p.what.is_empty() {
                out += &format!(" on {}", p.what);
            }
        }
        Some(out)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serializes")
    }

    /// Idle share of the window per device, in percent.
    pub fn idle_pct(&self, dev: &DeviceReport) -> f64 {
        100.0 * dev.idle_ns as f64 / self.wall_ns.max(1) as f64
    }

    /// Total idle percentage over devices (averaged), for `check`.
    pub fn total_idle_pct(&self) -> f64 {
        if self.devices.is_empty() {
            return 0.0;
        }
        self.devices.iter().map(|d| self.idle_pct(d)).sum::<f64>() / self.devices.len() as f64
    }

    /// Idle share of one cause, averaged over devices.
    pub fn cause_pct(&self, cause: &str) -> f64 {
        if self.devices.is_empty() {
            return 0.0;
        }
        self.devices
            .iter()
            .map(|d| {
                let v = d
                    .idle_by_cause_ns
                    .get(cause)
                    .and_then(|v| v.as_i64())
                    .unwrap_or(0);
                100.0 * v as f64 / self.wall_ns.max(1) as f64
            })
            .sum::<f64>()
            / self.devices.len() as f64
    }
}

/// Why the window starts after the lead-in (see `analysis::lead_in`).
fn lead_in_note(l: &crate::analysis::lead_in::LeadIn) -> String {
    let dur = super::text::dur;
    format!(
        "left out the first {} of GPU {}'s window: stream {}'s next op started {} after its \
         launch returned, on a GPU otherwise idle{}: GPU work the trace does not show (launched \
         before the trace began, or by another process) most likely kept it busy",
        dur(l.ns()),
        l.gpu,
        l.stream,
        dur(l.held_ns),
        if l.event_wait {
            ", waiting for an event"
        } else {
            ""
        }
    )
}

/// Notes on the step markers that gave no step (steps found in the GPU
/// work start at the repeating kernel's launches, not at markers).
fn step_notes(s: &Steps) -> Vec<String> {
    let what = if s.source == StepSource::Detected {
        "step"
    } else {
        "step marker"
    };
    let mut out = Vec::new();
    for (reason, say) in [
        (
            "truncated-first",
            "the first step was cut off by the start of the trace",
        ),
        (
            "truncated-last",
            "the last step was cut off by the end of the trace",
        ),
        ("start-up", "inside start-up"),
        ("no-gpu-work", "without GPU work"),
    ] {
        let n = s.dropped.iter().filter(|d| d.reason == reason).count();
        if n == 0 {
            continue;
        }
        out.push(match reason {
            "truncated-first" | "truncated-last" => format!("{say}; it was dropped"),
            _ => format!("{n} {what}{} {say} dropped", if n == 1 { "" } else { "s" }),
        });
    }
    out
}
