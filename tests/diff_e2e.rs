//! `stallscope diff` end to end: a gpusim scenario recorded under the shim
//! before and after its fix, the prediction line checked against the two
//! reports; Kineto traces and saved reports as inputs; bad inputs named.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use common::*;
use serde_json::Value;
use stallscope_analyzer::output::text::dur;

fn cli(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(stallscope()).args(args).output().unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// Records `scenario.py NAME [fixed]` on gpusim, as tests/scenarios_e2e.rs
/// does, and returns the recording and its saved JSON report.
fn record(dir: &Path, scenario: &str, fixed: bool) -> (PathBuf, PathBuf) {
    let gpusim = built_lib("libgpusim.so");
    let name = format!("{scenario}{}", if fixed { "-fixed" } else { "" });
    let rec = dir.join(&name);
    let mut cmd = Command::new(stallscope());
    cmd.arg("record")
        .arg("-o")
        .arg(&rec)
        .arg("--cupti")
        .arg(&gpusim)
        .arg("--")
        .arg(python())
        .arg(workload("scenario.py"))
        .arg(&gpusim)
        .arg(scenario);
    if fixed {
        cmd.arg("fixed");
    }
    ok(&cmd.env("SCENARIO_DIR", dir).output().unwrap());
    let json = dir.join(format!("{name}.json"));
    ok(&cli(&[
        "analyze".as_ref(),
        rec.as_os_str(),
        "-q".as_ref(),
        "--json".as_ref(),
        json.as_os_str(),
    ]));
    (rec, json)
}

fn corpus_kineto(rel: &str) -> PathBuf {
    let p = kineto_corpus().join(rel);
    assert!(p.is_file(), "{} is missing from the corpus", p.display());
    p
}

/// The scenarios measure time: two at once on a small machine would create
/// the CPU contention they are not about.
static SERIAL: Mutex<()> = Mutex::new(());

/// A scenario recorded before and after its fix, and their diff.
struct Pair {
    tmp: tempfile::TempDir,
    slow: PathBuf,
    slow_json: PathBuf,
    fixed: PathBuf,
    fixed_json: PathBuf,
    md: PathBuf,
    html: PathBuf,
    d: Value,
    line: String,
    before: i64,
    measured: i64,
}

/// Records `scenario` and its fix, whose top finding in BEFORE is
/// `cause/sub`; diffs them, and checks that the prediction line prints the
/// error of that finding's prediction as the two reports give it, and that
/// the prediction holds.
fn prediction_holds(scenario: &str, cause: &str, sub: &str) -> Pair {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (slow, slow_json) = record(tmp.path(), scenario, false);
    let (fixed, fixed_json) = record(tmp.path(), scenario, true);
    let (b, a) = (read_json(&slow_json), read_json(&fixed_json));

    let top = &b["findings"][0];
    assert_eq!(
        (top["cause"].as_str(), top["sub_cause"].as_str()),
        (Some(cause), Some(sub)),
        "{}",
        b["findings"]
    );
    let before = b["steps"]["mean_ns"].as_i64().unwrap();
    let measured = before - a["steps"]["mean_ns"].as_i64().unwrap();

    let diff_json = tmp.path().join("diff.json");
    let (md, html) = (tmp.path().join("diff.md"), tmp.path().join("diff.html"));
    let text = ok(&cli(&[
        "diff".as_ref(),
        slow.as_os_str(),
        fixed.as_os_str(),
        "--json".as_ref(),
        diff_json.as_os_str(),
        "--markdown".as_ref(),
        md.as_os_str(),
        "--html".as_ref(),
        html.as_os_str(),
    ]));
    let d = read_json(&diff_json);
    let p = &d["prediction"];
    // The top finding is resolved. On a loaded machine a minor finding (CPU
    // contention) may come and go with it: then every BEFORE finding was
    // fixed, and the prediction is the report's combined estimate.
    let fixes: Vec<&str> = p["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(
        fixes.first().copied(),
        Some(format!("{cause}/{sub}").as_str()),
        "{p}"
    );
    let (after, basis) = match p["basis"].as_str().unwrap() {
        "finding" => (top["est_step_ns_after"].as_i64().unwrap(), ""),
        "combined" => (
            b["combined"]["est_step_ns_after"].as_i64().unwrap(),
            ", combined estimate",
        ),
        other => panic!("the {other} basis: {p}"),
    };
    let predicted = before - after;
    let error = 100.0 * (predicted - measured).abs() as f64 / measured as f64;
    eprintln!(
        "{scenario}: step {} -> {}; predicted saving {}, measured {}: error {error:.1}%",
        dur(before),
        dur(before - measured),
        dur(predicted),
        dur(measured)
    );
    let line = format!(
        "{} {} predicted {} a step ({} -> {}{basis}); measured {} ({} -> {}): error {error:.1}%",
        fixes.join(" + "),
        if fixes.len() == 1 { "fix" } else { "fixes" },
        dur(predicted),
        dur(before),
        dur(before - predicted),
        dur(measured),
        dur(before),
        dur(before - measured)
    );
    // The text wraps the line; compare its words.
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words(&text).contains(&line), "want {line:?} in:\n{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");

    assert_eq!(d["schema"], "stallscope.diff.v1");
    assert_eq!(p["predicted_saving_ns"].as_i64(), Some(predicted));
    assert_eq!(p["measured_saving_ns"].as_i64(), Some(measured));
    assert!((p["error_pct"].as_f64().unwrap() - error).abs() < 1e-9);
    // The fix worked and was worth about what BEFORE said (the scenario's
    // what-if is within 15% of the fixed step; here of the saving).
    assert!(
        measured > before / 3,
        "the fix saved little: {}",
        dur(measured)
    );
    assert!(error <= 30.0, "{line}");
    Pair {
        tmp,
        slow,
        slow_json,
        fixed,
        fixed_json,
        md,
        html,
        d,
        line,
        before,
        measured,
    }
}

/// The slow DataLoader worker (90 ms of CPU a batch for 40 ms of GPU work)
/// against the fixed one; data/cpu is resolved.
#[test]
fn diff_of_a_data_bound_run_and_its_fix_checks_the_prediction() {
    let Pair {
        tmp,
        slow,
        slow_json,
        fixed,
        fixed_json,
        md,
        html,
        d,
        line,
        before,
        measured,
    } = prediction_holds("data_cpu", "data", "cpu");
    let _keep = &tmp;
    // data/cpu is resolved, and data idle time per step fell.
    let resolved: Vec<&str> = d["resolved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["cause"].as_str().unwrap())
        .collect();
    assert!(resolved.contains(&"data"), "{}", d["resolved"]);
    let data = d["idle_per_step"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["cause"] == "data")
        .unwrap();
    assert!(data["delta_ns"].as_i64().unwrap() < -before / 4, "{data}");
    assert!(d["mean_step"]["delta_ns"].as_i64() == Some(-measured));

    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains(&line) && md.contains("| mean step |"), "{md}");
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(
        html.starts_with("<!doctype html>") && html.contains("error "),
        "{html}"
    );
    for external in ["http:", "https:", "<script", "<link", "@import", "url("] {
        assert!(!html.contains(external), "the page loads {external}");
    }

    // Saved reports in place of the recordings, and one of each: the same
    // comparison.
    for (x, y) in [
        (slow_json.as_os_str(), fixed_json.as_os_str()),
        (slow.as_os_str(), fixed_json.as_os_str()),
    ] {
        let out = ok(&cli(&[
            "diff".as_ref(),
            x,
            y,
            "-q".as_ref(),
            "--json".as_ref(),
            "-".as_ref(),
        ]));
        let again: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(again, d, "diff {x:?} {y:?}");
    }

    // `check` with that report as the baseline: the fix is no regression,
    // the slow run is one, against the fixed baseline. The fix is checked at
    // 30%: its step halves, but on a loaded machine its host wakes late
    // after each sync, and sync idle went from 1 ms to 2-3 ms of the 88 ms
    // step (over the 0.9 ms that 10% allows a small cause).
    let out = cli(&[
        "check".as_ref(),
        fixed.as_os_str(),
        "--baseline".as_ref(),
        slow_json.as_os_str(),
        "--max-regression".as_ref(),
        "30".as_ref(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = cli(&[
        "check".as_ref(),
        slow.as_os_str(),
        "--baseline".as_ref(),
        fixed_json.as_os_str(),
        "--max-regression".as_ref(),
        "10".as_ref(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("FAIL: mean step") && stdout.contains("FAIL: data idle"),
        "{stdout}"
    );
}

/// num_workers=0 (the loop loads each batch, 40 ms of CPU) against 4
/// DataLoader workers at the same cost per batch.
#[test]
fn diff_of_a_loop_without_workers_and_with_four_checks_the_prediction() {
    let p = prediction_holds("main_loader", "data", "cpu");
    // One fix, judged by its own estimate; beside other load a CPU-contention
    // finding may also come and go, and then the prediction is the combined one.
    let pred = &p.d["prediction"];
    let fixes = pred["fixes"].as_array().unwrap();
    let want = if fixes.len() == 1 {
        "finding"
    } else {
        assert!(
            fixes[1..].iter().all(|f| f == "cpu/contention"),
            "{}",
            p.line
        );
        "combined"
    };
    assert_eq!(pred["basis"], want, "{}", p.line);
}

/// HolisticTraceAnalysis's trace-diff pair (the same model, 6 ProfilerSteps
/// each, on an A100 and a V100), as the profiler wrote them. (The V100 run's
/// first step once went to start-up: its graph launches, 1-1.6 ms on every
/// replay, were taken for lazy module loading.)
#[test]
fn diff_of_two_kineto_traces() {
    let before =
        corpus_kineto("HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz");
    let after = corpus_kineto("HolisticTraceAnalysis/tests/data/trace_diff/test/test.json.gz");
    let out = ok(&cli(&[
        "diff".as_ref(),
        before.as_os_str(),
        after.as_os_str(),
        "--json".as_ref(),
        "-".as_ref(),
    ]));
    let d: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(d["before"]["source"], "kineto");
    assert_eq!(d["after"]["source"], "kineto");
    assert_eq!(d["before"]["steps"], 6);
    assert_eq!(d["after"]["steps"], 6);
    let mean = &d["mean_step"];
    let (b, a) = (
        mean["before_ns"].as_i64().unwrap(),
        mean["after_ns"].as_i64().unwrap(),
    );
    assert!(b > 0 && a > b, "the V100 run is the slower: {mean}");
    assert_eq!(mean["delta_ns"].as_i64().unwrap(), a - b);
    let pct = mean["pct"].as_f64().unwrap();
    assert!((pct - 100.0 * (a - b) as f64 / b as f64).abs() < 1e-9);
    // Idle time per step: each cause's before and after add up to the total.
    let causes = d["idle_per_step"].as_array().unwrap();
    assert!(!causes.is_empty());
    for side in ["before_ns", "after_ns"] {
        let sum: i64 = causes.iter().map(|c| c[side].as_i64().unwrap()).sum();
        let total = d["idle_per_step_total"][side].as_i64().unwrap();
        assert!(
            (sum - total).abs() <= causes.len() as i64,
            "{side}: {sum} vs {total}"
        );
    }
    // The step grew: whatever BEFORE's findings promised, nothing was saved.
    if let Some(p) = d["prediction"].as_object() {
        assert!(p["error_pct"].is_null(), "{p:?}");
    }
    // The text says so too, and fits 100 columns.
    let text = ok(&cli(&[
        "diff".as_ref(),
        before.as_os_str(),
        after.as_os_str(),
    ]));
    assert!(text.contains("mean step") && text.contains('+'), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    // The same diff from the saved reports of the two traces.
    let tmp = tempfile::tempdir().unwrap();
    let mut saved = Vec::new();
    for (t, name) in [(&before, "b.json"), (&after, "a.json")] {
        let p = tmp.path().join(name);
        ok(&cli(&[
            "analyze".as_ref(),
            t.as_os_str(),
            "-q".as_ref(),
            "--json".as_ref(),
            p.as_os_str(),
        ]));
        saved.push(p);
    }
    let again = ok(&cli(&[
        "diff".as_ref(),
        saved[0].as_os_str(),
        saved[1].as_os_str(),
        "-q".as_ref(),
        "--json".as_ref(),
        "-".as_ref(),
    ]));
    assert_eq!(serde_json::from_str::<Value>(&again).unwrap(), d);
}

/// Unreadable sides exit 2 and name the file and what is wrong with it.
#[test]
fn diff_names_a_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let good = corpus_kineto("kineto/docs/traces/before_fix_trace.json");
    let garbage = tmp.path().join("garbage.bin");
    std::fs::write(&garbage, b"not a trace at all").unwrap();
    let partial = tmp.path().join("partial.json");
    std::fs::write(
        &partial,
        br#"{"schema": "stallscope.report.v1", "source": "native", "name": "x"}"#,
    )
    .unwrap();
    let future = tmp.path().join("future.json");
    std::fs::write(&future, br#"{"schema": "stallscope.report.v2"}"#).unwrap();
    let ranks = corpus_kineto(
        "param/et_replay/tests/inputs/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json.gz",
    );
    let ranks = ranks.parent().unwrap();
    let missing = tmp.path().join("missing");
    for (bad, says) in [
        (&garbage, "not a stallscope trace"),
        (&partial, "missing field"),
        (&future, "stallscope.report.v2"),
        (&ranks.to_path_buf(), "ranks"),
        (&missing, "no such file"),
    ] {
        for args in [[bad, &good], [&good, bad]] {
            let out = cli(&["diff".as_ref(), args[0].as_os_str(), args[1].as_os_str()]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{bad:?}: {err}");
            assert!(
                err.contains(&bad.display().to_string()) && err.contains(says),
                "{bad:?}: want {says:?} in {err}"
            );
        }
    }
}
