//! Readers: each turns a trace source into a [`Timeline`](crate::model::Timeline).

pub mod foreign;
pub mod kineto;
pub mod native;

use std::path::{Path, PathBuf};

/// Why `paths` cannot be read as PyTorch-profiler traces, said before
/// reading them: a folder that holds none (`no_traces_in`), or a file that
/// is not one. A file whose head cannot be read passes, for the reader to
/// name its damage.
pub fn kineto_paths_problem(paths: &[PathBuf]) -> Option<String> {
    paths.iter().find_map(|p| {
        if p.is_dir() {
            (!kineto::looks_like_kineto(p)).then(|| no_traces_in(p))
        } else {
            (!kineto::may_be_trace(p)).then(|| match foreign::describe(p) {
                Some(what) => format!("{}: {what}", p.display()),
                None if std::fs::metadata(p).is_ok_and(|m| m.len() == 0) => {
                    format!("{}: the file is empty", p.display())
                }
                None => format!(
                    "{}: not a stallscope trace nor a PyTorch-profiler (Kineto) JSON trace",
                    p.display()
                ),
            })
        }
    })
}

/// What to say of a directory that holds no trace of either kind: which
/// kinds were looked for, and the subfolders one level down that are or
/// hold one, since folders are not searched recursively (TraceLens keeps
/// each trace in a folder of its own; a run keeps its recordings side by
/// side).
pub fn no_traces_in(dir: &Path) -> String {
    let mut msg = format!(
        "{} holds neither stallscope traces (*.sst) nor PyTorch-profiler traces (*.json, *.json.gz)",
        dir.display()
    );
    let mut subs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir() && (native::is_native(p) || kineto::looks_like_kineto(p)))
                .collect()
        })
        .unwrap_or_default();
    subs.sort();
    if !subs.is_empty() {
        let names: Vec<String> = subs
            .iter()
            .take(3)
            .map(|p| p.display().to_string())
            .collect();
        let more = subs.len().saturating_sub(names.len());
        msg.push_str(&format!(
            "; folders are not searched recursively, and {} hold{} traces: pass {}{}",
            names.join(", "),
            if subs.len() == 1 { "s" } else { "" },
            if subs.len() == 1 { "it" } else { "one of them" },
            if more > 0 {
                format!(" ({more} more)")
            } else {
                String::new()
            }
        ));
    }
    msg
}
