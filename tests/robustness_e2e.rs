//! The shim never harms the program: SIGKILL leaves a readable trace, and an
//! unusable output directory or a full disk leave output and exit code alone.

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::*;

#[test]
fn sigkill_leaves_every_span_before_the_kill() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("d.bin");
    std::fs::write(&data, vec![1u8; 4096]).unwrap();
    let rec = tmp.path().join("rec");
    let mut child = Command::new(python())
        .arg(workload("pread_loop.py"))
        .arg(&data)
        .arg("-1")
        .arg("progress")
        .env("LD_PRELOAD", shim())
        .env("STALLSCOPE_OUT", &rec)
        .env("STALLSCOPE_MIN_SPAN_US", "0")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut reported = 0u64;
    while reported < 20_000 {
        reported = lines.next().unwrap().unwrap().trim().parse().unwrap();
    }
    child.kill().unwrap(); // SIGKILL, mid-loop
    child.wait().unwrap();

    let recs = dump(&rec);
    let header = &recs[0];
    assert_eq!(header["end_mono_ns"], 0, "no clean exit was recorded");
    let spans: Vec<_> = recs
        .iter()
        .filter(|r| {
            r["kind"] == "span" && r["op"] == "pread" && r["path"] == data.to_str().unwrap()
        })
        .collect();
    assert!(
        spans.len() as u64 >= reported,
        "{} spans but {reported} reads were reported before the kill",
        spans.len()
    );
    // They are in order and none is torn.
    assert!(
        spans
            .windows(2)
            .all(|w| w[0]["ts_ns"].as_u64() <= w[1]["ts_ns"].as_u64())
    );
    assert!(spans.iter().all(|s| s["bytes"] == 64));
}

/// SIGKILL at random moments of start-up, trace creation included: every
/// trace file left behind reads back (issue 14, item 5: 7 of 40 such kills
/// used to leave a 0-byte or all-zero file). The deterministic version of
/// this, a kill exactly while the file is set up, is in shim_promise_e2e.
#[test]
fn sigkill_during_start_up_leaves_only_readable_traces() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rec");
    let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ std::process::id() as u64;
    for _ in 0..40 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut child = Command::new("/bin/sleep")
            .arg("1")
            .env("LD_PRELOAD", shim())
            .env("STALLSCOPE_OUT", &rec)
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_micros(seed % 4000));
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let files = if rec.exists() {
        trace_files(&rec)
    } else {
        vec![]
    };
    for f in files {
        let out = Command::new(stallscope())
            .arg("dump")
            .arg(&f)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn run_program(out_dir: &Path, env: &[(&str, &str)], fsize_limit: Option<u64>) -> Output {
    let mut c = Command::new(python());
    c.arg(workload("well_behaved.py")).arg(out_dir);
    for (k, v) in env {
        c.env(k, v);
    }
    if let Some(limit) = fsize_limit {
        // SAFETY: setrlimit is async-signal-safe.
        unsafe {
            c.pre_exec(move || {
                let r = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &r) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    c.output().unwrap()
}

/// Runs the program untraced and traced; output and exit code must match, and
/// stderr may differ only by one `stallscope:` line.
fn assert_unharmed(trace_out: &str, fsize_limit: Option<u64>) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let plain = run_program(tmp.path(), &[], fsize_limit);
    let shim = shim();
    let traced = run_program(
        tmp.path(),
        &[
            ("LD_PRELOAD", shim.to_str().unwrap()),
            ("STALLSCOPE_OUT", trace_out),
            ("STALLSCOPE_MIN_SPAN_US", "0"),
        ],
        fsize_limit,
    );
    assert_eq!(plain.status.code(), Some(3));
    assert_eq!(
        traced.status.code(),
        plain.status.code(),
        "exit code changed"
    );
    assert_eq!(
        String::from_utf8_lossy(&traced.stdout),
        String::from_utf8_lossy(&plain.stdout),
        "stdout changed"
    );
    let err = String::from_utf8_lossy(&traced.stderr).into_owned();
    let ours: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("stallscope: "))
        .collect();
    let rest: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("stallscope: "))
        .collect();
    assert_eq!(
        rest.join("\n"),
        String::from_utf8_lossy(&plain.stderr).trim_end(),
        "stderr changed"
    );
    assert_eq!(
        ours.len(),
        1,
        "expected exactly one stallscope line, got {ours:?}"
    );
    ours[0].to_string()
}

#[test]
fn unusable_output_directory_leaves_the_program_alone() {
    let line = assert_unharmed("/proc/stallscope-cannot-create-this", None);
    assert!(line.contains("cannot create output directory"), "{line}");

    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let line = assert_unharmed(file.join("sub").to_str().unwrap(), None);
    assert!(line.contains("not recording"), "{line}");
}

#[test]
fn file_size_limit_stops_recording_not_the_program() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rec");
    // Enough for the header and a few chunks, far less than the trace wants.
    let line = assert_unharmed(rec.to_str().unwrap(), Some(512 * 1024));
    assert!(
        line.contains("recording stopped") && line.contains("File too large"),
        "{line}"
    );
    // What was recorded before the limit still reads back.
    assert!(dump(&rec).iter().any(|r| r["kind"] == "span"));
}

#[test]
fn full_filesystem_stops_recording_not_the_program() {
    let mnt = tempfile::tempdir().unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=600k", "tmpfs"])
        .arg(mnt.path())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        // Mounting needs privileges CI may not have; the RLIMIT_FSIZE test
        // covers the same path through the shim.
        eprintln!("note: cannot mount a small tmpfs here; full-disk variant not run");
        return;
    }
    let rec = mnt.path().join("rec");
    let line = assert_unharmed(rec.to_str().unwrap(), None);
    let _ = Command::new("umount").arg(mnt.path()).status();
    assert!(line.contains("No space left on device"), "{line}");
}

#[test]
fn damaged_traces_give_errors_never_panics() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("d.bin");
    std::fs::write(&data, vec![1u8; 4096]).unwrap();
    let rec = tmp.path().join("rec");
    record_python(
        &rec,
        &["--min-span-us", "0"],
        "pread_loop.py",
        &[data.to_str().unwrap(), "3000"],
    );
    let file = &trace_files(&rec)[0];
    let bytes = std::fs::read(file).unwrap();
    let cut_dir = tmp.path().join("cut");
    std::fs::create_dir(&cut_dir).unwrap();
    let mut errors = 0;
    let len = bytes.len();
    for (i, at) in [0, 7, 100, 16384, 300_000, len / 2, len - 4000, len - 1]
        .into_iter()
        .enumerate()
    {
        let p = cut_dir.join(format!("cut{i}.sst"));
        std::fs::write(&p, &bytes[..at.min(len)]).unwrap();
        let out = Command::new(stallscope())
            .arg("dump")
            .arg(&p)
            .output()
            .unwrap();
        let code = out.status.code();
        assert!(
            matches!(code, Some(0) | Some(2)),
            "dump of a file cut at {at} exited {code:?}"
        );
        if code == Some(2) {
            errors += 1;
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains(p.to_str().unwrap()) && err.contains("offset"),
                "{err}"
            );
        }
    }
    assert!(errors >= 3, "truncations should be reported");
    let garbage = cut_dir.join("garbage.sst");
    std::fs::write(&garbage, vec![0xAB; 20000]).unwrap();
    let out = Command::new(stallscope())
        .arg("dump")
        .arg(&garbage)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a stallscope trace"));
}

#[test]
fn size_cap_counts_drops_and_flight_recorder_keeps_the_newest() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("d.bin");
    std::fs::write(&data, vec![1u8; 4096]).unwrap();
    // 200,000 spans of 32 bytes do not fit in 4 MiB.
    let capped = tmp.path().join("capped");
    let out = record_python(
        &capped,
        &["--min-span-us", "0", "--max-mb", "4"],
        "pread_loop.py",
        &[data.to_str().unwrap(), "200000"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("trace size cap reached"), "{err}");
    let f = &trace_files(&capped)[0];
    assert!(std::fs::metadata(f).unwrap().len() <= 4 << 20);
    let recs = dump(&capped);
    let dropped: u64 = recs
        .iter()
        .filter(|r| r["kind"] == "counters")
        .map(|r| r["dropped"].as_u64().unwrap())
        .sum();
    let kept = recs
        .iter()
        .filter(|r| r["kind"] == "span" && r["op"] == "pread")
        .count() as u64;
    assert!(dropped > 50_000, "dropped {dropped}");
    let preads: u64 = recs
        .iter()
        .filter(|r| r["kind"] == "counters")
        .filter_map(|r| r["ops"]["pread"]["calls"].as_u64())
        .sum();
    assert_eq!(preads, 200_000, "every call is still counted");
    assert!(kept < 200_000);

    let flight = tmp.path().join("flight");
    record_python(
        &flight,
        &["--min-span-us", "0", "--max-mb", "4", "--flight"],
        "pread_loop.py",
        &[data.to_str().unwrap(), "200000"],
    );
    let recs = dump(&flight);
    assert!(
        recs[0]["overwritten"].as_u64().unwrap() > 50_000,
        "{}",
        recs[0]
    );
    // The newest records survive: the final sleep is there.
    assert!(
        recs.iter()
            .any(|r| r["kind"] == "span" && r["op"] == "sleep")
    );
}
