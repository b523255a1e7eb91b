//! The shared trace corpus, for the tests that read it. It lives beside the
//! repository (`../shared/corpus`) or wherever `STALLSCOPE_CORPUS` points.
//! Without it those tests fail: they are the evidence that the analyzer
//! handles real traces.
#![allow(dead_code)] // each test file uses a part

use std::path::{Path, PathBuf};

use stallscope_analyzer::model::Timeline;
use stallscope_analyzer::read::kineto;

/// The corpus's Kineto directory.
pub fn corpus() -> PathBuf {
    let base = std::env::var_os("STALLSCOPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"));
    let dir = base.join("kineto");
    assert!(
        dir.is_dir(),
        "Kineto corpus not found at {}: check out ../shared/corpus beside the repository \
         or set STALLSCOPE_CORPUS to the corpus directory",
        dir.display()
    );
    dir
}

/// Every trace (`.json`, `.json.gz`) under `dir`, sorted.
pub fn traces_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let s = p.to_string_lossy();
        if p.is_dir() {
            out.extend(traces_under(&p));
        } else if s.ends_with(".json") || s.ends_with(".json.gz") {
            out.push(p);
        }
    }
    out
}

/// Every trace of the corpus, sorted.
pub fn all_traces() -> Vec<PathBuf> {
    traces_under(&corpus())
}

/// One corpus trace, by its path under the Kineto directory.
pub fn trace(rel: &str) -> Timeline {
    kineto::read_file(&corpus().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}
