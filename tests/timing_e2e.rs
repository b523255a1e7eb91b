//! Host span lengths stay right when every core is busy from the traced
//! process's first millisecond (issue 18, item 3).
//!
//! Busy loops (2x the cores) start before the traced process and run until it
//! ends. It makes sleeps of 2, 4 and 8 ms and times each call itself. The
//! recorded span must lie inside the interval the program saw around the
//! call, and a relative sleep, which cannot end early, must last at least
//! its request: a tick rate off by 1% fails one of the two.
//!
//! An absolute-deadline sleep (what Python's time.sleep uses) starts late
//! when the thread is preempted between reading the clock and making the
//! call; its span then rightly covers only the call (the rest is CPU
//! contention, which the samples' run-queue delay shows). It must end at
//! the deadline and start no earlier than the program's clock read.

mod common;

use std::process::{Child, Command, Stdio};

use common::*;
use serde_json::Value;

/// Busy-loop processes, killed when dropped.
struct Load(Vec<Child>);

impl Load {
    fn start() -> Load {
        let n = std::thread::available_parallelism().map_or(2, |n| n.get()) * 2;
        let kids = (0..n)
            .map(|_| {
                Command::new("sh")
                    .args(["-c", "while :; do :; done"])
                    .stdin(Stdio::null())
                    .spawn()
                    .expect("a busy loop")
            })
            .collect();
        // Let them take the cores before the traced process starts.
        std::thread::sleep(std::time::Duration::from_millis(200));
        Load(kids)
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for k in &mut self.0 {
            let _ = k.kill();
            let _ = k.wait();
        }
    }
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn sleep_spans_are_right_under_full_cpu_load() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rec");
    let report = tmp.path().join("sleeps.json");
    {
        let _load = Load::start();
        record_python(
            &rec,
            &["--no-gpu"],
            "timed_sleeps.py",
            &[report.to_str().unwrap()],
        );
    }
    let report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let tid = u(&report["tid"]);
    let files = trace_files(&rec);
    assert_eq!(files.len(), 1, "{files:?}");
    let recs = dump(&files[0]);
    let sleeps: Vec<(u64, u64)> = recs
        .iter()
        .filter(|r| r["kind"] == "span" && r["op"] == "sleep" && u(&r["tid"]) == tid)
        .map(|r| (u(&r["ts_ns"]), u(&r["dur_ns"])))
        .collect();
    let calls = report["calls"].as_array().unwrap();
    assert_eq!(sleeps.len(), calls.len(), "one span per sleep: {sleeps:?}");
    // A few microseconds for the clock reads on either side of a call.
    const SLACK_NS: f64 = 5_000.0;
    // The interpreter's way from its clock read into the call (ctypes).
    const CALL_IN_NS: f64 = 50_000.0;
    // How late each span starts after the program's clock read, against
    // its length.
    let mut late = Vec::new();
    for c in calls {
        let (a, b, ns) = (u(&c["a"]), u(&c["b"]), u(&c["ns"]) as f64);
        let &(ts, dur) = sleeps
            .iter()
            .find(|(ts, dur)| ts + dur > a && ts + dur <= b)
            .unwrap_or_else(|| panic!("no sleep span ends inside the call {c}: {sleeps:?}"));
        let (end, durf) = (ts + dur, dur as f64);
        let seen = (b - a) as f64;
        late.push((ts as f64 - a as f64 - CALL_IN_NS) / durf);
        assert!(
            durf <= seen * 1.01 + SLACK_NS,
            "span of {dur} ns is longer than the {seen} ns the program saw: {c}"
        );
        assert!(
            ts as f64 + SLACK_NS >= a as f64 - durf * 0.01,
            "span starts at {ts}, before the program's clock read {a}: {c}"
        );
        if c["kind"] == "relative" {
            assert!(
                durf >= ns * 0.99 - SLACK_NS,
                "a {ns} ns sleep recorded as {dur} ns: {c}"
            );
        } else {
            assert!(
                end + SLACK_NS as u64 >= u(&c["deadline"]),
                "an absolute sleep span ends at {end}, before its deadline: {c}"
            );
        }
    }
    // A span starts when the call does: after the program's clock read by
    // the interpreter's way into the call (tens of microseconds on a loaded
    // machine), more when the thread was preempted on that way, which the
    // busy loops make possible but rare. A span's end is read from
    // CLOCK_MONOTONIC and its start is that end less its length: a tick rate
    // off by 1% moves every start by 1% of the length, and the median tells.
    late.sort_by(f64::total_cmp);
    let median = late[late.len() / 2];
    assert!(
        median <= 0.01,
        "spans start {:.2}% of their length late (median): {late:?}",
        median * 100.0
    );
}
