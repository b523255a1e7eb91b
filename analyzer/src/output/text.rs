//! The terminal report: readable in 30 seconds, at most [`WIDTH`] columns.
//! Everything that comes from the trace (names, paths, command lines) has its
//! control characters escaped first ([`terminal_safe`]): a traced process may
//! be named anything, terminal escapes included.

use std::fmt::Write;

use super::report::{DeviceReport, Report};
use crate::analysis::ranks::RankComparison;

/// The widest line the text report writes.
pub const WIDTH: usize = 100;

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

/// `s` with control characters (C0, DEL, C1) escaped as Rust does (`\u{1b}`),
/// as `stallscope dump` prints them.
pub fn escape_controls(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A copy of the report whose trace-derived strings are safe to print.
pub fn terminal_safe(r: &Report) -> Report {
    let mut r = r.clone();
    let e = escape_controls;
    r.name = e(&r.name);
    r.command = e(&r.command);
    r.steps.marked_by = e(&r.steps.marked_by);
    for n in r.notes.iter_mut().chain(r.processes.gpu_capture.iter_mut()) {
        *n = e(n);
    }
    for d in &mut r.devices {
        d.name = e(&d.name);
        d.id = e(&d.id);
    }
    for f in &mut r.findings {
        f.evidence = e(&f.evidence);
        f.fix = e(&f.fix);
        f.sub_cause = e(&f.sub_cause);
    }
    r
}

/// Writes `text` indented under a finding, wrapped at [`WIDTH`] columns;
/// words longer than a line are split.
fn wrap(o: &mut String, tag: &str, text: &str) {
    let indent = 4 + tag.chars().count();
    let mut line = format!("    {tag}");
    let mut fresh = true;
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let used = line.chars().count();
            let room = WIDTH.saturating_sub(used + usize::from(!fresh));
            if word.len() <= room {
                if !fresh {
                    line.push(' ');
                }
                line.extend(word.iter());
                fresh = false;
                break;
            }
            if fresh {
                // Longer than a whole line: split it.
                let head: String = word.drain(..room.max(1)).collect();
                line.push_str(&head);
            }
            let _ = writeln!(o, "{line}");
            line = " ".repeat(indent);
            fresh = true;
        }
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
        format!(
            "{}…",
            s.chars().take(n.saturating_sub(1)).collect::<String>()
        )
    }
}

/// "NVIDIA A100-SXM4-80GB", or "GPU 9 (unknown model)" for a device the
/// trace does not describe.
pub fn device_label(d: &DeviceReport) -> String {
    if d.name.is_empty() {
        format!("GPU {} (unknown model)", d.id)
    } else {
        d.name.clone()
    }
}

/// A what-if as "step 87 ms -> 40 ms" (the window without steps), and its
/// saving in percent of the window.
fn before_after(r: &Report, step_after: i64, saving_ns: i64) -> (String, f64) {
    let step = if r.steps.count > 0 {
        format!("step {} -> {}", dur(r.steps.mean_ns), dur(step_after))
    } else {
        format!(
            "window {} -> {}",
            dur(r.wall_ns),
            dur(r.wall_ns - saving_ns)
        )
    };
    (step, 100.0 * saving_ns as f64 / r.wall_ns.max(1) as f64)
}

/// Notes about the steps and start-up, shown under the header (and only
/// there), since they qualify every figure below them.
fn shown_under_header(n: &str) -> bool {
    n.contains("cut off") || n.contains("mostly start-up")
}

pub fn render(r: &Report, perfetto: Option<&str>) -> String {
    let r = &terminal_safe(r);
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
    let head = format!(
        "stallscope · {} · {} ({roles}) · {}",
        cut(&r.name, 40),
        cut(&short_command(&r.command), 30),
        dur(r.wall_ns)
    );
    let _ = writeln!(o, "{}", cut(&head, WIDTH));
    let mut job = vec![match r.devices.first() {
        Some(d) if r.devices.iter().all(|x| x.name == d.name) && !d.name.is_empty() => {
            format!("{}x {} ({})", r.devices.len(), d.name, d.arch)
        }
        Some(d) if r.devices.len() == 1 && d.name.is_empty() => device_label(d),
        Some(d) if r.devices.len() == 1 => format!("{} ({})", device_label(d), d.arch),
        Some(_) => format!("{} GPUs", r.devices.len()),
        None => "no GPU activity".into(),
    }];
    job.push(
        match r.job.mode {
            crate::analysis::job::Mode::Training => "training",
            crate::analysis::job::Mode::Inference => "inference",
            crate::analysis::job::Mode::Unknown => "training or inference not known",
        }
        .to_string(),
    );
    if let Some(e) = r.job.serving_engine {
        job.push(format!("{e} serving"));
    }
    if r.job.graphs() {
        job.push("CUDA/HIP graphs".into());
    }
    if r.job.dataloader {
        job.push(match r.job.dataloader_workers {
            Some(n) => format!("DataLoader, {n} workers"),
            None => "DataLoader".into(),
        });
    }
    let _ = writeln!(o, "{}", cut(&format!("  {}", job.join(" · ")), WIDTH));
    for n in &procs.gpu_capture {
        wrap(&mut o, "note: ", n);
    }
    let steps = if r.steps.count > 0 {
        let by = match r.steps.source {
            "nvtx" | "detected" if !r.steps.marked_by.is_empty() => format!(
                " [by {}]",
                cut(
                    &crate::analysis::kernels::short_name(&r.steps.marked_by, 60),
                    24
                )
            ),
            _ => String::new(),
        };
        format!(
            "steps {}{by}, mean {} (median {}, p90 {}){}",
            r.steps.count,
            dur(r.steps.mean_ns),
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
    if let Some(s) = &r.startup {
        let what: Vec<String> = s
            .items
            .iter()
            .take(3)
            .map(|i| format!("{} {}", cut(&i.what, 24), dur(i.ns)))
            .collect();
        let line = format!(
            "start-up {} ({:.0}% of the trace{}): {}",
            dur(s.ns),
            s.share_pct,
            if s.all { ", all of it" } else { "" },
            what.join(", ")
        );
        let _ = writeln!(o, "{}", cut(&line, 100));
    }
    for n in r.notes.iter().filter(|n| shown_under_header(n)) {
        let _ = writeln!(o, "note: {}", cut(n, 94));
    }
    if let Some(p) = r.periodic_text(dur) {
        let _ = writeln!(o, "slow steps: {}", cut(&p, 88));
    }
    for d in &r.devices {
        let idle = r.idle_pct(d);
        let line = format!(
            "GPU {} busy {:>3.0}% {}   idle {:.0}%   {steps}",
            cut(&d.id, 8),
            100.0 - idle,
            bar(100.0 - idle, 20),
            idle
        );
        let _ = writeln!(o, "{}", cut(&line, WIDTH));
        for (c, v) in d.idle_causes().iter().take(5) {
            let pct = 100.0 * *v as f64 / r.wall_ns.max(1) as f64;
            if pct < 0.5 {
                continue;
            }
            let f = r.findings.iter().find(|f| f.cause == *c);
            let label = match f {
                Some(f) if !f.sub_cause.is_empty() => format!("{c}/{}", f.sub_cause),
                _ => c.to_string(),
            };
            let ev = f.map(|f| f.evidence.as_str()).unwrap_or_default();
            let line = format!("  {:<18} {pct:>3.0}%  {ev}", cut(&label, 18));
            let _ = writeln!(o, "{}", cut(line.trim_end(), WIDTH));
        }
        let prec = &d.busy_by_precision_ns;
        let kernels: i64 = prec.values().filter_map(|v| v.as_i64()).sum();
        if kernels > 0 {
            let pct = |k: &str| {
                100.0 * prec.get(k).and_then(|v| v.as_i64()).unwrap_or(0) as f64 / kernels as f64
            };
            let mut parts = vec![
                format!("{:.0}% FP32 GEMM", pct("fp32")),
                format!("{:.0}% TF32", pct("tf32")),
                format!("{:.0}% BF16/FP16", pct("bf16") + pct("fp16")),
            ];
            if pct("fp8") + pct("int8") >= 0.5 {
                parts.push(format!("{:.0}% FP8/INT8", pct("fp8") + pct("int8")));
            }
            parts.push(format!("{:.0}% other kernels", pct("non_gemm")));
            if pct("comm") >= 0.5 {
                parts.push(format!("{:.0}% communication", pct("comm")));
            }
            let _ = writeln!(o, "  kernel time: {}", parts.join(", "));
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
            let (step, saving) = before_after(r, f.est_step_ns_after, f.est_saving_ns);
            let line = format!(
                "{:>2}. {:<20} {step:<28} saves {saving:.0}%",
                i + 1,
                cut(&label, 20)
            );
            let _ = writeln!(o, "{}", cut(&line, WIDTH));
            wrap(&mut o, "fix: ", &f.fix);
            wrap(&mut o, "why: ", &f.evidence);
            wrap(&mut o, "assumes: ", &f.assumption);
        }
        if let Some(c) = &r.combined {
            let (step, saving) = before_after(r, c.est_step_ns_after, c.est_saving_ns);
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
    } else if r.startup.as_ref().is_some_and(|s| s.all) {
        let _ = writeln!(o, "\nNo steady state: the trace is all start-up.");
    } else if !r.devices.is_empty() {
        let _ = writeln!(o, "\nNo stall worth fixing: the GPU was busy.");
    }
    for f in &r.options {
        let saving = 100.0 * f.est_saving_ns as f64 / r.wall_ns.max(1) as f64;
        let line = format!(
            "    option: {}/{} saves {saving:.0}% (changes the numerics: validate accuracy first)",
            f.cause, f.sub_cause
        );
        let _ = writeln!(o, "{}", cut(&line, WIDTH));
        wrap(&mut o, "fix: ", &f.fix);
        wrap(&mut o, "assumes: ", &f.assumption);
    }
    let rest: Vec<&String> = r.notes.iter().filter(|n| !shown_under_header(n)).collect();
    if !rest.is_empty() {
        let _ = writeln!(o);
        for n in rest.iter().take(8) {
            wrap(&mut o, "note: ", n);
        }
        if rest.len() > 8 {
            let _ = writeln!(o, "    ({} more notes in the JSON report)", rest.len() - 8);
        }
    }
    if let Some(p) = perfetto {
        let _ = writeln!(
            o,
            "{}",
            cut(
                &format!(
                    "Open the timeline: ui.perfetto.dev  <-  {}",
                    escape_controls(p)
                ),
                WIDTH
            )
        );
    }
    o
}

/// The busiest device of a rank's report.
fn main_device(r: &Report) -> Option<&DeviceReport> {
    r.devices.iter().max_by_key(|d| d.busy_ns)
}

/// Several ranks of one job: a table (rank, busy, idle, steps, top cause,
/// the slowest rank marked), for the per-rank reports printed below it.
pub fn render_ranks(reports: &[Report], cmp: Option<&RankComparison>) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "stallscope · {} ranks", reports.len());
    let _ = writeln!(
        o,
        "  {:>4}  {:>5}  {:>5}  {:>5}  {:>10}  top cause (saving)",
        "rank", "busy", "idle", "steps", "median"
    );
    let slowest = cmp.and_then(|c| c.slowest.as_ref()).map(|s| s.rank);
    for (i, r) in reports.iter().enumerate() {
        let rank = cmp
            .and_then(|c| c.ranks.get(i))
            .map_or(i as u32, |s| s.rank);
        let (busy, idle) = main_device(r).map_or((0.0, 0.0), |d| {
            let idle = r.idle_pct(d);
            (100.0 - idle, idle)
        });
        let top = r.findings.first().map_or_else(
            || "-".to_string(),
            |f| {
                let label = if f.sub_cause.is_empty() {
                    f.cause.clone()
                } else {
                    format!("{}/{}", f.cause, f.sub_cause)
                };
                format!(
                    "{} ({:.0}%)",
                    escape_controls(&label),
                    100.0 * f.est_saving_ns as f64 / r.wall_ns.max(1) as f64
                )
            },
        );
        let mark = if slowest == Some(rank) {
            "<- slowest"
        } else {
            ""
        };
        let line = format!(
            "  {rank:>4}  {busy:>4.0}%  {idle:>4.0}%  {:>5}  {:>10}  {:<28} {mark}",
            r.steps.count,
            if r.steps.count > 0 {
                dur(r.steps.median_ns)
            } else {
                "-".into()
            },
            cut(&top, 28)
        );
        let _ = writeln!(o, "{}", cut(line.trim_end(), WIDTH));
    }
    if let Some(c) = cmp {
        if let Some(s) = &c.slowest {
            let by = if s.by == "step_median" {
                "median step"
            } else {
                "GPU window"
            };
            let _ = writeln!(
                o,
                "  slowest: rank {} ({by} {}, {:.0}% over the median rank)",
                s.rank,
                dur(s.value_ns),
                s.over_median_pct
            );
        }
        if !c.stragglers.is_empty() {
            let list: Vec<String> = c.stragglers.iter().map(|r| r.to_string()).collect();
            let _ = writeln!(
                o,
                "  {}",
                cut(
                    &format!(
                        "stragglers at collectives (the others waited for them): rank {}",
                        list.join(", ")
                    ),
                    WIDTH - 2
                )
            );
        }
    }
    o
}

/// What `analyze` prints for several ranks: the table, then each rank's
/// report under a heading (`perfetto[i]` names rank i's Perfetto file).
pub fn render_multi(
    reports: &[Report],
    cmp: Option<&RankComparison>,
    perfetto: &[Option<&str>],
) -> String {
    let mut o = render_ranks(reports, cmp);
    for (i, r) in reports.iter().enumerate() {
        let rank = cmp
            .and_then(|c| c.ranks.get(i))
            .map_or(i as u32, |s| s.rank);
        let _ = writeln!(o, "\n── rank {rank} ({} of {}) ──", i + 1, reports.len());
        o.push_str(&render(r, perfetto.get(i).copied().flatten()));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_lines_within_the_width() {
        let mut o = String::new();
        let long = format!("short words then {} and more", "x".repeat(250));
        wrap(&mut o, "why: ", &long);
        assert!(o.lines().all(|l| l.chars().count() <= WIDTH), "{o}");
        assert_eq!(o.matches('x').count(), 250);
    }

    #[test]
    fn control_characters_are_escaped() {
        let s = escape_controls("\u{1b}]0;PWN\u{7}\u{1b}[2Jtrain\u{9b}");
        assert!(!s.chars().any(char::is_control), "{s:?}");
        assert!(s.contains("\\u{1b}]0;PWN\\u{7}") && s.ends_with("train\\u{9b}"));
    }
}
