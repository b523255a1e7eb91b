//! The floor under reading a gzip trace: inflating it alone, as the reader's
//! pipeline does (flate2/zlib-rs straight from the file's bytes into a
//! reused buffer of one piece, nothing parsed).
//! Prints the best of REPEAT runs in ms, then the inflated size in bytes.
//!
//!     cargo run --release -p stallscope-analyzer --example kineto_inflate -- TRACE.json.gz [REPEAT]

use std::io::Read;
use std::time::Instant;

use flate2::bufread::MultiGzDecoder;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: kineto_inflate TRACE.json.gz [REPEAT]");
        std::process::exit(2);
    };
    let repeat: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let gz = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    // The reader's piece size (`read::kineto::stream`).
    let mut piece = vec![0u8; 512 << 10];
    let mut best = f64::MAX;
    let mut total = 0;
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        let mut dec = MultiGzDecoder::new(&gz[..]);
        total = 0;
        loop {
            match dec.read(&mut piece) {
                Ok(0) => break,
                Ok(n) => total += n,
                Err(e) => {
                    eprintln!("{path}: {e}");
                    std::process::exit(1);
                }
            }
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("{:.2} {total}", best * 1e3);
}
