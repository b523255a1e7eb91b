//! `record --metrics` scraped by a real Prometheus server (Debian's
//! `prometheus` package, from tests/setup): a data-bound gpusim job's
//! `stallscope_gpu_idle_seconds_total{cause="data"}` rises while the job runs
//! and ends as the largest idle cause, and `promtool check metrics` accepts
//! the endpoint's text. Everything listens on 127.0.0.1, on ports picked free
//! at run time, and every process started here is killed at the end, even
//! when an assertion fails.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// Kills the processes it holds when dropped (a failed assertion included).
struct Kill(Vec<Child>);

impl Drop for Kill {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A plain HTTP/1.1 GET on 127.0.0.1: (status, body).
fn http_get(port: u16, path: &str) -> Option<(u32, String)> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).ok()?;
    c.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    c.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    // Prometheus answers small queries without chunking, but be safe.
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    Some((status, body))
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((len, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(len.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

fn urlencode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// An instant query: each series as (labels, value).
fn query(port: u16, q: &str) -> Vec<(Value, f64)> {
    let Some((200, body)) = http_get(port, &format!("/api/v1/query?query={}", urlencode(q))) else {
        return vec![];
    };
    let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    v["data"]["result"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| {
                    let val = r["value"][1].as_str().unwrap_or("0").parse().unwrap_or(0.0);
                    (r["metric"].clone(), val)
                })
                .collect()
        })
        .unwrap_or_default()
}

fn start_prometheus(dir: &Path, port: u16, target: u16) -> Child {
    let cfg = dir.join("prometheus.yml");
    std::fs::write(
        &cfg,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: stallscope\n    static_configs:\n      - targets: ['127.0.0.1:{target}']\n"
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
    Command::new("prometheus")
        .arg(format!("--config.file={}", cfg.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("tsdb").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("prometheus is needed: run tests/setup")
}

#[test]
fn prometheus_sees_data_idle_rise_while_a_data_bound_job_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (prom_port, metrics_port) = (free_port(), free_port());
    let mut procs = Kill(vec![start_prometheus(dir, prom_port, metrics_port)]);
    let t0 = Instant::now();
    while http_get(prom_port, "/-/ready").map(|r| r.0) != Some(200) {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "prometheus did not start: {}",
            std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // A data-bound job (a DataLoader worker that is too slow) long enough
    // for several scrapes.
    let gpusim = built_lib("libgpusim.so");
    let job = Command::new(stallscope())
        .arg("record")
        .arg("-o")
        .arg(dir.join("rec"))
        .arg("--cupti")
        .arg(&gpusim)
        .arg("--metrics")
        .arg(format!("127.0.0.1:{metrics_port}"))
        .args(["--label", "team=e2e"])
        .arg("--")
        .arg(python())
        .arg(workload("scenario.py"))
        .arg(&gpusim)
        .arg("data_cpu")
        .env("SCENARIO_DIR", dir)
        .env("SCENARIO_STEPS", "100")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("job.err")).unwrap())
        .spawn()
        .unwrap();
    procs.0.push(job);

    let data = r#"stallscope_gpu_idle_seconds_total{cause="data",team="e2e"}"#;
    let mut seen: Vec<f64> = Vec::new();
    let mut endpoint_text = None;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let running = procs.0[1].try_wait().unwrap().is_none();
        if !running {
            break;
        }
        assert!(Instant::now() < deadline, "the job ran past 120 s");
        if let Some(&(_, v)) = query(prom_port, data).first()
            && seen.last() != Some(&v)
        {
            seen.push(v);
        }
        if let Some((200, body)) = http_get(metrics_port, "/metrics")
            && body.contains(r#"cause="data""#)
        {
            endpoint_text = Some(body);
        }
        std::thread::sleep(Duration::from_millis(700));
    }
    let status = procs.0[1].wait().unwrap();
    assert!(
        status.success(),
        "the job failed: {}",
        std::fs::read_to_string(dir.join("job.err")).unwrap_or_default()
    );
    let rising = seen.windows(2).filter(|w| w[1] > w[0]).count();
    assert!(
        rising >= 2 && seen.first().is_some_and(|&v| v >= 0.0),
        "data idle did not rise while the job ran: {seen:?}"
    );

    // After the job: the last scrape has the whole job, and data leads.
    std::thread::sleep(Duration::from_secs(3));
    let all = query(
        prom_port,
        r#"sort_desc(stallscope_gpu_idle_seconds_total{team="e2e"})"#,
    );
    let causes: Vec<String> = all
        .iter()
        .map(|(m, v)| format!("{}={v}", m["cause"]))
        .collect();
    assert_eq!(
        all.first().map(|(m, _)| m["cause"].as_str()),
        Some(Some("data")),
        "data is not the largest idle cause: {causes:?}"
    );
    assert!(all[0].1 > 1.0, "too little data idle: {causes:?}");
    assert!(
        all[0].1 >= 2.0 * all.get(1).map_or(0.0, |x| x.1),
        "data does not lead clearly: {causes:?}"
    );
    let steps = query(prom_port, r#"stallscope_steps_total{team="e2e"}"#);
    assert!(
        steps.first().is_some_and(|s| s.1 >= 50.0),
        "steps: {steps:?}"
    );

    // The endpoint's text, checked by Prometheus's own linter.
    let text = endpoint_text.expect("the endpoint never served idle metrics");
    let mut check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    check
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = check.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The committed dashboard's queries run on this Prometheus, and the
    // recording rules pass promtool.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("monitoring");
    let dash: Value =
        serde_json::from_slice(&std::fs::read(root.join("grafana-stallscope.json")).unwrap())
            .unwrap();
    for panel in dash["panels"].as_array().unwrap() {
        for t in panel["targets"].as_array().unwrap() {
            let q = t["expr"]
                .as_str()
                .unwrap()
                .replace("$__rate_interval", "5s")
                .replace("$job", ".*")
                .replace("$instance", ".*")
                .replace("$gpu", ".*");
            let (status, body) =
                http_get(prom_port, &format!("/api/v1/query?query={}", urlencode(&q))).unwrap();
            assert_eq!(status, 200, "{q}: {body}");
        }
    }
    let rules = Command::new("promtool")
        .args(["check", "rules"])
        .arg(root.join("stallscope-rules.yml"))
        .output()
        .unwrap();
    assert!(
        rules.status.success(),
        "{}",
        String::from_utf8_lossy(&rules.stdout)
    );
    // Nothing but /metrics is served.
    if let Some((status, _)) = http_get(metrics_port, "/") {
        assert_eq!(status, 404);
    }
}
