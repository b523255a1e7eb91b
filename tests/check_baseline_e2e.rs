//! `stallscope check --baseline`: exit 0 within the allowance, 1 naming each
//! broken limit, 2 for unreadable input or bad arguments. The baselines are
//! the checked-in recordings' own reports, some edited to be faster.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use serde_json::Value;

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces")
        .join(name)
}

fn check(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, String) {
    let out: Output = Command::new(stallscope())
        .arg("check")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// item-sync's saved report, and a copy edited by `edit`.
fn baselines(dir: &Path, edit: impl Fn(&mut Value)) -> (PathBuf, PathBuf) {
    let own = dir.join("own.json");
    let out = Command::new(stallscope())
        .arg("analyze")
        .arg(sample("item-sync"))
        .arg("-q")
        .arg("--json")
        .arg(&own)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Value = serde_json::from_slice(&std::fs::read(&own).unwrap()).unwrap();
    edit(&mut v);
    let edited = dir.join("edited.json");
    std::fs::write(&edited, serde_json::to_vec(&v).unwrap()).unwrap();
    (own, edited)
}

fn scale(v: &mut Value, f: f64) {
    *v = Value::from((v.as_f64().unwrap() * f).round() as i64);
}

#[test]
fn check_against_its_own_report_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let (own, _) = baselines(tmp.path(), |_| {});
    let t = sample("item-sync");
    let (code, out, err) = check(&[
        t.as_os_str(),
        "--baseline".as_ref(),
        own.as_os_str(),
        "--max-regression".as_ref(),
        "0".as_ref(),
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains("ok: mean step") && out.contains("+0.0% <= 0%"),
        "{out}"
    );
    assert!(out.contains("ok: sync idle"), "{out}");
    // A saved report as the run checked, too.
    let (code, out, err) = check(&[
        own.as_os_str(),
        "--baseline".as_ref(),
        t.as_os_str(),
        "--max-regression".as_ref(),
        "5".as_ref(),
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
}

#[test]
fn a_slower_step_breaks_the_mean_step_limit() {
    let tmp = tempfile::tempdir().unwrap();
    // The baseline's step was 20% shorter: now it is 25% longer.
    let (_, faster) = baselines(tmp.path(), |v| scale(&mut v["steps"]["mean_ns"], 0.8));
    let t = sample("item-sync");
    let args = |pct: &'static str| {
        [
            t.as_os_str(),
            "--baseline".as_ref(),
            faster.as_os_str(),
            "--max-regression".as_ref(),
            pct.as_ref(),
        ]
    };
    let (code, out, _) = check(&args("10"));
    assert_eq!(code, Some(1), "{out}");
    let fail: Vec<&str> = out.lines().filter(|l| l.starts_with("FAIL: ")).collect();
    assert_eq!(fail.len(), 1, "{out}");
    assert!(
        fail[0].starts_with("FAIL: mean step ") && fail[0].ends_with(": +25.0% > 10%"),
        "{out}"
    );
    // 30% allows it.
    let (code, out, _) = check(&args("30"));
    assert_eq!(code, Some(0), "{out}");
}

#[test]
fn more_idle_time_of_one_cause_breaks_its_limit() {
    let tmp = tempfile::tempdir().unwrap();
    // The baseline waited half as long in syncs.
    let (own, less_sync) = baselines(tmp.path(), |v| {
        for d in v["devices"].as_array_mut().unwrap() {
            scale(&mut d["idle_by_cause_ns"]["sync"], 0.5);
        }
    });
    let sync_before: f64 = {
        let v: Value = serde_json::from_slice(&std::fs::read(&own).unwrap()).unwrap();
        v["devices"][0]["idle_by_cause_ns"]["sync"]
            .as_f64()
            .unwrap()
    };
    assert!(sync_before > 0.0);
    let t = sample("item-sync");
    let (code, out, _) = check(&[
        t.as_os_str(),
        "--baseline".as_ref(),
        less_sync.as_os_str(),
        "--max-regression".as_ref(),
        "10".as_ref(),
    ]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("ok: mean step"), "{out}");
    let fail: Vec<&str> = out.lines().filter(|l| l.starts_with("FAIL: ")).collect();
    assert_eq!(fail.len(), 1, "{out}");
    assert!(
        fail[0].starts_with("FAIL: sync idle ")
            && fail[0].contains(" a step vs baseline ")
            && fail[0].ends_with(": +100.0% > 10%"),
        "{out}"
    );
}

#[test]
fn unreadable_baselines_and_bad_arguments_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let (own, _) = baselines(tmp.path(), |_| {});
    let foreign = tmp.path().join("foreign.json");
    std::fs::write(
        &foreign,
        br#"{"schema": "stallscope.report.v1", "name": "x"}"#,
    )
    .unwrap();
    let t = sample("item-sync");
    let t = t.as_os_str();
    let missing = tmp.path().join("nope.json");
    let cases: Vec<(Vec<&std::ffi::OsStr>, String)> = vec![
        (
            vec![
                t,
                "--baseline".as_ref(),
                missing.as_os_str(),
                "--max-regression".as_ref(),
                "10".as_ref(),
            ],
            missing.display().to_string(),
        ),
        (
            vec![
                t,
                "--baseline".as_ref(),
                foreign.as_os_str(),
                "--max-regression".as_ref(),
                "10".as_ref(),
            ],
            format!("{}: not a stallscope report", foreign.display()),
        ),
        (
            vec![t, "--baseline".as_ref(), own.as_os_str()],
            "--max-regression".into(),
        ),
        (
            vec![t, "--max-regression".as_ref(), "10".as_ref()],
            "--baseline".into(),
        ),
        (
            vec![
                t,
                "--baseline".as_ref(),
                own.as_os_str(),
                "--max-regression".as_ref(),
                "-5".as_ref(),
            ],
            "--max-regression".into(),
        ),
        (
            vec![
                t,
                "--baseline".as_ref(),
                own.as_os_str(),
                "--max-regression".as_ref(),
                "ten".as_ref(),
            ],
            "ten".into(),
        ),
        (
            vec![
                t,
                t,
                "--baseline".as_ref(),
                own.as_os_str(),
                "--max-regression".as_ref(),
                "10".as_ref(),
            ],
            "one run".into(),
        ),
    ];
    for (args, says) in cases {
        let (code, out, err) = check(&args);
        assert_eq!(code, Some(2), "{args:?}: {out}{err}");
        assert!(err.contains(&says), "{args:?}: want {says:?} in {err}");
    }
}
