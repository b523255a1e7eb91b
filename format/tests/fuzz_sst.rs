//! Mutation fuzzing of the reader over `.sst` headers and chunks, on stable
//! Rust as an ordinary test. Seeds are the checked-in recordings (traces/),
//! the golden file and synthetic traces; `stallscope_format::mutate` hits their
//! header, chunk and record fields with boundary values, random bytes,
//! truncations and appended junk. Any panic fails the test, saves the input
//! under target/fuzz-failures/ and names the iteration to replay.
//!
//! CI runs `fuzz_sst_bounded` (a fixed budget, a few seconds). For a long run,
//! optimized but with overflow checks and debug assertions on (so that a
//! wrapped size is a panic, as in the dev profile), in a target dir of its own:
//!
//!     STALLSCOPE_FUZZ_ITERS=10000000 STALLSCOPE_FUZZ_SEED=1 \
//!     CARGO_TARGET_DIR=/tmp/fuzz-target CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS=true \
//!     CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true nice -n 19 cargo test --release \
//!         -p stallscope-format --test fuzz_sst -- --ignored --nocapture
//!
//! (10 M inputs took about 10 minutes of one core.)

mod common;

use std::path::{Path, PathBuf};

use common::*;
use stallscope_format::layout::{DEFAULT_CHUNK_SIZE, hdr};
use stallscope_format::mutate::{self, Rng, Seed};
use stallscope_format::records::Span;
use stallscope_format::writer::MetaStream;
use stallscope_format::{FormatErrorKind, Record, TraceView};

/// Reads everything the readers expose; returns how many records it saw.
fn read_all(bytes: &[u8]) -> usize {
    let Ok(view) = TraceView::parse(bytes) else {
        return 0;
    };
    let h = &view.header;
    let _ = (h.ticks_to_ns(u64::MAX), h.ticks_to_ns(h.start_ticks));
    let _ = h.command_line();
    let mut n = view.threads().len();
    for i in [0, u32::MAX, view.chunk_positions()] {
        let _ = view.chunk(i);
    }
    for c in view.chunks().flatten() {
        for r in c.records() {
            let Ok((_, rec)) = r else { break };
            n += 1;
            let _ = rec.kind_name();
            if let Record::String { text, .. } = rec {
                n += text.len() & 1;
            }
        }
    }
    n
}

fn seeds() -> Vec<Seed> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = vec![root.join("tests/golden/minimal.sst")];
    for dir in std::fs::read_dir(root.join("../traces")).expect("traces/") {
        for f in std::fs::read_dir(dir.expect("entry").path()).expect("a trace dir") {
            let p = f.expect("entry").path();
            if p.extension().is_some_and(|x| x == "sst") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut seeds: Vec<Seed> = files
        .iter()
        .map(|p| {
            let bytes = std::fs::read(p).expect("read a seed");
            Seed::new(p.display().to_string(), bytes)
        })
        .collect();
    assert!(seeds.len() >= 4, "the checked-in recordings are missing");
    for (chunk, slots, spans) in [(4096, 1, 0), (4096, 4, 40), (8192, 2, 700), (4096, 3, 2000)] {
        seeds.push(Seed::new(
            format!("synthetic chunk={chunk} slots={slots} spans={spans}"),
            synthetic(chunk, slots, spans),
        ));
    }
    seeds.push(Seed::new(
        "synthetic default chunks",
        synthetic(DEFAULT_CHUNK_SIZE, 2, 300),
    ));
    for s in &seeds {
        assert!(
            TraceView::parse(&s.bytes).is_ok(),
            "{}: not readable",
            s.name
        );
    }
    seeds
}

/// A trace of `spans` spans over two threads, strings in a meta chunk.
fn synthetic(chunk: u32, slots: u32, spans: u64) -> Vec<u8> {
    let capacity = 16 * 1024 + slots as u64 * 1024 + 4096 + 12 * chunk as u64;
    let mut mem = Mem::new(capacity, chunk, slots);
    let region = mem.region(&sample_init(), false);
    let meta = MetaStream::new();
    write_string(&meta, &region, 1, "/data/shard-0001.bin");
    write_string(&meta, &region, 2, "\u{1b}]0;title\u{7}");
    for tid in [9, 10] {
        let mut w = thread_chunk(&region, tid);
        for i in 0..spans / 2 {
            let s = Span {
                op: (i % 7) as u8,
                obj: 1,
                ts: i * 10,
                dur: 30_000,
                bytes: i,
            };
            if !write_span(&mut w, s) {
                unsafe { w.seal() };
                match region.claim_chunk(
                    stallscope_format::layout::ChunkKind::Thread,
                    tid,
                    &mut always,
                ) {
                    stallscope_format::writer::Claim::Chunk(c) => w = c,
                    _ => break,
                }
                write_span(&mut w, s);
            }
        }
    }
    mem.bytes().to_vec()
}

/// Runs `iters` mutated inputs from `seed`; panics name the iteration.
fn fuzz(seed: u64, iters: u64) -> u64 {
    let mut seeds = seeds();
    let mut rng = Rng::new(seed);
    let mut scratch = Vec::new();
    let mut records = 0u64;
    for it in 0..iters {
        // Small seeds most of the time: they are cheap, and the real
        // recordings' structure is the same.
        let k = if rng.chance(8) {
            rng.below(seeds.len())
        } else {
            seeds.len() - 1 - rng.below(5)
        };
        let s = &mut seeds[k];
        let u = mutate::mutate(s, &mut rng);
        let input = mutate::input(s, &u, &mut scratch);
        let r = std::panic::catch_unwind(|| read_all(input));
        match r {
            Ok(n) => records += n as u64,
            Err(_) => {
                let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fuzz-failures");
                let _ = std::fs::create_dir_all(&dir);
                let path = dir.join(format!("seed{seed}-iter{it}.sst"));
                let _ = std::fs::write(&path, input);
                panic!(
                    "the reader panicked on iteration {it} of seed {seed} (from {}); input saved to {}",
                    s.name,
                    path.display()
                );
            }
        }
        mutate::undo(s, u);
    }
    records
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// CI's bounded run: a fixed budget, the same inputs every time unless
/// STALLSCOPE_FUZZ_SEED says otherwise.
#[test]
fn fuzz_sst_bounded() {
    let seed = env_u64("STALLSCOPE_FUZZ_SEED").unwrap_or(0x5eed);
    let iters = env_u64("STALLSCOPE_FUZZ_CI_ITERS").unwrap_or(60_000);
    let t = std::time::Instant::now();
    let records = fuzz(seed, iters);
    eprintln!(
        "fuzz_sst: {iters} inputs, {records} records read, {:.1?}",
        t.elapsed()
    );
    assert!(records > iters, "the mutations leave too little readable");
}

/// The long run, by hand: STALLSCOPE_FUZZ_ITERS inputs (default 10 M).
#[test]
#[ignore = "long: run by hand with --ignored"]
fn fuzz_sst_long() {
    let seed = env_u64("STALLSCOPE_FUZZ_SEED").unwrap_or(1);
    let iters = env_u64("STALLSCOPE_FUZZ_ITERS").unwrap_or(10_000_000);
    let t = std::time::Instant::now();
    let step = 1_000_000u64;
    let mut done = 0;
    while done < iters {
        let n = step.min(iters - done);
        fuzz(seed.wrapping_mul(1_000_003).wrapping_add(done / step), n);
        done += n;
        eprintln!(
            "fuzz_sst_long: {done} / {iters} inputs, no panic, {:.0?}",
            t.elapsed()
        );
    }
}

/// Issue 14 item 6: a size field near u64::MAX made the size check overflow
/// (exit 101 from dump, analyze and check). Every 64-bit offset or size in the
/// header, at every value near the top, is an error now.
#[test]
fn header_offsets_near_u64_max_are_errors() {
    let base = synthetic(4096, 2, 20);
    for field in [hdr::THREAD_TABLE_OFFSET, hdr::CHUNKS_OFFSET] {
        for k in 0..64u64 {
            let mut b = base.clone();
            b[field..field + 8].copy_from_slice(&(u64::MAX - k * 1023).to_le_bytes());
            let err = TraceView::parse(&b).expect_err("an impossible offset");
            assert!(
                matches!(err.kind, FormatErrorKind::BadHeader { .. }),
                "{err}"
            );
        }
    }
    // The largest slot count with the offset just under the top.
    let mut b = base.clone();
    b[hdr::THREAD_SLOTS..hdr::THREAD_SLOTS + 4].copy_from_slice(&(1u32 << 20).to_le_bytes());
    b[hdr::THREAD_TABLE_OFFSET..hdr::THREAD_TABLE_OFFSET + 8]
        .copy_from_slice(&(u64::MAX - (1 << 29)).to_le_bytes());
    assert!(TraceView::parse(&b).is_err());
}
