//! Loading traces for `analyze` and `check`: native recordings and Kineto JSON,
//! told apart by content.

use std::path::PathBuf;

use anyhow::{Context, bail};
use stallscope_analyzer::model::Timeline;
use stallscope_analyzer::read::{kineto, native};

/// One native recording, or one timeline per Kineto trace (rank). With
/// `strict`, a recording directory holding a file that cannot be read at all
/// is an error; otherwise that file is skipped with a warning in the notes.
pub fn load(paths: &[PathBuf], quiet: bool, strict: bool) -> anyhow::Result<Vec<Timeline>> {
    let spinner = super::progress::spinner(
        quiet,
        format!(
            "reading {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        ),
    );
    let result = load_inner(paths, strict);
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    result
}

fn load_inner(paths: &[PathBuf], strict: bool) -> anyhow::Result<Vec<Timeline>> {
    for p in paths {
        if !p.exists() {
            bail!("{}: no such file or directory", p.display());
        }
    }
    let native_paths: Vec<&PathBuf> = paths.iter().filter(|p| native::is_native(p)).collect();
    if !native_paths.is_empty() {
        if native_paths.len() != paths.len() || paths.len() > 1 {
            bail!(
                "analyze takes one native recording at a time (got {} paths)",
                paths.len()
            );
        }
        let opts = native::ReadOptions { strict };
        let tl = native::read_recording_with(native_paths[0], opts)
            .with_context(|| format!("reading the recording {}", native_paths[0].display()))?;
        return Ok(vec![tl]);
    }
    if let Some(why) = stallscope_analyzer::read::kineto_paths_problem(paths) {
        bail!("{why}");
    }
    Ok(kineto::read_paths(paths)?)
}
