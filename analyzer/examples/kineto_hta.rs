//! Prints the `--hta-compat` figures of Kineto traces as JSON, one object per
//! trace, plus a rank comparison when several are given. Used by
//! `scripts/hta_compare.py` and `bench/kineto_vs_hta.sh` until the CLI has
//! `stallscope analyze --hta-compat`.
//!
//!     cargo run --release -p stallscope-analyzer --example kineto_hta -- TRACE... [--ranks]

use std::path::PathBuf;
use std::process::ExitCode;

use stallscope_analyzer::analysis::{hta, ranks};
use stallscope_analyzer::read::kineto;

fn main() -> ExitCode {
    let mut with_ranks = false;
    let mut paths = vec![];
    for a in std::env::args().skip(1) {
        match a.as_str() {
            "--ranks" => with_ranks = true,
            _ => paths.push(PathBuf::from(a)),
        }
    }
    if paths.is_empty() {
        eprintln!("usage: kineto_hta TRACE_OR_DIR... [--ranks]");
        return ExitCode::from(2);
    }
    let tls = match kineto::read_paths(&paths) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("kineto_hta: {e}");
            return ExitCode::FAILURE;
        }
    };
    let traces: Vec<serde_json::Value> = tls
        .iter()
        .map(|tl| {
            serde_json::json!({
                "name": tl.name,
                "gpu_ops": tl.gpu_op_count(),
                "host_spans": tl.host_span_count(),
                "hta_compat": hta::hta_compat(tl),
            })
        })
        .collect();
    let mut out = serde_json::json!({ "traces": traces });
    if with_ranks {
        out["ranks"] = serde_json::to_value(ranks::compare_ranks(&tls)).unwrap_or_default();
    }
    println!("{out}");
    ExitCode::SUCCESS
}
