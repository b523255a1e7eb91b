//! The Markdown report, for CI summaries and pull-request comments.

use std::fmt::Write;

use super::report::Report;
use super::text::{bytes, dur, dur_step};
use crate::analysis::ranks::RankComparison;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub fn render(r: &Report) -> String {
    // Control characters from the trace would reach a terminal that shows
    // the file (`cat`, CI logs): escape them as the text report does.
    let r = &super::text::terminal_safe(r);
    let mut o = String::new();
    let _ = writeln!(o, "## stallscope: {}\n", cell(&r.name));
    // A profiler trace may name no command: no empty code span then.
    let command = match cell(&r.command) {
        c if c.trim().is_empty() => String::new(),
        c => format!("`{c}` · "),
    };
    let _ = writeln!(
        o,
        "{command}{} · {} process(es)\n",
        dur(r.wall_ns),
        r.processes.count
    );
    if r.steps.count > 0 {
        let _ = writeln!(
            o,
            "Steps: {} (median {}, p90 {})\n",
            r.steps.count,
            dur_step(r.steps.median_ns),
            dur_step(r.steps.p90_ns)
        );
    }
    if !r.devices.is_empty() {
        let _ = writeln!(o, "| GPU | busy | idle | top idle causes |");
        let _ = writeln!(o, "|---|---:|---:|---|");
        for d in &r.devices {
            let idle = r.idle_pct(d);
            let causes = d.idle_causes();
            let top: Vec<String> = causes
                .iter()
                .take(3)
                .map(|(c, v)| format!("{c} {:.0}%", 100.0 * *v as f64 / r.wall_ns.max(1) as f64))
                .collect();
            let _ = writeln!(
                o,
                "| {} {} | {:.0}% | {:.0}% | {} |",
                d.id,
                cell(&super::text::device_label(d)),
                100.0 - idle,
                idle,
                top.join(", ")
            );
        }
        let _ = writeln!(o);
    }
    if r.findings.is_empty() {
        if let Some(line) = super::text::no_findings_line(r) {
            let _ = writeln!(o, "{}", line.replace('\n', " "));
        }
    } else {
        let _ = writeln!(o, "| # | cause | share | saving | step after | fix |");
        let _ = writeln!(o, "|---:|---|---:|---:|---:|---|");
        for (i, f) in r.findings.iter().enumerate() {
            let label = f.label();
            let _ = writeln!(
                o,
                "| {} | {} | {:.1}% | {:.0}% | {} | {} |",
                i + 1,
                label,
                f.share_pct,
                100.0 * f.est_saving_ns as f64 / r.wall_ns.max(1) as f64,
                dur_step(f.est_step_ns_after),
                cell(&f.fix)
            );
        }
        let _ = writeln!(o, "\n<details><summary>Evidence</summary>\n");
        for f in &r.findings {
            let _ = writeln!(
                o,
                "- **{}/{}**: {}",
                f.cause,
                f.sub_cause,
                cell(&f.evidence)
            );
        }
        let _ = writeln!(o, "\n</details>");
    }
    host(&mut o, r);
    for n in &r.notes {
        let _ = writeln!(o, "\n> {}", cell(n));
    }
    o
}

/// The host part: open in a host-only report (it is the whole report),
/// folded under the findings of a GPU one.
fn host(o: &mut String, r: &Report) {
    let h = &r.host;
    let cpu = h.processes.iter().any(|p| p.cpu_ns > 0);
    if h.io_by_fs.is_empty() && !cpu && h.dropped_records == 0 && h.damage.is_empty() {
        return;
    }
    let host_only = r.devices.is_empty();
    if host_only {
        let _ = writeln!(o, "\n### Host\n");
    } else {
        let _ = writeln!(o, "\n<details><summary>Host</summary>\n");
    }
    if !h.io_by_fs.is_empty() {
        let _ = writeln!(
            o,
            "| I/O wait on | fs | wait | calls | read | written | MB/s |"
        );
        let _ = writeln!(o, "|---|---|---:|---:|---:|---:|---:|");
        for w in h.io_by_fs.iter().chain(&h.io_by_file) {
            let what = if w.what == w.fs {
                format!("**{}**", cell(&w.what))
            } else {
                format!("`{}`", cell(&w.what))
            };
            let _ = writeln!(
                o,
                "| {what} | {} | {} | {} | {} | {} | {:.1} |",
                cell(&w.fs),
                dur(w.wait_ns),
                w.calls,
                bytes(w.read_bytes),
                bytes(w.write_bytes),
                w.mb_per_s
            );
        }
        if h.more_files > 0 {
            let _ = writeln!(o, "\n{} more files.", h.more_files);
        }
        let _ = writeln!(o);
    }
    if !h.processes.is_empty() {
        let _ = writeln!(o, "| pid | ppid | role | CPU | I/O wait | command |");
        let _ = writeln!(o, "|---:|---:|---|---:|---:|---|");
        for p in h.processes.iter().take(if host_only { 30 } else { 10 }) {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | `{}` |",
                p.pid,
                p.ppid,
                p.role,
                dur(p.cpu_ns),
                dur(p.io_wait_ns),
                cell(&p.command)
            );
        }
        let _ = writeln!(o);
    }
    if h.dropped_records > 0 {
        let _ = writeln!(o, "Records dropped: {}\n", h.dropped_records);
    }
    for d in &h.damage {
        let _ = writeln!(o, "- damage: {}", cell(d));
    }
    if !host_only {
        let _ = writeln!(o, "\n</details>");
    }
}

/// The ranks of one job side by side, and the one the others wait for,
/// ahead of the per-rank reports.
pub fn render_ranks(reports: &[Report], cmp: &RankComparison) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "## stallscope: {} ranks\n", reports.len());
    let _ = writeln!(
        o,
        "| rank | GPU busy | steps | median step | top fix (saving) |"
    );
    let _ = writeln!(o, "|---:|---:|---:|---:|---|");
    let slowest = cmp.slowest.as_ref();
    for (r, s) in reports.iter().zip(&cmp.ranks) {
        let busy = r.devices.first().map_or(0.0, |d| 100.0 - r.idle_pct(d));
        let top = r.findings.first().map_or("-".to_string(), |f| {
            format!(
                "{} ({:.0}%)",
                cell(&f.label()),
                100.0 * f.est_saving_ns as f64 / r.wall_ns.max(1) as f64
            )
        });
        let mark = if slowest.is_some_and(|x| x.rank == s.rank) {
            " (slowest)"
        } else {
            ""
        };
        let _ = writeln!(
            o,
            "| {}{mark} | {busy:.0}% | {} | {} | {top} |",
            s.rank,
            r.steps.count,
            if r.steps.count > 0 {
                dur_step(r.steps.median_ns)
            } else {
                "-".into()
            }
        );
    }
    if let Some(s) = slowest {
        let _ = writeln!(o, "\nSlowest: {}.", super::text::slowest_said(s));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Source, Timeline};

    #[test]
    fn a_trace_without_a_command_gets_no_empty_code_span() {
        let mut tl = Timeline::new(Source::Kineto, "serving.json");
        tl.finalize();
        let mut r = Report::build(&tl, &crate::analysis::diagnose(&tl));
        assert_eq!(r.command, "");
        assert!(!render(&r).contains("``"), "{}", render(&r));
        r.command = "python train.py".into();
        assert!(render(&r).contains("`python train.py` · "));
    }
}
