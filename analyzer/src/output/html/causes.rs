//! The cause legend, and idle time by cause per GPU with start-up apart.

use std::fmt::Write;

use super::svg::{self, Shapes, W};
use super::{Part, dur, esc, heading};
use crate::analysis::Cause;

/// What each cause means, for the legend's tooltips.
fn meaning(c: Cause) -> &'static str {
    match c {
        Cause::Data => "waiting for batches from DataLoader workers or producer threads",
        Cause::Io => "reading files, page faults on mapped files",
        Cause::Cpu => "the launching thread was busy on the CPU",
        Cause::Memory => "allocation, cudaFree, out-of-memory retries, offload copies",
        Cause::Sync => "the host blocked on the GPU (synchronize, .item(), D2H copies)",
        Cause::Transfer => "pageable or unoverlapped host-to-device copies",
        Cause::Launch => "tiny kernels launched as fast as the host can",
        Cause::Other => "waiting on another stream or event",
    }
}

pub fn legend(out: &mut String) {
    out.push_str("<ul class=\"legend\"><li><span class=\"sw busy\"></span>GPU busy</li>");
    for c in Cause::ALL {
        let _ = write!(
            out,
            "<li title=\"{}\"><span class=\"sw c-{n}\"></span>{n}</li>",
            esc(meaning(c)),
            n = c.name()
        );
    }
    out.push_str("</ul>\n");
}

pub fn section(out: &mut String, p: &Part) {
    heading(
        out,
        "causes",
        "Idle time by cause",
        "Per GPU over the analyzed window; start-up (context creation, module loading, \
         compilation, autotuning) is counted apart, before the window.",
    );
    let r = p.report;
    let devices: Vec<_> = r.devices.iter().take(16).collect();
    if devices.is_empty() {
        out.push_str("<p class=\"empty\">No GPU activity recorded.</p>\n");
    } else {
        const LEFT: f64 = 150.0;
        const ROW: f64 = 24.0;
        let span = W - LEFT - 20.0;
        let h = devices.len() as f64 * ROW + 8.0;
        svg::open(
            out,
            "idle-by-cause",
            h,
            "Busy and idle time by cause, per GPU",
        );
        let mut shapes = Shapes::default();
        for (k, d) in devices.iter().enumerate() {
            let y = 4.0 + k as f64 * ROW;
            let total = (d.busy_ns + d.idle_ns).max(1) as f64;
            let mut x = LEFT;
            let wb = span * d.busy_ns as f64 / total;
            shapes.rect("busy", x, y, wb, ROW - 8.0);
            x += wb;
            for (name, ns) in d.idle_causes() {
                let w = span * ns as f64 / total;
                shapes.rect(&format!("c-{name}"), x, y, w, ROW - 8.0);
                x += w;
            }
            svg::text(
                out,
                LEFT - 8.0,
                y + 12.0,
                "end",
                "lbl",
                &format!("GPU {}: {:.0}% idle", d.id, r.idle_pct(d)),
            );
        }
        shapes.write(out);
        svg::close(out, "");
        // The busiest GPU's causes, as a table with the figures.
        if let Some(d) = r.devices.iter().max_by_key(|d| d.busy_ns) {
            let idle = d.idle_causes();
            if idle.is_empty() {
                out.push_str("<p class=\"empty\">The GPU was never idle in the window.</p>\n");
            } else {
                let _ = writeln!(
                    out,
                    "<table class=\"num\"><caption>GPU {}: idle {} of {} ({:.1}%)</caption>\
                     <thead><tr><th>cause</th><th>idle</th><th>% of window</th><th>% of idle</th></tr></thead><tbody>",
                    esc(&d.id),
                    dur(d.idle_ns),
                    dur(d.busy_ns + d.idle_ns),
                    r.idle_pct(d)
                );
                for (name, ns) in idle {
                    let _ = writeln!(
                        out,
                        "<tr><td><span class=\"sw c-{name}\"></span>{name}</td><td>{}</td><td>{:.1}%</td><td>{:.0}%</td></tr>",
                        dur(ns),
                        100.0 * ns as f64 / (d.busy_ns + d.idle_ns).max(1) as f64,
                        100.0 * ns as f64 / d.idle_ns.max(1) as f64
                    );
                }
                out.push_str("</tbody></table>\n");
            }
        }
    }
    startup(out, p);
    out.push_str("</section>\n");
}

fn startup(out: &mut String, p: &Part) {
    let Some(s) = &p.report.startup else {
        out.push_str("<p class=\"empty\">No start-up cost seen before the steady state.</p>\n");
        return;
    };
    let _ = writeln!(
        out,
        "<h4>Start-up, apart: {} ({:.0}% of the trace)</h4>",
        dur(s.ns),
        s.share_pct
    );
    if s.items.is_empty() {
        return;
    }
    const LEFT: f64 = 330.0;
    const ROW: f64 = 20.0;
    let items: Vec<_> = s.items.iter().take(10).collect();
    let max = items.iter().map(|i| i.ns).max().unwrap_or(1).max(1);
    let span = W - LEFT - 110.0;
    svg::open(
        out,
        "startup",
        items.len() as f64 * ROW + 6.0,
        "Start-up cost by kind and call",
    );
    let mut shapes = Shapes::default();
    for (k, it) in items.iter().enumerate() {
        let y = 3.0 + k as f64 * ROW;
        let w = (span * it.ns as f64 / max as f64).max(1.0);
        shapes.rect("bar", LEFT, y, w, ROW - 6.0);
        let what = crate::analysis::kernels::short_name(&it.what, 40);
        let label = if it.count > 1 {
            format!("{}: {what} ×{}", it.kind, it.count)
        } else {
            format!("{}: {what}", it.kind)
        };
        svg::text(out, LEFT - 8.0, y + 11.0, "end", "lbl", &label);
        svg::text(out, LEFT + w + 6.0, y + 11.0, "start", "lbl", &dur(it.ns));
    }
    shapes.write(out);
    let more = s.items.len().saturating_sub(items.len());
    svg::close(
        out,
        &if more > 0 {
            format!("The 10 largest of {} start-up items.", s.items.len())
        } else {
            String::new()
        },
    );
}
