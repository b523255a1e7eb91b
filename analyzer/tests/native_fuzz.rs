//! Mutation fuzzing of the analyzer's native reader (the path `analyze`,
//! `check` and the Perfetto export take): mutated recordings from traces/
//! must read back as a timeline or an error, never a panic, and what reads
//! back is diagnosed and written as Perfetto (as `analyze` would). The mutations are
//! the format crate's (`stallscope_format::mutate`); see format/tests/fuzz_sst.rs
//! for the reader below this one.
//!
//! CI runs `native_fuzz_bounded`. For a long run:
//!
//!     STALLSCOPE_FUZZ_ITERS=100000 CARGO_TARGET_DIR=/tmp/fuzz-target \
//!     CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS=true CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true \
//!         cargo test --release -p stallscope-analyzer --test native_fuzz -- --ignored --nocapture
//!
//! (100 k inputs took about 10 minutes of one core.)

use std::path::Path;

use stallscope_analyzer::analysis::diagnose;
use stallscope_analyzer::output::perfetto::write_perfetto;
use stallscope_analyzer::read::native::read_recording;
use stallscope_format::mutate::{self, Rng, Seed};

fn seeds() -> Vec<Seed> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces");
    let mut files = vec![];
    for dir in std::fs::read_dir(&root).expect("traces/") {
        for f in std::fs::read_dir(dir.expect("entry").path()).expect("a trace dir") {
            let p = f.expect("entry").path();
            if p.extension().is_some_and(|x| x == "sst") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 3, "the checked-in recordings are missing");
    files
        .iter()
        .map(|p| Seed::new(p.display().to_string(), std::fs::read(p).expect("read")))
        .collect()
}

fn fuzz(seed: u64, iters: u64) -> (u64, u64) {
    let mut seeds = seeds();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("1.sst");
    let mut rng = Rng::new(seed);
    let mut scratch = Vec::new();
    let (mut read, mut refused) = (0, 0);
    for it in 0..iters {
        let k = rng.below(seeds.len());
        let s = &mut seeds[k];
        let u = mutate::mutate(s, &mut rng);
        std::fs::write(&path, mutate::input(s, &u, &mut scratch)).expect("write");
        mutate::undo(s, u);
        match std::panic::catch_unwind(|| read_recording(dir.path())) {
            Ok(Ok(tl)) => {
                read += 1;
                let _ = tl.host_span_count() + tl.gpu_op_count();
                // What `analyze --perfetto` does with it next.
                let d = diagnose(&tl);
                let _ = write_perfetto(&tl, Some(&d), std::io::sink(), &|_, _| {});
            }
            Ok(Err(_)) => refused += 1,
            Err(_) => {
                let keep = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
                    "../target/fuzz-failures/native-seed{seed}-iter{it}.sst"
                ));
                let _ = std::fs::create_dir_all(keep.parent().expect("a parent"));
                let _ = std::fs::copy(&path, &keep);
                panic!(
                    "the native reader panicked on iteration {it} of seed {seed} (from {}); input saved to {}",
                    seeds[k].name,
                    keep.display()
                );
            }
        }
    }
    (read, refused)
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
fn native_fuzz_bounded() {
    let seed = env_u64("STALLSCOPE_FUZZ_SEED").unwrap_or(0x5eed);
    let iters = env_u64("STALLSCOPE_FUZZ_CI_ITERS").unwrap_or(1_000);
    let (read, refused) = fuzz(seed, iters);
    eprintln!("native_fuzz: {iters} inputs, {read} read, {refused} refused");
    // Most mutations leave a readable recording: the fuzz reaches the decoders.
    assert!(read > iters / 3, "{read} of {iters} read");
}

#[test]
#[ignore = "long: run by hand with --ignored"]
fn native_fuzz_long() {
    let seed = env_u64("STALLSCOPE_FUZZ_SEED").unwrap_or(1);
    let iters = env_u64("STALLSCOPE_FUZZ_ITERS").unwrap_or(100_000);
    let (read, refused) = fuzz(seed, iters);
    eprintln!("native_fuzz_long: {iters} inputs, {read} read, {refused} refused, no panic");
}
