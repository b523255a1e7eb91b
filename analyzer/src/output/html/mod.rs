//! The HTML report (`analyze --html`): one self-contained page of inline SVG
//! and CSS, no scripts, no fonts or anything else fetched, readable offline,
//! in light and dark mode, and printable.
//!
//! Every chart's size is bounded whatever the trace holds: rows and bins are
//! capped, and shapes of one colour share one SVG `<path>`, so a 50M-event
//! recording gives a page of the same few hundred elements as a small one.

mod causes;
mod distribution;
mod header;
mod kernels;
mod ranks;
mod strip;
mod svg;
mod tables;
mod waterfall;
mod workers;

use std::fmt::Write;

use crate::analysis::ranks::RankComparison;
use crate::analysis::{DeviceDiagnosis, Diagnosis};
use crate::model::Timeline;

use super::report::Report;

/// Ranks beyond this get their row in the rank table and heat strip only.
pub const MAX_RANK_DETAILS: usize = 8;

/// One trace (one rank) to show.
pub struct Part<'a> {
    pub tl: &'a Timeline,
    pub diag: &'a Diagnosis,
    pub report: &'a Report,
}

impl Part<'_> {
    /// The device the charts follow: the busiest.
    fn device(&self) -> Option<&DeviceDiagnosis> {
        self.diag.devices.iter().max_by_key(|d| d.busy_ns)
    }
}

/// The whole page: a header, the rank comparison when there are several
/// ranks, then each trace's sections.
pub fn render(parts: &[Part], ranks: Option<&RankComparison>) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let title = match parts {
        [] => "stallscope".to_string(),
        [p] => format!("stallscope: {}", p.report.name),
        [p, ..] => format!("stallscope: {} ({} ranks)", p.report.name, parts.len()),
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"stallscope {}\">\n<title>{}</title>\n<style>\n{}{}</style>\n</head>\n<body>\n",
        env!("CARGO_PKG_VERSION"),
        esc(&title),
        palette_css(),
        include_str!("style.css"),
    );
    let multi = parts.len() > 1;
    if let Some(first) = parts.first() {
        header::header(&mut out, first, parts.len());
    }
    out.push_str("<main>\n");
    if multi {
        ranks::section(&mut out, parts, ranks);
    }
    for (i, p) in parts.iter().enumerate().take(MAX_RANK_DETAILS) {
        let _ = writeln!(out, "<article class=\"run\" data-rank=\"{i}\">");
        if multi {
            let _ = writeln!(
                out,
                "<h2 class=\"rank-title\">Rank {} <small>{}</small></h2>",
                rank_id(p, i),
                esc(&p.report.name)
            );
            header::summary(&mut out, p);
        }
        causes::legend(&mut out);
        strip::section(&mut out, p);
        causes::section(&mut out, p);
        waterfall::section(&mut out, p, i);
        distribution::section(&mut out, p);
        kernels::section(&mut out, p);
        tables::host_io(&mut out, p);
        workers::section(&mut out, p);
        out.push_str("</article>\n");
    }
    if parts.len() > MAX_RANK_DETAILS {
        let _ = writeln!(
            out,
            "<p class=\"note\">Ranks after the first {MAX_RANK_DETAILS} are shown in the rank \
             table and heat strip only; analyze one rank's file for its details.</p>"
        );
    }
    let _ = write!(
        out,
        "</main>\n<footer>Made by stallscope {} from {} &middot; the same figures as \
         <code>--json</code> (schema {}).</footer>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        parts.first().map_or("", |p| p.report.source),
        super::report::SCHEMA,
    );
    out
}

fn rank_id(p: &Part, i: usize) -> u32 {
    p.tl.processes
        .iter()
        .find_map(|pr| pr.rank)
        .unwrap_or(i as u32)
}

/// The cause colours as CSS variables, from the one shared table.
fn palette_css() -> String {
    let mut s = String::from(":root {\n");
    for c in crate::analysis::Cause::ALL {
        let _ = writeln!(s, "  --c-{}: {};", c.name(), super::colors::cause(c));
    }
    let _ = writeln!(s, "  --c-none: {};\n}}", super::colors::NO_CAUSE);
    s
}

/// Text for HTML content and attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => o.push('\u{fffd}'),
            c => o.push(c),
        }
    }
    o
}

/// Durations as the text report writes them.
pub(crate) fn dur(ns: i64) -> String {
    super::text::dur(ns)
}

/// A section heading with its one-line explanation.
fn heading(out: &mut String, id: &str, title: &str, why: &str) {
    let _ = write!(
        out,
        "<section class=\"{id}\">\n<h3>{}</h3>\n<p class=\"why\">{}</p>\n",
        esc(title),
        esc(why)
    );
}

#[cfg(test)]
mod tests;
