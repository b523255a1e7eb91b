//! Issue 14, items 5 and 6, through the CLI: a recording directory with files
//! that cannot be read at all (0 bytes, zeros, junk, another format, a header
//! cut short, an impossible offset) is analyzed without them, with a warning
//! naming each; `--strict` fails instead. No reader panics (exit 101).

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;

fn run(args: &[&str], dir: &Path) -> Output {
    Command::new(stallscope())
        .args(args)
        .arg(dir)
        .output()
        .expect("running stallscope")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A copy of a checked-in recording plus `junk`: (name, bytes).
fn recording_with(junk: &[(&str, Vec<u8>)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/dataloader-cpu");
    for f in trace_files(&src) {
        std::fs::copy(&f, tmp.path().join(f.file_name().unwrap())).unwrap();
    }
    for (name, bytes) in junk {
        std::fs::write(tmp.path().join(name), bytes).unwrap();
    }
    tmp
}

fn junk_files() -> Vec<(&'static str, Vec<u8>)> {
    let real =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/item-sync/23683.sst"))
            .unwrap();
    let mut huge_offset = real.clone();
    // Issue 14 item 6: this panicked the readers (exit 101).
    huge_offset[24..32].copy_from_slice(&(u64::MAX - 4096).to_le_bytes());
    let mut wrong_magic = real.clone();
    wrong_magic[..8].copy_from_slice(b"NOTSCOPE");
    vec![
        ("1.sst", vec![]),
        ("2.sst", vec![0; 65536]),
        (
            "3.sst",
            (0..5000u32).map(|i| (i * 131 % 251) as u8).collect(),
        ),
        ("4.sst", wrong_magic),
        ("5.sst", real[..9000].to_vec()),
        ("6.sst", huge_offset),
    ]
}

#[test]
fn analyze_skips_unreadable_files_with_a_warning() {
    let clean = recording_with(&[]);
    let want = run(&["analyze", "--json", "-", "-q"], clean.path());
    assert!(want.status.success(), "{}", text(&want));

    let dir = recording_with(&junk_files());
    let out = run(&["analyze"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains("warning: skipped an unreadable trace file"),
        "{t}"
    );
    // The rest of the recording reads as without the junk.
    let got = run(&["analyze", "--json", "-", "-q"], dir.path());
    let figures = |o: &Output| {
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (
            v["devices"].clone(),
            v["findings"].clone(),
            v["steps"].clone(),
        )
    };
    assert_eq!(figures(&got), figures(&want));
    // The report's notes name every skipped file (the text shows the first few).
    let v: serde_json::Value = serde_json::from_slice(&got.stdout).unwrap();
    let notes = v["notes"].to_string();
    for name in ["1.sst", "2.sst", "3.sst", "4.sst", "5.sst", "6.sst"] {
        assert!(
            notes.contains(&format!("{name}: at byte offset")),
            "no note names {name}: {notes}"
        );
    }
}

#[test]
fn strict_fails_on_an_unreadable_file_and_names_it() {
    let dir = recording_with(&[("9.sst", vec![0; 100])]);
    for cmd in [
        &["analyze", "--strict"][..],
        &["check", "--strict", "--max-idle", "100"],
        &["dump", "--strict"],
    ] {
        let out = run(cmd, dir.path());
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("9.sst"),
            "{cmd:?}: {}",
            text(&out)
        );
    }
}

#[test]
fn check_and_dump_skip_as_analyze_does() {
    let dir = recording_with(&junk_files());
    let out = run(&["check", "--max-idle", "100"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("skipped an unreadable trace file"));
    let out = run(&["dump", "--json"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("skipped an unreadable trace file").count(),
        6,
        "{err}"
    );
    let pids: std::collections::BTreeSet<u64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["kind"] == "header")
        .map(|v| v["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "both readable files are dumped");
}

#[test]
fn a_directory_of_nothing_readable_fails_and_a_named_file_still_must_read() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("1.sst"), b"").unwrap();
    std::fs::write(tmp.path().join("2.sst"), vec![0u8; 20_000]).unwrap();
    let out = run(&["analyze"], tmp.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("no readable stallscope trace file"),
        "{}",
        text(&out)
    );
    let out = run(&["dump"], tmp.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    // A file named on its own is an error, as before.
    let out = run(&["dump"], &tmp.path().join("2.sst"));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

/// Item 6: none of the commands panics on impossible header offsets.
#[test]
fn impossible_offsets_are_errors_not_panics() {
    let real =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/item-sync/23683.sst"))
            .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for (field, v) in [
        (24usize, u64::MAX),
        (24, u64::MAX - 4096),
        (32, !4095),
        (40, u64::MAX),
    ] {
        let mut b = real.clone();
        b[field..field + 8].copy_from_slice(&v.to_le_bytes());
        let f = tmp.path().join("x.sst");
        std::fs::write(&f, &b).unwrap();
        for cmd in [
            &["dump"][..],
            &["analyze", "-q"],
            &["check", "--max-idle", "100"],
        ] {
            let out = run(cmd, &f);
            assert!(
                matches!(out.status.code(), Some(0..=2)),
                "{cmd:?} with field {field} = {v:#x}: {:?}\n{}",
                out.status,
                text(&out)
            );
        }
    }
}
