//! `analyze --html` in a real browser: three reports (a native recording with
//! a DataLoader worker, eight Kineto ranks, an AMD MI300X trace) opened in
//! headless Chromium (Debian's `chromium`, installed by tests/setup). Each
//! must load without console messages or network requests, give every chart
//! a size, and list the findings in the JSON report's order. A screenshot of
//! each goes to target/html-shots/.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use serde_json::Value;

fn chromium() -> PathBuf {
    for name in ["chromium", "chromium-browser"] {
        if let Ok(out) = Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
            && out.status.success()
        {
            return PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        }
    }
    panic!("chromium is missing: run `eval \"$(tests/setup)\"`, which installs it");
}

fn corpus(rel: &str) -> PathBuf {
    kineto_corpus().join(rel)
}

/// Headless Chromium that can reach nothing: any request goes to a closed
/// port or fails to resolve, and would be counted by the page's resource
/// timing.
fn browser(profile: &Path) -> Command {
    let mut c = Command::new(chromium());
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--proxy-server=127.0.0.1:9",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// Measures the page from inside: each chart's box, the findings in
/// document order, and every resource the page asked for. Added to a copy;
/// the report itself has no script.
const MEASURE: &str = r#"<script>
(() => {
  const out = [];
  for (const e of document.querySelectorAll('[data-chart]')) {
    const r = e.getBoundingClientRect();
    out.push(`chart ${e.dataset.chart} ${Math.round(r.width)} ${Math.round(r.height)}`);
  }
  for (const e of document.querySelectorAll('li.finding')) {
    out.push(`finding ${e.closest('ol').dataset.kind} ${e.dataset.rank} ${e.dataset.finding}`);
  }
  for (const r of performance.getEntriesByType('resource')) out.push(`resource ${r.name}`);
  const p = document.createElement('pre');
  p.id = 'measure';
  p.textContent = out.join('\n');
  document.body.appendChild(p);
})();
</script>
"#;

struct Measured {
    charts: Vec<(String, i64, i64)>,
    findings: Vec<String>,
    resources: Vec<String>,
    console: Vec<String>,
}

fn measure(html: &Path, tmp: &Path) -> Measured {
    let page = std::fs::read_to_string(html).unwrap();
    let probe = tmp.join("probe.html");
    std::fs::write(
        &probe,
        page.replacen("</body>", &format!("{MEASURE}</body>"), 1),
    )
    .unwrap();
    let out = browser(&tmp.join("profile"))
        .arg("--dump-dom")
        .arg(format!("file://{}", probe.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom.find("<pre id=\"measure\">").expect("the probe ran") + 18;
    let end = start + dom[start..].find("</pre>").unwrap();
    let mut m = Measured {
        charts: vec![],
        findings: vec![],
        resources: vec![],
        console: String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(String::from)
            .collect(),
    };
    for line in dom[start..end].lines() {
        let w: Vec<&str> = line.split(' ').collect();
        match w[0] {
            "chart" => m
                .charts
                .push((w[1].into(), w[2].parse().unwrap(), w[3].parse().unwrap())),
            "finding" => m.findings.push(format!("{} {} {}", w[1], w[2], w[3])),
            "resource" => m.resources.push(line.into()),
            _ => {}
        }
    }
    m
}

fn label(f: &Value) -> String {
    let (c, s) = (
        f["cause"].as_str().unwrap(),
        f["sub_cause"].as_str().unwrap(),
    );
    if s.is_empty() {
        c.to_string()
    } else {
        format!("{c}/{s}")
    }
}

/// The findings as the JSON report orders them, in the page's terms.
fn expected_findings(json: &Value) -> Vec<String> {
    let ranks: Vec<&Value> = match json["ranks"].as_array() {
        Some(r) => r.iter().take(8).collect(),
        None => vec![json],
    };
    let mut out = vec![];
    for (i, r) in ranks.iter().enumerate() {
        for kind in ["findings", "options", "minor"] {
            for f in r[kind].as_array().unwrap() {
                out.push(format!("{kind} {i} {}", label(f)));
            }
        }
    }
    out
}

/// Renders `inputs` to HTML and checks it in the browser; returns the page.
fn check(name: &str, inputs: &[PathBuf], charts: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let html = tmp.path().join(format!("{name}.html"));
    let json = tmp.path().join(format!("{name}.json"));
    let out = Command::new(stallscope())
        .arg("analyze")
        .args(inputs)
        .args(["-q", "--html"])
        .arg(&html)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    // Nothing that would fetch: no remote src/href/url(), no linked sheets or scripts.
    for bad in [
        "src=\"http",
        "href=\"http",
        "url(http",
        "url(\"http",
        "<link",
        "<script",
        "@import",
    ] {
        assert!(!page.contains(bad), "{name}: the page has {bad}");
    }
    let m = measure(&html, tmp.path());
    assert!(
        m.console.is_empty(),
        "{name}: console messages: {:?}",
        m.console
    );
    assert!(
        m.resources.is_empty(),
        "{name}: network requests: {:?}",
        m.resources
    );
    for (chart, w, h) in &m.charts {
        assert!(*w > 0 && *h > 0, "{name}: chart {chart} is {w}x{h}");
    }
    for c in charts {
        assert!(
            m.charts.iter().any(|x| x.0 == *c),
            "{name}: no {c} chart among {:?}",
            m.charts
        );
    }
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let want = expected_findings(&report);
    assert!(
        !want.is_empty(),
        "{name}: the report has no findings to order"
    );
    assert_eq!(
        m.findings, want,
        "{name}: findings out of the report's order"
    );
    // A screenshot to look at.
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/html-shots");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join(format!("{name}.png"));
    let _ = std::fs::remove_file(&shot);
    let out = browser(&tmp.path().join("profile"))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1280,4000")
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success() && shot.is_file(),
        "{name}: no screenshot"
    );
    page
}

#[test]
fn native_recording_with_a_dataloader_worker() {
    // Recorded with `stallscope record` from tests/workloads/scenario.py
    // (data_cpu: one DataLoader worker process) driving gpusim.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/dataloader-cpu");
    let page = check(
        "native-dataloader",
        &[dir],
        &[
            "strip",
            "idle-by-cause",
            "waterfall",
            "step-histogram",
            "step-sequence",
            "kernels-precision",
            "kernels-op-class",
            "workers",
        ],
    );
    assert!(page.contains("data/cpu"), "the data/cpu finding is missing");
}

#[test]
fn eight_kineto_ranks() {
    let dir = corpus("param/et_replay/tests/inputs/dlrm_kineto");
    let page = check(
        "kineto-8-ranks",
        &[dir],
        &["rank-heat", "strip", "idle-by-cause", "kernels-op-class"],
    );
    assert!(page.contains("◀ slowest"), "the slowest rank is not marked");
    assert_eq!(page.matches("<article class=\"run\"").count(), 8);
}

#[test]
fn amd_mi300x_trace() {
    let trace = corpus("TraceLens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz");
    let page = check(
        "amd-mi300x",
        &[trace],
        &["strip", "idle-by-cause", "waterfall", "kernels-op-class"],
    );
    assert!(page.contains("AMD CDNA3"));
}

#[test]
fn a_page_that_cannot_be_written_is_named() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/dataloader-cpu");
    let out = Command::new(stallscope())
        .arg("analyze")
        .arg(&dir)
        .args(["-q", "--html", "/nonexistent/dir/report.html"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot write /nonexistent/dir/report.html"),
        "{err}"
    );
}
