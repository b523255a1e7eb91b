//! The terminal report: readable in 30 seconds.

use std::fmt::Write;

use super::report::Report;
use crate::analysis::Cause;

/// Formats nanoseconds for people.
pub fn dur(ns: i64) -> String {
    let a = ns.unsigned_abs() as f64;
    let s = if a >= 60e9 {
        format!("{:.1} min", a / 60e9)
    } else if a >= 1e9 {
        format!("{:.1} s", a / 1e9)
    } else if a >= 1e6 {
        format!("{:.0} ms", a / 1e6)
    } else if a >= 1e3 {
        format!("{:.0} µs", a / 1e3)
    } else {
        format!("{a:.0} ns")
    };
    if ns < 0 { format!("-{s}") } else { s }
}

/// Writes `text` indented under a finding, wrapped at about 100 columns.
fn wrap(o: &mut String, tag: &str, text: &str) {
    let mut line = format!("    {tag}");
    for word in text.split_whitespace() {
        if line.chars().count() + word.chars().count() + 1 > 100 && line.trim().len() > tag.len() {
            let _ = writeln!(o, "{line}");
            line = " ".repeat(4 + tag.len());
        } else if !line.ends_with(' ') {
            line.push(' ');
        }
        line.push_str(word);
    }
    let _ = writeln!(o, "{line}");
}

/// The command line with directories dropped from paths, so it fits a line.
fn short_command(cmd: &str) -> String {
    cmd.split(' ')
        .map(|a| {
            if a.starts_with('/') {
                a.rsplit('/').next().unwrap_or(a)
            } else {
                a
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn bar(pct: f64, width: usize) -> String {
    let filled = ((pct / 100.0) * width as f64)
        .round()
        .clamp(0.0, width as f64) as usize;
    format!("{}{}", "█".repeat(filled), "░".repeat(width - filled))
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

pub fn render(r: &Report, perfetto: Option<&str>) -> String {
    let mut o = String::new();
    let procs = &r.processes;
    let roles = if procs.workers > 0 {
        format!(
            "{} trainer{} + {} worker{}",
            procs.trainers.max(1),
            if procs.trainers > 1 { "s" } else { "" },
            procs.workers,
            if procs.workers == 1 { "" } else { "s" }
        )
    } else {
        format!(
            "{} process{}",
            procs.count,
            if procs.count == 1 { "" } else { "es" }
        )
    };
    let gpus: Vec<&str> = r.devices.iter().map(|d| d.name.as_str()).collect();
    let gpu_label = match gpus.first() {
        Some(n) if !n.is_empty() => format!("{}x {n}", gpus.len()),
        Some(_) => format!(
            "{} GPU{}",
            gpus.len(),
            if gpus.len() == 1 { "" } else { "s" }
        ),
        None => "no GPU activity".into(),
    };
    let _ = writeln!(
        o,
        "stallscope · {} · {} ({roles}) · {} · {gpu_label}",
        r.name,
        cut(&short_command(&r.command), 60),
        dur(r.wall_ns)
    );
    for n in &procs.gpu_capture {
        let _ = writeln!(o, "  note: {n}");
    }
    let steps = if r.steps.count > 0 {
        let by = match r.steps.source {
            "nvtx" | "detected" => format!(" [marked by {}]", cut(&r.steps.marked_by, 40)),
            _ => String::new(),
        };
        format!(
            "steps {}{by}, median {} (p90 {}){}",
            r.steps.count,
            dur(r.steps.median_ns),
            dur(r.steps.p90_ns),
            if r.steps.outliers.is_empty() {
                String::new()
            } else {
                format!(", {} slow", r.steps.outliers.len())
            }
        )
    } else {
        "no steps found".into()
    };
    for d in &r.devices {
        let idle = r.idle_pct(d);
        let _ = writeln!(
            o,
            "GPU {} busy {:>3.0}% {}   idle {:.0}%      {steps}",
            d.id,
            100.0 - idle,
            bar(100.0 - idle, 20),
            idle
        );
        let mut causes: Vec<(&str, i64)> = Cause::ALL
            .iter()
            .map(|c| {
                (
                    c.name(),
                    d.idle_by_cause_ns
                        .get(c.name())
                        .and_then(|v| v.as_i64())
                        .unwrap_or(0),
                )
            })
            .filter(|(_, v)| *v > 0)
            .collect();
        causes.sort_by_key(|c| std::cmp::Reverse(c.1));
        for (c, v) in causes.iter().take(5) {
            let pct = 100.0 * *v as f64 / r.wall_ns.max(1) as f64;
            if pct < 0.5 {
                continue;
            }
            let f = r.findings.iter().find(|f| f.cause == *c);
            let label = match f {
                Some(f) if !f.sub_cause.is_empty() => format!("{c}/{}", f.sub_cause),
                _ => c.to_string(),
            };
            let ev = f.map(|f| cut(&f.evidence, 90)).unwrap_or_default();
            let _ = writeln!(o, "  {label:<16} {pct:>3.0}%  {ev}");
        }
        let prec = &d.busy_by_precision_ns;
        let kernels: i64 = prec.values().filter_map(|v| v.as_i64()).sum();
        if kernels > 0 {
            let pct = |k: &str| {
                100.0 * prec.get(k).and_then(|v| v.as_i64()).unwrap_or(0) as f64 / kernels as f64
            };
            let _ = writeln!(
                o,
                "  kernel time: {:.0}% FP32 GEMM, {:.0}% TF32, {:.0}% BF16/FP16 tensor cores, {:.0}% other kernels{}",
                pct("fp32"),
                pct("tf32"),
                pct("bf16") + pct("fp16"),
                pct("non_gemm"),
                if pct("comm") > 0.5 {
                    format!(", {:.0}% communication", pct("comm"))
                } else {
                    String::new()
                }
            );
        }
    }
    if r.devices.is_empty() {
        let _ = writeln!(
            o,
            "No GPU activity was recorded: the report covers host activity only."
        );
    }
    if !r.findings.is_empty() {
        let _ = writeln!(o, "\nFixes, by estimated saving");
        for (i, f) in r.findings.iter().take(6).enumerate() {
            let label = if f.sub_cause.is_empty() {
                f.cause.clone()
            } else {
                format!("{}/{}", f.cause, f.sub_cause)
            };
            let saving = 100.0 * f.est_saving_ns as f64 / r.wall_ns.max(1) as f64;
            let step = if r.steps.count > 0 {
                format!(
                    "step {} -> {}",
                    dur(r.steps.mean_ns),
                    dur(f.est_step_ns_after)
                )
            } else {
                format!(
                    "window {} -> {}",
                    dur(r.wall_ns),
                    dur(r.wall_ns - f.est_saving_ns)
                )
            };
            let _ = writeln!(o, "{:>2}. {label:<20} {step:<28} saves {saving:.0}%", i + 1);
            wrap(&mut o, "fix: ", &f.fix);
            wrap(&mut o, "why: ", &f.evidence);
            wrap(&mut o, "assumes: ", &f.assumption);
        }
        if let Some(c) = &r.combined {
            let saving = 100.0 * c.est_saving_ns as f64 / r.wall_ns.max(1) as f64;
            let step = if r.steps.count > 0 {
                format!(
                    "step {} -> {}",
                    dur(r.steps.mean_ns),
                    dur(c.est_step_ns_after)
                )
            } else {
                format!(
                    "window {} -> {}",
                    dur(r.wall_ns),
                    dur(r.wall_ns - c.est_saving_ns)
                )
            };
            let _ = writeln!(
                o,
                "    {:<20} {step:<28} saves {saving:.0}%",
                "all fixes at once"
            );
        }
        if !r.minor.is_empty() {
            let names: Vec<String> = r
                .minor
                .iter()
                .map(|f| format!("{}/{}", f.cause, f.sub_cause))
                .collect();
            wrap(&mut o, "minor (under 0.5% each): ", &names.join(", "));
        }
    } else if !r.devices.is_empty() {
        let _ = writeln!(o, "\nNo stall worth fixing: the GPU was busy.");
    }
    for n in r.notes.iter().filter(|n| n.starts_with("warning")).take(5) {
        let _ = writeln!(o, "{n}");
    }
    if let Some(p) = perfetto {
        let _ = writeln!(o, "Open the timeline: ui.perfetto.dev  <-  {p}");
    }
    o
}
