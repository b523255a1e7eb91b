//! `stallscope check`: gate a CI job on idle GPU time.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use stallscope_analyzer::analysis::{self, Cause};
use stallscope_analyzer::output::report::Report;

use super::load;

/// Fail a CI job when the GPU idles too much.
///
/// Exits 0 within the limits, 1 when a limit is broken (each broken limit is
/// named), and 2 for unreadable input or bad arguments.
///
///   stallscope check run1 --max-idle 20 --max-cause data=10 --max-cause sync=5
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

    /// Write the JSON report too
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
    let limits: Vec<(Cause, f64)> = a
        .max_cause
        .iter()
        .map(|s| parse_limit(s))
        .collect::<anyhow::Result<_>>()?;
    if a.max_idle.is_none() && limits.is_empty() {
        bail!("give at least one limit: --max-idle PCT or --max-cause CAUSE=PCT");
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
