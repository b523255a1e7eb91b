//! Step times: a histogram and the sequence, with outliers and periodic
//! slow steps marked.

use std::fmt::Write;

use super::svg::{self, Shapes, W};
use super::{Part, dur, esc, heading};
use crate::model::Ns;

/// Points of the sequence drawn one by one; past this, min and max per bucket.
const MAX_POINTS: usize = 600;
/// Outlier markers drawn at most (the slowest).
const MAX_MARKS: usize = 300;

pub fn section(out: &mut String, p: &Part) {
    heading(
        out,
        "steps",
        "Step times",
        "How long each GPU-side step took: the distribution, and the steps in order. \
         Outliers are much slower than the median; periodic ones recur every few steps.",
    );
    let steps = &p.diag.steps.steps;
    if steps.len() < 2 {
        out.push_str("<p class=\"empty\">Too few steps for a distribution.</p>\n</section>\n");
        return;
    }
    let durs: Vec<Ns> = steps.iter().map(|s| s.dur()).collect();
    let mut kind = vec![0u8; steps.len()]; // 0 normal, 1 outlier, 2 periodic
    for (i, s) in steps.iter().enumerate() {
        if s.outlier {
            kind[i] = 1;
        }
    }
    if let Some(per) = &p.diag.steps.periodic {
        for &i in &per.steps {
            if let Some(k) = kind.get_mut(i as usize) {
                *k = 2;
            }
        }
    }
    if let Some(t) = p.report.periodic_text(dur) {
        let _ = writeln!(out, "<p class=\"callout\">Periodic: {}</p>", esc(&t));
    }
    out.push_str("<div class=\"pair\">\n");
    histogram(out, &durs, &kind, p.report.steps.median_ns);
    sequence(out, &durs, &kind, p.report.steps.median_ns);
    out.push_str("</div>\n</section>\n");
}

fn histogram(out: &mut String, durs: &[Ns], kind: &[u8], median: Ns) {
    let lo = *durs.iter().min().unwrap_or(&0);
    let hi = *durs.iter().max().unwrap_or(&1);
    let nb = ((durs.len() as f64).sqrt().ceil() as usize).clamp(5, 40);
    let width = ((hi - lo) as f64 / nb as f64).max(1.0);
    let mut counts = vec![[0usize; 3]; nb];
    for (d, k) in durs.iter().zip(kind) {
        let b = (((d - lo) as f64 / width) as usize).min(nb - 1);
        counts[b][*k as usize] += 1;
    }
    let max = counts
        .iter()
        .map(|c| c.iter().sum::<usize>())
        .max()
        .unwrap_or(1)
        .max(1);
    const H: f64 = 220.0;
    const L: f64 = 50.0;
    const B: f64 = 190.0;
    let w = W / 2.0 - 20.0;
    let span = w - L - 10.0;
    let bw = span / nb as f64;
    svg::open_w(out, "step-histogram", w, H, "Histogram of step times");
    let mut shapes = Shapes::default();
    for (i, c) in counts.iter().enumerate() {
        let mut y = B;
        for (k, class) in [(0, "bar"), (1, "outlier"), (2, "periodic")] {
            let h = (B - 10.0) * c[k] as f64 / max as f64;
            shapes.rect(
                class,
                L + i as f64 * bw + 1.0,
                y - h,
                (bw - 2.0).max(1.0),
                h,
            );
            y -= h;
        }
    }
    shapes.write(out);
    svg::line(out, L, B, L + span, B, "axis");
    let xm = L + span * (median - lo) as f64 / (hi - lo).max(1) as f64;
    svg::line(out, xm, 10.0, xm, B, "median");
    svg::text(
        out,
        L + span,
        8.0,
        "end",
        "tick",
        &format!("dashed: median {}", dur(median)),
    );
    svg::text(out, L, B + 16.0, "start", "tick", &dur(lo));
    svg::text(out, L + span, B + 16.0, "end", "tick", &dur(hi));
    svg::text(out, L - 6.0, 16.0, "end", "tick", &max.to_string());
    svg::text(out, L - 6.0, B, "end", "tick", "0");
    svg::text(out, L + span / 2.0, B + 16.0, "middle", "tick", "step time");
    svg::close(
        out,
        "Steps per bin; outliers and periodic slow steps stacked on top.",
    );
}

fn sequence(out: &mut String, durs: &[Ns], kind: &[u8], median: Ns) {
    let n = durs.len();
    let max = *durs.iter().max().unwrap_or(&1).max(&1);
    const H: f64 = 220.0;
    const L: f64 = 60.0;
    const B: f64 = 190.0;
    let w = W / 2.0 - 20.0;
    let span = w - L - 10.0;
    let x = |i: usize| L + span * i as f64 / (n - 1).max(1) as f64;
    let y = |d: Ns| B - (B - 10.0) * d as f64 / max as f64;
    svg::open_w(out, "step-sequence", w, H, "Step times in order");
    let mut shapes = Shapes::default();
    if n <= MAX_POINTS {
        let pts: Vec<(f64, f64)> = (0..n).map(|i| (x(i), y(durs[i]))).collect();
        shapes.poly("series", &pts, false);
    } else {
        // Min and max per bucket, as a band.
        let nb = MAX_POINTS / 2;
        let mut top = Vec::with_capacity(nb);
        let mut bottom = Vec::with_capacity(nb);
        for b in 0..nb {
            let (s, e) = (b * n / nb, ((b + 1) * n / nb).max(b * n / nb + 1));
            let chunk = &durs[s..e.min(n)];
            let xm = x((s + e) / 2);
            top.push((xm, y(*chunk.iter().max().unwrap_or(&0))));
            bottom.push((xm, y(*chunk.iter().min().unwrap_or(&0))));
        }
        bottom.reverse();
        top.extend(bottom);
        shapes.poly("band", &top, true);
    }
    let mut marked: Vec<usize> = (0..n).filter(|&i| kind[i] != 0).collect();
    marked.sort_by_key(|&i| std::cmp::Reverse(durs[i]));
    marked.truncate(MAX_MARKS);
    for i in marked {
        let class = if kind[i] == 2 { "periodic" } else { "outlier" };
        shapes.circle(class, x(i), y(durs[i]), 3.0);
    }
    shapes.write(out);
    svg::line(out, L, y(median), L + span, y(median), "median");
    svg::line(out, L, B, L + span, B, "axis");
    svg::text(out, L - 6.0, y(max) + 4.0, "end", "tick", &dur(max));
    svg::text(out, L - 6.0, B, "end", "tick", "0");
    svg::text(out, L, B + 16.0, "start", "tick", "first step");
    svg::text(out, L + span, B + 16.0, "end", "tick", &format!("step {n}"));
    svg::close(
        out,
        if n <= MAX_POINTS {
            "Each step in order; the dashed line is the median."
        } else {
            "Fastest to slowest step per stretch of steps; the dashed line is the median."
        },
    );
}
