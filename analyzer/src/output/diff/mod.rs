//! Two runs compared (`stallscope diff`, `check --baseline`): the data, built
//! from two saved-report views; `text`, `markdown` and `html` render it.
//!
//! Units, so runs of different lengths compare:
//! - steps are the reports' GPU-side mean, median and p90;
//! - idle time by cause is per step and per GPU: a cause's idle time summed
//!   over the GPUs, divided by their number and by the number of steps (a run
//!   without steps counts its whole window as one step, and says so);
//! - a finding's saving is per step: the mean step less its predicted step
//!   after the fix (`est_saving_ns` in a report is over the whole window).

mod html;
mod markdown;
mod text;

pub use html::render as render_html;
pub use markdown::render as render_markdown;
pub use text::render as render_text;

use serde::Serialize;

use super::saved::{SavedFinding, SavedReport};
use crate::analysis::Cause;

pub const SCHEMA: &str = "stallscope.diff.v1";

/// A BEFORE finding counts as fixed when its saving in AFTER is at most this
/// share of its saving in BEFORE (or it is gone).
pub const FIXED_FRACTION: f64 = 0.5;

/// `check --baseline`: a cause's idle time may always grow by this share of
/// the mean step's allowance (a tenth: 1% of the baseline step at
/// `--max-regression 10`), so a cause going from 0.1 ms to 0.3 ms a step is
/// no 200% regression. It scales with the limit so that a looser limit
/// loosens small causes too: on a loaded runner the sync idle of a 90 ms
/// step moved between 1 ms and 3 ms from run to run, which no fixed floor
/// of 1% lets through.
pub const CAUSE_FLOOR_SHARE: f64 = 0.1;

#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub schema: &'static str,
    pub before: Side,
    pub after: Side,
    pub mean_step: Change,
    pub median_step: Change,
    pub p90_step: Change,
    /// Idle time per step and GPU, by cause (causes idle on either side).
    pub idle_per_step: Vec<CauseChange>,
    pub idle_per_step_total: Change,
    /// BEFORE findings that AFTER no longer lists among its findings
    /// (`status`: "gone", or "minor" when it saves under 0.5% now).
    pub resolved: Vec<FindingChange>,
    /// AFTER findings that BEFORE did not list (`status` "new").
    pub new: Vec<FindingChange>,
    /// Findings in both (`status`: "smaller", "same" or "larger").
    pub remaining: Vec<FindingChange>,
    /// The earlier prediction against the measured change, when a BEFORE
    /// finding was fixed.
    pub prediction: Option<Prediction>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub name: String,
    pub source: String,
    pub command: String,
    pub steps: usize,
    pub wall_ns: i64,
    pub gpus: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Change {
    pub before_ns: i64,
    pub after_ns: i64,
    pub delta_ns: i64,
    /// Relative change in percent; absent when BEFORE is zero.
    pub pct: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CauseChange {
    pub cause: String,
    #[serde(flatten)]
    pub change: Change,
}

#[derive(Debug, Clone, Serialize)]
pub struct FindingChange {
    pub cause: String,
    pub sub_cause: String,
    /// Estimated saving per step in BEFORE (0 when it was not there).
    pub before_saving_ns: i64,
    /// Estimated saving per step in AFTER (0 when it is gone).
    pub after_saving_ns: i64,
    pub status: &'static str,
    pub fix: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Prediction {
    /// The fixed findings, "cause/sub_cause".
    pub fixes: Vec<String>,
    /// "finding" (one fix: its own estimate), "combined" (every BEFORE
    /// finding fixed: the report's combined estimate) or "sum" (several but
    /// not all: the sum of their savings, which counts any overlap twice).
    pub basis: &'static str,
    pub predicted_saving_ns: i64,
    pub predicted_step_ns: i64,
    pub measured_saving_ns: i64,
    pub measured_step_ns: i64,
    /// |predicted - measured| / measured saving, in percent; absent when
    /// nothing was saved (the step stayed or grew).
    pub error_pct: Option<f64>,
}

impl Change {
    pub fn of(before: i64, after: i64) -> Change {
        Change {
            before_ns: before,
            after_ns: after,
            delta_ns: after - before,
            pct: (before != 0).then(|| 100.0 * (after - before) as f64 / before as f64),
        }
    }
}

impl FindingChange {
    pub fn label(&self) -> String {
        if self.sub_cause.is_empty() {
            self.cause.clone()
        } else {
            format!("{}/{}", self.cause, self.sub_cause)
        }
    }
}

impl Prediction {
    pub fn label(&self) -> String {
        let fixes = self.fixes.join(" + ");
        if self.fixes.len() == 1 {
            format!("{fixes} fix")
        } else {
            format!("{fixes} fixes")
        }
    }
}

/// The step a report's estimates start from: the mean step, or the whole
/// window without steps (as the findings do).
fn base_step(r: &SavedReport) -> i64 {
    if r.steps.count > 0 && r.steps.mean_ns > 0 {
        r.steps.mean_ns
    } else {
        r.wall_ns
    }
}

/// A finding's estimated saving per step.
fn saving(r: &SavedReport, f: &SavedFinding) -> i64 {
    (base_step(r) - f.est_step_ns_after).max(0)
}

fn same(a: &SavedFinding, b: &SavedFinding) -> bool {
    a.cause == b.cause && a.sub_cause == b.sub_cause
}

/// Idle time per step and GPU of `cause` (None: every cause).
fn idle_per_step(r: &SavedReport, cause: Option<&str>) -> i64 {
    if r.devices.is_empty() {
        return 0;
    }
    let sum: i64 = r
        .devices
        .iter()
        .map(|d| match cause {
            Some(c) => d.idle_by_cause_ns.get(c).copied().unwrap_or(0),
            None => d.idle_ns,
        })
        .sum();
    let per = r.devices.len() as f64 * r.steps.count.max(1) as f64;
    (sum as f64 / per).round() as i64
}

/// The causes to show: the known ones in their usual order, then any other
/// a report names, each when idle on either side.
fn causes(b: &SavedReport, a: &SavedReport) -> Vec<String> {
    let mut out: Vec<String> = Cause::ALL.iter().map(|c| c.name().to_string()).collect();
    let mut extra: Vec<String> = [b, a]
        .iter()
        .flat_map(|r| r.devices.iter())
        .flat_map(|d| d.idle_by_cause_ns.keys())
        .filter(|k| Cause::from_name(k).is_none())
        .cloned()
        .collect();
    extra.sort();
    extra.dedup();
    out.extend(extra);
    out
}

fn side(r: &SavedReport) -> Side {
    Side {
        name: r.name.clone(),
        source: r.source.clone(),
        command: r.command.clone(),
        steps: r.steps.count,
        wall_ns: r.wall_ns,
        gpus: r.devices.len(),
    }
}

pub fn compare(b: &SavedReport, a: &SavedReport) -> Diff {
    let mut notes = Vec::new();
    for (which, r) in [("BEFORE", b), ("AFTER", a)] {
        if r.steps.count == 0 {
            notes.push(format!(
                "{which} has no steps: its whole window counts as one step"
            ));
        }
        if r.devices.is_empty() {
            notes.push(format!("{which} has no GPU activity"));
        }
    }
    if b.source != a.source {
        notes.push(format!(
            "BEFORE is a {} trace and AFTER a {} one: their steps may be marked differently",
            b.source, a.source
        ));
    }
    let idle: Vec<CauseChange> = causes(b, a)
        .into_iter()
        .map(|c| {
            let change = Change::of(idle_per_step(b, Some(&c)), idle_per_step(a, Some(&c)));
            CauseChange { cause: c, change }
        })
        .filter(|c| c.change.before_ns != 0 || c.change.after_ns != 0)
        .collect();

    let lookup = |r: &SavedReport, f: &SavedFinding| -> (i64, bool) {
        if let Some(g) = r.findings.iter().find(|g| same(f, g)) {
            (saving(r, g), false)
        } else if let Some(g) = r.minor.iter().find(|g| same(f, g)) {
            (saving(r, g), true)
        } else {
            (0, false)
        }
    };
    let mut resolved = Vec::new();
    let mut remaining = Vec::new();
    let mut fixed: Vec<&SavedFinding> = Vec::new();
    for f in &b.findings {
        let before = saving(b, f);
        let (after, minor) = lookup(a, f);
        let listed = a.findings.iter().any(|g| same(f, g));
        if after as f64 <= FIXED_FRACTION * before as f64 {
            fixed.push(f);
        }
        let status = if !listed {
            if minor { "minor" } else { "gone" }
        } else if (after as f64) < 0.9 * before as f64 {
            "smaller"
        } else if (after as f64) > 1.1 * before as f64 {
            "larger"
        } else {
            "same"
        };
        let change = FindingChange {
            cause: f.cause.clone(),
            sub_cause: f.sub_cause.clone(),
            before_saving_ns: before,
            after_saving_ns: after,
            status,
            fix: f.fix.clone(),
        };
        if listed {
            remaining.push(change);
        } else {
            resolved.push(change);
        }
    }
    let new = a
        .findings
        .iter()
        .filter(|g| !b.findings.iter().any(|f| same(f, g)))
        .map(|g| FindingChange {
            cause: g.cause.clone(),
            sub_cause: g.sub_cause.clone(),
            before_saving_ns: lookup(b, g).0,
            after_saving_ns: saving(a, g),
            status: "new",
            fix: g.fix.clone(),
        })
        .collect();
    let prediction = predict(b, a, &fixed);
    Diff {
        schema: SCHEMA,
        before: side(b),
        after: side(a),
        mean_step: Change::of(b.steps.mean_ns, a.steps.mean_ns),
        median_step: Change::of(b.steps.median_ns, a.steps.median_ns),
        p90_step: Change::of(b.steps.p90_ns, a.steps.p90_ns),
        idle_per_step: idle,
        idle_per_step_total: Change::of(idle_per_step(b, None), idle_per_step(a, None)),
        resolved,
        new,
        remaining,
        prediction,
        notes,
    }
}

/// The earlier prediction for the fixes applied, against the measured step.
/// Savings of several fixes overlap (a step sped up by one has less idle
/// time left for the next), so all fixed at once use the report's combined
/// estimate, which replays them together; a part of them, the plain sum.
fn predict(b: &SavedReport, a: &SavedReport, fixed: &[&SavedFinding]) -> Option<Prediction> {
    if fixed.is_empty() {
        return None;
    }
    let base = base_step(b);
    let (basis, predicted_step) = match (fixed, &b.combined) {
        ([f], _) => ("finding", f.est_step_ns_after),
        (_, Some(c)) if fixed.len() == b.findings.len() => ("combined", c.est_step_ns_after),
        _ => {
            let sum: i64 = fixed.iter().map(|f| saving(b, f)).sum();
            ("sum", (base - sum).max(0))
        }
    };
    let predicted = base - predicted_step;
    let measured_step = base_step(a);
    let measured = base - measured_step;
    Some(Prediction {
        fixes: fixed.iter().map(|f| f.label()).collect(),
        basis,
        predicted_saving_ns: predicted,
        predicted_step_ns: predicted_step,
        measured_saving_ns: measured,
        measured_step_ns: measured_step,
        // Against no saving, or a step that grew, no error is meaningful.
        error_pct: (measured > 0)
            .then(|| 100.0 * (predicted - measured).abs() as f64 / measured as f64),
    })
}

/// One limit `check --baseline` checks.
#[derive(Debug, Clone, Serialize)]
pub struct Limit {
    /// "mean step", or "data idle" for a cause.
    pub what: String,
    pub baseline_ns: i64,
    pub now_ns: i64,
    /// The growth allowed, in ns.
    pub allowed_ns: i64,
    pub max_pct: f64,
    pub broken: bool,
}

impl Limit {
    /// "mean step 412 ms vs baseline 350 ms: +17.7% > 10%".
    pub fn describe(&self) -> String {
        let d = super::text::dur;
        let per = if self.what == "mean step" {
            ""
        } else {
            " a step"
        };
        let growth = self.now_ns - self.baseline_ns;
        let change = if self.baseline_ns > 0 {
            format!("{:+.1}%", 100.0 * growth as f64 / self.baseline_ns as f64)
        } else {
            format!("+{}", d(growth))
        };
        let floor = self.allowed_ns as f64 > self.max_pct / 100.0 * self.baseline_ns as f64 + 0.5;
        let limit = if floor {
            format!("the {} allowed", d(self.allowed_ns))
        } else {
            format!("{}%", self.max_pct)
        };
        format!(
            "{} {}{per} vs baseline {}: {change} {} {limit}",
            self.what,
            d(self.now_ns),
            d(self.baseline_ns),
            if self.broken { ">" } else { "<=" }
        )
    }
}

/// The limits of `check --baseline`, BEFORE being the baseline: the mean
/// step may grow by `max_pct` percent; each cause's idle time per step by
/// `max_pct` percent of its baseline or by [`CAUSE_FLOOR_SHARE`] of the mean
/// step's allowance, whichever is more.
pub fn limits(d: &Diff, max_pct: f64) -> Vec<Limit> {
    let frac = max_pct / 100.0;
    let mut out = vec![Limit {
        what: "mean step".into(),
        baseline_ns: d.mean_step.before_ns,
        now_ns: d.mean_step.after_ns,
        allowed_ns: (frac * d.mean_step.before_ns as f64).round() as i64,
        max_pct,
        broken: false,
    }];
    let floor = CAUSE_FLOOR_SHARE * frac * d.mean_step.before_ns.max(0) as f64;
    for c in &d.idle_per_step {
        out.push(Limit {
            what: format!("{} idle", c.cause),
            baseline_ns: c.change.before_ns,
            now_ns: c.change.after_ns,
            allowed_ns: (frac * c.change.before_ns as f64).max(floor).round() as i64,
            max_pct,
            broken: false,
        });
    }
    for l in &mut out {
        l.broken = l.now_ns - l.baseline_ns > l.allowed_ns;
    }
    out
}

#[cfg(test)]
mod tests;
