//! `stallscope._native`: the analyzer for Python. The pure-Python package
//! (`python/stallscope/`) wraps it; this module only reads traces, diagnoses
//! them and renders the analyzer's own outputs (the report JSON, text,
//! Markdown, Perfetto), so Python and the CLI always tell the same story.
//!
//! Every entry point returns a `Result`: a trace that cannot be read raises
//! `TraceError` with the reader's message. The analysis runs without the GIL
//! and inside `catch_unwind`, so a bug that panics is also a `TraceError`
//! (one failed row in a batch), never an unwind across the FFI boundary.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use stallscope_analyzer::analysis::{self, Diagnosis, hta, ranks};
use stallscope_analyzer::model::{Source, Timeline};
use stallscope_analyzer::output::{markdown, perfetto, report::Report, text};
use stallscope_analyzer::read::{kineto, native};

create_exception!(
    _native,
    TraceError,
    PyException,
    "A trace could not be read or analyzed; the message is the reader's."
);

/// What went wrong, before it becomes a Python exception (the analysis runs
/// without the GIL).
struct Failure(String);

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        TraceError::new_err(f.0)
    }
}

/// The diagnosis of one trace or of several rank traces: what
/// `stallscope analyze` computes before it writes anything.
#[pyclass(frozen, module = "stallscope._native")]
struct NativeReport {
    timelines: Vec<Timeline>,
    diags: Vec<Diagnosis>,
    reports: Vec<Report>,
    comparison: Option<ranks::RankComparison>,
}

#[pymethods]
impl NativeReport {
    /// The report JSON, exactly as `stallscope analyze --json` writes it:
    /// schema `stallscope.report.v1`, or `stallscope.report.v1.multi` for
    /// several traces (same wrapper as src/cli/analyze.rs).
    fn json(&self) -> PyResult<String> {
        if self.reports.len() == 1 {
            return Ok(self.reports[0].to_json());
        }
        serde_json::to_string_pretty(&serde_json::json!({
            "schema": "stallscope.report.v1.multi",
            "ranks": self.reports,
            "comparison": self.comparison,
        }))
        .map_err(|e| Failure(format!("encoding the report: {e}")).into())
    }

    /// The text report of `stallscope analyze`.
    fn text(&self) -> String {
        if self.reports.len() == 1 {
            text::render(&self.reports[0], None)
        } else {
            let none = vec![None; self.reports.len()];
            text::render_multi(&self.reports, self.comparison.as_ref(), &none)
        }
    }

    /// The Markdown report of `stallscope analyze --markdown`.
    fn markdown(&self) -> String {
        self.reports
            .iter()
            .map(markdown::render)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Writes the Perfetto trace(s); with several traces, `x.pftrace`
    /// becomes `x.rank0.pftrace`, ... as with the CLI. Returns the paths.
    fn write_perfetto(&self, py: Python<'_>, path: PathBuf) -> PyResult<Vec<PathBuf>> {
        py.detach(|| {
            let multi = self.timelines.len() > 1;
            let mut written = Vec::new();
            for (i, (tl, diag)) in self.timelines.iter().zip(&self.diags).enumerate() {
                let p = if multi {
                    suffixed(&path, i)
                } else {
                    path.clone()
                };
                let file = std::fs::File::create(&p)
                    .map_err(|e| Failure(format!("cannot create {}: {e}", p.display())))?;
                let res = guarded(|| {
                    perfetto::write_perfetto(tl, Some(diag), file, &|_, _| {})
                        .map_err(|e| Failure(format!("writing {}: {e}", p.display())))
                });
                res?;
                written.push(p);
            }
            Ok(written)
        })
    }

    /// One row per GPU-side step of each trace (the report JSON has only
    /// their summary): (trace, index, start_ns, end_ns, dur_ns, outlier).
    #[allow(clippy::type_complexity)]
    fn steps(&self) -> Vec<(usize, u32, i64, i64, i64, bool)> {
        self.diags
            .iter()
            .enumerate()
            .flat_map(|(t, d)| {
                d.steps
                    .steps
                    .iter()
                    .map(move |s| (t, s.index, s.start, s.end, s.dur(), s.outlier))
            })
            .collect()
    }

    /// How many traces (ranks) the report covers.
    fn __len__(&self) -> usize {
        self.reports.len()
    }
}

/// Analyzes trace files or directories, as `stallscope analyze PATH...`
/// reads them: one native recording, or Kineto traces (files or
/// directories of rank files).
#[pyfunction]
#[pyo3(signature = (paths, hta_compat = false))]
fn analyze_paths(py: Python<'_>, paths: Vec<PathBuf>, hta_compat: bool) -> PyResult<NativeReport> {
    py.detach(|| guarded(|| load(&paths).map(|tls| diagnose(tls, hta_compat))))
        .map_err(PyErr::from)
}

/// Analyzes one Kineto trace held in memory (JSON or gzip-compressed JSON);
/// `name` labels it and stands for its path in errors.
#[pyfunction]
#[pyo3(signature = (data, name, hta_compat = false))]
fn analyze_bytes(
    py: Python<'_>,
    data: &[u8],
    name: String,
    hta_compat: bool,
) -> PyResult<NativeReport> {
    // One copy: the reader owns (and may patch) its text.
    let data = data.to_vec();
    py.detach(|| {
        guarded(|| {
            let tl = kineto::read_bytes(&name, data).map_err(|e| Failure(e.to_string()))?;
            Ok(diagnose(vec![tl], hta_compat))
        })
    })
    .map_err(PyErr::from)
}

/// Runs `f`, turning a panic into a failure that names it as a bug.
fn guarded<T>(f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(Failure(format!("internal error in stallscope: {msg}")))
        }
    }
}

/// The CLI's loading rules (src/cli/load.rs), without its progress display.
fn load(paths: &[PathBuf]) -> Result<Vec<Timeline>, Failure> {
    if paths.is_empty() {
        return Err(Failure("no trace given".into()));
    }
    for p in paths {
        if !p.exists() {
            return Err(Failure(format!(
                "{}: no such file or directory",
                p.display()
            )));
        }
    }
    let natives = paths.iter().filter(|p| native::is_native(p)).count();
    if natives > 0 {
        if paths.len() > 1 {
            return Err(Failure(format!(
                "analyze takes one native recording at a time (got {} paths)",
                paths.len()
            )));
        }
        let tl = native::read_recording_with(&paths[0], native::ReadOptions::default())
            .map_err(|e| Failure(format!("reading the recording {}: {e}", paths[0].display())))?;
        return Ok(vec![tl]);
    }
    if let Some(why) = stallscope_analyzer::read::kineto_paths_problem(paths) {
        return Err(Failure(why));
    }
    kineto::read_paths(paths).map_err(|e| Failure(e.to_string()))
}

/// Diagnoses each timeline and builds its report, as `stallscope analyze`.
fn diagnose(timelines: Vec<Timeline>, hta_compat: bool) -> NativeReport {
    let diags: Vec<Diagnosis> = timelines.iter().map(analysis::diagnose).collect();
    let reports = timelines
        .iter()
        .zip(&diags)
        .map(|(tl, d)| {
            let mut r = Report::build(tl, d);
            if hta_compat {
                r.hta_compat = serde_json::to_value(hta::hta_compat(tl)).ok();
            }
            r
        })
        .collect();
    let comparison = (timelines.len() > 1 && timelines.iter().all(|t| t.source == Source::Kineto))
        .then(|| ranks::compare_ranks(&timelines));
    NativeReport {
        timelines,
        diags,
        reports,
        comparison,
    }
}

fn suffixed(p: &Path, i: usize) -> PathBuf {
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

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let trace_error = m.py().get_type::<TraceError>();
    // Shown as stallscope.TraceError, where users catch it.
    trace_error.setattr("__module__", "stallscope")?;
    m.add("TraceError", trace_error)?;
    m.add_class::<NativeReport>()?;
    m.add_function(wrap_pyfunction!(analyze_paths, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_bytes, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
