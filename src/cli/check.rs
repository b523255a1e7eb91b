//! `stallscope check`: gate a CI job on idle GPU time.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use stallscope_analyzer::analysis::{self, Cause};
use stallscope_analyzer::output::diff;
use stallscope_analyzer::output::report::Report;

use super::load;

/// Fail a CI job when the GPU idles too much, or more than it did before.
///
/// Exits 0 within the limits, 1 when a limit is broken (each broken limit is
/// named), and 2 for unreadable input or bad arguments.
///
///   stallscope check run1 --max-idle 20 --max-cause data=10 --max-cause sync=5
///
/// Against a baseline (a report saved by `stallscope analyze --json`, or any
/// run `stallscope diff` reads), the mean step may grow by PCT percent, and
/// each cause's idle time per step (per GPU) by PCT percent of its baseline or
/// by PCT/10 percent of the baseline's mean step, whichever is more (so at 10,
/// a cause going from 0.1 ms to 0.3 ms of a 100 ms step is no 200%
/// regression):
///
///   stallscope analyze main-run --json baseline.json
///   stallscope check pr-run --baseline baseline.json --max-regression 10
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct CheckArgs {
    /// Recording directory, trace file(s), or Kineto traces
    #[arg(required = true, value_name = "TRACE")]
    pub traces: Vec<PathBuf>,

    /// Largest allowed idle share of the analyzed window, in percent
    #[arg(long, value_name = "PCT")]
    pub max_idle: Option<f64>,

    /// Largest allowed idle share for one cause (data, io, cpu, memory, sync, transfer, launch, other)
    #[arg(long = "max-cause", value_name = "CAUSE=PCT")]
    pub max_cause: Vec<String>,

    /// Compare against this run (a saved JSON report, usually); TRACE is then
    /// one run, which may be a saved report too
    #[arg(
        long,
        value_name = "REPORT.json",
        requires = "max_regression",
        conflicts_with_all = ["max_idle", "max_cause"]
    )]
    pub baseline: Option<PathBuf>,

    /// With --baseline: the growth allowed, in percent, of the mean step and of
    /// each cause's idle time per step (with a floor of PCT/10 percent of the
    /// baseline step)
    #[arg(
        long,
        value_name = "PCT",
        requires = "baseline",
        allow_negative_numbers = true
    )]
    pub max_regression: Option<f64>,

    /// Write the JSON report too (with --baseline: the comparison, schema
    /// stallscope.diff.v1, and its limits)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Fail (exit 2) on a file of the recording that cannot be read at all,
    /// instead of skipping it with a warning
    #[arg(long)]
    pub strict: bool,
}

fn parse_limit(s: &str) -> anyhow::Result<(Cause, f64)> {
    let Some((c, v)) = s.split_once('=') else {
        bail!("--max-cause wants CAUSE=PCT, got {s:?}");
    };
    let Some(cause) = Cause::from_name(c.trim()) else {
        let all: Vec<&str> = Cause::ALL.iter().map(|c| c.name()).collect();
        bail!(
            "unknown cause {c:?} in --max-cause (one of: {})",
            all.join(", ")
        );
    };
    let pct: f64 = v
        .trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("--max-cause {s:?}: {v:?} is not a number"))?;
    Ok((cause, pct))
}

pub fn run(a: CheckArgs) -> anyhow::Result<ExitCode> {
    if let Some(baseline) = &a.baseline {
        return against_baseline(&a, baseline);
    }
    let limits: Vec<(Cause, f64)> = a
        .max_cause
        .iter()
        .map(|s| parse_limit(s))
        .collect::<anyhow::Result<_>>()?;
    if a.max_idle.is_none() && limits.is_empty() {
        bail!(
            "give at least one limit: --max-idle PCT, --max-cause CAUSE=PCT, \
             or --baseline REPORT.json --max-regression PCT"
        );
    }
    let timelines = load::load(&a.traces, true, a.strict)?;
    // Files skipped as unreadable are named, as analyze and dump do.
    for n in timelines.iter().flat_map(|t| &t.notes) {
        if n.text.starts_with("skipped an unreadable") {
            eprintln!("stallscope: warning: {}", n.text);
        }
    }
    let mut broken = Vec::new();
    let mut reports = Vec::new();
    for tl in &timelines {
        let report = Report::build(tl, &analysis::diagnose(tl));
        let label = if timelines.len() > 1 {
            format!("{}: ", report.name)
        } else {
            String::new()
        };
        if report.devices.is_empty() {
            broken.push(format!(
                "{label}no GPU activity was recorded, so idle time cannot be checked"
            ));
        }
        let idle = report.total_idle_pct();
        match a.max_idle {
            Some(max) if idle > max => {
                broken.push(format!("{label}GPU idle {idle:.1}% > --max-idle {max}"))
            }
            Some(max) => println!("ok: {label}GPU idle {idle:.1}% <= {max}"),
            None => {}
        }
        for (cause, max) in &limits {
            let v = report.cause_pct(cause.name());
            if v > *max {
                broken.push(format!(
                    "{label}{} idle {v:.1}% > --max-cause {}={max}",
                    cause.name(),
                    cause.name()
                ));
            } else {
                println!("ok: {label}{} idle {v:.1}% <= {max}", cause.name());
            }
        }
        reports.push(report);
    }
    if let Some(p) = &a.json {
        let body = if reports.len() == 1 {
            reports[0].to_json()
        } else {
            serde_json::to_string_pretty(&reports)?
        };
        super::analyze::write_out(p, &body)?;
    }
    if broken.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    for b in &broken {
        println!("FAIL: {b}");
    }
    Ok(ExitCode::from(1))
}

/// `check --baseline`: the run against the baseline, by `diff::limits`.
fn against_baseline(a: &CheckArgs, baseline: &Path) -> anyhow::Result<ExitCode> {
    let max = a.max_regression.unwrap_or(f64::NAN);
    if !max.is_finite() || max < 0.0 {
        bail!("--max-regression wants a percentage of 0 or more, got {max}");
    }
    let [trace] = a.traces.as_slice() else {
        bail!("--baseline compares one run (got {} paths)", a.traces.len());
    };
    let base = super::diff::load_side(baseline, a.strict)?;
    let now = super::diff::load_side(trace, a.strict)?;
    for (p, r) in [(baseline, &base), (trace.as_path(), &now)] {
        if r.steps.count == 0 || r.steps.mean_ns <= 0 {
            bail!(
                "{}: no steps were found, so its mean step cannot be compared",
                p.display()
            );
        }
    }
    let d = diff::compare(&base, &now);
    let limits = diff::limits(&d, max);
    if let Some(p) = &a.json {
        let mut v = serde_json::to_value(&d)?;
        v["limits"] = serde_json::to_value(&limits)?;
        super::analyze::write_out(p, &(serde_json::to_string_pretty(&v)? + "\n"))?;
    }
    for l in limits.iter().filter(|l| !l.broken) {
        println!("ok: {}", l.describe());
    }
    let broken: Vec<_> = limits.iter().filter(|l| l.broken).collect();
    if broken.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    for l in broken {
        println!("FAIL: {}", l.describe());
    }
    Ok(ExitCode::from(1))
}
