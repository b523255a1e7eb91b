//! End to end: the report of a host-only recording. A Python job whose main
//! process forks workers that read files runs under the real shim; the JSON
//! and text reports must name the filesystem and each file with the bytes
//! the workers read, give every process its role (the main one, its forked
//! workers) and CPU, and list damage once a trace file is cut short.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use serde_json::Value;

/// `stallscope analyze` of `rec`: the JSON report and the text one.
fn analyze(rec: &Path) -> (Value, String) {
    let out = Command::new(stallscope())
        .arg("analyze")
        .args(["--json", "-"])
        .arg(rec)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "analyze --json failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let out = Command::new(stallscope())
        .arg("analyze")
        .arg(rec)
        .output()
        .unwrap();
    assert!(out.status.success(), "analyze failed");
    (json, String::from_utf8(out.stdout).unwrap())
}

fn fs_name_of(magic: &str) -> &'static str {
    let m = u32::from_str_radix(magic.trim_start_matches("0x"), 16).unwrap();
    stallscope_format::fs_name(m)
}

#[test]
fn host_only_report_has_io_by_fs_and_file_processes_with_roles_and_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rec");
    let done = tmp.path().join("done.json");
    // Every call is a span, so the file rows hold every byte read.
    record_python(
        &rec,
        &["--min-span-us", "0"],
        "forked_readers.py",
        &[done.to_str().unwrap(), "3", "0.3"],
    );
    let done: Value = serde_json::from_slice(&std::fs::read(&done).unwrap()).unwrap();
    let main_pid = done["main_pid"].as_u64().unwrap();
    let workers = done["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 3);
    let data_parent = Path::new(done["dir"].as_str().unwrap()).parent().unwrap();
    let fs = fs_name_of(&fs_magic(data_parent));

    let (r, text) = analyze(&rec);
    assert!(r["devices"].as_array().unwrap().is_empty());
    let host = &r["host"];

    // The filesystem row: every byte of the files, and a rate.
    let fs_row = host["io_by_fs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["what"] == fs)
        .unwrap_or_else(|| panic!("no {fs} row in {}", host["io_by_fs"]));
    let read: u64 = workers.iter().map(|w| w["bytes"].as_u64().unwrap()).sum();
    assert!(fs_row["read_bytes"].as_u64().unwrap() >= read, "{fs_row}");
    assert!(fs_row["mb_per_s"].as_f64().unwrap() > 0.0, "{fs_row}");

    // A row per file read, with what the worker read and the main process
    // wrote into it.
    for w in workers {
        let path = w["path"].as_str().unwrap();
        let row = host["io_by_file"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["what"] == path)
            .unwrap_or_else(|| panic!("no row for {path} in {}", host["io_by_file"]));
        assert_eq!(row["fs"], fs, "{row}");
        assert_eq!(row["read_bytes"], w["bytes"], "{row}");
        assert!(w["bytes"].as_u64().unwrap() > 0);
        assert_eq!(
            row["write_bytes"], w["bytes"],
            "the main process wrote it: {row}"
        );
        // Reads (the last one at end of file) and the writes that made it.
        let calls = row["calls"].as_u64().unwrap();
        assert!(calls > w["calls"].as_u64().unwrap(), "{row}");
        assert!(row["wait_ns"].as_i64().unwrap() > 0, "{row}");
        assert!(row["mb_per_s"].as_f64().unwrap() > 0.0, "{row}");
        let name = Path::new(path).file_name().unwrap().to_str().unwrap();
        assert!(
            text.lines()
                .any(|l| l.contains(name) && l.contains(fs) && l.contains("MB")),
            "no line for {name} in\n{text}"
        );
    }

    // Every process, with its role and CPU: the main one and its workers.
    let procs = host["processes"].as_array().unwrap();
    let find = |pid: u64| {
        procs
            .iter()
            .find(|p| p["pid"] == pid)
            .unwrap_or_else(|| panic!("pid {pid} missing from {procs:?}"))
    };
    let main = find(main_pid);
    assert_eq!(main["role"], "main", "{main}");
    assert!(main["cpu_ns"].as_i64().unwrap() > 0, "{main}");
    assert!(
        main["io_bytes"].as_u64().unwrap() >= read,
        "it wrote the files: {main}"
    );
    for w in workers {
        let p = find(w["pid"].as_u64().unwrap());
        assert_eq!(p["role"], "worker", "{p}");
        assert_eq!(p["ppid"], main_pid, "{p}");
        assert!(p["cpu_ns"].as_i64().unwrap() > 0, "a busy worker: {p}");
        // Its reads, and the little JSON it wrote.
        assert!(p["io_bytes"].as_u64().unwrap() >= w["bytes"].as_u64().unwrap());
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{} ", w["pid"])))
            .unwrap_or_else(|| panic!("no tree line for worker {} in\n{text}", w["pid"]));
        assert!(line.contains("worker"), "{line}");
        // Indented under the main process.
        assert!(line.starts_with("    "), "{line}");
    }
    assert_eq!(
        procs.len(),
        r["processes"]["count"].as_u64().unwrap() as usize
    );
    let main_line = text
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{main_pid} ")))
        .unwrap_or_else(|| panic!("no tree line for the main process in\n{text}"));
    assert!(main_line.contains("main"), "{main_line}");
    assert!(text.contains("I/O wait by filesystem"), "{text}");
    assert!(host["damage"].as_array().unwrap().is_empty());
    assert_eq!(host["dropped_records"], 0);
    assert!(!text.contains("damage:") && !text.contains("records dropped"));

    // Cut a worker's trace file short: the damage is listed, with the file
    // and the offset, and the rest is still reported.
    let victim = rec.join(format!("{}.sst", workers[0]["pid"]));
    let len = std::fs::metadata(&victim).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&victim)
        .unwrap();
    f.set_len(len - len / 3).unwrap();
    drop(f);
    let (r, text) = analyze(&rec);
    let damage = r["host"]["damage"].as_array().unwrap();
    assert!(!damage.is_empty(), "no damage listed: {}", r["notes"]);
    let victim_name = victim.display().to_string();
    assert!(
        damage.iter().all(|d| {
            let d = d.as_str().unwrap();
            d.contains(&victim_name) && d.contains("offset")
        }),
        "{damage:?}"
    );
    assert!(text.contains("damage: "), "{text}");
    // Listed once: in the host part, not again among the notes.
    assert_eq!(text.matches(&victim_name).count(), damage.len(), "{text}");
}
