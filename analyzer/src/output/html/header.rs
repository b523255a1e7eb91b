//! The page header (job, command, GPUs, window, steps) and a trace's summary
//! line.

use std::fmt::Write;

use super::{Part, dur, esc};
use crate::analysis::job::Mode;

pub fn header(out: &mut String, p: &Part, nranks: usize) {
    let r = p.report;
    let _ = write!(
        out,
        "<header>\n<h1>Why the GPU waited <small>{}</small></h1>\n<dl class=\"facts\">\n",
        esc(&r.name)
    );
    let mut job = match r.job.mode {
        Mode::Training => "training".to_string(),
        Mode::Inference => "inference".to_string(),
        Mode::Unknown => "unknown kind".to_string(),
    };
    if let Some(e) = r.job.serving_engine {
        job += &format!(", {e}");
    }
    if r.job.dataloader {
        job += &match r.job.dataloader_workers {
            Some(0) => ", DataLoader without workers".to_string(),
            Some(n) => format!(
                ", DataLoader with {n} worker{}",
                if n == 1 { "" } else { "s" }
            ),
            None => ", DataLoader".to_string(),
        };
    }
    if r.job.graphs() {
        job += ", graphs";
    }
    if nranks > 1 {
        job += &format!(", {nranks} ranks");
    }
    fact(out, "Job", &format!("{job} ({} trace)", r.source));
    if !r.command.is_empty() {
        let _ = writeln!(
            out,
            "<dt>Command</dt><dd><code>{}</code></dd>",
            esc(&r.command)
        );
    }
    let gpus: Vec<String> = r
        .devices
        .iter()
        .map(|d| {
            let name = if d.name.is_empty() { "?" } else { &d.name };
            format!("GPU {}: {name} ({})", d.id, d.arch)
        })
        .collect();
    fact(
        out,
        "GPUs",
        &if gpus.is_empty() {
            "none recorded".to_string()
        } else {
            gpus.join("; ")
        },
    );
    let mut window = format!("{} analyzed", dur(r.wall_ns));
    if let Some(s) = &r.startup {
        window += &format!(
            ", after {} of start-up ({:.0}% of the trace)",
            dur(s.ns),
            s.share_pct
        );
    }
    fact(out, "Window", &window);
    fact(out, "Steps", &steps_line(p));
    let procs = &r.processes;
    let _ = writeln!(
        out,
        "<dt>Processes</dt><dd>{} ({} launching GPU work, {} feeding them{})</dd>",
        procs.count,
        procs.trainers,
        procs.workers,
        procs.at_a_time()
    );
    out.push_str("</dl>\n");
    notes(out, p);
    out.push_str("</header>\n");
}

/// One rank's facts, under its title.
pub fn summary(out: &mut String, p: &Part) {
    let _ = writeln!(
        out,
        "<p class=\"summary\">{} analyzed &middot; {}</p>",
        esc(&dur(p.report.wall_ns)),
        esc(&steps_line(p))
    );
}

fn steps_line(p: &Part) -> String {
    let s = &p.report.steps;
    if s.count == 0 {
        return "no steps found: the window is taken as one".to_string();
    }
    let mut line = p.report.steps_headline(dur);
    line += &format!(
        ", marked by {}",
        if s.marked_by.is_empty() {
            s.source
        } else {
            &s.marked_by
        }
    );
    line
}

fn fact(out: &mut String, k: &str, v: &str) {
    let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
}

fn notes(out: &mut String, p: &Part) {
    let r = p.report;
    let mut notes: Vec<&str> = r.notes.iter().map(String::as_str).collect();
    notes.extend(r.processes.gpu_capture.iter().map(String::as_str));
    if notes.is_empty() {
        return;
    }
    out.push_str("<ul class=\"notes\">\n");
    for n in notes.iter().take(20) {
        let class = if n.starts_with("warning") {
            " class=\"warn\""
        } else {
            ""
        };
        let _ = writeln!(out, "<li{class}>{}</li>", esc(n));
    }
    if notes.len() > 20 {
        let _ = writeln!(
            out,
            "<li>and {} more (see the text report)</li>",
            notes.len() - 20
        );
    }
    out.push_str("</ul>\n");
}
