//! Small SVG building blocks: a chart frame, text, and shapes gathered into
//! one `<path>` per CSS class so that the element count stays bounded.

use std::fmt::Write;

use super::esc;

/// The width of every chart's coordinate system; the page scales it.
pub const W: f64 = 960.0;

/// Opens `<figure><svg data-chart=NAME>`; `label` is the chart's accessible name.
pub fn open(out: &mut String, name: &str, h: f64, label: &str) {
    open_w(out, name, W, h, label);
}

pub fn close(out: &mut String, caption: &str) {
    out.push_str("</svg>");
    if !caption.is_empty() {
        let _ = write!(out, "<figcaption>{}</figcaption>", esc(caption));
    }
    out.push_str("</figure>\n");
}

/// `anchor`: "start", "middle" or "end".
pub fn text(out: &mut String, x: f64, y: f64, anchor: &str, class: &str, s: &str) {
    let _ = writeln!(
        out,
        "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\" class=\"{class}\">{}</text>",
        esc(s)
    );
}

pub fn line(out: &mut String, x1: f64, y1: f64, x2: f64, y2: f64, class: &str) {
    let _ = writeln!(
        out,
        "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" class=\"{class}\"/>"
    );
}

/// Shapes by CSS class, written as one path each, in first-use order.
#[derive(Default)]
pub struct Shapes {
    items: Vec<(String, String)>,
}

impl Shapes {
    fn d(&mut self, class: &str) -> &mut String {
        let i = match self.items.iter().position(|(c, _)| c == class) {
            Some(i) => i,
            None => {
                self.items.push((class.to_string(), String::new()));
                self.items.len() - 1
            }
        };
        &mut self.items[i].1
    }

    pub fn rect(&mut self, class: &str, x: f64, y: f64, w: f64, h: f64) {
        if w <= 0.0 || h <= 0.0 {
            return;
        }
        let _ = write!(self.d(class), "M{x:.1} {y:.1}h{w:.1}v{h:.1}h{:.1}z", -w);
    }

    pub fn circle(&mut self, class: &str, cx: f64, cy: f64, r: f64) {
        let _ = write!(
            self.d(class),
            "M{:.1} {cy:.1}a{r} {r} 0 1 0 {:.1} 0a{r} {r} 0 1 0 {:.1} 0z",
            cx - r,
            2.0 * r,
            -2.0 * r
        );
    }

    /// A closed polygon or an open polyline through `pts`.
    pub fn poly(&mut self, class: &str, pts: &[(f64, f64)], closed: bool) {
        let d = self.d(class);
        for (i, (x, y)) in pts.iter().enumerate() {
            let _ = write!(d, "{}{x:.1} {y:.1}", if i == 0 { "M" } else { "L" });
        }
        if closed && !pts.is_empty() {
            d.push('z');
        }
    }

    pub fn write(&self, out: &mut String) {
        for (class, d) in &self.items {
            if !d.is_empty() {
                let _ = writeln!(out, "<path class=\"{class}\" d=\"{d}\"/>");
            }
        }
    }
}

/// Ticks at round values for an axis from 0 to `max`: (value, label).
pub fn ticks_ns(max: i64, n: usize) -> Vec<i64> {
    if max <= 0 {
        return vec![0];
    }
    let raw = max as f64 / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
        .max(1.0);
    (0..)
        .map(|i| (i as f64 * step) as i64)
        .take_while(|v| *v <= max)
        .collect()
}

/// Like [`open`], for a chart `w` units wide (half-width charts side by side).
pub fn open_w(out: &mut String, name: &str, w: f64, h: f64, label: &str) {
    let _ = writeln!(
        out,
        "<figure class=\"chart\"><svg data-chart=\"{name}\" viewBox=\"0 0 {w:.0} {h:.0}\" \
         role=\"img\" aria-label=\"{}\">",
        esc(label)
    );
}
