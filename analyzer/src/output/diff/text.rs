//! The diff as text, at most [`WIDTH`] columns.

use std::fmt::Write;

use super::{Change, Diff, FindingChange};
use crate::output::text::{WIDTH, dur, escape_controls};

/// "+12 ms", "-3 ms", "0 ns".
pub(super) fn signed(ns: i64) -> String {
    if ns > 0 {
        format!("+{}", dur(ns))
    } else {
        dur(ns)
    }
}

pub(super) fn pct(c: &Change) -> String {
    match c.pct {
        Some(p) => format!("{p:+.1}%"),
        None if c.after_ns == 0 => String::new(),
        None => "new".into(),
    }
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let head: String = s.chars().take(n.saturating_sub(1)).collect();
        format!("{head}…")
    }
}

fn row(o: &mut String, label: &str, c: &Change) {
    let _ = writeln!(
        o,
        "  {:<24} {:>12} {:>12} {:>12} {:>9}",
        cut(label, 24),
        dur(c.before_ns),
        dur(c.after_ns),
        signed(c.delta_ns),
        pct(c)
    );
}

/// "data/cpu fix predicted 49 ms a step (90 ms -> 41 ms); measured 48 ms
/// (90 ms -> 42 ms): error 2.1%".
pub fn prediction_line(d: &Diff) -> Option<String> {
    let p = d.prediction.as_ref()?;
    let basis = match p.basis {
        "combined" => ", combined estimate",
        "sum" => ", sum of their estimates",
        _ => "",
    };
    let before = p.predicted_step_ns + p.predicted_saving_ns;
    let measured = match p.error_pct {
        Some(e) => format!(
            "measured {} ({} -> {}): error {e:.1}%",
            dur(p.measured_saving_ns),
            dur(before),
            dur(p.measured_step_ns)
        ),
        None => format!(
            "measured none: the step {} ({} -> {})",
            if p.measured_saving_ns < 0 {
                format!("grew by {}", dur(-p.measured_saving_ns))
            } else {
                "stayed".to_string()
            },
            dur(before),
            dur(p.measured_step_ns)
        ),
    };
    Some(format!(
        "{} predicted {} a step ({} -> {}{basis}); {measured}",
        p.label(),
        dur(p.predicted_saving_ns),
        dur(before),
        dur(p.predicted_step_ns),
    ))
}

/// Wraps `text` at [`WIDTH`] columns, continuation lines indented.
fn wrapped(o: &mut String, first: &str, text: &str) {
    let indent = " ".repeat(first.chars().count());
    let mut line = first.to_string();
    let mut fresh = true;
    for word in text.split_whitespace() {
        let used = line.chars().count();
        if !fresh && used + 1 + word.chars().count() > WIDTH {
            let _ = writeln!(o, "{line}");
            line = indent.clone();
            fresh = true;
        }
        if !fresh {
            line.push(' ');
        }
        line.push_str(word);
        fresh = false;
    }
    let _ = writeln!(o, "{line}");
}

fn findings(o: &mut String, title: &str, list: &[FindingChange]) {
    if list.is_empty() {
        return;
    }
    let _ = writeln!(o, "{title}");
    for f in list {
        let what = match f.status {
            "gone" => format!("saved {} a step; gone", dur(f.before_saving_ns)),
            "minor" => format!(
                "saved {} a step; now minor ({})",
                dur(f.before_saving_ns),
                dur(f.after_saving_ns)
            ),
            "new" => format!("saves {} a step", dur(f.after_saving_ns)),
            s => format!(
                "saves {} a step, was {} ({s})",
                dur(f.after_saving_ns),
                dur(f.before_saving_ns)
            ),
        };
        let _ = writeln!(
            o,
            "  {}",
            cut(
                &format!("{:<24} {what}", cut(&escape_controls(&f.label()), 24)),
                WIDTH - 2
            )
        );
    }
}

pub fn render(d: &Diff) -> String {
    let mut o = String::new();
    let name = |s: &super::Side| cut(&escape_controls(&s.name), 36);
    let _ = writeln!(
        o,
        "{}",
        cut(
            &format!(
                "stallscope diff · before: {} ({}) · after: {} ({})",
                name(&d.before),
                d.before.source,
                name(&d.after),
                d.after.source
            ),
            WIDTH
        )
    );
    let _ = writeln!(
        o,
        "  {:<24} {:>12} {:>12} {:>12} {:>9}",
        "", "before", "after", "change", ""
    );
    let _ = writeln!(
        o,
        "  {:<24} {:>12} {:>12}",
        "steps", d.before.steps, d.after.steps
    );
    row(&mut o, "mean step", &d.mean_step);
    row(&mut o, "median step", &d.median_step);
    row(&mut o, "p90 step", &d.p90_step);
    let _ = writeln!(o, "\nIdle time per step (per GPU), by cause");
    for c in &d.idle_per_step {
        row(&mut o, &escape_controls(&c.cause), &c.change);
    }
    row(&mut o, "all causes", &d.idle_per_step_total);
    let _ = writeln!(o);
    findings(&mut o, "Resolved findings", &d.resolved);
    findings(&mut o, "New findings", &d.new);
    findings(&mut o, "Findings in both", &d.remaining);
    if d.resolved.is_empty() && d.new.is_empty() && d.remaining.is_empty() {
        let _ = writeln!(o, "No findings on either side.");
    }
    let _ = writeln!(o);
    match prediction_line(d) {
        Some(line) => wrapped(&mut o, "Prediction: ", &line),
        None => {
            let _ = writeln!(
                o,
                "Prediction: no finding of BEFORE was fixed, so there is none to check."
            );
        }
    }
    for n in &d.notes {
        wrapped(&mut o, "note: ", n);
    }
    o
}
