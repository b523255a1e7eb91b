//! I/O wait by filesystem and by file, and the processes, from the report's
//! host section.

use std::fmt::Write;

use super::svg::{self, Shapes, W};
use super::{Part, dur, esc, heading};
use crate::output::report::IoWaitReport;
use crate::output::text::bytes;

/// Rows per table at most.
const MAX_ROWS: usize = 15;

pub fn host_io(out: &mut String, p: &Part) {
    heading(
        out,
        "io",
        "I/O wait by filesystem and by file",
        "Time threads spent blocked in reads and writes, and the throughput they got.",
    );
    let h = &p.report.host;
    if h.io_by_fs.is_empty() && h.io_by_file.is_empty() {
        out.push_str("<p class=\"empty\">No host I/O recorded.</p>\n");
    } else {
        if !h.io_by_fs.is_empty() {
            fs_chart(out, &h.io_by_fs);
        }
        io_table(out, "By filesystem", &h.io_by_fs, false);
        io_table(out, "By file", &h.io_by_file, true);
    }
    if !h.processes.is_empty() {
        let _ = writeln!(
            out,
            "<table class=\"num\"><caption>Processes, by CPU time{}</caption><thead><tr>\
             <th>pid</th><th>role</th><th>command</th><th>CPU</th><th>I/O wait</th></tr></thead><tbody>",
            if h.processes.len() > MAX_ROWS {
                format!(" (top {MAX_ROWS} of {})", h.processes.len())
            } else {
                String::new()
            }
        );
        for pr in h.processes.iter().take(MAX_ROWS) {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"text\"><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                pr.pid,
                pr.role,
                esc(&crate::analysis::kernels::short_name(&pr.command, 80)),
                dur(pr.cpu_ns),
                dur(pr.io_wait_ns)
            );
        }
        out.push_str("</tbody></table>\n");
    }
    if h.dropped_records > 0 {
        let _ = writeln!(
            out,
            "<p class=\"warn\">{} records were lost (the shim's ring was full): figures are lower bounds.</p>",
            h.dropped_records
        );
    }
    out.push_str("</section>\n");
}

fn fs_chart(out: &mut String, rows: &[IoWaitReport]) {
    const L: f64 = 120.0;
    const ROW: f64 = 22.0;
    let rows: Vec<_> = rows.iter().take(8).collect();
    let max = rows.iter().map(|r| r.wait_ns).max().unwrap_or(1).max(1);
    let span = W - L - 260.0;
    svg::open(
        out,
        "io-by-fs",
        rows.len() as f64 * ROW + 6.0,
        "I/O wait by filesystem",
    );
    let mut shapes = Shapes::default();
    for (k, r) in rows.iter().enumerate() {
        let y = 3.0 + k as f64 * ROW;
        let w = (span * r.wait_ns as f64 / max as f64).max(1.0);
        shapes.rect("c-io", L, y, w, ROW - 7.0);
        svg::text(out, L - 6.0, y + 12.0, "end", "lbl", &r.what);
        svg::text(
            out,
            L + w + 6.0,
            y + 12.0,
            "start",
            "lbl",
            &format!(
                "{} waiting, {}, {:.0} MB/s",
                dur(r.wait_ns),
                bytes(r.bytes),
                r.mb_per_s
            ),
        );
    }
    shapes.write(out);
    svg::close(out, "");
}

fn io_table(out: &mut String, title: &str, rows: &[IoWaitReport], file: bool) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<table class=\"num\"><caption>{title}{}</caption><thead><tr><th>{}</th>{}<th>wait</th><th>bytes</th><th>calls</th><th>MB/s</th></tr></thead><tbody>",
        if rows.len() > MAX_ROWS {
            format!(" (top {MAX_ROWS} of {})", rows.len())
        } else {
            String::new()
        },
        if file { "file" } else { "filesystem" },
        if file { "<th>fs</th>" } else { "" }
    );
    for r in rows.iter().take(MAX_ROWS) {
        let _ = writeln!(
            out,
            "<tr><td class=\"text\">{}</td>{}<td>{}</td><td>{}</td><td>{}</td><td>{:.0}</td></tr>",
            esc(&r.what),
            if file {
                format!("<td>{}</td>", esc(&r.fs))
            } else {
                String::new()
            },
            dur(r.wait_ns),
            bytes(r.bytes),
            r.calls,
            r.mb_per_s
        );
    }
    out.push_str("</tbody></table>\n");
}
