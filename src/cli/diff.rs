//! `stallscope diff`: two runs compared, and the earlier prediction checked.
//! Also loads one side of a comparison for `check --baseline`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use stallscope_analyzer::analysis;
use stallscope_analyzer::output::diff;
use stallscope_analyzer::output::report::Report;
use stallscope_analyzer::output::saved::{self, SavedReport};

use super::analyze::write_out;
use super::load;

/// Compare two runs: before and after a fix.
///
/// Shows the change in the mean, median and p90 step; the change in idle time
/// by cause (per step and per GPU, so runs of different lengths compare); the
/// findings resolved and the new ones; and the check of the earlier
/// prediction: what BEFORE estimated its applied fixes would save a step,
/// against the saving measured.
///
/// Each side is a recording directory, a trace file (.sst, or a PyTorch-profiler
/// .json/.json.gz of one rank), or a report saved by `stallscope analyze --json`.
///
///   stallscope diff run1 run2
///   stallscope diff before.json after.json --markdown diff.md
///   stallscope diff before.pt.trace.json.gz after.pt.trace.json.gz --html diff.html
///
/// A BEFORE finding counts as fixed when AFTER no longer lists it, or it saves at
/// most half as much there. One fix is checked against its own estimate; all of
/// them at once against BEFORE's combined estimate; some of several against the
/// sum of their estimates (which counts overlapping savings twice). The error is
/// |predicted - measured| / measured saving.
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct DiffArgs {
    /// The run before the change: recording, trace file or saved JSON report
    #[arg(value_name = "BEFORE")]
    pub before: PathBuf,

    /// The run after the change, same kinds
    #[arg(value_name = "AFTER")]
    pub after: PathBuf,

    /// Write the comparison as JSON (schema stallscope.diff.v1); "-" for stdout
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write the comparison as Markdown; "-" for stdout
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,

    /// Write the comparison as one self-contained HTML page; "-" for stdout
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// No text report (with an output to "-" the text goes to stderr)
    #[arg(short, long)]
    pub quiet: bool,

    /// Fail (exit 2) on a file of a recording that cannot be read at all,
    /// instead of skipping it with a warning
    #[arg(long)]
    pub strict: bool,
}

/// Whether `p` is a saved report, from its first bytes.
fn is_saved_report(p: &Path) -> bool {
    let Ok(f) = std::fs::File::open(p) else {
        return false;
    };
    let mut head = Vec::with_capacity(64 << 10);
    if f.take(64 << 10).read_to_end(&mut head).is_err() {
        return false;
    }
    saved::looks_like_report(&head)
}

/// One side of a comparison: a saved report read back, or a recording or
/// trace analyzed now.
pub fn load_side(p: &Path, strict: bool) -> anyhow::Result<SavedReport> {
    if !p.exists() {
        bail!("{}: no such file or directory", p.display());
    }
    if p.is_file() && is_saved_report(p) {
        return Ok(SavedReport::read(p)?);
    }
    let timelines = load::load(&[p.to_path_buf()], true, strict)?;
    for n in timelines.iter().flat_map(|t| &t.notes) {
        if n.text.starts_with("skipped an unreadable") {
            eprintln!("stallscope: warning: {}", n.text);
        }
    }
    let [tl] = timelines.as_slice() else {
        bail!(
            "{}: holds {} ranks; compare one rank's trace at a time",
            p.display(),
            timelines.len()
        );
    };
    Ok(SavedReport::of(&Report::build(tl, &analysis::diagnose(tl))))
}

pub fn run(a: DiffArgs) -> anyhow::Result<ExitCode> {
    let before = load_side(&a.before, a.strict)?;
    let after = load_side(&a.after, a.strict)?;
    let d = diff::compare(&before, &after);
    let outputs = [&a.json, &a.markdown, &a.html];
    let to_stdout = outputs
        .iter()
        .any(|p| p.as_ref().is_some_and(|p| p.as_os_str() == "-"));
    if !a.quiet {
        let body = diff::render_text(&d);
        if to_stdout {
            eprint!("{body}");
        } else {
            print!("{body}");
        }
    }
    if let Some(p) = &a.json {
        write_out(p, &(serde_json::to_string_pretty(&d)? + "\n"))?;
    }
    if let Some(p) = &a.markdown {
        write_out(p, &diff::render_markdown(&d))?;
    }
    if let Some(p) = &a.html {
        write_out(p, &diff::render_html(&d))?;
    }
    Ok(ExitCode::SUCCESS)
}
