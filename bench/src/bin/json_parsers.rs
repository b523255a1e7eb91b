//! Is a SIMD JSON parser worth it for Kineto traces? Times, on one core and
//! side by side, three ways over the same plain-JSON trace:
//! - ours: the Kineto reader, one pass, building the whole timeline (the
//!   file is mapped, as `stallscope analyze` does);
//! - serde_json skipping every value (`IgnoredAny`): validating, keeping nothing;
//! - simd-json building its tape (validating, every value parsed), from a
//!   copy made before the clock starts (it parses in place);
//! - sonic-rs building its document (validating, every value parsed).
//!
//! The SIMD parsers pick their instructions when compiled: build with
//! `RUSTFLAGS="-C target-cpu=native"` to give them AVX2 or AVX-512 (ours
//! then gets the same flags).
//!
//! Built only with the `simd-json` feature (CI never builds it):
//!
//!     zcat TRACE.json.gz > /tmp/t.json
//!     cargo run --release -p stallscope-bench --features simd-json --bin json_parsers -- /tmp/t.json [RUNS]

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use stallscope_analyzer::read::kineto::{self, ReadOptions};

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        bail!("usage: json_parsers TRACE.json [RUNS]");
    };
    let runs = args
        .next()
        .map_or(Ok(5), |r| r.parse::<usize>())
        .context("RUNS")?
        .max(1);
    let text = std::fs::read(&path).with_context(|| format!("reading {path}"))?;
    if text.starts_with(&[0x1f, 0x8b]) {
        bail!("{path} is gzip: give the plain JSON (zcat it first)");
    }
    let (mut ours, mut serde, mut simd, mut sonic) = (vec![], vec![], vec![], vec![]);
    let mut events = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let tl = kineto::read_file_with(Path::new(&path), &ReadOptions { threads: 1 })
            .with_context(|| format!("reading {path} as a Kineto trace"))?;
        ours.push(t.elapsed());
        events = tl.gpu_op_count() + tl.host_span_count();

        let t = Instant::now();
        serde_json::from_slice::<serde::de::IgnoredAny>(&text).context("serde_json")?;
        serde.push(t.elapsed());

        let mut copy = text.clone();
        let t = Instant::now();
        let tape = simd_json::to_tape(&mut copy).map_err(|e| anyhow::anyhow!("simd-json: {e}"))?;
        simd.push(t.elapsed());
        drop(tape);

        let t = Instant::now();
        let doc: sonic_rs::Value = sonic_rs::from_slice(&text).context("sonic-rs")?;
        sonic.push(t.elapsed());
        drop(doc);
    }
    let mb = text.len() as f64 / 1e6;
    println!("{path}: {mb:.1} MB, {events} events kept by ours; medians of {runs} runs, one core");
    stallscope_bench::print_rates(
        mb,
        vec![
            ("ours (read + build the timeline)", ours),
            ("serde_json IgnoredAny (validate only)", serde),
            ("simd-json to_tape (validate + tape)", simd),
            ("sonic-rs Value (validate + document)", sonic),
        ],
    );
    Ok(())
}
