//! Finding libstallscope.so for `record`.

use std::path::PathBuf;

use anyhow::{Context, bail};

pub const SHIM_NAME: &str = "libstallscope.so";

/// The shim library: `STALLSCOPE_SHIM`, else beside the executable (a cargo
/// target directory), else `../lib/stallscope/` relative to it (an install),
/// else `../` relative to it (the Python wheel: `stallscope/bin/stallscope`
/// and `stallscope/libstallscope.so` beside the module, see python/).
pub fn find() -> anyhow::Result<PathBuf> {
    if let Some(p) = std::env::var_os("STALLSCOPE_SHIM") {
        let p = PathBuf::from(p);
        if p.is_file() {
            return p.canonicalize().context("resolving STALLSCOPE_SHIM");
        }
        bail!("STALLSCOPE_SHIM={} is not a file", p.display());
    }
    let exe = std::env::current_exe().context("locating the stallscope executable")?;
    let dir = exe.parent().context("the executable has no directory")?;
    let candidates = [
        dir.join(SHIM_NAME),
        dir.join("../lib/stallscope").join(SHIM_NAME),
        dir.join("..").join(SHIM_NAME),
    ];
    for c in &candidates {
        if c.is_file() {
            return c
                .canonicalize()
                .with_context(|| format!("resolving {}", c.display()));
        }
    }
    let looked: Vec<String> = candidates.iter().map(|c| c.display().to_string()).collect();
    bail!(
        "cannot find {SHIM_NAME} (looked in {}); build it with `cargo build --release --workspace` \
         or point STALLSCOPE_SHIM at it",
        looked.join(", ")
    )
}
