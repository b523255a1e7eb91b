use std::collections::BTreeMap;

use super::*;
use crate::output::saved::{SavedCombined, SavedDevice, SavedSteps};

const MS: i64 = 1_000_000;

fn finding(cause: &str, sub: &str, after_ms: i64) -> SavedFinding {
    SavedFinding {
        cause: cause.into(),
        sub_cause: sub.into(),
        share_pct: 10.0,
        est_saving_ns: 0,
        est_step_ns_after: after_ms * MS,
        fix: format!("fix {cause}"),
    }
}

/// A report of `steps` steps of `mean_ms`, one GPU idle by `idle` (ms per
/// step, by cause).
fn report(
    steps: usize,
    mean_ms: i64,
    idle: &[(&str, i64)],
    findings: Vec<SavedFinding>,
) -> SavedReport {
    let by: BTreeMap<String, i64> = idle
        .iter()
        .map(|(c, ms)| (c.to_string(), ms * MS * steps as i64))
        .collect();
    SavedReport {
        schema: "stallscope.report.v1".into(),
        source: "native".into(),
        name: "run".into(),
        command: String::new(),
        wall_ns: mean_ms * MS * steps as i64,
        steps: SavedSteps {
            count: steps,
            mean_ns: mean_ms * MS,
            median_ns: mean_ms * MS,
            p90_ns: mean_ms * MS,
        },
        devices: vec![SavedDevice {
            id: "0".into(),
            name: String::new(),
            idle_ns: by.values().sum(),
            idle_by_cause_ns: by,
        }],
        findings,
        minor: Vec::new(),
        combined: None,
    }
}

#[test]
fn one_fix_is_checked_against_its_own_estimate() {
    // data/cpu predicted 90 -> 40 ms; measured 90 -> 35 ms.
    let b = report(16, 90, &[("data", 50)], vec![finding("data", "cpu", 40)]);
    let a = report(10, 35, &[("data", 1)], vec![]);
    let d = compare(&b, &a);
    let p = d.prediction.as_ref().unwrap();
    assert_eq!(p.fixes, ["data/cpu"]);
    assert_eq!(p.basis, "finding");
    assert_eq!(p.predicted_saving_ns, 50 * MS);
    assert_eq!(p.measured_saving_ns, 55 * MS);
    assert_eq!(p.predicted_step_ns, 40 * MS);
    assert_eq!(p.measured_step_ns, 35 * MS);
    let e = p.error_pct.unwrap();
    assert!((e - 100.0 * 5.0 / 55.0).abs() < 1e-9, "{e}");
    let line = text::prediction_line(&d).unwrap();
    assert!(
        line.starts_with("data/cpu fix predicted 50 ms a step (90 ms -> 40 ms); measured 55 ms")
            && line.ends_with("error 9.1%"),
        "{line}"
    );
    assert_eq!(d.resolved.len(), 1);
    assert_eq!(d.resolved[0].status, "gone");
    assert_eq!(d.resolved[0].before_saving_ns, 50 * MS);
}

#[test]
fn steps_and_idle_change_per_step_not_per_run() {
    // AFTER is a longer run with the same steps: nothing changed per step.
    let b = report(10, 100, &[("data", 20), ("sync", 5)], vec![]);
    let a = report(40, 100, &[("data", 20), ("sync", 5)], vec![]);
    let d = compare(&b, &a);
    assert_eq!(d.mean_step, Change::of(100 * MS, 100 * MS));
    assert_eq!(d.idle_per_step.len(), 2);
    for c in &d.idle_per_step {
        assert_eq!(c.change.delta_ns, 0, "{}", c.cause);
    }
    assert_eq!(d.idle_per_step_total.before_ns, 25 * MS);
    assert!(d.prediction.is_none());
    assert!(limits(&d, 5.0).iter().all(|l| !l.broken));
}

#[test]
fn idle_per_step_is_averaged_over_gpus() {
    let mut b = report(10, 100, &[("data", 20)], vec![]);
    let mut two = b.devices[0].clone();
    two.idle_by_cause_ns.insert("data".into(), 0);
    b.devices.push(two);
    let d = compare(&b, &b);
    assert_eq!(d.idle_per_step[0].change.before_ns, 10 * MS);
}

#[test]
fn findings_resolved_new_and_remaining_match_by_cause_and_sub_cause() {
    let b = report(
        10,
        100,
        &[],
        vec![
            finding("data", "cpu", 60),
            finding("sync", "item", 90),
            finding("io", "nfs", 95),
        ],
    );
    let mut a = report(
        10,
        62,
        &[],
        vec![finding("data", "io", 50), finding("sync", "item", 55)],
    );
    a.minor.push(finding("io", "nfs", 62));
    let d = compare(&b, &a);
    let labels = |v: &[FindingChange]| -> Vec<(String, &'static str)> {
        v.iter().map(|f| (f.label(), f.status)).collect()
    };
    assert_eq!(
        labels(&d.resolved),
        [
            ("data/cpu".to_string(), "gone"),
            ("io/nfs".to_string(), "minor")
        ]
    );
    assert_eq!(labels(&d.new), [("data/io".to_string(), "new")]);
    // sync/item saved 10 ms a step and still saves 7 ms: not fixed.
    assert_eq!(labels(&d.remaining), [("sync/item".to_string(), "smaller")]);
    let p = d.prediction.unwrap();
    // data/cpu is gone; io/nfs saves nothing now (62 -> 62 ms).
    assert_eq!(p.fixes, ["data/cpu", "io/nfs"]);
    assert_eq!(p.basis, "sum");
    assert_eq!(p.predicted_saving_ns, 45 * MS);
    assert_eq!(p.measured_saving_ns, 38 * MS);
}

#[test]
fn every_finding_fixed_uses_the_combined_estimate() {
    let mut b = report(
        10,
        100,
        &[],
        vec![finding("data", "cpu", 60), finding("io", "nfs", 80)],
    );
    b.combined = Some(SavedCombined {
        est_step_ns_after: 50 * MS,
        est_saving_ns: 0,
    });
    let a = report(10, 50, &[], vec![]);
    let p = compare(&b, &a).prediction.unwrap();
    assert_eq!(p.basis, "combined");
    assert_eq!(p.predicted_saving_ns, 50 * MS);
    assert_eq!(p.error_pct, Some(0.0));
}

#[test]
fn a_slower_after_has_no_error_against_a_zero_saving_and_says_slower() {
    let b = report(10, 100, &[], vec![finding("data", "cpu", 60)]);
    let a = report(10, 100, &[], vec![]);
    let d = compare(&b, &a);
    assert_eq!(d.prediction.as_ref().unwrap().error_pct, None);
    let a = report(10, 110, &[], vec![]);
    let d = compare(&b, &a);
    let line = text::prediction_line(&d).unwrap();
    assert!(
        line.ends_with("measured none: the step grew by 10 ms (100 ms -> 110 ms)"),
        "{line}"
    );
    assert_eq!(d.prediction.as_ref().unwrap().error_pct, None);
}

#[test]
fn check_limits_name_the_growth_and_floor_small_causes() {
    let b = report(10, 350, &[("data", 35), ("sync", 1)], vec![]);
    // Mean step +17.7%; data +20%; sync 1 -> 3 ms: +200%, but under 1% of
    // the 350 ms baseline step (3.5 ms).
    let mut a = report(10, 412, &[("data", 42), ("sync", 3)], vec![]);
    a.steps.mean_ns = 412 * MS;
    let d = compare(&b, &a);
    let l = limits(&d, 10.0);
    let broken: Vec<String> = l.iter().filter(|l| l.broken).map(Limit::describe).collect();
    assert_eq!(
        broken,
        [
            "mean step 412 ms vs baseline 350 ms: +17.7% > 10%",
            "data idle 42 ms a step vs baseline 35 ms: +20.0% > 10%",
        ]
    );
    let sync = l.iter().find(|l| l.what == "sync idle").unwrap();
    assert!(!sync.broken);
    assert_eq!(sync.allowed_ns, 3_500_000);
    assert!(
        sync.describe().ends_with("<= the 4 ms allowed"),
        "{}",
        sync.describe()
    );
    // Within 20% everything passes.
    assert!(limits(&d, 20.0).iter().all(|l| !l.broken));
    // The floor is a tenth of the step's allowance, so a looser limit
    // loosens small causes too: sync 1 -> 6 ms breaks 10% (3.5 ms allowed)
    // but not 20% (7 ms).
    let e = report(10, 350, &[("data", 35), ("sync", 6)], vec![]);
    let sync_at = |pct: f64| {
        limits(&compare(&b, &e), pct)
            .into_iter()
            .find(|l| l.what == "sync idle")
            .unwrap()
    };
    assert!(sync_at(10.0).broken);
    let loose = sync_at(20.0);
    assert!(!loose.broken && loose.allowed_ns == 7_000_000, "{loose:?}");
    // A cause new in AFTER, over the floor.
    let c = report(10, 350, &[("data", 35), ("io", 10)], vec![]);
    let l = limits(&compare(&b, &c), 10.0);
    let io = l.iter().find(|l| l.what == "io idle").unwrap();
    assert!(io.broken);
    assert_eq!(
        io.describe(),
        "io idle 10 ms a step vs baseline 0 ns: +10 ms > the 4 ms allowed"
    );
}

#[test]
fn renderers_show_the_same_story() {
    let b = report(16, 90, &[("data", 50)], vec![finding("data", "cpu", 40)]);
    let a = report(16, 42, &[("data", 1)], vec![finding("sync", "<item>", 40)]);
    let d = compare(&b, &a);
    let line = text::prediction_line(&d).unwrap();
    let t = render_text(&d);
    assert!(
        t.lines()
            .all(|l| l.chars().count() <= crate::output::text::WIDTH),
        "{t}"
    );
    assert!(
        t.contains("mean step") && t.contains("-48 ms") && t.contains("-53.3%"),
        "{t}"
    );
    assert!(
        t.contains("Resolved findings") && t.contains("data/cpu"),
        "{t}"
    );
    assert!(
        t.contains("New findings") && t.contains("sync/<item>"),
        "{t}"
    );
    // The prediction line may wrap in the text; its words are all there.
    let words: Vec<&str> = t.split_whitespace().collect();
    assert!(
        words
            .windows(line.split_whitespace().count())
            .any(|w| w.join(" ") == line),
        "{t}"
    );
    let m = render_markdown(&d);
    assert!(m.contains(&line) && m.contains("| data/cpu |"), "{m}");
    let h = render_html(&d);
    assert!(h.contains(&line.replace('>', "&gt;")), "{h}");
    assert!(
        h.contains("sync/&lt;item&gt;") && !h.contains("<item>"),
        "{h}"
    );
    assert!(!h.contains("http"), "an HTML diff fetches nothing");
}
