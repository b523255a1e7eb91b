//! `stallscope analyze`: the diagnosis, as text plus optional JSON, Markdown,
//! HTML and Perfetto outputs written in one pass.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use stallscope_analyzer::analysis::{self, hta};
use stallscope_analyzer::model::Timeline;
use stallscope_analyzer::output::report::{self, Report};
use stallscope_analyzer::output::{html, markdown, perfetto, text};

use super::load;

/// Explain why the GPU was idle and what each fix is worth.
///
/// TRACE is a recording directory from `stallscope record`, one of its .sst
/// files, or PyTorch-profiler traces (Chrome JSON, .json or .json.gz: a file,
/// several files, or a directory of per-rank files).
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// Recording directory, trace file(s), or directory of Kineto traces
    #[arg(required = true, value_name = "TRACE")]
    pub traces: Vec<PathBuf>,

    /// Write the report as JSON (schema stallscope.report.v1); "-" for stdout
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write the report as Markdown (for CI summaries and PR comments)
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,

    /// Write the report as one self-contained HTML page (charts, works offline)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Write a Perfetto trace to open in ui.perfetto.dev
    #[arg(long, value_name = "FILE")]
    pub perfetto: Option<PathBuf>,

    /// Add HolisticTraceAnalysis-compatible figures to the JSON report
    #[arg(long)]
    pub hta_compat: bool,

    /// No progress display and no text report (with `--json -` the text goes to stderr)
    #[arg(short, long)]
    pub quiet: bool,

    /// Fail (exit 2) on a file of the recording that cannot be read at all,
    /// instead of skipping it with a warning
    #[arg(long)]
    pub strict: bool,
}

pub fn run(a: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    // STALLSCOPE_TIMING=1 prints how long each phase took, for benchmarks,
    // and the process's CPU time so far: on a shared machine the wall time
    // also measures the neighbours (steal), the CPU time does not.
    let timing = std::env::var_os("STALLSCOPE_TIMING").is_some();
    let t0 = std::time::Instant::now();
    let timelines = load::load(&a.traces, a.quiet, a.strict)?;
    if timing {
        eprintln!(
            "timing: read {:.3} s cpu {:.3} s",
            t0.elapsed().as_secs_f64(),
            cpu_seconds()
        );
    }
    let multi = timelines.len() > 1;
    let t1 = std::time::Instant::now();
    let events: usize = timelines
        .iter()
        .map(|t| t.gpu_op_count() + t.host_span_count())
        .sum();
    let spinner =
        super::progress::spinner(a.quiet, format!("diagnosing {} events", thousands(events)));
    // The HTA figures need only the timeline: they are computed beside the diagnosis.
    let (diags, htas): (Vec<analysis::Diagnosis>, Vec<Option<hta::HtaCompat>>) = {
        use rayon::prelude::*;
        timelines
            .par_iter()
            .map(|tl| {
                rayon::join(
                    || analysis::diagnose(tl),
                    || a.hta_compat.then(|| hta::hta_compat(tl)),
                )
            })
            .unzip()
    };
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    if timing {
        eprintln!(
            "timing: diagnose {:.3} s cpu {:.3} s",
            t1.elapsed().as_secs_f64(),
            cpu_seconds()
        );
    }
    // Text goes to stdout unless a machine-readable report does: then to
    // stderr, so `--json - | python3 -m json.tool` reads JSON only.
    let to_stdout = [&a.json, &a.markdown]
        .iter()
        .any(|p| p.as_ref().is_some_and(|p| p.as_os_str() == "-"));
    let mut reports = Vec::new();
    let mut shown_paths = Vec::new();
    for (i, ((tl, diag), hta)) in timelines.iter().zip(&diags).zip(htas).enumerate() {
        let mut report = Report::build(tl, diag);
        if let Some(h) = hta {
            report.hta_compat = Some(serde_json::to_value(h).context("encoding HTA figures")?);
        }
        if let Some(p) = &a.perfetto {
            let path = if multi { suffixed(p, i) } else { p.clone() };
            write_perfetto(tl, diag, &path, a.quiet)?;
        }
        shown_paths.push(
            a.perfetto
                .as_ref()
                .map(|p| if multi { suffixed(p, i) } else { p.clone() }),
        );
        reports.push(report);
    }
    let kineto = timelines
        .iter()
        .all(|t| t.source == stallscope_analyzer::model::Source::Kineto);
    let comparison = (multi && kineto).then(|| report::compare_ranks(&timelines, &mut reports));
    if !a.quiet {
        let shown: Vec<Option<&str>> = shown_paths
            .iter()
            .map(|p| p.as_ref().and_then(|p| p.to_str()))
            .collect();
        let body = if multi {
            text::render_multi(&reports, comparison.as_ref(), &shown)
        } else {
            text::render(&reports[0], shown[0])
        };
        if to_stdout {
            eprint!("{body}");
        } else {
            print!("{body}");
        }
    }
    if let Some(p) = &a.json {
        let body = if multi {
            serde_json::to_string_pretty(&serde_json::json!({
                "schema": "stallscope.report.v1.multi",
                "ranks": reports,
                "comparison": comparison,
            }))?
        } else {
            reports[0].to_json()
        };
        write_out(p, &body)?;
    }
    if let Some(p) = &a.markdown {
        let mut parts: Vec<String> = comparison
            .iter()
            .map(|c| markdown::render_ranks(&reports, c))
            .collect();
        parts.extend(reports.iter().map(markdown::render));
        write_out(p, &parts.join("\n"))?;
    }
    if let Some(p) = &a.html {
        let parts: Vec<html::Part> = timelines
            .iter()
            .zip(&diags)
            .zip(&reports)
            .map(|((tl, diag), report)| html::Part { tl, diag, report })
            .collect();
        write_out(p, &html::render(&parts, comparison.as_ref()))?;
    }
    if timing {
        eprintln!(
            "timing: total {:.3} s cpu {:.3} s",
            t0.elapsed().as_secs_f64(),
            cpu_seconds()
        );
    }
    // The process exits next: freeing a large recording's model (gigabytes
    // in millions of allocations) would only delay the exit.
    std::mem::forget(timelines);
    std::mem::forget(diags);
    Ok(ExitCode::SUCCESS)
}

/// `n` with its digits grouped in threes: 50,000,000.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn suffixed(p: &std::path::Path, i: usize) -> PathBuf {
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = p
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    p.with_file_name(format!("{stem}.rank{i}{ext}"))
}

pub fn write_out(p: &std::path::Path, body: &str) -> anyhow::Result<()> {
    if p.as_os_str() == "-" {
        std::io::stdout().write_all(body.as_bytes())?;
        return Ok(());
    }
    std::fs::write(p, body).with_context(|| format!("cannot write {}", p.display()))
}

fn write_perfetto(
    tl: &Timeline,
    diag: &analysis::Diagnosis,
    path: &PathBuf,
    quiet: bool,
) -> anyhow::Result<()> {
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let bar = indicatif::ProgressBar::hidden();
    if !quiet {
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        bar.set_style(
            indicatif::ProgressStyle::with_template("writing {msg} [{bar:30}] {percent}%")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        bar.set_message(path.display().to_string());
    }
    let progress = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    perfetto::write_perfetto(tl, Some(diag), file, &progress)
        .with_context(|| format!("writing {}", path.display()))?;
    bar.finish_and_clear();
    Ok(())
}

/// User and system time of this process so far, all threads (0 if the
/// kernel will not say).
fn cpu_seconds() -> f64 {
    // SAFETY: `rusage` is plain data; getrusage fills it or fails, leaving zeros.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn thousands_groups_digits_in_threes() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(50_000_000), "50,000,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
