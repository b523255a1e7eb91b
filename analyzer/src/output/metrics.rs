//! The live counters as Prometheus text exposition (format 0.0.4), with HELP
//! and TYPE lines, for `stallscope export --metrics` and `record --metrics`.

use std::fmt::Write;

use crate::analysis::Cause;
use crate::live::{STEP_BUCKETS, Totals};

/// What the metrics are made of: the monitor's counters and the reader's.
pub struct MetricsInput<'a> {
    pub totals: &'a Totals,
    /// I/O wait per filesystem type, ns.
    pub io_by_fs: Vec<(&'a str, i64)>,
    pub dropped_records: u64,
    /// Job labels (`--label key=value`), added to every sample.
    pub labels: &'a [(String, String)],
}

/// Escapes a label value (backslash, double quote, newline).
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// `{k="v",...}` with the job labels first, or "" when there are none.
fn labels(job: &[(String, String)], own: &[(&str, &str)]) -> String {
    let all: Vec<String> = job
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .chain(own.iter().copied())
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    if all.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", all.join(","))
    }
}

fn secs(ns: i64) -> f64 {
    ns as f64 / 1e9
}

fn head(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// Renders every metric.
pub fn render(m: &MetricsInput) -> String {
    let mut out = String::new();
    let job = m.labels;
    head(
        &mut out,
        "stallscope_gpu_busy_seconds_total",
        "counter",
        "GPU time spent running kernels, copies or memsets.",
    );
    for (gpu, g) in &m.totals.gpus {
        let gpu = gpu.to_string();
        let _ = writeln!(
            out,
            "stallscope_gpu_busy_seconds_total{} {}",
            labels(job, &[("gpu", &gpu)]),
            secs(g.busy_ns)
        );
    }
    head(
        &mut out,
        "stallscope_gpu_idle_seconds_total",
        "counter",
        "GPU idle time inside the active window, by the cause that kept it idle.",
    );
    for (gpu, g) in &m.totals.gpus {
        let gpu = gpu.to_string();
        for c in Cause::ALL {
            let _ = writeln!(
                out,
                "stallscope_gpu_idle_seconds_total{} {}",
                labels(job, &[("gpu", &gpu), ("cause", c.name())]),
                secs(g.idle_ns[c.index()])
            );
        }
    }
    let plain = labels(job, &[]);
    head(
        &mut out,
        "stallscope_steps_total",
        "counter",
        "Training steps completed (measured on the GPU).",
    );
    let _ = writeln!(out, "stallscope_steps_total{plain} {}", m.totals.steps);
    head(
        &mut out,
        "stallscope_step_seconds",
        "histogram",
        "Step time measured on the GPU.",
    );
    let mut cum = 0u64;
    for (i, le) in STEP_BUCKETS.iter().enumerate() {
        cum += m.totals.step_buckets[i];
        let le = le.to_string();
        let _ = writeln!(
            out,
            "stallscope_step_seconds_bucket{} {cum}",
            labels(job, &[("le", &le)])
        );
    }
    cum += m.totals.step_buckets[STEP_BUCKETS.len()];
    let _ = writeln!(
        out,
        "stallscope_step_seconds_bucket{} {cum}",
        labels(job, &[("le", "+Inf")])
    );
    let _ = writeln!(
        out,
        "stallscope_step_seconds_sum{plain} {}",
        secs(m.totals.step_sum_ns)
    );
    let _ = writeln!(out, "stallscope_step_seconds_count{plain} {cum}");
    head(
        &mut out,
        "stallscope_dataloader_wait_seconds_total",
        "counter",
        "Time the GPU sat idle while the trainer waited for batches.",
    );
    let _ = writeln!(
        out,
        "stallscope_dataloader_wait_seconds_total{plain} {}",
        secs(m.totals.dataloader_wait_ns)
    );
    head(
        &mut out,
        "stallscope_io_wait_seconds_total",
        "counter",
        "Time in file reads, writes, opens and syncs, by filesystem type.",
    );
    let mut fs = m.io_by_fs.clone();
    fs.sort_unstable();
    for (name, ns) in fs {
        let _ = writeln!(
            out,
            "stallscope_io_wait_seconds_total{} {}",
            labels(job, &[("fs", name)]),
            secs(ns)
        );
    }
    head(
        &mut out,
        "stallscope_dropped_records_total",
        "counter",
        "Records lost: dropped at the size cap or a full disk, dropped by CUPTI, or overwritten by the flight recorder.",
    );
    let _ = writeln!(
        out,
        "stallscope_dropped_records_total{plain} {}",
        m.dropped_records
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::GpuTotals;

    #[test]
    fn text_has_every_metric_with_labels_and_a_cumulative_histogram() {
        let mut t = Totals::default();
        let mut g = GpuTotals {
            busy_ns: 2_500_000_000,
            ..Default::default()
        };
        g.idle_ns[Cause::Data.index()] = 1_000_000_000;
        t.gpus.insert(0, g);
        t.steps = 3;
        t.step_buckets[3] = 2; // <= 0.1 s
        t.step_buckets[STEP_BUCKETS.len()] = 1;
        t.step_sum_ns = 200_000_000;
        let labels = vec![("job".to_string(), "llm \"a\"".to_string())];
        let text = render(&MetricsInput {
            totals: &t,
            io_by_fs: vec![("nfs", 500_000_000)],
            dropped_records: 7,
            labels: &labels,
        });
        for want in [
            "# TYPE stallscope_gpu_busy_seconds_total counter",
            r#"stallscope_gpu_busy_seconds_total{job="llm \"a\"",gpu="0"} 2.5"#,
            r#"stallscope_gpu_idle_seconds_total{job="llm \"a\"",gpu="0",cause="data"} 1"#,
            r#"stallscope_gpu_idle_seconds_total{job="llm \"a\"",gpu="0",cause="io"} 0"#,
            r#"stallscope_steps_total{job="llm \"a\""} 3"#,
            "# TYPE stallscope_step_seconds histogram",
            r#"stallscope_step_seconds_bucket{job="llm \"a\"",le="0.05"} 0"#,
            r#"stallscope_step_seconds_bucket{job="llm \"a\"",le="0.1"} 2"#,
            r#"stallscope_step_seconds_bucket{job="llm \"a\"",le="60"} 2"#,
            r#"stallscope_step_seconds_bucket{job="llm \"a\"",le="+Inf"} 3"#,
            r#"stallscope_step_seconds_count{job="llm \"a\""} 3"#,
            r#"stallscope_io_wait_seconds_total{job="llm \"a\"",fs="nfs"} 0.5"#,
            r#"stallscope_dropped_records_total{job="llm \"a\""} 7"#,
            "# TYPE stallscope_dataloader_wait_seconds_total counter",
        ] {
            assert!(text.lines().any(|l| l == want), "missing {want}:\n{text}");
        }
    }
}
