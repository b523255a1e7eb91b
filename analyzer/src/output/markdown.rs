//! The Markdown report, for CI summaries and pull-request comments.

use std::fmt::Write;

use super::report::Report;
use super::text::dur;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub fn render(r: &Report) -> String {
    // Control characters from the trace would reach a terminal that shows
    // the file (`cat`, CI logs): escape them as the text report does.
    let r = &super::text::terminal_safe(r);
    let mut o = String::new();
    let _ = writeln!(o, "## stallscope: {}\n", cell(&r.name));
    let _ = writeln!(
        o,
        "`{}` · {} · {} process(es)\n",
        cell(&r.command),
        dur(r.wall_ns),
        r.processes.count
    );
    if r.steps.count > 0 {
        let _ = writeln!(
            o,
            "Steps: {} (median {}, p90 {})\n",
            r.steps.count,
            dur(r.steps.median_ns),
            dur(r.steps.p90_ns)
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
        let _ = writeln!(o, "No stall worth fixing was found.");
    } else {
        let _ = writeln!(o, "| # | cause | share | saving | step after | fix |");
        let _ = writeln!(o, "|---:|---|---:|---:|---:|---|");
        for (i, f) in r.findings.iter().enumerate() {
            let label = if f.sub_cause.is_empty() {
                f.cause.clone()
            } else {
                format!("{}/{}", f.cause, f.sub_cause)
            };
            let _ = writeln!(
                o,
                "| {} | {} | {:.1}% | {:.0}% | {} | {} |",
                i + 1,
                label,
                f.share_pct,
                100.0 * f.est_saving_ns as f64 / r.wall_ns.max(1) as f64,
                dur(f.est_step_ns_after),
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
    for n in &r.notes {
        let _ = writeln!(o, "\n> {}", cell(n));
    }
    o
}
