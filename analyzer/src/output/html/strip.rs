//! The GPU strip: one row per step, busy vs idle, idle coloured by cause.
//! Long runs show a bounded sample of steps: evenly spaced ones plus the
//! slowest outliers, so a rare stall stays visible.

use super::svg::{self, Shapes, W};
use super::{Part, dur, heading};
use crate::analysis::{Cause, IdleGap};
use crate::model::Ns;

/// Rows drawn at most.
pub const MAX_ROWS: usize = 40;
/// Outlier rows kept at most (the slowest), within `MAX_ROWS`.
const MAX_OUTLIER_ROWS: usize = 14;
/// Width of one bin, in chart units: each bin shows its majority state.
const BIN: f64 = 3.0;

const LEFT: f64 = 92.0;
const RIGHT: f64 = 150.0;
const ROW: f64 = 16.0;
const BAR: f64 = 12.0;

struct Row {
    label: String,
    start: Ns,
    end: Ns,
    outlier: bool,
    periodic: bool,
}

/// Which steps to draw: all when few, else evenly spaced ones plus the
/// slowest outliers; in step order.
pub fn pick(durs: &[Ns], outlier: &[bool]) -> Vec<usize> {
    let n = durs.len();
    if n <= MAX_ROWS {
        return (0..n).collect();
    }
    let mut outs: Vec<usize> = (0..n).filter(|&i| outlier[i]).collect();
    outs.sort_by_key(|&i| std::cmp::Reverse(durs[i]));
    outs.truncate(MAX_OUTLIER_ROWS);
    let even = MAX_ROWS - outs.len();
    let mut picked = outs;
    picked.extend((0..even).map(|j| j * (n - 1) / (even - 1).max(1)));
    picked.sort_unstable();
    picked.dedup();
    picked
}

pub fn section(out: &mut String, p: &Part) {
    heading(
        out,
        "strip",
        "GPU timeline per step",
        "Each row is one step on the busiest GPU, drawn to scale: grey where the GPU ran work, \
         coloured where it sat idle, by the cause it waited on.",
    );
    let Some(dev) = p.device() else {
        out.push_str("<p class=\"empty\">No GPU activity recorded.</p>\n</section>\n");
        return;
    };
    let steps = &p.diag.steps;
    let periodic: Vec<u32> = steps.periodic.as_ref().map_or(vec![], |x| x.steps.clone());
    let rows: Vec<Row> = if steps.steps.is_empty() {
        // No steps: the window cut into equal slices.
        let (a, b) = p.diag.window;
        let n = 20i64.min((b - a).max(1));
        (0..n)
            .map(|i| Row {
                label: format!("+{}", dur((b - a) * i / n)),
                start: a + (b - a) * i / n,
                end: a + (b - a) * (i + 1) / n,
                outlier: false,
                periodic: false,
            })
            .collect()
    } else {
        let durs: Vec<Ns> = steps.steps.iter().map(|s| s.dur()).collect();
        let outl: Vec<bool> = steps.steps.iter().map(|s| s.outlier).collect();
        pick(&durs, &outl)
            .into_iter()
            .map(|i| {
                let s = &steps.steps[i];
                Row {
                    label: format!("step {}", s.index),
                    start: s.start,
                    end: s.end,
                    outlier: s.outlier,
                    periodic: periodic.contains(&(i as u32)),
                }
            })
            .collect()
    };
    let max = rows
        .iter()
        .map(|r| r.end - r.start)
        .max()
        .unwrap_or(1)
        .max(1);
    let span = W - LEFT - RIGHT;
    let h = rows.len() as f64 * ROW + 28.0;
    let label = format!(
        "GPU {} busy and idle time for {} steps, idle coloured by cause",
        dev.gpu,
        rows.len()
    );
    svg::open(out, "strip", h, &label);
    let mut shapes = Shapes::default();
    let mut marks = Shapes::default();
    for (k, r) in rows.iter().enumerate() {
        let y = 4.0 + k as f64 * ROW;
        let d = (r.end - r.start).max(1);
        let px = span * d as f64 / max as f64;
        bins(&mut shapes, &dev.gaps, r.start, r.end, LEFT, y, px);
        let cls = if r.outlier { "lbl strong" } else { "lbl" };
        svg::text(out, LEFT - 8.0, y + BAR - 2.0, "end", cls, &r.label);
        let mut right = dur(d);
        if r.periodic {
            right += " periodic";
        } else if r.outlier {
            right += " outlier";
        }
        svg::text(out, LEFT + px + 6.0, y + BAR - 2.0, "start", cls, &right);
        if r.outlier || r.periodic {
            marks.poly(
                if r.periodic { "mark periodic" } else { "mark" },
                &[
                    (LEFT - 4.0, y + 1.0),
                    (LEFT - 4.0, y + BAR - 1.0),
                    (LEFT - 1.0, y + BAR / 2.0),
                ],
                true,
            );
        }
    }
    shapes.write(out);
    marks.write(out);
    let axis_y = 4.0 + rows.len() as f64 * ROW + 4.0;
    for t in svg::ticks_ns(max, 6) {
        let x = LEFT + span * t as f64 / max as f64;
        svg::line(out, x, axis_y - 3.0, x, axis_y, "axis");
        svg::text(out, x, axis_y + 12.0, "middle", "tick", &dur(t));
    }
    let shown = rows.len();
    let caption = if steps.steps.len() > shown {
        format!(
            "{shown} of {} steps: evenly spaced ones and the slowest outliers (marked ▸). \
             Each {BIN:.0}-unit bin shows what most of its time was.",
            steps.steps.len()
        )
    } else if steps.steps.is_empty() {
        "No steps were found: the analyzed window in 20 equal slices.".to_string()
    } else {
        "Every step. Outliers are marked ▸.".to_string()
    };
    svg::close(out, &caption);
    out.push_str("</section>\n");
}

/// Draws one row: bins of `BIN` units, each the colour of what took most of
/// its time (busy or an idle cause), merged into runs.
fn bins(shapes: &mut Shapes, gaps: &[IdleGap], a: Ns, b: Ns, x0: f64, y: f64, px: f64) {
    let nb = ((px / BIN).ceil() as usize).max(1);
    let width = (b - a) as f64 / nb as f64;
    let mut idle = vec![[0f64; 8]; nb];
    let first = gaps.partition_point(|g| g.end <= a);
    for g in gaps[first..].iter().take_while(|g| g.start < b) {
        let (s, e) = (g.start.max(a), g.end.min(b));
        let lo = (((s - a) as f64 / width) as usize).min(nb - 1);
        let hi = ((((e - a) as f64) / width).ceil() as usize).clamp(lo + 1, nb);
        for (k, bin) in idle.iter_mut().enumerate().take(hi).skip(lo) {
            let (bs, be) = (
                a as f64 + k as f64 * width,
                a as f64 + (k + 1) as f64 * width,
            );
            let o = (e as f64).min(be) - (s as f64).max(bs);
            if o > 0.0 {
                bin[g.cause.index()] += o;
            }
        }
    }
    // 8 = busy.
    let state = |bin: &[f64; 8]| -> usize {
        let total: f64 = bin.iter().sum();
        let (ci, cv) = bin
            .iter()
            .enumerate()
            .fold((0, 0.0), |m, (i, &v)| if v > m.1 { (i, v) } else { m });
        if cv > 0.0 && cv >= width - total {
            ci
        } else {
            8
        }
    };
    let bw = px / nb as f64;
    let mut k = 0;
    while k < nb {
        let st = state(&idle[k]);
        let mut j = k + 1;
        while j < nb && state(&idle[j]) == st {
            j += 1;
        }
        let class = if st == 8 {
            "busy".to_string()
        } else {
            format!("c-{}", Cause::ALL[st].name())
        };
        shapes.rect(&class, x0 + k as f64 * bw, y, (j - k) as f64 * bw, BAR);
        k = j;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_runs_keep_their_outliers() {
        let mut durs = vec![100; 10_000];
        let mut outl = vec![false; 10_000];
        for i in [17, 4_321, 9_998] {
            durs[i] = 900;
            outl[i] = true;
        }
        let p = pick(&durs, &outl);
        assert!(p.len() <= MAX_ROWS);
        for i in [17, 4_321, 9_998] {
            assert!(p.contains(&i), "outlier step {i} dropped");
        }
        assert!(p.windows(2).all(|w| w[0] < w[1]));
    }
}
