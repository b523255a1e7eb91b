//! Times the Kineto reader and `--hta-compat` on one trace (for profiling).
//!
//!     cargo run --release -p stallscope-analyzer --example kineto_timing -- TRACE [THREADS] [REPEAT]

use std::time::Instant;

use stallscope_analyzer::analysis::hta;
use stallscope_analyzer::read::kineto::{self, ReadOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: kineto_timing TRACE [THREADS] [REPEAT]");
        std::process::exit(2);
    };
    let threads = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(rayon::current_num_threads);
    let repeat: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    for _ in 0..repeat {
        let t0 = Instant::now();
        let tl = match kineto::read_file_with(path.as_ref(), &ReadOptions { threads }) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        };
        let t1 = Instant::now();
        let h = hta::hta_compat(&tl);
        let t2 = Instant::now();
        println!(
            "read {:.1} ms, hta {:.1} ms ({} GPU ops, {} host spans, {} streams)",
            (t1 - t0).as_secs_f64() * 1e3,
            (t2 - t1).as_secs_f64() * 1e3,
            tl.gpu_op_count(),
            tl.host_span_count(),
            h.idle.len()
        );
    }
}
