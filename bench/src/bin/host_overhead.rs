//! The host-side overhead benchmark (README "Benchmarks"). Side by side, in one
//! run, medians over several rounds with the variants interleaved:
//!
//! (a) nanoseconds the shim adds to a read() below the span threshold;
//! (b) wall-time ratio of a read-heavy Python workload (many small files):
//!     shim vs none, and `strace -f -e trace=read,openat` vs none;
//! (c) trace bytes per recorded event;
//! (d) with gpusim built: host time the shim adds to each simulated kernel launch.

use std::path::Path;
use std::process::Command;

use anyhow::Context;
use stallscope_bench::*;

const ROUNDS: usize = 11;

fn main() -> anyhow::Result<()> {
    let shim = built("libstallscope.so")?;
    let preadloop = built("preadloop")?;
    let py = python()?;
    let tmp = std::env::temp_dir().join(format!("stallscope-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let result = run(&shim, &preadloop, &py, &tmp);
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

fn with_shim(cmd: &mut Command, shim: &Path, out: &Path) {
    cmd.env("LD_PRELOAD", shim)
        .env("STALLSCOPE_OUT", out)
        .env("STALLSCOPE_GPU", "0");
}

fn run(shim: &Path, preadloop: &Path, py: &Path, tmp: &Path) -> anyhow::Result<()> {
    println!(
        "stallscope host overhead benchmark ({ROUNDS} rounds, medians, variants interleaved)\n"
    );

    // (a) per-call cost below the threshold, measured in-process: interleaved
    // batches of hooked and direct-to-libc calls (see preadloop.rs).
    let data = tmp.join("small.bin");
    std::fs::write(&data, vec![5u8; 4096])?;
    let (mut direct, mut hooked, mut added, mut bias) = (vec![], vec![], vec![], vec![]);
    for round in 0..ROUNDS {
        let out = tmp.join(format!("a{round}"));
        let mut b = Command::new(preadloop);
        b.arg(&data).arg("300");
        with_shim(&mut b, shim, &out);
        let (_, s) = timed(&mut b)?;
        let (d, h) = two_numbers(&s)?;
        direct.push(d);
        hooked.push(h);
        added.push(h - d);
        let (_, s) = timed(Command::new(preadloop).arg(&data).arg("300"))?;
        let (d, h) = two_numbers(&s)?;
        bias.push(h - d);
        let _ = std::fs::remove_dir_all(&out);
    }
    println!(
        "(a) pread(64 B, cached), below the threshold: {:.1} ns straight to libc, {:.1} ns through the shim",
        median(&mut direct),
        median(&mut hooked)
    );
    println!(
        "    added per intercepted call: {:.1} ns   (target: <= 60 ns; method bias without the shim: {:+.1} ns)\n",
        median(&mut added),
        median(&mut bias)
    );

    // (b) many small files from Python.
    let files = tmp.join("files");
    std::fs::create_dir_all(&files)?;
    for i in 0..20_000 {
        std::fs::write(
            files.join(format!("f{i:05}.txt")),
            vec![b'a' + (i % 26) as u8; 512 + (i % 7) * 300],
        )?;
    }
    let script = workload("small_files.py");
    let (mut w_plain, mut w_shim, mut w_strace, mut w_quiet) = (vec![], vec![], vec![], vec![]);
    let (mut l_plain, mut l_shim, mut l_strace, mut l_quiet) = (vec![], vec![], vec![], vec![]);
    let (mut r_shim, mut r_strace, mut r_quiet) = (vec![], vec![], vec![]);
    let has_strace = Command::new("strace").arg("-V").output().is_ok();
    // The shim's cost is a few percent and this machine's noise about as much:
    // many paired rounds. strace is 80x slower, so five rounds of it suffice.
    for round in 0..3 * ROUNDS {
        let with_strace = has_strace && round < 5;
        let out = tmp.join(format!("b{round}"));
        let mut plain = Command::new(py);
        plain.arg(&script).arg(&files);
        let mut traced = Command::new(py);
        traced.arg(&script).arg(&files);
        with_shim(&mut traced, shim, &out);
        // The same without the sampler thread, to show what it costs.
        let mut quiet = Command::new(py);
        quiet
            .arg(&script)
            .arg(&files)
            .env("STALLSCOPE_SAMPLE_HZ", "0");
        with_shim(&mut quiet, shim, &out);
        let mut st = Command::new("strace");
        st.args(["-f", "-e", "trace=read,openat", "-o", "/dev/null"])
            .arg(py)
            .arg(&script)
            .arg(&files);
        let mut variants: Vec<(&mut Command, &mut Vec<f64>, &mut Vec<f64>)> = vec![
            (&mut plain, &mut w_plain, &mut l_plain),
            (&mut traced, &mut w_shim, &mut l_shim),
            (&mut quiet, &mut w_quiet, &mut l_quiet),
        ];
        if with_strace {
            variants.push((&mut st, &mut w_strace, &mut l_strace));
        }
        // Every variant takes every place in the order equally often: the
        // run in a given place gains nothing from it over the others.
        let n = variants.len();
        variants.rotate_left(round % n);
        for (cmd, wall, lp) in variants {
            let (secs, s) = timed(cmd)?;
            wall.push(secs);
            lp.push(s.trim().parse::<f64>().context("small_files output")?);
        }
        // Ratios of runs made back to back cancel the machine's slow drift.
        r_shim.push(w_shim[round] / w_plain[round]);
        r_quiet.push(w_quiet[round] / w_plain[round]);
        if with_strace {
            r_strace.push(w_strace[round] / w_plain[round]);
        }
        let _ = std::fs::remove_dir_all(&out);
    }
    let (wp, ws) = (median(&mut w_plain), median(&mut w_shim));
    let (lp, ls) = (median(&mut l_plain), median(&mut l_shim));
    println!(
        "(b) Python reading 20,000 small files (open+read+close each), wall time of the whole process:"
    );
    println!(
        "    no shim  {:8.1} ms   (read loop {:6.1} ms)",
        wp * 1e3,
        lp * 1e3
    );
    println!(
        "    shim     {:8.1} ms   (read loop {:6.1} ms)   ratio {:.3}  (target: <= 1.03)",
        ws * 1e3,
        ls * 1e3,
        median(&mut r_shim)
    );
    println!(
        "    shim, no sampler {:8.1} ms   (read loop {:6.1} ms)   ratio {:.3}",
        median(&mut w_quiet) * 1e3,
        median(&mut l_quiet) * 1e3,
        median(&mut r_quiet)
    );
    if has_strace {
        let (wt, lt) = (median(&mut w_strace), median(&mut l_strace));
        println!(
            "    strace   {:8.1} ms   (read loop {:6.1} ms)   ratio {:.2}",
            wt * 1e3,
            lt * 1e3,
            median(&mut r_strace)
        );
    } else {
        println!("    strace   not installed");
    }

    // (c) trace bytes per event: every call becomes a span at threshold 0.
    let out = tmp.join("c");
    let mut rec = Command::new(py);
    rec.arg(&script)
        .arg(&files)
        .env("STALLSCOPE_MIN_SPAN_US", "0")
        .env("STALLSCOPE_SAMPLE_HZ", "0");
    with_shim(&mut rec, shim, &out);
    timed(&mut rec)?;
    let (events, payload, file_bytes) = trace_stats(&out)?;
    println!("\n(c) trace size, every call recorded (threshold 0): {events} events");
    println!(
        "    {:.1} bytes per event in records (target: <= 32); {:.1} bytes per event for the whole file",
        payload as f64 / events as f64,
        file_bytes as f64 / events as f64
    );

    // (d) per-launch cost with gpusim, when it is built.
    match built("libgpusim.so") {
        Ok(gpusim) => launch_overhead(shim, &gpusim, py, tmp)?,
        Err(_) => println!("\n(d) gpusim not built; kernel-launch overhead not measured"),
    }
    Ok(())
}

fn two_numbers(s: &str) -> anyhow::Result<(f64, f64)> {
    let mut it = s.split_whitespace().map(str::parse::<f64>);
    match (it.next(), it.next()) {
        (Some(Ok(a)), Some(Ok(b))) => Ok((a, b)),
        _ => anyhow::bail!("unexpected preadloop output {s:?}"),
    }
}

/// Events, record payload bytes and file bytes of a recording.
fn trace_stats(dir: &Path) -> anyhow::Result<(u64, u64, u64)> {
    let (mut events, mut payload, mut file_bytes) = (0u64, 0u64, 0u64);
    for e in std::fs::read_dir(dir)?.flatten() {
        let f = stallscope_format::TraceFile::open(e.path())?;
        file_bytes += f.bytes().len() as u64;
        let view = f.view()?;
        for c in view.chunks() {
            let c = c?;
            for r in c.records() {
                let (_, r) = r?;
                payload += match r {
                    stallscope_format::Record::Span(_) => {
                        events += 1;
                        stallscope_format::records::Span::LEN as u64
                    }
                    _ => 0,
                };
            }
        }
    }
    Ok((events, payload, file_bytes))
}

fn launch_overhead(shim: &Path, gpusim: &Path, py: &Path, tmp: &Path) -> anyhow::Result<()> {
    let script = workload("gpusim_launch_loop.py");
    let (mut plain, mut traced) = (vec![], vec![]);
    for round in 0..ROUNDS {
        let out = tmp.join(format!("d{round}"));
        let mut a = Command::new(py);
        a.arg(&script).arg(gpusim).arg("20000");
        let mut b = Command::new(py);
        b.arg(&script).arg(gpusim).arg("20000");
        b.env("LD_PRELOAD", shim)
            .env("STALLSCOPE_OUT", &out)
            .env("STALLSCOPE_CUPTI", gpusim)
            .env("CUDA_INJECTION64_PATH", shim);
        for (cmd, v) in [(&mut a, &mut plain), (&mut b, &mut traced)] {
            let (_, s) = timed(cmd)?;
            v.push(s.trim().parse::<f64>().context("launch loop output")?);
        }
        let _ = std::fs::remove_dir_all(&out);
    }
    let (p, t) = (median(&mut plain), median(&mut traced));
    println!(
        "\n(d) gpusim kernel launch, host time per call: {p:.0} ns without the shim, {t:.0} ns with it"
    );
    println!(
        "    added per launch: {:.0} ns   (target: <= 1000 ns)",
        t - p
    );
    Ok(())
}
