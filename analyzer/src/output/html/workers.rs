//! The DataLoader workers (the processes that feed the trainers): CPU use and
//! time blocked in file I/O over the analyzed window, one row per worker.

use std::fmt::Write;

use stallscope_format::HostOp;

use super::svg::{self, Shapes, W};
use super::{Part, dur, heading};
use crate::analysis::context::producer_processes;
use crate::model::{Ns, Process, SpanKind, Thread, Timeline};

/// Workers drawn at most (the busiest); the others are summed into one row.
const MAX_WORKERS: usize = 8;
/// Time buckets per row.
const BUCKETS: usize = 120;

const L: f64 = 150.0;

/// A worker's name, CPU cores and I/O share per bucket, CPU and I/O time.
type Row = (String, Vec<f64>, Vec<f64>, f64, Ns);
const ROW: f64 = 40.0;

pub fn section(out: &mut String, p: &Part) {
    heading(
        out,
        "workers",
        "DataLoader workers over time",
        "CPU use (cores, filled) and time blocked in file I/O (line) of each process that \
         feeds the trainer, over the analyzed window.",
    );
    let workers = workers(p.tl);
    if workers.is_empty() {
        out.push_str(
            "<p class=\"empty\">No worker processes in this trace (none forked by or piping \
             to the process that launched GPU work).</p>\n</section>\n",
        );
        return;
    }
    let (a, b) = p.diag.window;
    let (a, b) = if b > a {
        (a, b)
    } else {
        p.tl.extent().unwrap_or((0, 1))
    };
    let bucket = ((b - a) as f64 / BUCKETS as f64).max(1.0);
    // Per worker: CPU cores and I/O share per bucket.
    let mut rows: Vec<Row> = workers
        .iter()
        .map(|&i| {
            let pr = &p.tl.processes[i];
            let (cpu, cpu_ns) = cpu_series(pr, a, bucket);
            let (io, io_ns) = io_series(pr, a, b, bucket);
            (label(pr), cpu, io, cpu_ns, io_ns)
        })
        .collect();
    rows.sort_by(|x, y| y.3.total_cmp(&x.3));
    if rows.len() > MAX_WORKERS {
        let rest = rows.split_off(MAX_WORKERS - 1);
        let n = rest.len();
        let mut sum = (
            format!("{n} others"),
            vec![0.0; BUCKETS],
            vec![0.0; BUCKETS],
            0.0,
            0,
        );
        for r in rest {
            for k in 0..BUCKETS {
                sum.1[k] += r.1[k];
                sum.2[k] += r.2[k];
            }
            sum.3 += r.3;
            sum.4 += r.4;
        }
        rows.push(sum);
    }
    let top = rows
        .iter()
        .flat_map(|r| r.1.iter().chain(&r.2))
        .fold(1.0f64, |m, v| m.max(*v));
    let span = W - L - 20.0;
    let h = rows.len() as f64 * ROW + 24.0;
    svg::open(
        out,
        "workers",
        h,
        "CPU and I/O of each DataLoader worker over time",
    );
    let mut shapes = Shapes::default();
    for (k, (name, cpu, io, cpu_ns, io_ns)) in rows.iter().enumerate() {
        let base = 4.0 + (k + 1) as f64 * ROW - 6.0;
        let hh = ROW - 10.0;
        let x = |i: usize| L + span * i as f64 / (BUCKETS - 1) as f64;
        let mut pts: Vec<(f64, f64)> = vec![(x(0), base)];
        pts.extend(
            cpu.iter()
                .enumerate()
                .map(|(i, v)| (x(i), base - hh * v / top)),
        );
        pts.push((x(BUCKETS - 1), base));
        shapes.poly("c-cpu area", &pts, true);
        let line: Vec<(f64, f64)> = io
            .iter()
            .enumerate()
            .map(|(i, v)| (x(i), base - hh * v / top))
            .collect();
        shapes.poly("io-line", &line, false);
        shapes.rect("baseline", L, base, span, 0.6);
        svg::text(out, L - 8.0, base - 16.0, "end", "lbl strong", name);
        svg::text(
            out,
            L - 8.0,
            base - 3.0,
            "end",
            "tick",
            &format!("CPU {} · I/O {}", dur(*cpu_ns as Ns), dur(*io_ns)),
        );
    }
    shapes.write(out);
    let axis = 4.0 + rows.len() as f64 * ROW + 4.0;
    for i in 0..=4 {
        let t = (b - a) * i / 4;
        let x = L + span * i as f64 / 4.0;
        svg::text(
            out,
            x,
            axis + 10.0,
            "middle",
            "tick",
            &format!("+{}", dur(t)),
        );
    }
    let mut cap = String::new();
    let _ = write!(
        cap,
        "Rows share one scale: full height is {top:.1} cores (CPU) or {top:.1} threads blocked (I/O)."
    );
    svg::close(out, &cap);
    out.push_str("</section>\n");
}

/// "pid 123 python3", short.
fn label(pr: &Process) -> String {
    let prog = pr.cmdline.split_whitespace().next().unwrap_or("");
    let prog = prog.rsplit('/').next().unwrap_or(prog);
    let prog: String = prog.chars().take(14).collect();
    format!("pid {} {prog}", pr.pid).trim_end().to_string()
}

/// The processes feeding any process that launched GPU work.
fn workers(tl: &Timeline) -> Vec<usize> {
    let launches = |p: &Process| {
        p.threads
            .iter()
            .any(|t| t.spans.iter().any(|s| s.kind.is_named() && s.arg != 0))
    };
    let trainers: Vec<usize> = (0..tl.processes.len())
        .filter(|&i| launches(&tl.processes[i]))
        .collect();
    let mut out: Vec<usize> = trainers
        .iter()
        .flat_map(|&i| producer_processes(tl, i))
        .filter(|i| !trainers.contains(i))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Cumulative CPU time of a thread at `t`, interpolated between samples.
fn cpu_at(th: &Thread, t: f64) -> f64 {
    let s = &th.samples;
    let i = s.partition_point(|x| (x.ts as f64) <= t);
    match (i.checked_sub(1).map(|k| &s[k]), s.get(i)) {
        (Some(a), Some(b)) => {
            let f = (t - a.ts as f64) / (b.ts - a.ts).max(1) as f64;
            a.cpu_ns as f64 + f * (b.cpu_ns as f64 - a.cpu_ns as f64)
        }
        (Some(a), None) => a.cpu_ns as f64,
        _ => 0.0,
    }
}

/// CPU cores used per bucket, and the CPU time in the window.
fn cpu_series(pr: &Process, a: Ns, bucket: f64) -> (Vec<f64>, f64) {
    let mut v = vec![0.0; BUCKETS];
    for th in &pr.threads {
        let mut prev = cpu_at(th, a as f64);
        for (k, x) in v.iter_mut().enumerate() {
            let now = cpu_at(th, a as f64 + (k + 1) as f64 * bucket);
            *x += (now - prev).max(0.0) / bucket;
            prev = now;
        }
    }
    let total = v.iter().sum::<f64>() * bucket;
    (v, total)
}

/// Threads blocked in file I/O per bucket (time blocked over bucket time),
/// and the blocked time in the window.
fn io_series(pr: &Process, a: Ns, b: Ns, bucket: f64) -> (Vec<f64>, Ns) {
    let mut v = vec![0.0; BUCKETS];
    let mut total = 0;
    for th in &pr.threads {
        let first = th.spans.partition_point(|s| s.ts < a - 10_000_000_000);
        for s in th.spans[first..].iter().take_while(|s| s.ts < b) {
            let SpanKind::Host(op) = s.kind else { continue };
            let io = op.is_read()
                || op.is_write()
                || matches!(op, HostOp::Open | HostOp::Fsync | HostOp::Fdatasync);
            if !io {
                continue;
            }
            let file = pr.object(s.id).is_none_or(|o| o.is_storage());
            let (s0, s1) = (s.ts.max(a), s.end().min(b));
            if !file || s1 <= s0 {
                continue;
            }
            total += s1 - s0;
            let lo = (((s0 - a) as f64 / bucket) as usize).min(BUCKETS - 1);
            let hi = ((((s1 - a) as f64) / bucket).ceil() as usize).clamp(lo + 1, BUCKETS);
            for (k, x) in v.iter_mut().enumerate().take(hi).skip(lo) {
                let (bs, be) = (
                    a as f64 + k as f64 * bucket,
                    a as f64 + (k + 1) as f64 * bucket,
                );
                let o = (s1 as f64).min(be) - (s0 as f64).max(bs);
                if o > 0.0 {
                    *x += o / bucket;
                }
            }
        }
    }
    (v, total)
}
