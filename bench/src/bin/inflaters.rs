//! Is a faster inflater worth it for gzip Kineto traces? Inflating is about a
//! quarter of reading one. Times, on one core and side by side, over the same
//! gzip file:
//! - zlib-rs through flate2, as the Kineto reader inflates: a stream read
//!   into pieces of 512 KiB, the gzip CRC checked;
//! - libdeflate, the whole file in one call into a buffer of its inflated
//!   size (it has no streaming interface), the CRC checked;
//! - the CRC-32 of the inflated text alone (libdeflate's), which both pay.
//!
//! Built only with the `libdeflate` feature (CI never builds it):
//!
//!     cargo run --release -p stallscope-bench --features libdeflate --bin inflaters -- TRACE.json.gz... [--runs N]

use std::io::Read;
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// What the Kineto reader asks of the decoder at a time (`stream::PIECE_BYTES`).
const PIECE_BYTES: usize = 512 << 10;

/// Inflates `gz` into `out` as the reader does; the bytes written.
fn zlib_rs_pieces(gz: &[u8], out: &mut [u8]) -> Result<usize> {
    let mut dec = flate2::bufread::MultiGzDecoder::new(gz);
    let mut n = 0;
    loop {
        let end = (n + PIECE_BYTES).min(out.len());
        if n == end {
            // The buffer is full: the stream must end here.
            let mut extra = [0u8; 1];
            if dec.read(&mut extra)? != 0 {
                bail!("the stream is longer than its gzip trailer says");
            }
            return Ok(n);
        }
        match dec.read(&mut out[n..end])? {
            0 => return Ok(n),
            k => n += k,
        }
    }
}

fn main() -> Result<()> {
    let mut runs = 9;
    let mut paths = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--runs" {
            runs = args
                .next()
                .context("--runs needs a number")?
                .parse::<usize>()
                .context("--runs")?
                .max(1);
        } else {
            paths.push(a);
        }
    }
    if paths.is_empty() {
        bail!("usage: inflaters TRACE.json.gz... [--runs N]");
    }
    println!("medians of {runs} runs, one core; MB are inflated bytes");
    for path in paths {
        let gz = std::fs::read(&path).with_context(|| format!("reading {path}"))?;
        if !gz.starts_with(&[0x1f, 0x8b]) || gz.len() < 18 {
            bail!("{path} is not gzip");
        }
        // ISIZE, the trailer's inflated size mod 2^32: traces here are smaller.
        let tail: [u8; 4] = gz[gz.len() - 4..].try_into().context("gzip trailer")?;
        let size = u32::from_le_bytes(tail) as usize;
        let mut out = vec![0u8; size];
        let mut dec = libdeflater::Decompressor::new();
        let (mut zrs, mut ld, mut crc) = (vec![], vec![], vec![]);
        for _ in 0..runs {
            let t = Instant::now();
            let n = zlib_rs_pieces(&gz, &mut out).with_context(|| format!("{path}: zlib-rs"))?;
            zrs.push(t.elapsed());
            if n != size {
                bail!("{path}: inflated {n} bytes, the trailer says {size} (a multi-member file?)");
            }

            let t = Instant::now();
            let n = dec
                .gzip_decompress(&gz, &mut out)
                .map_err(|e| anyhow::anyhow!("{path}: libdeflate: {e}"))?;
            ld.push(t.elapsed());
            if n != size {
                bail!("{path}: libdeflate inflated {n} bytes, the trailer says {size}");
            }

            let t = Instant::now();
            let mut c = libdeflater::Crc::new();
            c.update(&out);
            std::hint::black_box(c.sum());
            crc.push(t.elapsed());
        }
        let mb = size as f64 / 1e6;
        println!(
            "{path}: {mb:.1} MB inflated from {:.1} MB",
            gz.len() as f64 / 1e6
        );
        stallscope_bench::print_rates(
            mb,
            vec![
                ("zlib-rs, 512 KiB pieces (the reader)", zrs),
                ("libdeflate, whole file", ld),
                ("CRC-32 alone (in both)", crc),
            ],
        );
    }
    Ok(())
}
