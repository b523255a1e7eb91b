//! Shared helpers for the benchmark drivers: locating built artifacts, timing
//! commands, medians, and rate tables.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The directory holding the benchmark binaries (and the shim beside them).
pub fn build_dir() -> PathBuf {
    std::env::current_exe()
        .expect("own path")
        .parent()
        .expect("a directory")
        .to_path_buf()
}

pub fn built(name: &str) -> anyhow::Result<PathBuf> {
    let p = build_dir().join(name);
    anyhow::ensure!(
        p.is_file(),
        "{} is missing: run `cargo build --release --workspace` first",
        p.display()
    );
    Ok(p)
}

/// The real Python interpreter.
pub fn python() -> anyhow::Result<PathBuf> {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()?;
    Ok(PathBuf::from(String::from_utf8(out.stdout)?.trim()))
}

pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Prints, for each way of doing the same work over `mb` megabytes, its
/// median time and the rate that gives.
pub fn print_rates(mb: f64, rows: Vec<(&str, Vec<Duration>)>) {
    for (what, times) in rows {
        let mut secs: Vec<f64> = times.iter().map(Duration::as_secs_f64).collect();
        let s = median(&mut secs);
        println!("  {what:40} {:8.2} ms {:8.0} MB/s", s * 1e3, mb / s);
    }
}

/// Runs a command to completion; returns wall seconds and stdout.
pub fn timed(cmd: &mut Command) -> anyhow::Result<(f64, String)> {
    let t = Instant::now();
    let out = cmd.output()?;
    let secs = t.elapsed().as_secs_f64();
    anyhow::ensure!(
        out.status.success(),
        "{:?} failed: {}",
        cmd,
        String::from_utf8_lossy(&out.stderr)
    );
    Ok((secs, String::from_utf8_lossy(&out.stdout).into_owned()))
}

pub fn workload(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/workloads")
        .join(name)
}
