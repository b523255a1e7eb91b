//! Helpers for end-to-end tests: find the built binaries, run workloads under
//! the shim, and read traces back through `stallscope dump --json`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

pub fn stallscope() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_stallscope"))
}

/// A cdylib built beside the CLI (`cargo build --workspace` puts it there).
pub fn built_lib(name: &str) -> PathBuf {
    let p = stallscope().parent().unwrap().join(name);
    assert!(
        p.is_file(),
        "{} is missing: build the workspace first (`cargo build --workspace`, which tests/run does)",
        p.display()
    );
    p
}

pub fn shim() -> PathBuf {
    built_lib("libstallscope.so")
}

pub fn workload(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/workloads")
        .join(name)
}

/// The corpus's Kineto traces: `../shared/corpus/kineto` beside the
/// repository, or under `STALLSCOPE_CORPUS`.
pub fn kineto_corpus() -> PathBuf {
    let base = std::env::var_os("STALLSCOPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"));
    let dir = base.join("kineto");
    assert!(
        dir.is_dir(),
        "{} is missing: check out ../shared/corpus beside the repository or set STALLSCOPE_CORPUS",
        dir.display()
    );
    dir
}

/// The real Python interpreter (not a pyenv shell shim, which would start a
/// dozen extra traced processes).
pub fn python() -> &'static Path {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        let out = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 is required for the end-to-end tests");
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
    })
}

/// Runs `stallscope record -o dir [extra] -- python script args`.
pub fn record_python(dir: &Path, extra: &[&str], script: &str, args: &[&str]) -> Output {
    let mut c = Command::new(stallscope());
    c.arg("record")
        .arg("-o")
        .arg(dir)
        .args(extra)
        .arg("--")
        .arg(python())
        .arg(workload(script));
    c.args(args);
    let out = c.output().expect("running stallscope record");
    assert!(
        out.status.success(),
        "record failed: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Every record of a recording (or file) as JSON objects.
pub fn dump(path: &Path) -> Vec<Value> {
    let out = Command::new(stallscope())
        .arg("dump")
        .arg("--json")
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dump failed: {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The trace files of a recording.
pub fn trace_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .collect();
    v.sort();
    v
}

/// The statfs magic of the filesystem holding `p`, as `stat -f` prints it.
pub fn fs_magic(p: &Path) -> String {
    let out = Command::new("stat")
        .args(["-f", "-c", "%t"])
        .arg(p)
        .output()
        .unwrap();
    format!("0x{}", String::from_utf8(out.stdout).unwrap().trim())
}

pub fn field<'a>(v: &'a Value, k: &str) -> &'a Value {
    &v[k]
}
