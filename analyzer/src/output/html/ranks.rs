//! Several ranks: a table per rank and a heat strip of step time per rank,
//! the slowest rank marked.

use std::fmt::Write;

use super::svg::{self, Shapes, W};
use super::{Part, dur, esc, heading};
use crate::analysis::ranks::RankComparison;
use crate::model::Ns;

/// Columns of the heat strip at most (steps are averaged into them).
const MAX_COLS: usize = 100;
/// Rows of the heat strip at most.
const MAX_ROWS: usize = 64;
/// Shades of the sequential scale.
const LEVELS: usize = 8;

pub fn section(out: &mut String, parts: &[Part], cmp: Option<&RankComparison>) {
    heading(
        out,
        "ranks",
        "Ranks",
        "Each rank's steps and GPU time; the slowest rank sets the pace of every collective.",
    );
    let slowest = cmp.and_then(|c| c.slowest.as_ref()).map(|s| s.rank);
    if let Some(c) = cmp {
        table(out, c);
        for f in &c.findings {
            let _ = writeln!(
                out,
                "<p class=\"callout\"><strong>{}/{}: rank {}</strong> — {} <em>Fix:</em> {}</p>",
                esc(f.cause),
                esc(f.sub_cause),
                f.rank,
                esc(&f.evidence),
                esc(&f.fix)
            );
        }
    }
    heat(out, parts, cmp, slowest);
    out.push_str("</section>\n");
}

fn table(out: &mut String, c: &RankComparison) {
    let slowest = c.slowest.as_ref();
    out.push_str(
        "<table class=\"num\"><caption>Per rank</caption><thead><tr><th>rank</th><th>steps</th>\
         <th>median step</th><th>GPU window</th><th>GPU busy</th><th>communication</th>\
         <th>late at collectives (median)</th></tr></thead><tbody>\n",
    );
    for r in c.ranks.iter().take(MAX_ROWS) {
        let is_slow = slowest.is_some_and(|s| s.rank == r.rank);
        let late = c
            .lateness
            .iter()
            .find(|l| l.rank == r.rank)
            .map_or("–".to_string(), |l| dur(l.median_late_ns));
        let _ = writeln!(
            out,
            "<tr{}><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0}%</td><td>{:.0}%</td><td>{}</td></tr>",
            if is_slow { " class=\"slowest\"" } else { "" },
            r.rank,
            if is_slow { " ◀ slowest" } else { "" },
            r.steps,
            r.step_median_ns.map_or("–".to_string(), dur),
            dur(r.gpu_window_ns),
            r.gpu_busy_pct,
            r.comm_pct,
            late
        );
    }
    out.push_str("</tbody></table>\n");
    if let Some(s) = slowest {
        let _ = writeln!(
            out,
            "<p>Slowest: {}.</p>",
            esc(&super::super::text::slowest_said(s))
        );
    }
}

/// Means of `durs` over `cols` equal stretches.
fn columns(durs: &[Ns], cols: usize) -> Vec<Ns> {
    (0..cols)
        .map(|c| {
            let (s, e) = (
                c * durs.len() / cols,
                ((c + 1) * durs.len() / cols).max(c * durs.len() / cols + 1),
            );
            let chunk = &durs[s..e.min(durs.len())];
            chunk.iter().sum::<Ns>() / chunk.len().max(1) as Ns
        })
        .collect()
}

fn heat(out: &mut String, parts: &[Part], cmp: Option<&RankComparison>, slowest: Option<u32>) {
    let series: Vec<(u32, Vec<Ns>)> = parts
        .iter()
        .enumerate()
        .take(MAX_ROWS)
        .map(|(i, p)| {
            let id = cmp
                .and_then(|c| c.ranks.get(i))
                .map_or(i as u32, |r| r.rank);
            (id, p.diag.steps.steps.iter().map(|s| s.dur()).collect())
        })
        .collect();
    let n = series.iter().map(|s| s.1.len()).max().unwrap_or(0);
    if n == 0 {
        out.push_str("<p class=\"empty\">No steps on any rank: no heat strip.</p>\n");
        return;
    }
    let cols = n.min(MAX_COLS);
    let cells: Vec<Vec<Ns>> = series
        .iter()
        .map(|(_, d)| {
            if d.is_empty() {
                vec![]
            } else {
                columns(d, cols.min(d.len()))
            }
        })
        .collect();
    let lo = cells.iter().flatten().min().copied().unwrap_or(0);
    let hi = cells
        .iter()
        .flatten()
        .max()
        .copied()
        .unwrap_or(1)
        .max(lo + 1);
    const L: f64 = 140.0;
    const ROW: f64 = 18.0;
    let span = W - L - 20.0;
    let h = series.len() as f64 * ROW + 40.0;
    svg::open(out, "rank-heat", h, "Step time per rank, darker is slower");
    let mut shapes = Shapes::default();
    for (k, ((id, _), row)) in series.iter().zip(&cells).enumerate() {
        let y = 4.0 + k as f64 * ROW;
        let cw = span / cols as f64;
        for (c, v) in row.iter().enumerate() {
            // Stretch a rank with fewer steps over the same width.
            let (x0, x1) = (
                L + span * c as f64 / row.len() as f64,
                L + span * (c + 1) as f64 / row.len() as f64,
            );
            let lv = (((v - lo) as f64 / (hi - lo) as f64) * (LEVELS - 1) as f64).round() as usize;
            shapes.rect(
                &format!("heat{lv}"),
                x0,
                y,
                (x1 - x0).max(cw.min(1.0)),
                ROW - 3.0,
            );
        }
        let slow = slowest == Some(*id);
        svg::text(
            out,
            L - 8.0,
            y + 12.0,
            "end",
            if slow { "lbl strong" } else { "lbl" },
            &if slow {
                format!("rank {id} ◀ slowest")
            } else {
                format!("rank {id}")
            },
        );
        if slow {
            shapes.rect("slow-frame", L - 2.0, y - 1.0, span + 4.0, 1.2);
            shapes.rect("slow-frame", L - 2.0, y + ROW - 3.5, span + 4.0, 1.2);
        }
    }
    // The scale.
    let ly = 4.0 + series.len() as f64 * ROW + 10.0;
    for lv in 0..LEVELS {
        shapes.rect(&format!("heat{lv}"), L + lv as f64 * 30.0, ly, 30.0, 10.0);
    }
    shapes.write(out);
    svg::text(out, L - 8.0, ly + 9.0, "end", "tick", &dur(lo));
    svg::text(
        out,
        L + LEVELS as f64 * 30.0 + 6.0,
        ly + 9.0,
        "start",
        "tick",
        &dur(hi),
    );
    svg::close(
        out,
        &format!(
            "Step time per rank, {} step{}{} left to right; darker is slower.",
            n,
            if n == 1 { "" } else { "s" },
            if n > cols {
                format!(" in {cols} stretches (their mean)")
            } else {
                String::new()
            }
        ),
    );
}
