//! `stallscope record`: run a command with the shim preloaded.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use super::shim_path;

/// Run a command under the recorder. Every process it starts (DataLoader
/// workers included) writes its own trace file into the output directory.
///
/// Prints where the trace is, and exits with the command's own exit code
/// (128+N if it was killed by signal N).
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Output directory [default: stallscope-<date>-<time>]
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,

    /// Record a span for calls that last at least this long (µs); shorter calls are only counted
    #[arg(long, value_name = "US", default_value_t = 20)]
    pub min_span_us: u64,

    /// Thread samples per second (0 turns the sampler off)
    #[arg(long, value_name = "HZ", default_value_t = 100)]
    pub sample_hz: u32,

    /// Size cap per process, in MiB; records past it are counted as dropped
    #[arg(long, value_name = "MIB", default_value_t = 256)]
    pub max_mb: u64,

    /// Flight recorder: when the cap is reached, overwrite the oldest records
    #[arg(long)]
    pub flight: bool,

    /// Do not capture GPU activity (host only)
    #[arg(long)]
    pub no_gpu: bool,

    /// libcupti to use instead of searching for it
    #[arg(long, value_name = "PATH")]
    pub cupti: Option<PathBuf>,

    /// The command to record, after `--`
    #[arg(required = true, last = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

pub fn run(a: RecordArgs) -> anyhow::Result<ExitCode> {
    let shim = shim_path::find()?;
    let out = a.output.clone().unwrap_or_else(default_dir);
    prepare_dir(&out)?;
    let out = out
        .canonicalize()
        .with_context(|| format!("resolving {}", out.display()))?;

    let mut preload = OsString::from(&shim);
    if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        preload.push(":");
        preload.push(old);
    }
    let mut cmd = std::process::Command::new(&a.command[0]);
    cmd.args(&a.command[1..])
        .env("LD_PRELOAD", preload)
        .env("STALLSCOPE_OUT", &out)
        .env("STALLSCOPE_MIN_SPAN_US", a.min_span_us.to_string())
        .env("STALLSCOPE_SAMPLE_HZ", a.sample_hz.to_string())
        .env("STALLSCOPE_MAX_MB", a.max_mb.to_string())
        .env("STALLSCOPE_FLIGHT", if a.flight { "1" } else { "0" })
        .env("STALLSCOPE_GPU", if a.no_gpu { "0" } else { "1" });
    if !a.no_gpu {
        // CUDA calls InitializeInjection() in this library at cuInit, so GPU
        // capture starts before the first kernel.
        match std::env::var_os("CUDA_INJECTION64_PATH") {
            Some(p) if !p.is_empty() => eprintln!(
                "stallscope: CUDA_INJECTION64_PATH is already set ({}); GPU capture starts lazily instead",
                p.to_string_lossy()
            ),
            _ => {
                cmd.env("CUDA_INJECTION64_PATH", &shim);
            }
        }
    }
    if let Some(c) = &a.cupti {
        cmd.env("STALLSCOPE_CUPTI", c);
    }

    // The child gets Ctrl-C itself; we wait for it and report.
    // SAFETY: setting a signal disposition; restored below.
    let old_int = unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    let status = cmd.status();
    unsafe { libc::signal(libc::SIGINT, old_int) };
    let status =
        status.with_context(|| format!("cannot run {}", a.command[0].to_string_lossy()))?;

    report(&out);
    let code = match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        _ => 1,
    };
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

fn default_dir() -> PathBuf {
    // SAFETY: time and localtime_r with valid out-pointers.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    unsafe {
        let t = libc::time(std::ptr::null_mut());
        libc::localtime_r(&t, &mut tm);
    }
    PathBuf::from(format!(
        "stallscope-{:04}{:02}{:02}-{:02}{:02}{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    ))
}

/// Creates the directory; an existing one must hold no traces, so recordings
/// never mix.
fn prepare_dir(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() {
        if !dir.is_dir() {
            bail!("{} exists and is not a directory", dir.display());
        }
        let has_traces = std::fs::read_dir(dir)
            .with_context(|| format!("reading {}", dir.display()))?
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "sst"));
        if has_traces {
            bail!(
                "{} already holds a recording; choose another -o or remove it",
                dir.display()
            );
        }
        return Ok(());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}

fn report(out: &Path) {
    let mut files = 0;
    let mut bytes = 0u64;
    if let Ok(rd) = std::fs::read_dir(out) {
        for e in rd.flatten() {
            if e.path().extension().is_some_and(|x| x == "sst") {
                files += 1;
                bytes += e.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
    }
    if files == 0 {
        eprintln!(
            "stallscope: no trace was written to {} (see the messages above)",
            out.display()
        );
        return;
    }
    eprintln!(
        "stallscope: trace in {} ({files} process{}, {:.1} MiB); next: stallscope analyze {}",
        out.display(),
        if files == 1 { "" } else { "es" },
        bytes as f64 / (1 << 20) as f64,
        out.display()
    );
}
