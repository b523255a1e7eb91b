//! The diff as Markdown, for pull-request comments and CI summaries.

use std::fmt::Write;

use super::text::{pct, prediction_line, signed};
use super::{Change, Diff, FindingChange};
use crate::output::text::{dur, escape_controls};

fn cell(s: &str) -> String {
    escape_controls(s).replace('|', "\\|").replace('\n', " ")
}

fn row(o: &mut String, label: &str, c: &Change) {
    let _ = writeln!(
        o,
        "| {} | {} | {} | {} | {} |",
        cell(label),
        dur(c.before_ns),
        dur(c.after_ns),
        signed(c.delta_ns),
        pct(c)
    );
}

fn findings(o: &mut String, title: &str, list: &[FindingChange]) {
    if list.is_empty() {
        return;
    }
    let _ = writeln!(o, "**{title}**\n");
    let _ = writeln!(o, "| finding | saving a step before | after | status |");
    let _ = writeln!(o, "|---|---:|---:|---|");
    for f in list {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} |",
            cell(&f.label()),
            dur(f.before_saving_ns),
            dur(f.after_saving_ns),
            f.status
        );
    }
    let _ = writeln!(o);
}

pub fn render(d: &Diff) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "## stallscope diff: {} → {}\n",
        cell(&d.before.name),
        cell(&d.after.name)
    );
    let _ = writeln!(o, "| | before | after | change | |");
    let _ = writeln!(o, "|---|---:|---:|---:|---:|");
    let _ = writeln!(o, "| steps | {} | {} | | |", d.before.steps, d.after.steps);
    row(&mut o, "mean step", &d.mean_step);
    row(&mut o, "median step", &d.median_step);
    row(&mut o, "p90 step", &d.p90_step);
    let _ = writeln!(o, "\n**Idle time per step (per GPU), by cause**\n");
    let _ = writeln!(o, "| cause | before | after | change | |");
    let _ = writeln!(o, "|---|---:|---:|---:|---:|");
    for c in &d.idle_per_step {
        row(&mut o, &c.cause, &c.change);
    }
    row(&mut o, "all causes", &d.idle_per_step_total);
    let _ = writeln!(o);
    findings(&mut o, "Resolved findings", &d.resolved);
    findings(&mut o, "New findings", &d.new);
    findings(&mut o, "Findings in both", &d.remaining);
    match prediction_line(d) {
        Some(line) => {
            let _ = writeln!(o, "**Prediction:** {}\n", cell(&line));
        }
        None => {
            let _ = writeln!(
                o,
                "**Prediction:** no finding of BEFORE was fixed, so there is none to check.\n"
            );
        }
    }
    for n in &d.notes {
        let _ = writeln!(o, "> note: {}", cell(n));
    }
    o
}
