//! The report (schema `stallscope.report.v1`, documented in the README): built
//! once from a timeline and its diagnosis, then written as JSON or rendered as
//! text and Markdown, so every output tells the same story.

use serde::Serialize;

use crate::analysis::{Cause, Diagnosis, StepSource};
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
    pub devices: Vec<DeviceReport>,
    pub findings: Vec<FindingReport>,
    /// Findings that save less than half a percent of the step.
    pub minor: Vec<FindingReport>,
    /// Every advised fix at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub combined: Option<CombinedReport>,
    pub notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hta_compat: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProcessSummary {
    pub count: usize,
    /// Processes that launched GPU work.
    pub trainers: usize,
    /// Children of a trainer (DataLoader workers, typically).
    pub workers: usize,
    pub gpu_capture: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepSummary {
    pub count: usize,
    /// The mean step: the headline, and the base of the what-ifs.
    pub mean_ns: i64,
    pub median_ns: i64,
    pub p90_ns: i64,
    /// "profiler_step", "nvtx", "detected" or "none".
    pub source: &'static str,
    /// The range or kernel name that marked the steps.
    pub marked_by: String,
    /// Indices of steps much slower than the median.
    pub outliers: Vec<u32>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DeviceReport {
    pub id: String,
    pub name: String,
    pub busy_ns: i64,
    pub idle_ns: i64,
    pub idle_by_cause_ns: serde_json::Map<String, serde_json::Value>,
    pub busy_by_precision_ns: serde_json::Map<String, serde_json::Value>,
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
}

#[derive(Debug, Clone, Serialize)]
pub struct CombinedReport {
    pub est_step_ns_after: i64,
    pub est_saving_ns: i64,
    pub assumption: String,
}

impl FindingReport {
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
        }
    }
}

impl Report {
    pub fn build(tl: &Timeline, d: &Diagnosis) -> Report {
        let (w0, w1) = d.window;
        let trainers: Vec<u32> = tl
            .processes
            .iter()
            .filter(|p| {
                p.threads
                    .iter()
                    .any(|t| t.spans.iter().any(|s| s.kind.is_named() && s.arg != 0))
            })
            .map(|p| p.pid)
            .collect();
        let workers = tl
            .processes
            .iter()
            .filter(|p| trainers.contains(&p.ppid))
            .count();
        let command = tl
            .processes
            .iter()
            .find(|p| trainers.contains(&p.pid))
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
                    busy_ns: dd.busy_ns,
                    idle_ns: dd.idle_ns,
                    idle_by_cause_ns: idle,
                    busy_by_precision_ns: prec,
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
            },
            devices,
            findings: d.findings.iter().map(FindingReport::of).collect(),
            minor: d.minor.iter().map(FindingReport::of).collect(),
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
                .collect(),
            hta_compat: None,
        }
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
