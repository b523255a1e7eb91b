//! What the shim costs per process (issue 18, item 2). Side by side, in one
//! run, medians over rounds with the variants interleaved:
//!
//! (a) microseconds added to one `/bin/true` (posix_spawn + wait), and the
//!     trace bytes it leaves on disk;
//! (b) a shell loop of 200 `/bin/true`: wall-time ratio under
//!     `stallscope record` against none, and bytes on disk per process;
//! (c) the many-small-files Python workload started through a wrapper,
//!     `sh -c 'exec python3 ...'`, and directly: wall-time ratios.
//!
//! It ends with a summary of the three figures issue 18 asks for, with
//! their targets, and the load average before and after (other work on the
//! machine moves every figure).
//!
//! With `--against DIR` (DIR holding another build's `stallscope` and
//! `libstallscope.so`, e.g. `target/release` of an older checkout), it ends
//! with (d): the loop under each build's `record` and the wrapped Python job
//! under each build's shim, all interleaved with the plain runs, so that a
//! change is judged beside its predecessor on one machine at one time.
//!
//! Usage: `process_cost [ROUNDS] [--against DIR]` after
//! `cargo build --release --workspace`; timing runs share the machine, so
//! run it as `flock /work/.measure.lock target/release/process_cost`.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::Context;
use stallscope_bench::*;

/// (b)'s shell loop, also run by (d).
const LOOP: &str = "i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i+1)); done";

/// (c)'s wrapped job, also run by (d): the small-files workload on `files`
/// (made by (c)), started through `sh -c 'exec ...'`.
fn wrapped_job(py: &Path, files: &Path) -> String {
    format!(
        "exec '{}' '{}' '{}'",
        py.display(),
        workload("small_files.py").display(),
        files.display()
    )
}

/// A build to measure: its CLI and its shim.
struct Build {
    cli: PathBuf,
    shim: PathBuf,
}

fn main() -> anyhow::Result<()> {
    let mut rounds = 11;
    let mut against = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--against" {
            let dir = PathBuf::from(args.next().context("--against needs a directory")?);
            let b = Build {
                cli: dir.join("stallscope"),
                shim: dir.join("libstallscope.so"),
            };
            for f in [&b.cli, &b.shim] {
                anyhow::ensure!(f.is_file(), "{} does not exist", f.display());
            }
            against = Some(b);
        } else {
            rounds = a.parse().with_context(|| format!("ROUNDS: {a:?}"))?;
        }
    }
    let ours = Build {
        cli: built("stallscope")?,
        shim: built("libstallscope.so")?,
    };
    let py = python()?;
    let tmp = std::env::temp_dir().join(format!("stallscope-pcost-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let mut result = run(rounds, &ours.shim, &ours.cli, &py, &tmp);
    if let (Ok(()), Some(other)) = (&result, &against) {
        result = side_by_side(rounds, &ours, other, &py, &tmp);
    }
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

/// (d): the two ratios that sit nearest their targets, for this build and
/// `other`, every variant interleaved in each round.
fn side_by_side(
    rounds: usize,
    ours: &Build,
    other: &Build,
    py: &Path,
    tmp: &Path,
) -> anyhow::Result<()> {
    let wrapped = wrapped_job(py, &tmp.join("files"));
    let builds = [("this build", ours), ("--against", other)];
    // [loop, wrapped job] x [plain, this build, other]: seconds per round.
    let mut secs = vec![vec![vec![]; 3]; 2];
    for round in 0..3 * rounds {
        let mut runs: Vec<(usize, usize, Command)> = vec![];
        let mut plain = Command::new("sh");
        plain.args(["-c", LOOP]);
        runs.push((0, 0, plain));
        let mut plain = Command::new("sh");
        plain.args(["-c", &wrapped]);
        runs.push((1, 0, plain));
        for (i, (_, b)) in builds.iter().enumerate() {
            let out = tmp.join(format!("d{round}-{i}"));
            let mut rec = Command::new(&b.cli);
            rec.arg("record")
                .arg("-o")
                .arg(out.join("loop"))
                .args(["--", "sh", "-c", LOOP]);
            runs.push((0, i + 1, rec));
            let mut job = Command::new("sh");
            job.args(["-c", &wrapped])
                .env("LD_PRELOAD", &b.shim)
                .env("STALLSCOPE_OUT", out.join("job"))
                .env("STALLSCOPE_GPU", "0");
            runs.push((1, i + 1, job));
        }
        let n = runs.len();
        runs.rotate_left(round % n);
        for (what, who, mut cmd) in runs {
            let (t, _) = timed(&mut cmd)?;
            secs[what][who].push(t);
        }
        for i in 0..builds.len() {
            let _ = std::fs::remove_dir_all(tmp.join(format!("d{round}-{i}")));
        }
    }
    println!(
        "\n(d) side by side with --against ({} rounds, medians of paired ratios):",
        3 * rounds
    );
    for (what, name) in [
        (0, "200-process sh loop under record"),
        (1, "sh -c 'exec python3' manyfiles"),
    ] {
        let plain = secs[what][0].clone();
        for (i, (label, _)) in builds.iter().enumerate() {
            let mut r: Vec<f64> = secs[what][i + 1]
                .iter()
                .zip(&plain)
                .map(|(a, b)| a / b)
                .collect();
            println!("    {name}, {label}: {:.3}x", median(&mut r));
        }
    }
    Ok(())
}

/// Files and bytes allocated on disk (st_blocks, what `du` counts) under `dir`.
fn disk(dir: &Path) -> (u64, u64) {
    let (mut n, mut bytes) = (0, 0);
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if let Ok(m) = e.metadata() {
                n += 1;
                bytes += m.blocks() * 512;
            }
        }
    }
    (n, bytes)
}

/// The 1, 5 and 15 minute load averages.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "NOT met" }
}

fn run(rounds: usize, shim: &Path, cli: &Path, py: &Path, tmp: &Path) -> anyhow::Result<()> {
    let load_before = load_average();
    println!(
        "stallscope per-process cost ({rounds} rounds, medians, variants interleaved; \
         load average {load_before})\n"
    );

    // (a) one trivial process, many times.
    let out = tmp.join("a");
    let (mut plain, mut traced) = (vec![], vec![]);
    for round in 0..rounds * 40 {
        let mut a = Command::new("/bin/true");
        let mut b = Command::new("/bin/true");
        b.env("LD_PRELOAD", shim)
            .env("STALLSCOPE_OUT", &out)
            .env("STALLSCOPE_GPU", "0");
        let mut variants = [(&mut a, &mut plain), (&mut b, &mut traced)];
        variants.rotate_left(round % 2);
        for (cmd, v) in variants {
            let t = Instant::now();
            let st = cmd.status()?;
            v.push(t.elapsed().as_secs_f64());
            anyhow::ensure!(st.success(), "/bin/true failed");
        }
    }
    let (files, bytes) = disk(&out);
    let (p, t) = (median(&mut plain), median(&mut traced));
    println!("(a) /bin/true, spawn and wait ({} each):", plain.len());
    println!(
        "    no shim {:7.0} us   shim {:7.0} us   added {:5.0} us per process   (target: <= 200 us)",
        p * 1e6,
        t * 1e6,
        (t - p) * 1e6
    );
    println!(
        "    on disk: {files} files, {bytes} bytes for {} processes   (target: <= 16 KB each)\n",
        traced.len()
    );

    // (b) a shell loop of 200 /bin/true, under `stallscope record`.
    let (mut w_plain, mut w_rec, mut ratio, mut per_proc) = (vec![], vec![], vec![], vec![]);
    for round in 0..rounds {
        let out = tmp.join(format!("b{round}"));
        let mut a = Command::new("sh");
        a.args(["-c", LOOP]);
        let mut b = Command::new(cli);
        b.arg("record")
            .arg("-o")
            .arg(&out)
            .args(["--", "sh", "-c", LOOP]);
        let mut variants = [(&mut a, &mut w_plain), (&mut b, &mut w_rec)];
        variants.rotate_left(round % 2);
        for (cmd, v) in variants {
            let (secs, _) = timed(cmd)?;
            v.push(secs);
        }
        ratio.push(w_rec[round] / w_plain[round]);
        let (_, bytes) = disk(&out);
        per_proc.push(bytes as f64 / 201.0);
        let _ = std::fs::remove_dir_all(&out);
    }
    let (mp, mr) = (median(&mut w_plain), median(&mut w_rec));
    let loop_ratio = median(&mut ratio);
    let loop_disk = median(&mut per_proc);
    println!("(b) sh loop of 200 /bin/true, wall time:");
    println!(
        "    no shim {:7.1} ms   stallscope record {:7.1} ms   ratio of medians {:.3}, median of \
         paired ratios {:.3}   (target: <= 1.3)",
        mp * 1e3,
        mr * 1e3,
        mr / mp,
        loop_ratio
    );
    println!(
        "    on disk: {loop_disk:.0} bytes per process (201 processes)   (target: <= 16384)\n"
    );

    // (c) many small files from Python, directly and through a wrapper.
    let files = tmp.join("files");
    std::fs::create_dir_all(&files)?;
    for i in 0..20_000 {
        std::fs::write(
            files.join(format!("f{i:05}.txt")),
            vec![b'a' + (i % 26) as u8; 512 + (i % 7) * 300],
        )?;
    }
    let work = workload("small_files.py");
    let wrapped = wrapped_job(py, &files);
    let (mut d_plain, mut d_shim, mut s_plain, mut s_shim) = (vec![], vec![], vec![], vec![]);
    let (mut r_direct, mut r_wrapped) = (vec![], vec![]);
    for round in 0..3 * rounds {
        let out = tmp.join(format!("c{round}"));
        let shimmed = |c: &mut Command| {
            c.env("LD_PRELOAD", shim)
                .env("STALLSCOPE_OUT", &out)
                .env("STALLSCOPE_GPU", "0");
        };
        let mut dp = Command::new(py);
        dp.arg(&work).arg(&files);
        let mut ds = Command::new(py);
        ds.arg(&work).arg(&files);
        shimmed(&mut ds);
        let mut sp = Command::new("sh");
        sp.args(["-c", &wrapped]);
        let mut ss = Command::new("sh");
        ss.args(["-c", &wrapped]);
        shimmed(&mut ss);
        let mut variants = [
            (&mut dp, &mut d_plain),
            (&mut ds, &mut d_shim),
            (&mut sp, &mut s_plain),
            (&mut ss, &mut s_shim),
        ];
        variants.rotate_left(round % 4);
        for (cmd, v) in variants {
            let (secs, _) = timed(cmd)?;
            v.push(secs);
        }
        r_direct.push(d_shim[round] / d_plain[round]);
        r_wrapped.push(s_shim[round] / s_plain[round]);
        let _ = std::fs::remove_dir_all(&out);
    }
    println!("(c) Python reading 20,000 small files, wall time of the whole job:");
    let (dp, ds) = (median(&mut d_plain), median(&mut d_shim));
    println!(
        "    direct                 no shim {:7.1} ms   shim {:7.1} ms   ratio of medians {:.3}, \
         median of paired ratios {:.3}   (target: <= 1.03)",
        dp * 1e3,
        ds * 1e3,
        ds / dp,
        median(&mut r_direct)
    );
    let (sp, ss) = (median(&mut s_plain), median(&mut s_shim));
    let wrapped_ratio = median(&mut r_wrapped);
    println!(
        "    sh -c 'exec python3'   no shim {:7.1} ms   shim {:7.1} ms   ratio of medians {:.3}, \
         median of paired ratios {:.3}   (target: <= 1.03)",
        sp * 1e3,
        ss * 1e3,
        ss / sp,
        wrapped_ratio
    );
    println!(
        "\nsummary (medians of paired ratios; load average before {load_before}, after {}):",
        load_average()
    );
    println!("    | figure | measured | target | |");
    println!("    |---|---|---|---|");
    println!(
        "    | added per /bin/true | {:.0} us | <= 200 us | {} |",
        (t - p) * 1e6,
        verdict(t - p <= 200e-6)
    );
    println!(
        "    | 200-process sh loop, record / plain | {loop_ratio:.3}x | <= 1.3x | {} |",
        verdict(loop_ratio <= 1.3)
    );
    println!(
        "    | disk per trivial process | {loop_disk:.0} B | <= 16384 B | {} |",
        verdict(loop_disk <= 16384.0)
    );
    println!(
        "    | sh -c 'exec python3' manyfiles, shim / plain | {wrapped_ratio:.3}x | <= 1.03x | {} |",
        verdict(wrapped_ratio <= 1.03)
    );
    Ok(())
}
