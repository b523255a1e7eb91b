//! The fixes, ranked: a waterfall from today's mean step through each fix to
//! all fixes together, then each fix's assumption, evidence and fix text, in
//! the report's order.

use std::fmt::Write;

use super::svg::{self, Shapes, W};
use super::{Part, dur, esc, heading};
use crate::output::report::FindingReport;

const LEFT: f64 = 250.0;
const ROW: f64 = 24.0;
/// Fixes drawn at most (the rest are in the list).
const MAX_BARS: usize = 12;

pub fn section(out: &mut String, p: &Part, rank: usize) {
    heading(
        out,
        "fixes",
        "The fixes, ranked",
        "What each fix would make of the mean step, as the what-if replay of the trace \
         predicts it, from today's step to every fix at once.",
    );
    let r = p.report;
    let mean = r.steps.mean_ns;
    if r.findings.is_empty() {
        let line = crate::output::text::no_findings_line(r)
            .unwrap_or_else(|| "No fix is worth half a percent of the step or more.".into());
        let _ = writeln!(
            out,
            "<p class=\"empty\">{}</p>",
            esc(&line.replace('\n', " "))
        );
    } else if mean > 0 {
        chart(out, p);
    }
    list(out, "findings", &r.findings, rank, mean);
    if !r.options.is_empty() {
        out.push_str(
            "<h4>Options that change the numerics (validate accuracy first; not in the total)</h4>\n",
        );
        list(out, "options", &r.options, rank, mean);
    }
    if !r.minor.is_empty() {
        out.push_str("<h4>Minor (under half a percent of the step each)</h4>\n");
        list(out, "minor", &r.minor, rank, mean);
    }
    out.push_str("</section>\n");
}

fn chart(out: &mut String, p: &Part) {
    let r = p.report;
    let mean = r.steps.mean_ns;
    let shown: Vec<&FindingReport> = r.findings.iter().take(MAX_BARS).collect();
    // Rows: today, each fix, a reconciliation with the combined what-if, the total.
    let mut level = mean;
    struct Bar {
        label: String,
        from: i64,
        to: i64,
        class: String,
        value: String,
    }
    let mut bars = vec![Bar {
        label: "today's mean step".into(),
        from: 0,
        to: mean,
        class: "busy".into(),
        value: dur(mean),
    }];
    for (i, f) in shown.iter().enumerate() {
        let drop = (mean - f.est_step_ns_after).clamp(0, level);
        bars.push(Bar {
            label: format!("{}. fix {}", i + 1, f.label()),
            from: level - drop,
            to: level,
            class: format!("c-{}", cause_class(&f.cause)),
            value: format!("−{}", dur(drop)),
        });
        level -= drop;
    }
    let after = r
        .combined
        .as_ref()
        .map_or(level, |c| c.est_step_ns_after.max(0));
    if after != level && r.combined.is_some() {
        let (label, value) = if after > level {
            (
                "overlap between the fixes",
                format!("+{}", dur(after - level)),
            )
        } else {
            (
                "together, they save more",
                format!("−{}", dur(level - after)),
            )
        };
        bars.push(Bar {
            label: label.into(),
            from: after.min(level),
            to: after.max(level),
            class: "adjust".into(),
            value,
        });
    }
    bars.push(Bar {
        label: if r.combined.is_some() {
            "every fix at once"
        } else {
            "after these fixes"
        }
        .into(),
        from: 0,
        to: after,
        class: "after".into(),
        value: format!(
            "{} ({:+.0}%)",
            dur(after),
            100.0 * (after - mean) as f64 / mean.max(1) as f64
        ),
    });
    let span = W - LEFT - 150.0;
    let x = |ns: i64| LEFT + span * ns as f64 / mean.max(1) as f64;
    let h = bars.len() as f64 * ROW + 24.0;
    svg::open(
        out,
        "waterfall",
        h,
        "Waterfall of the mean step: today, each fix, every fix at once",
    );
    let mut shapes = Shapes::default();
    let mut links = Shapes::default();
    for (k, b) in bars.iter().enumerate() {
        let y = 4.0 + k as f64 * ROW;
        shapes.rect(
            &b.class,
            x(b.from),
            y,
            (x(b.to) - x(b.from)).max(1.0),
            ROW - 8.0,
        );
        if k + 1 < bars.len() {
            // The level carried to the next row.
            let lv = if k == 0 { b.to } else { b.from };
            links.poly("link", &[(x(lv), y + ROW - 8.0), (x(lv), y + ROW)], false);
        }
        let strong = if k == 0 || k + 1 == bars.len() {
            "lbl strong"
        } else {
            "lbl"
        };
        svg::text(out, LEFT - 8.0, y + 12.0, "end", strong, &b.label);
        svg::text(
            out,
            x(b.to.max(b.from)) + 6.0,
            y + 12.0,
            "start",
            strong,
            &b.value,
        );
    }
    shapes.write(out);
    links.write(out);
    let axis_y = 4.0 + bars.len() as f64 * ROW + 2.0;
    for t in svg::ticks_ns(mean, 6) {
        svg::line(out, x(t), axis_y - 3.0, x(t), axis_y, "axis");
        svg::text(out, x(t), axis_y + 12.0, "middle", "tick", &dur(t));
    }
    let caption = match &r.combined {
        Some(c) if !c.assumption.is_empty() => format!("The combined what-if: {}.", c.assumption),
        _ => String::new(),
    };
    svg::close(out, &caption);
}

/// The bar class of a finding's cause; "none" for findings that are no idle
/// cause (precision, comm).
fn cause_class(cause: &str) -> &str {
    match crate::analysis::Cause::from_name(cause) {
        Some(c) => c.name(),
        None => "none",
    }
}

fn list(out: &mut String, kind: &str, fs: &[FindingReport], rank: usize, mean: i64) {
    let _ = writeln!(out, "<ol class=\"finding-list\" data-kind=\"{kind}\">");
    for f in fs {
        let _ = write!(
            out,
            "<li class=\"finding\" data-finding=\"{}\" data-rank=\"{rank}\">\n\
             <div class=\"f-head\"><span class=\"sw c-{}\"></span><strong>{}</strong> \
             <span class=\"f-num\">{:.1}% of the window; saves {} → step {}{}</span></div>\n",
            esc(&f.label()),
            cause_class(&f.cause),
            esc(&f.label()),
            f.share_pct,
            dur(f.est_saving_ns),
            dur(f.est_step_ns_after),
            if mean > 0 {
                format!(
                    " ({:+.0}%)",
                    100.0 * (f.est_step_ns_after - mean) as f64 / mean as f64
                )
            } else {
                String::new()
            },
        );
        let _ = write!(
            out,
            "<dl><dt>Evidence</dt><dd>{}</dd><dt>Fix</dt><dd>{}</dd><dt>Assumption</dt><dd>{}</dd></dl>\n</li>\n",
            esc(&f.evidence),
            esc(&f.fix),
            esc(&f.assumption)
        );
    }
    out.push_str("</ol>\n");
}
