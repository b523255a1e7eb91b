//! The diff as one self-contained HTML page: inline CSS, no scripts, nothing
//! fetched, light and dark by the reader's setting; prints as it shows.

use std::fmt::Write;

use super::text::{pct, prediction_line, signed};
use super::{Change, Diff, FindingChange};
use crate::output::text::dur;

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "\
:root{color-scheme:light dark;--fg:#1b1b1b;--bg:#fff;--muted:#666;--line:#ddd;\
--better:#0072b2;--worse:#d55e00}\
@media (prefers-color-scheme:dark){:root{--fg:#e8e8e8;--bg:#161616;--muted:#9a9a9a;\
--line:#333;--better:#56b4e9;--worse:#e69f00}}\
body{font:14px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg);\
max-width:60rem;margin:2rem auto;padding:0 1rem}\
h1{font-size:1.3rem}h2{font-size:1.05rem;margin-top:1.6rem}\
table{border-collapse:collapse;margin:.4rem 0}\
th,td{padding:.2rem .7rem;border-bottom:1px solid var(--line);text-align:right}\
th:first-child,td:first-child{text-align:left}th{font-weight:600}\
.better{color:var(--better)}.worse{color:var(--worse)}.muted{color:var(--muted)}\
.prediction{font-size:1.05rem;padding:.6rem .8rem;border-left:4px solid var(--better)}\
@media print{body{margin:0;max-width:none}}";

/// Less time is better for everything the diff shows.
fn class(delta: i64) -> &'static str {
    match delta.signum() {
        -1 => "better",
        1 => "worse",
        _ => "muted",
    }
}

fn row(o: &mut String, label: &str, c: &Change) {
    let _ = writeln!(
        o,
        "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td class=\"{}\">{}</td></tr>",
        esc(label),
        esc(&dur(c.before_ns)),
        esc(&dur(c.after_ns)),
        class(c.delta_ns),
        esc(&signed(c.delta_ns)),
        class(c.delta_ns),
        esc(&pct(c))
    );
}

fn findings(o: &mut String, title: &str, list: &[FindingChange]) {
    if list.is_empty() {
        return;
    }
    let _ = writeln!(o, "<h2>{}</h2>", esc(title));
    let _ = writeln!(
        o,
        "<table><tr><th>finding</th><th>saving a step before</th><th>after</th>\
         <th>status</th></tr>"
    );
    for f in list {
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&f.label()),
            esc(&dur(f.before_saving_ns)),
            esc(&dur(f.after_saving_ns)),
            f.status
        );
    }
    let _ = writeln!(o, "</table>");
}

pub fn render(d: &Diff) -> String {
    let mut o = String::new();
    let title = format!("stallscope diff: {} → {}", d.before.name, d.after.name);
    let _ = writeln!(
        o,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>",
        esc(&title)
    );
    let _ = writeln!(o, "<h1>{}</h1>", esc(&title));
    let _ = writeln!(
        o,
        "<table><tr><th></th><th>before</th><th>after</th><th>change</th><th></th></tr>"
    );
    let _ = writeln!(
        o,
        "<tr><td>steps</td><td>{}</td><td>{}</td><td></td><td></td></tr>",
        d.before.steps, d.after.steps
    );
    row(&mut o, "mean step", &d.mean_step);
    row(&mut o, "median step", &d.median_step);
    row(&mut o, "p90 step", &d.p90_step);
    let _ = writeln!(o, "</table>");
    let _ = writeln!(o, "<h2>Idle time per step (per GPU), by cause</h2>");
    let _ = writeln!(
        o,
        "<table><tr><th>cause</th><th>before</th><th>after</th><th>change</th><th></th></tr>"
    );
    for c in &d.idle_per_step {
        row(&mut o, &c.cause, &c.change);
    }
    row(&mut o, "all causes", &d.idle_per_step_total);
    let _ = writeln!(o, "</table>");
    findings(&mut o, "Resolved findings", &d.resolved);
    findings(&mut o, "New findings", &d.new);
    findings(&mut o, "Findings in both", &d.remaining);
    let _ = writeln!(o, "<h2>Prediction</h2>");
    let line = prediction_line(d)
        .unwrap_or_else(|| "No finding of BEFORE was fixed, so there is none to check.".into());
    let _ = writeln!(o, "<p class=\"prediction\">{}</p>", esc(&line));
    for n in &d.notes {
        let _ = writeln!(o, "<p class=\"muted\">note: {}</p>", esc(n));
    }
    let _ = writeln!(o, "</body></html>");
    o
}
