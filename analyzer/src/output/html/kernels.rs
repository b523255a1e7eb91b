//! Kernel time by precision (the report's busy time per class) and by op
//! class (from the kernel names, summed over the window).

use super::svg::{self, Shapes, W};
use super::{Part, dur, heading};
use crate::analysis::kernels::{OpClass, classify};
use crate::model::{GpuOpKind, Ns, Timeline};

const OP_CLASSES: [OpClass; 8] = [
    OpClass::Gemm,
    OpClass::Conv,
    OpClass::Attention,
    OpClass::Elementwise,
    OpClass::Reduction,
    OpClass::Communication,
    OpClass::Copy,
    OpClass::Other,
];

pub fn section(out: &mut String, p: &Part) {
    heading(
        out,
        "kernels",
        "Kernel time by precision and by op class",
        "Where the busy GPU time went. Precision: busy time per input precision of GEMM, \
         convolution and attention kernels (union within a class). Op class: kernel time \
         summed per kind of kernel, from the kernel names.",
    );
    let Some(dev) = p.device() else {
        out.push_str("<p class=\"empty\">No GPU activity recorded.</p>\n</section>\n");
        return;
    };
    let prec: Vec<(String, Ns)> = dev
        .busy_by_precision
        .iter()
        .filter(|(_, ns)| *ns > 0)
        .map(|(p, ns)| (p.name().replace('_', "-"), *ns))
        .collect();
    let ops = by_op_class(p.tl, dev.gpu, p.diag.window);
    out.push_str("<div class=\"pair\">\n");
    bars(out, "kernels-precision", "By precision", &prec);
    bars(out, "kernels-op-class", "By op class", &ops);
    out.push_str("</div>\n</section>\n");
}

/// Kernel time per op class (and copies/memsets) on one GPU in the window,
/// most first. One pass over the ops; kernel names are classified once each.
fn by_op_class(tl: &Timeline, gpu: u32, (a, b): (Ns, Ns)) -> Vec<(String, Ns)> {
    let Some(g) = tl.gpus.iter().find(|g| g.id == gpu) else {
        return vec![];
    };
    // Indexed by name id; u8::MAX = not classified yet.
    let mut class = vec![u8::MAX; tl.strings.len()];
    let mut sums = [0 as Ns; 9];
    for s in &g.streams {
        for op in &s.ops {
            let o = op.end.min(b) - op.start.max(a);
            if o <= 0 {
                continue;
            }
            let k = match op.kind() {
                GpuOpKind::Kernel => match class.get_mut(op.name as usize) {
                    Some(c) => {
                        if *c == u8::MAX {
                            let oc = classify(tl.strings.get(op.name)).op;
                            *c = OP_CLASSES.iter().position(|x| *x == oc).unwrap_or(7) as u8;
                        }
                        *c as usize
                    }
                    None => 7,
                },
                GpuOpKind::Memcpy | GpuOpKind::Memset => 8,
            };
            sums[k] += o;
        }
    }
    let mut out: Vec<(String, Ns)> = OP_CLASSES
        .iter()
        .map(|c| c.name().to_string())
        .chain(std::iter::once("memcpy/memset".to_string()))
        .zip(sums)
        .filter(|(_, ns)| *ns > 0)
        .collect();
    out.sort_by_key(|x| std::cmp::Reverse(x.1));
    out
}

fn bars(out: &mut String, name: &str, title: &str, rows: &[(String, Ns)]) {
    const L: f64 = 110.0;
    const ROW: f64 = 22.0;
    let w = W / 2.0 - 20.0;
    let span = w - L - 90.0;
    let total: Ns = rows.iter().map(|r| r.1).sum::<Ns>().max(1);
    let max = rows.iter().map(|r| r.1).max().unwrap_or(1).max(1);
    let h = (rows.len().max(1)) as f64 * ROW + 26.0;
    svg::open_w(out, name, w, h, title);
    svg::text(out, 4.0, 14.0, "start", "lbl strong", title);
    if rows.is_empty() {
        svg::text(out, L, 34.0, "start", "lbl", "no kernels in the window");
    }
    let mut shapes = Shapes::default();
    for (k, (label, ns)) in rows.iter().enumerate() {
        let y = 22.0 + k as f64 * ROW;
        let bw = (span * *ns as f64 / max as f64).max(1.0);
        shapes.rect("bar", L, y, bw, ROW - 7.0);
        svg::text(out, L - 6.0, y + 12.0, "end", "lbl", label);
        svg::text(
            out,
            L + bw + 5.0,
            y + 12.0,
            "start",
            "lbl",
            &format!("{} ({:.0}%)", dur(*ns), 100.0 * *ns as f64 / total as f64),
        );
    }
    shapes.write(out);
    svg::close(out, "");
}
