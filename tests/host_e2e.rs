//! End to end: real Python processes (threads and forked workers) under the
//! shim, read back through `stallscope dump --json`.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use common::*;
use serde_json::Value;

fn spans<'a>(recs: &'a [Value], op: &str, path: &str) -> Vec<&'a Value> {
    recs.iter()
        .filter(|r| r["kind"] == "span" && r["op"] == op && r["path"] == path)
        .collect()
}

/// The runs of short calls on `path` (`Burst` records), each checked to be
/// worth its record under the span threshold `threshold_ns`: that long in
/// calls, and in calls for half its extent at least.
fn runs_on<'a>(recs: &'a [Value], path: &str, threshold_ns: u64) -> Vec<&'a Value> {
    let runs: Vec<&Value> = recs
        .iter()
        .filter(|r| r["kind"] == "burst" && r["path"] == path)
        .collect();
    for r in &runs {
        let (busy, dur) = (
            r["busy_ns"].as_u64().unwrap(),
            r["dur_ns"].as_u64().unwrap(),
        );
        assert!(
            busy >= threshold_ns && busy <= dur && 2 * busy >= dur,
            "{r}"
        );
    }
    runs
}

/// The JSON report of the recording `rec`.
fn report(rec: &Path) -> Value {
    let a = Command::new(stallscope())
        .args(["analyze", "-q", "--json", "-"])
        .arg(rec)
        .output()
        .unwrap();
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    serde_json::from_slice(&a.stdout).unwrap()
}

fn counters(recs: &[Value], tid: u64) -> &Value {
    recs.iter()
        .find(|r| r["kind"] == "counters" && r["tid"] == tid)
        .unwrap_or_else(|| panic!("no counters for tid {tid}"))
}

#[test]
fn threads_and_forked_workers_are_recorded_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let report = tmp.path().join("report.json");
    let rec = tmp.path().join("rec");
    record_python(
        &rec,
        &["--min-span-us", "0"],
        "host_io.py",
        &[data.to_str().unwrap(), report.to_str().unwrap()],
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let main_pid = report["main_pid"].as_u64().unwrap();
    let magic = fs_magic(&data);

    // One file per process: the main one and the two workers, which name it.
    let mut by_pid: HashMap<u64, Vec<Value>> = HashMap::new();
    for f in trace_files(&rec) {
        let recs = dump(&f);
        let pid = recs[0]["pid"].as_u64().unwrap();
        assert!(
            by_pid.insert(pid, recs).is_none(),
            "two files for pid {pid}"
        );
    }
    let main = &by_pid[&main_pid];

    for t in report["threads"].as_array().unwrap() {
        let tid = t["tid"].as_u64().unwrap();
        let path = t["path"].as_str().unwrap();
        let calls = t["pread_calls"].as_u64().unwrap();
        let s = spans(main, "pread", path);
        assert_eq!(s.len() as u64, calls, "pread spans of {path}");
        for sp in &s {
            assert_eq!(sp["tid"], tid);
            assert_eq!(sp["pid"], main_pid);
            assert_eq!(sp["bytes"], 65536);
            assert_eq!(sp["fs_magic"], magic.as_str(), "{sp}");
            assert_eq!(sp["class"], "file");
        }
        // The thread did nothing but these preads, so its counter is exact.
        assert_eq!(counters(main, tid)["ops"]["pread"]["calls"], calls);
        assert_eq!(counters(main, tid)["ops"]["pread"]["bytes"], calls * 65536);
    }

    let workers = report["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 2);
    for w in workers {
        let pid = w["pid"].as_u64().unwrap();
        let tid = w["tid"].as_u64().unwrap();
        let path = w["path"].as_str().unwrap();
        let recs = by_pid
            .get(&pid)
            .unwrap_or_else(|| panic!("no trace file for worker {pid}"));
        assert_eq!(recs[0]["ppid"], main_pid, "worker header names its parent");
        let reads = spans(recs, "read", path);
        assert_eq!(
            reads.len() as u64,
            w["read_calls"].as_u64().unwrap(),
            "read spans of {path}"
        );
        assert!(
            reads
                .iter()
                .all(|r| r["tid"] == tid && r["fs_magic"] == magic.as_str())
        );
        let total: u64 = reads.iter().map(|r| r["bytes"].as_u64().unwrap()).sum();
        assert_eq!(total, std::fs::metadata(path).unwrap().len());
        let maps = spans(recs, "mmap", path);
        assert_eq!(maps.len(), 1, "the mmap of {path}");
        assert_eq!(maps[0]["bytes"], w["mmap_bytes"]);
        // Every read() this thread made is a span at threshold 0.
        let all_reads = recs
            .iter()
            .filter(|r| r["kind"] == "span" && r["op"] == "read" && r["tid"] == tid)
            .count();
        assert_eq!(
            counters(recs, tid)["ops"]["read"]["calls"],
            all_reads as u64
        );
        // Worker spans never leak into the parent's file.
        assert!(spans(main, "read", path).is_empty());
    }
}

#[test]
fn sampler_sees_threads_and_names_them() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rec");
    record_python(&rec, &["--sample-hz", "200"], "spin.py", &["0.3"]);
    let recs = dump(&rec);
    let names: Vec<&str> = recs
        .iter()
        .filter(|r| r["kind"] == "thread_name")
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"spinner"), "thread names seen: {names:?}");
    let samples: Vec<&Value> = recs.iter().filter(|r| r["kind"] == "sample").collect();
    assert!(samples.len() >= 10, "only {} samples", samples.len());
    // The spinning thread accumulates CPU time and is seen running.
    let spinner_tid = recs
        .iter()
        .find(|r| r["kind"] == "thread_name" && r["name"] == "spinner")
        .unwrap()["tid"]
        .clone();
    let cpu: Vec<u64> = samples
        .iter()
        .filter(|s| s["tid"] == spinner_tid)
        .map(|s| s["cpu_ns"].as_u64().unwrap())
        .collect();
    assert!(
        cpu.len() >= 5 && cpu.last().unwrap() - cpu[0] > 100_000_000,
        "spinner cpu samples {cpu:?}"
    );
    assert!(
        samples
            .iter()
            .any(|s| s["tid"] == spinner_tid && s["state"] == "R")
    );
}

#[test]
fn spans_below_the_threshold_are_only_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rec");
    let data = tmp.path().join("small.bin");
    std::fs::write(&data, vec![7u8; 4096]).unwrap();
    record_python(
        &rec,
        &["--min-span-us", "100000"],
        "pread_loop.py",
        &[data.to_str().unwrap(), "2000"],
    );
    let recs = dump(&rec);
    assert!(spans(&recs, "pread", data.to_str().unwrap()).is_empty());
    let preads: u64 = recs
        .iter()
        .filter(|r| r["kind"] == "counters")
        .filter_map(|r| r["ops"]["pread"]["calls"].as_u64())
        .sum();
    assert_eq!(preads, 2000);
    // The 0.2 s sleep at the end is above any threshold here and shows.
    assert!(
        recs.iter()
            .any(|r| r["kind"] == "span" && r["op"] == "sleep")
    );
}

/// 64 KiB reads of a cached file take a few µs each, far below a 200 µs
/// threshold: alone, none would be a span. Back to back they are runs, each
/// one record that counts its calls; the report counts every call on the
/// file, and only the time inside them as wait.
#[test]
fn back_to_back_short_reads_are_recorded_as_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rec");
    let data = tmp.path().join("big.bin");
    std::fs::write(&data, vec![3u8; 16 << 20]).unwrap();
    record_python(
        &rec,
        &["--min-span-us", "200"],
        "read_runs.py",
        &[data.to_str().unwrap(), "3000"],
    );
    let recs = dump(&rec);
    let path = data.to_str().unwrap();
    // A call that lost its CPU midway may last past the threshold: a span.
    let long = spans(&recs, "pread", path);
    let long_ns: u64 = long.iter().map(|s| s["dur_ns"].as_u64().unwrap()).sum();
    let runs = runs_on(&recs, path, 200_000);
    let mut calls = 0;
    for r in &runs {
        assert!(r["op"] == "pread" && r["fs"].is_string(), "{r}");
        assert_eq!(
            r["bytes"].as_u64(),
            Some(65536 * r["calls"].as_u64().unwrap())
        );
        calls += r["calls"].as_u64().unwrap();
    }
    // A run breaks where a load slows a call or the gap after it; most
    // calls are in one.
    assert!(
        calls >= 1500,
        "{calls} of 3000 calls in runs, {} spans",
        long.len()
    );
    let r = report(&rec);
    let file = &r["host"]["io_by_file"][0];
    assert_eq!(file["what"], path, "{file}");
    let spans = long.len() as u64;
    assert_eq!(file["calls"].as_u64(), Some(calls + spans), "{file}");
    let busy: u64 = runs.iter().map(|r| r["busy_ns"].as_u64().unwrap()).sum();
    assert_eq!(file["wait_ns"].as_u64(), Some(busy + long_ns), "{file}");
}

/// A file's run ends at its close: a process that then leaves by `_exit`
/// (no exit hook runs) keeps it.
#[test]
fn a_files_run_is_written_at_its_close() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rec");
    let data = tmp.path().join("big.bin");
    std::fs::write(&data, vec![3u8; 16 << 20]).unwrap();
    record_python(
        &rec,
        &["--min-span-us", "100"],
        "read_runs.py",
        &[data.to_str().unwrap(), "300", "exit"],
    );
    let path = data.to_str().unwrap();
    let recs = dump(&rec);
    let in_runs: u64 = runs_on(&recs, path, 100_000)
        .iter()
        .map(|r| r["calls"].as_u64().unwrap())
        .sum();
    // A call that lost its CPU midway is a span, and splits the run; a
    // piece too short to be worth a record is only counted.
    let spans = spans(&recs, "pread", path).len() as u64;
    assert!(
        in_runs + spans >= 150,
        "{in_runs} calls in runs, {spans} spans"
    );
}

/// Files read one after another, open, read, close, from two class folders
/// by turns: runs over files, whose object is the folder that holds both.
#[test]
fn small_files_read_one_after_another_are_runs_on_their_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rec");
    let root = tmp.path().join("images");
    for class in ["a", "b"] {
        std::fs::create_dir_all(root.join(class)).unwrap();
        for k in 0..100 {
            let file = root.join(class).join(format!("{k:03}.jpg"));
            // Large enough that reading it takes most of the loop's time.
            std::fs::write(file, vec![7u8; 256 << 10]).unwrap();
        }
    }
    record_python(
        &rec,
        &["--min-span-us", "300"],
        "folder_reads.py",
        &[root.to_str().unwrap(), "3"],
    );
    let recs = dump(&rec);
    let folder = root.to_str().unwrap();
    let (mut calls, mut files) = (0, 0);
    for r in runs_on(&recs, folder, 300_000) {
        assert!(r["op"] == "read" && r["class"] == "dir", "{r}");
        // One read of data a file (the read at its end returns nothing).
        assert_eq!(
            r["bytes"].as_u64(),
            Some((256 << 10) * r["files"].as_u64().unwrap()),
            "{r}"
        );
        calls += r["calls"].as_u64().unwrap();
        files += r["files"].as_u64().unwrap();
    }
    // A load may break a run, or slow a read into a span; most files are
    // in runs.
    assert!(files >= 300, "{files} of 600 files in runs over files");
    assert_eq!(calls, files, "one read a file");
    let r = report(&rec);
    let row = &r["host"]["io_by_file"][0];
    assert_eq!(row["what"], format!("{folder}/*"), "{row}");
}

#[test]
fn single_threaded_programs_get_samples_without_an_extra_thread() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rec");
    let data = tmp.path().join("d.bin");
    std::fs::write(&data, vec![3u8; 4096]).unwrap();
    let out = record_python(
        &rec,
        &[],
        "single_thread.py",
        &[data.to_str().unwrap(), "0.4"],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "1",
        "the shim started a thread"
    );
    let recs = dump(&rec);
    let pid = recs[0]["pid"].as_u64().unwrap();
    let cpu: Vec<u64> = recs
        .iter()
        .filter(|r| r["kind"] == "sample" && r["tid"] == pid)
        .map(|r| r["cpu_ns"].as_u64().unwrap())
        .collect();
    assert!(
        cpu.len() >= 20,
        "{} self-samples in 0.4 s at 100 Hz",
        cpu.len()
    );
    assert!(
        cpu.windows(2).all(|w| w[0] <= w[1]) && cpu.last().unwrap() - cpu[0] > 200_000_000,
        "{cpu:?}"
    );
    assert!(
        recs.iter()
            .any(|r| r["kind"] == "thread_name" && r["tid"] == pid)
    );
    assert!(
        recs.iter().any(|r| r["kind"] == "clock"),
        "clock pairs are still recorded"
    );
}

/// Issue 18, item 2: a process image that records nothing (here `/bin/true`,
/// and a wrapper that only execs it) makes no trace file; one that records
/// makes a complete one, its start pair first and its command line read.
#[test]
fn only_processes_that_record_make_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rec");
    let shimmed = |c: &mut Command| {
        c.env("LD_PRELOAD", shim())
            .env("STALLSCOPE_OUT", &rec)
            .env("STALLSCOPE_GPU", "0");
    };
    for args in [&["/bin/true"][..], &["sh", "-c", "exec /bin/true"]] {
        let mut c = Command::new(args[0]);
        c.args(&args[1..]);
        shimmed(&mut c);
        let out = c.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        assert!(out.stderr.is_empty(), "{out:?}");
    }
    assert!(rec.is_dir(), "the output directory is made at start-up");
    let left: Vec<_> = std::fs::read_dir(&rec).unwrap().flatten().collect();
    assert!(
        left.is_empty(),
        "files of processes that recorded nothing: {left:?}"
    );

    let mut c = Command::new("sh");
    c.args(["-c", "exec /bin/sleep 0.01"]);
    shimmed(&mut c);
    assert!(c.status().unwrap().success());
    let files = trace_files(&rec);
    assert_eq!(files.len(), 1, "{files:?}");
    let recs = dump(&files[0]);
    assert_eq!(recs[0]["kind"], "header");
    assert_eq!(
        recs[0]["cmdline"],
        serde_json::json!(["/bin/sleep", "0.01"])
    );
    let first = recs
        .iter()
        .find(|r| r["kind"] != "header" && r["kind"] != "string")
        .unwrap();
    assert_eq!(
        first["kind"], "clock",
        "the start pair comes first: {first}"
    );
    assert!(
        recs.iter().any(|r| r["kind"] == "span"
            && r["op"] == "sleep"
            && r["dur_ns"].as_u64() >= Some(9_000_000)),
        "the sleep is recorded"
    );
    assert!(
        recs.iter()
            .any(|r| r["kind"] == "gpu_status" && r["status"] == 4),
        "GPU capture turned off is recorded once the file exists"
    );
}

/// Issue 18, item 2: a process image that makes no hooked call (`/bin/true`,
/// a wrapper that only execs) pays for the loader and a few system calls:
/// the shim allocates nothing (no brk, no getrandom for malloc's start-up),
/// maps no trace, calibrates no clock against the kernel, starts no thread
/// and reads nothing under /proc. Recording begins at the first hooked call.
#[test]
fn a_process_that_makes_no_hooked_call_costs_only_the_loader() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rec");
    let log = tmp.path().join("strace.log");
    // -E: the environment of /bin/true alone, not of strace.
    let out = Command::new("strace")
        .arg("-f")
        .arg("-o")
        .arg(&log)
        .arg("-E")
        .arg(format!("LD_PRELOAD={}", shim().display()))
        .arg("-E")
        .arg(format!("STALLSCOPE_OUT={}", rec.display()))
        .args(["-E", "STALLSCOPE_GPU=0", "/bin/true"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let calls = std::fs::read_to_string(&log).unwrap();
    // Past the loader: from the first mprotect of relocation on.
    let after_load = &calls[calls.find("mprotect").expect("the loader ran")..];
    for bad in [
        "getrandom",
        "brk(0x",
        "MAP_NORESERVE",
        "clone",
        "/proc/",
        "uname",
    ] {
        assert!(
            !after_load.contains(bad),
            "`{bad}` after the loader:\n{after_load}"
        );
    }
    assert!(rec.is_dir(), "the output directory is made at start-up");
    assert!(trace_files(&rec).is_empty());
}

/// A file created after another was deleted often gets its inode (ext4):
/// its writes are its own, not the deleted file's; and reopening a file with
/// O_CREAT keeps its object.
#[test]
fn a_new_file_on_a_deleted_files_inode_is_another_file() {
    // On the project's disk: /tmp may be a tmpfs, which never reuses inodes.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let rec = tmp.path().join("rec");
    let out = record_python(
        &rec,
        &["--min-span-us", "0"],
        "reused_inode.py",
        &[tmp.path().to_str().unwrap()],
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("reused"), "the workload did not run: {said}");
    let recs = dump(&rec);
    let path = |name: &str| tmp.path().join(name).to_str().unwrap().to_string();
    let (old, new) = (
        spans(&recs, "write", &path("old.bin")),
        spans(&recs, "write", &path("new.bin")),
    );
    assert_eq!(old.len(), 4, "writes of old.bin");
    assert_eq!(new.len(), 5, "writes of new.bin");
    // Only where the inode was reused does this test the shim.
    assert!(
        !said.contains("not reused"),
        "the filesystem did not reuse the inode; the test proves nothing here"
    );
    let objects = recs
        .iter()
        .filter(|r| r["kind"] == "object" && r["path"] == path("new.bin"))
        .count();
    assert_eq!(objects, 1, "new.bin reopened with O_CREAT is one object");
}
