//! The CLI on the checked-in recordings: `analyze` outputs in one pass, the
//! report schema, `check` exit codes, and errors on bad input.

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output};

use common::*;
use serde_json::Value;

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("traces")
        .join(name)
}

fn cli(args: &[&str]) -> Output {
    Command::new(stallscope()).args(args).output().unwrap()
}

#[test]
fn analyze_writes_json_markdown_and_perfetto_in_one_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let (json, md, pf) = (
        tmp.path().join("r.json"),
        tmp.path().join("r.md"),
        tmp.path().join("r.pftrace"),
    );
    let trace = sample("dataloader-cpu");
    let out = Command::new(stallscope())
        .arg("analyze")
        .arg(&trace)
        .arg("--json")
        .arg(&json)
        .arg("--markdown")
        .arg(&md)
        .arg("--perfetto")
        .arg(&pf)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("data/cpu") && text.contains("Fixes, by estimated saving"),
        "{text}"
    );
    assert!(text.contains("ui.perfetto.dev"), "{text}");

    let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(r["schema"], "stallscope.report.v1");
    assert_eq!(r["source"], "native");
    assert!(r["wall_ns"].as_i64().unwrap() > 0);
    assert_eq!(r["window_ns"].as_array().unwrap().len(), 2);
    assert_eq!(r["steps"]["count"], 16);
    assert_eq!(r["processes"]["workers"], 1);
    let dev = &r["devices"][0];
    let by_cause: i64 = dev["idle_by_cause_ns"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_i64().unwrap())
        .sum();
    assert_eq!(
        by_cause,
        dev["idle_ns"].as_i64().unwrap(),
        "causes sum to the idle time"
    );
    for k in [
        "data", "io", "cpu", "memory", "sync", "transfer", "launch", "other",
    ] {
        assert!(
            dev["idle_by_cause_ns"].get(k).is_some(),
            "missing cause {k}"
        );
    }
    for k in ["fp32", "tf32", "fp16", "bf16", "fp8", "int8", "non_gemm"] {
        assert!(
            dev["busy_by_precision_ns"].get(k).is_some(),
            "missing precision {k}"
        );
    }
    let f = &r["findings"][0];
    for k in [
        "cause",
        "sub_cause",
        "share_pct",
        "est_saving_ns",
        "est_step_ns_after",
        "evidence",
        "fix",
    ] {
        assert!(f.get(k).is_some(), "finding lacks {k}");
    }
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.contains("| # | cause |") && md.contains("data/cpu"),
        "{md}"
    );
    let pf = std::fs::read(&pf).unwrap();
    assert!(pf.len() > 1000);
}

#[test]
fn check_exit_codes() {
    let trace = sample("item-sync");
    let t = trace.to_str().unwrap();
    let ok = cli(&["check", t, "--max-idle", "60"]);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );

    let broken = cli(&[
        "check",
        t,
        "--max-idle",
        "5",
        "--max-cause",
        "sync=5",
        "--max-cause",
        "data=50",
    ]);
    assert_eq!(broken.status.code(), Some(1));
    let out = String::from_utf8_lossy(&broken.stdout);
    assert!(
        out.contains("FAIL: GPU idle") && out.contains("> --max-idle 5"),
        "{out}"
    );
    assert!(
        out.contains("FAIL: sync idle") && out.contains("ok: data idle"),
        "{out}"
    );

    for bad in [
        vec!["check", t, "--max-cause", "gremlins=5"],
        vec!["check", t, "--max-cause", "sync"],
        vec!["check", t],
        vec!["check", "/nonexistent/run", "--max-idle", "5"],
    ] {
        let out = cli(&bad);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{bad:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("error"),
            "{bad:?}"
        );
    }
}

#[test]
fn bad_inputs_give_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let junk = tmp.path().join("junk.json");
    std::fs::write(&junk, b"{\"traceEvents\": [ {\"ph\": \"X\", \"ts\": 1, ").unwrap();
    let out = cli(&["analyze", junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("junk.json"), "{err}");

    // A gzip trace cut short: one line with the file, the offset and the
    // cause, said once.
    let cut = tmp.path().join("cut.json.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let events = (0..20_000)
        .map(|i| format!("{{\"ph\": \"X\", \"name\": \"op{i}\", \"pid\": 1, \"tid\": 1, \"ts\": {i}, \"dur\": 1}}"))
        .collect::<Vec<_>>()
        .join(",\n");
    gz.write_all(format!("{{\"traceEvents\": [\n{events}\n]}}").as_bytes())
        .unwrap();
    let bytes = gz.finish().unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = cli(&["analyze", cut.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cut.json.gz: corrupt gzip data near compressed byte"),
        "{err}"
    );
    assert_eq!(err.matches("deflate").count(), 1, "{err}");

    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = cli(&["analyze", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("holds neither"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A trace one folder down (as TraceLens keeps them) is named, not found.
    let sub = empty.join("rank0");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(
        sub.join("t.json"),
        r#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2}]}"#,
    )
    .unwrap();
    let out = cli(&["analyze", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not searched recursively")
            && err.contains(&format!("{} holds traces: pass it", sub.display())),
        "{err}"
    );
    // So is a native recording kept beside others in a run folder.
    let runs = tmp.path().join("runs");
    let rec_copy = runs.join("run1");
    std::fs::create_dir_all(&rec_copy).unwrap();
    for f in std::fs::read_dir(sample("dataloader-cpu")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, rec_copy.join(f.file_name().unwrap())).unwrap();
    }
    let out = cli(&["analyze", runs.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{} holds traces: pass it", rec_copy.display())),
        "{err}"
    );

    // A damaged recording still analyzes, with a warning naming the offset.
    let rec = tmp.path().join("rec");
    std::fs::create_dir(&rec).unwrap();
    for f in trace_files(&sample("item-sync")) {
        let mut bytes = std::fs::read(&f).unwrap();
        // The first record of the second chunk gets an impossible length.
        let chunks_offset = u64::from_le_bytes(bytes[32..40].try_into().unwrap()) as usize;
        let at = chunks_offset + 64 * 1024 + 64;
        bytes[at..at + 2].copy_from_slice(&3u16.to_le_bytes());
        std::fs::write(rec.join(f.file_name().unwrap()), bytes).unwrap();
    }
    let out = cli(&["analyze", rec.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The text wraps at 100 columns: compare with whitespace collapsed.
    let text = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        text.contains("warning: skipped") && text.contains("byte offset"),
        "{text}"
    );
}

/// A run folder holds other JSON beside its traces (configs, reports):
/// that is passed over, while a trace whose head is damaged is read, so that
/// its damage is named rather than the rank silently left out.
#[test]
fn a_run_folder_passes_over_other_json_but_not_a_damaged_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path();
    std::fs::write(
        run.join("rank0.json"),
        r#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2}]}"#,
    )
    .unwrap();
    std::fs::write(run.join("config.json"), r#"{"lr": 0.1, "epochs": 3}"#).unwrap();
    let out = cli(&["analyze", run.to_str().unwrap(), "--json", "-"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report.is_object(), "{report}");

    // Gzip's magic, then no deflate stream: nothing of it can be sniffed.
    std::fs::write(
        run.join("rank1.json.gz"),
        [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff],
    )
    .unwrap();
    let out = cli(&["analyze", run.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rank1.json.gz"), "{err}");
    assert!(!err.contains("config.json"), "{err}");
}

/// Another tool's export is named for what it is, with what to record
/// instead, and an empty file as empty, rather than only "not a trace".
#[test]
fn another_tools_export_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let nsys = tmp.path().join("report.sqlite");
    std::fs::write(&nsys, b"SQLite format 3\0\x10\x00\x01\x01").unwrap();
    let rocprof = tmp.path().join("908_results.json");
    std::fs::write(
        &rocprof,
        r#"{"rocprofiler-sdk-tool": [{"metadata": {"pid": 908}}]}"#,
    )
    .unwrap();
    let empty = tmp.path().join("rank0.json");
    std::fs::write(&empty, b"").unwrap();
    let out = cli(&["analyze", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rank0.json: the file is empty"), "{err}");
    for (path, kind) in [(&nsys, "Nsight Systems"), (&rocprof, "rocprofv3")] {
        let out = cli(&["analyze", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(path.to_str().unwrap())
                && err.contains(kind)
                && err.contains("stallscope record"),
            "{err}"
        );
    }
}

#[test]
fn help_teaches() {
    let out = cli(&["--help"]);
    let h = String::from_utf8_lossy(&out.stdout);
    assert!(
        h.contains("record") && h.contains("analyze") && h.contains("check") && h.contains("dump")
    );
    let out = cli(&["record", "--help"]);
    let h = String::from_utf8_lossy(&out.stdout);
    assert!(h.contains("--min-span-us") && h.contains("--flight"), "{h}");
}

/// A Kineto trace whose process is named with terminal escapes (set the
/// window title, clear the screen), and one kernel.
fn hostile_trace(dir: &std::path::Path) -> PathBuf {
    let p = dir.join("evil.json");
    let doc = serde_json::json!({
        "schemaVersion": 1,
        "traceEvents": [
            {"ph": "M", "name": "process_name", "pid": 7, "tid": 0,
             "args": {"name": "\u{1b}]0;PWN\u{7}\u{1b}[2Jtrain.py"}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7,
             "ts": 100, "dur": 5, "args": {"correlation": 1}},
            {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7,
             "ts": 110, "dur": 50, "args": {"correlation": 1, "device": 0, "stream": 7}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7,
             "ts": 300, "dur": 5, "args": {"correlation": 2}},
            {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7,
             "ts": 310, "dur": 50, "args": {"correlation": 2, "device": 0, "stream": 7}}
        ]
    });
    std::fs::write(&p, doc.to_string()).unwrap();
    p
}

#[test]
fn json_to_stdout_is_pure_json_and_text_escapes_control_characters() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = hostile_trace(tmp.path());
    let md = tmp.path().join("r.md");
    let out = Command::new(stallscope())
        .arg("analyze")
        .arg(&trace)
        .args(["--json", "-", "--markdown"])
        .arg(&md)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // stdout holds the JSON and nothing else.
    let r: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(r["schema"], "stallscope.report.v1");
    assert!(
        r["command"].as_str().unwrap().contains('\u{1b}'),
        "the JSON keeps the name"
    );
    // The text went to stderr, escaped; so did nothing raw reach the Markdown.
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("stallscope ·"), "{text}");
    assert!(text.contains("\\u{1b}]0;PWN\\u{7}"), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    assert!(text.contains("GPU 0 (unknown model)"), "{text}");
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(!md.contains('\u{1b}') && md.contains("\\u{1b}"), "{md:?}");
}

/// All eight DLRM ranks at once: each rank's `comm/wait` fix names the rank
/// the others wait for (rank 7), which one rank alone cannot, and the
/// Markdown leads with the ranks compared.
#[test]
fn ranks_together_name_the_rank_the_others_wait_for() {
    let dir = kineto_corpus().join("param/et_replay/tests/inputs/dlrm_kineto");
    let tmp = tempfile::tempdir().unwrap();
    let md = tmp.path().join("ranks.md");
    let out = cli(&[
        "analyze",
        dir.to_str().unwrap(),
        "--json",
        "-",
        "--markdown",
        md.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The Markdown starts with the ranks side by side and the one waited for.
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.starts_with("## stallscope: 8 ranks\n"), "{md}");
    assert!(md.contains("| 7 (slowest) | 24% |"), "{md}");
    assert!(
        md.contains("Slowest: rank 7, the others waited 45 ms for it at collectives"),
        "{md}"
    );
    assert_eq!(md.matches("## stallscope: ").count(), 9, "{md}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["comparison"]["slowest"]["rank"], 7);
    let fixes: Vec<(usize, String)> = v["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            let all = r["findings"].as_array().unwrap().iter();
            all.chain(r["minor"].as_array().unwrap())
                .filter(|f| f["cause"] == "comm" && f["sub_cause"] == "wait")
                .map(move |f| (i, f["fix"].as_str().unwrap().to_string()))
        })
        .collect();
    assert!(fixes.iter().any(|(i, _)| *i == 1), "{fixes:?}");
    for (i, fix) in fixes {
        let want = if i == 7 {
            "the other ranks wait for this one"
        } else {
            "rank 7 is the one"
        };
        assert!(fix.starts_with(want), "rank {i}: {fix}");
    }
}
