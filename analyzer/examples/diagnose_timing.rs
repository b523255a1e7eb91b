//! Times the diagnosis of one trace (Kineto, or a native recording), read
//! once, apart from the reader:
//! the serial first phases one by one, `--hta-compat`'s figures (Kineto
//! traces only), then the whole diagnosis (for profiling).
//!
//!     cargo run --release -p stallscope-analyzer --example diagnose_timing -- TRACE [REPEAT]

use std::time::{Duration, Instant};

use stallscope_analyzer::analysis::{self, context, hta, job, startup, steps};
use stallscope_analyzer::model::CorrIndex;
use stallscope_analyzer::read::{kineto, native};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: diagnose_timing TRACE [REPEAT]");
        std::process::exit(2);
    };
    let repeat: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let p = std::path::Path::new(&path);
    let is_native = native::is_native(p);
    let read = if is_native {
        native::read_recording(p).map_err(|e| e.to_string())
    } else {
        kineto::read_file(p).map_err(|e| e.to_string())
    };
    let tl = match read {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    for _ in 0..repeat {
        let (corr, c) = timed(|| CorrIndex::build(&tl));
        let (su, s) = timed(|| startup::scan(&tl).finish(&tl, &corr));
        let (_, st) = timed(|| steps::find(&tl, &corr, su.as_ref()));
        let (_, lk) = timed(|| context::Lookups::build(&tl));
        let (_, jb) = timed(|| job::detect(&tl));
        let (_, h) = timed(|| (!is_native).then(|| hta::hta_compat(&tl)));
        let (d, all) = timed(|| analysis::diagnose(&tl));
        println!(
            "corr {:.2} startup {:.2} steps {:.2} lookups {:.2} job {:.2} hta {:.2} | diagnose {:.1} ms ({} findings)",
            ms(c),
            ms(s),
            ms(st),
            ms(lk),
            ms(jb),
            ms(h),
            ms(all),
            d.findings.len()
        );
    }
}
