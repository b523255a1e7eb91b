//! The terminal report: readable in 30 seconds, at most [`WIDTH`] columns.
//! Everything that comes from the trace (names, paths, command lines) has its
//! control characters escaped first ([`terminal_safe`]): a traced process may
//! be named anything, terminal escapes included.

use std::fmt::Write;

use super::report::{DeviceReport, HostReport, IoWaitReport, Report};
use crate::analysis::host::is_damage;
use crate::analysis::ranks::RankComparison;

/// The widest line the text report writes.
pub const WIDTH: usize = 100;

/// Formats nanoseconds for people.
pub fn dur(ns: i64) -> String {
    let a = ns.unsigned_abs() as f64;
    let s = if a >= 60e9 {
        format!("{:.1} min", a / 60e9)
    } else if a >= 1e9 {
        format!("{:.1} s", a / 1e9)
    } else if a >= 1e6 {
        format!("{:.0} ms", a / 1e6)
    } else if a >= 1e3 {
        format!("{:.0} µs", a / 1e3)
    } else {
        format!("{a:.0} ns")
    };
    if ns < 0 { format!("-{s}") } else { s }
}

/// [`dur`] with a decimal below ten of a unit, for steps: what-ifs on short steps
/// read "step 3.4 ms -> 3.1 ms", not "3 ms -> 3 ms" beside a saving of 8%.
pub fn dur_step(ns: i64) -> String {
    let a = ns.unsigned_abs() as f64;
    let s = if (1e6..1e7).contains(&a) {
        format!("{:.1} ms", a / 1e6)
    } else if (1e3..1e4).contains(&a) {
        format!("{:.1} µs", a / 1e3)
    } else {
        return dur(ns);
    };
    if ns < 0 { format!("-{s}") } else { s }
}

/// `s` with control characters (C0, DEL, C1) escaped as Rust does (`\u{1b}`),
/// as `stallscope dump` prints them.
pub fn escape_controls(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A copy of the report whose trace-derived strings are safe to print.
pub fn terminal_safe(r: &Report) -> Report {
    let mut r = r.clone();
    let e = escape_controls;
    r.name = e(&r.name);
    r.command = e(&r.command);
    r.steps.marked_by = e(&r.steps.marked_by);
    for n in r.notes.iter_mut().chain(r.processes.gpu_capture.iter_mut()) {
        *n = e(n);
    }
    for d in &mut r.devices {
        d.name = e(&d.name);
        d.id = e(&d.id);
    }
    let h = &mut r.host;
    for w in h.io_by_fs.iter_mut().chain(h.io_by_file.iter_mut()) {
        w.what = e(&w.what);
    }
    for p in &mut h.processes {
        p.command = e(&p.command);
    }
    for d in &mut h.damage {
        *d = e(d);
    }
    for f in &mut r.findings {
        f.evidence = e(&f.evidence);
        f.fix = e(&f.fix);
        f.sub_cause = e(&f.sub_cause);
    }
    r
}

/// Writes `text` indented under a finding, wrapped at [`WIDTH`] columns;
/// words longer than a line are split.
fn wrap(o: &mut String, tag: &str, text: &str) {
    wrap_at(o, 4, tag, text);
}

/// `wrap` with `margin` columns before the tag.
fn wrap_at(o: &mut String, margin: usize, tag: &str, text: &str) {
    let indent = margin + tag.chars().count();
    let mut line = format!("{}{tag}", " ".repeat(margin));
    let mut fresh = true;
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let used = line.chars().count();
            let room = WIDTH.saturating_sub(used + usize::from(!fresh));
            if word.len() <= room {
                if !fresh {
                    line.push(' ');
                }
                line.extend(word.iter());
                fresh = false;
                break;
            }
            if fresh {
                // Longer than a whole line: split it.
                let head: String = word.drain(..room.max(1)).collect();
                line.push_str(&head);
            }
            let _ = writeln!(o, "{line}");
            line = " ".repeat(indent);
            fresh = true;
        }
    }
    let _ = writeln!(o, "{line}");
}

/// The command line with directories dropped from paths, so it fits a line.
fn short_command(cmd: &str) -> String {
    cmd.split(' ')
        .map(|a| {
            if a.starts_with('/') {
                a.rsplit('/').next().unwrap_or(a)
            } else {
                a
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn bar(pct: f64, width: usize) -> String {
    let filled = ((pct / 100.0) * width as f64)
        .round()
        .clamp(0.0, width as f64) as usize;
    format!("{}{}", "█".repeat(filled), "░".repeat(width - filled))
}

/// A kernel's own name without its namespaces (`at::native::cunn_SoftMaxForward`
/// is `cunn_SoftMaxForward`): what a short label has room for.
fn unqualified(name: &str) -> &str {
    let head = name.find(['<', '(']).unwrap_or(name.len());
    match name[..head].rfind("::") {
        Some(i) => &name[i + 2..],
        None => name,
    }
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!(
            "{}…",
            s.chars().take(n.saturating_sub(1)).collect::<String>()
        )
    }
}

/// "NVIDIA A100-SXM4-80GB"; "GPU 2 (unnamed AMD CDNA3)" for a device the
/// trace describes without a name (vLLM's ROCm traces); "GPU 9 (unknown
/// model)" for one it does not describe.
pub fn device_label(d: &DeviceReport) -> String {
    if d.name.is_empty() {
        if d.arch == crate::analysis::arch::Arch::Unknown.name() {
            format!("GPU {} (unknown model)", d.id)
        } else {
            format!("GPU {} (unnamed {})", d.id, d.arch)
        }
    } else {
        d.name.clone()
    }
}

/// The line that stands for the fixes when there are none: the GPU was
/// busy, or it idled with a cause but no what-if gains anything (then say
/// so, rather than call it busy), or only the minor fixes together do.
fn no_fix_line(r: &Report, d: &DeviceReport) -> String {
    let idle = 100.0 * d.idle_ns as f64 / (d.idle_ns + d.busy_ns).max(1) as f64;
    let top = d
        .idle_by_cause_ns
        .iter()
        .filter_map(|(c, v)| Some((c, v.as_i64()?)))
        .filter(|x| x.1 > 0)
        .max_by_key(|x| x.1);
    // Minor fixes can each save under 0.5% and still save more together.
    let together = r
        .combined
        .as_ref()
        .filter(|_| r.minor.len() > 1)
        .map(|c| before_after(r, c.est_step_ns_after, c.est_saving_ns))
        .filter(|x| x.1 >= crate::analysis::findings::MINOR_STEP_PCT);
    match (top, together) {
        (_, Some((step, saving))) => format!(
            "No fix saves 0.5% alone; the {} minor ones together: {step}, saves {saving:.1}%.",
            r.minor.len()
        ),
        (Some((cause, _)), None) if idle >= 5.0 => format!(
            "No fix with a measurable saving: the GPU idled {idle:.0}% (mostly {cause}),\n\
             but no what-if gains 0.5% or more."
        ),
        _ => "No stall worth fixing: the GPU was busy.".to_string(),
    }
}

/// What stands for the fixes when there are none: all start-up, too little
/// after it, or the GPU's idle time with no fix that gains anything (broken
/// in two lines for the text report; other formats join them). None for a
/// host-only report.
pub fn no_findings_line(r: &Report) -> Option<String> {
    let s = r.startup.as_ref();
    if s.is_some_and(|s| s.all) {
        Some("No steady state: no GPU work follows start-up.".into())
    } else if s.is_some_and(|s| s.short_rest) {
        let [w0, w1] = r.window_ns;
        Some(format!(
            "No steady state to advise on: {} after start-up, and no steps.",
            dur(w1 - w0)
        ))
    } else {
        r.devices.first().map(|d| no_fix_line(r, d))
    }
}

/// A what-if as "step 87 ms -> 40 ms" (the window without steps), and its
/// saving in percent of the window.
fn before_after(r: &Report, step_after: i64, saving_ns: i64) -> (String, f64) {
    let step = if r.steps.count > 0 {
        format!(
            "step {} -> {}",
            dur_step(r.steps.mean_ns),
            dur_step(step_after)
        )
    } else {
        format!(
            "window {} -> {}",
            dur_step(r.wall_ns),
            dur_step(r.wall_ns - saving_ns)
        )
    };
    (step, 100.0 * saving_ns as f64 / r.wall_ns.max(1) as f64)
}

/// Notes about the steps and start-up, shown under the header (and only
/// there), since they qualify every figure below them.
fn shown_under_header(n: &str) -> bool {
    n.contains("cut off") || n.contains("mostly start-up") || n.contains("the trace does not show")
}

pub fn render(r: &Report, perfetto: Option<&str>) -> String {
    let r = &terminal_safe(r);
    let mut o = String::new();
    let procs = &r.processes;
    let roles = if procs.workers > 0 {
        format!(
            "{} trainer{} + {} worker{}{}",
            procs.trainers.max(1),
            if procs.trainers > 1 { "s" } else { "" },
            procs.workers,
            if procs.workers == 1 { "" } else { "s" },
            procs.at_a_time()
        )
    } else {
        format!(
            "{} process{}",
            procs.count,
            if procs.count == 1 { "" } else { "es" }
        )
    };
    // A profiler trace may name no command: then the roles stand alone.
    let command = match cut(&short_command(&r.command), 30) {
        c if c.trim().is_empty() => String::new(),
        c => format!("{c} "),
    };
    // The figures cover the window after start-up, or the GPU's span where
    // no GPU work follows start-up (a capture-only trace's window can be
    // microseconds of a trace of tens of milliseconds): the header says
    // which, and the name gives it room.
    let window = format!(
        "{}{}",
        dur(r.wall_ns),
        match &r.startup {
            Some(s) if s.all => " of GPU activity",
            Some(_) => " after start-up",
            None => "",
        }
    );
    let rest = format!(" · {command}({roles}) · {window}");
    let room = WIDTH
        .saturating_sub("stallscope · ".chars().count() + rest.chars().count())
        .clamp(16, 40);
    let head = format!("stallscope · {}{rest}", cut(&r.name, room));
    let _ = writeln!(o, "{}", cut(&head, WIDTH));
    let mut job = vec![match r.devices.first() {
        Some(d) if r.devices.iter().all(|x| x.name == d.name) && !d.name.is_empty() => {
            format!("{}x {} ({})", r.devices.len(), d.name, d.arch)
        }
        Some(d) if r.devices.len() == 1 && d.name.is_empty() => device_label(d),
        Some(d) if r.devices.len() == 1 => format!("{} ({})", device_label(d), d.arch),
        Some(_) => format!("{} GPUs", r.devices.len()),
        None => "no GPU activity".into(),
    }];
    job.push(
        match r.job.mode {
            crate::analysis::job::Mode::Training => "training",
            crate::analysis::job::Mode::Inference => "inference",
            crate::analysis::job::Mode::Unknown => "training or inference not known",
        }
        .to_string(),
    );
    if let Some(e) = r.job.serving_engine {
        job.push(format!("{e} serving"));
    }
    if r.job.graphs() {
        job.push("CUDA/HIP graphs".into());
    }
    if r.job.dataloader {
        job.push(match r.job.dataloader_workers {
            Some(n) => format!("DataLoader, {n} workers"),
            None => "DataLoader".into(),
        });
    }
    let _ = writeln!(o, "{}", cut(&format!("  {}", job.join(" · ")), WIDTH));
    for n in &procs.gpu_capture {
        wrap(&mut o, "note: ", n);
    }
    // With what marked the steps, then the median and p90, where the line
    // has room for them (`detail` 2, 1, 0).
    let steps_line = |detail: u8| {
        if r.steps.count > 0 {
            let by = match r.steps.source {
                _ if detail < 2 => String::new(),
                "nvtx" | "detected" if !r.steps.marked_by.is_empty() => format!(
                    " [by {}]",
                    cut(
                        unqualified(&crate::analysis::kernels::short_name(
                            &r.steps.marked_by,
                            60
                        )),
                        24
                    )
                ),
                _ => String::new(),
            };
            let spread = if detail > 0 {
                format!(
                    " (median {}, p90 {})",
                    dur_step(r.steps.median_ns),
                    dur_step(r.steps.p90_ns)
                )
            } else {
                String::new()
            };
            format!(
                "steps {}{by}, mean {}{spread}{}",
                r.steps.count,
                dur_step(r.steps.mean_ns),
                if r.steps.outliers.is_empty() {
                    String::new()
                } else {
                    format!(", {} slow", r.steps.outliers.len())
                }
            )
        } else {
            "no steps found".into()
        }
    };
    let steps = [steps_line(2), steps_line(1), steps_line(0)];
    if let Some(s) = &r.startup {
        let what: Vec<String> = s
            .items
            .iter()
            .take(3)
            .map(|i| format!("{} {}", cut(&i.what, 24), dur(i.ns)))
            .collect();
        let line = format!(
            "start-up {} ({:.0}% of the trace{}): {}",
            dur(s.ns),
            s.share_pct,
            if s.all { "; no GPU work after it" } else { "" },
            what.join(", ")
        );
        let _ = writeln!(o, "{}", cut(&line, 100));
    }
    for n in r.notes.iter().filter(|n| shown_under_header(n)) {
        wrap_at(&mut o, 0, "note: ", n);
    }
    if let Some(p) = r.periodic_text(dur) {
        let _ = writeln!(o, "slow steps: {}", cut(&p, 88));
    }
    for d in &r.devices {
        let idle = r.idle_pct(d);
        let line = |steps: &str| {
            format!(
                "GPU {} busy {:>3.0}% {}   idle {:.0}%   {steps}",
                cut(&d.id, 8),
                100.0 - idle,
                bar(100.0 - idle, 20),
                idle
            )
        };
        let text = steps
            .iter()
            .map(|s| line(s))
            .find(|l| l.chars().count() <= WIDTH)
            .unwrap_or_else(|| line(&steps[2]));
        let _ = writeln!(o, "{}", cut(&text, WIDTH));
        for (c, v) in d.idle_causes().iter().take(5) {
            let pct = 100.0 * *v as f64 / r.wall_ns.max(1) as f64;
            if pct < 0.5 {
                continue;
            }
            let f = r.findings.iter().find(|f| f.cause == *c);
            let label = match f {
                Some(f) if !f.sub_cause.is_empty() => format!("{c}/{}", f.sub_cause),
                _ => c.to_string(),
            };
            let ev = f.map(|f| f.evidence.as_str()).unwrap_or_default();
            let line = format!("  {:<18} {pct:>3.0}%  {ev}", cut(&label, 18));
            let _ = writeln!(o, "{}", cut(line.trim_end(), WIDTH));
        }
        let prec = &d.busy_by_precision_ns;
        let kernels: i64 = prec.values().filter_map(|v| v.as_i64()).sum();
        if kernels > 0 {
            let pct = |k: &str| {
                100.0 * prec.get(k).and_then(|v| v.as_i64()).unwrap_or(0) as f64 / kernels as f64
            };
            let mut parts = vec![
                format!("{:.0}% FP32 GEMM", pct("fp32")),
                format!("{:.0}% TF32", pct("tf32")),
                format!("{:.0}% BF16/FP16", pct("bf16") + pct("fp16")),
            ];
            if pct("fp8") + pct("int8") >= 0.5 {
                parts.push(format!("{:.0}% FP8/INT8", pct("fp8") + pct("int8")));
            }
            parts.push(format!("{:.0}% other kernels", pct("non_gemm")));
            if pct("comm") >= 0.5 {
                parts.push(format!("{:.0}% communication", pct("comm")));
            }
            let _ = writeln!(o, "  kernel time: {}", parts.join(", "));
            // Their tensor cores run at the activations' type: what sets
            // them apart is the weights' memory traffic.
            let low_bit = 100.0 * d.low_bit_gemm_ns.min(kernels) as f64 / kernels as f64;
            if low_bit >= 0.5 {
                let _ = writeln!(
                    o,
                    "               {low_bit:.0}% in GEMMs with 4-bit weights (MXFP4, NVFP4, INT4), \
                     counted above by activation type"
                );
            }
        }
    }
    let host_only = r.devices.is_empty();
    if host_only {
        let _ = writeln!(
            o,
            "No GPU activity was recorded: the report covers host activity only."
        );
        host_full(&mut o, &r.host);
    }
    if !r.findings.is_empty() {
        let _ = writeln!(o, "\nFixes, by estimated saving");
        for (i, f) in r.findings.iter().take(6).enumerate() {
            let label = f.label();
            let (step, saving) = before_after(r, f.est_step_ns_after, f.est_saving_ns);
            let line = format!(
                "{:>2}. {:<20} {step:<28} saves {saving:.0}%",
                i + 1,
                cut(&label, 20)
            );
            let _ = writeln!(o, "{}", cut(&line, WIDTH));
            wrap(&mut o, "fix: ", &f.fix);
            wrap(&mut o, "why: ", &f.evidence);
            wrap(&mut o, "assumes: ", &f.assumption);
        }
        if let Some(c) = &r.combined {
            let (step, saving) = before_after(r, c.est_step_ns_after, c.est_saving_ns);
            let _ = writeln!(
                o,
                "    {:<20} {step:<28} saves {saving:.0}%",
                "all fixes at once"
            );
        }
        if !r.minor.is_empty() {
            let names: Vec<String> = r
                .minor
                .iter()
                .map(|f| format!("{}/{}", f.cause, f.sub_cause))
                .collect();
            wrap(&mut o, "minor (under 0.5% each): ", &names.join(", "));
        }
    } else if let Some(line) = no_findings_line(r) {
        let _ = writeln!(o, "\n{line}");
    }
    for f in &r.options {
        let saving = 100.0 * f.est_saving_ns as f64 / r.wall_ns.max(1) as f64;
        let line = format!(
            "    option: {}/{} saves {saving:.0}% (changes the numerics: validate accuracy first)",
            f.cause, f.sub_cause
        );
        let _ = writeln!(o, "{}", cut(&line, WIDTH));
        wrap(&mut o, "fix: ", &f.fix);
        wrap(&mut o, "assumes: ", &f.assumption);
    }
    if !host_only {
        host_brief(&mut o, &r.host);
    }
    // A host-only report lists the damage in its host part already.
    let rest: Vec<&String> = r
        .notes
        .iter()
        .filter(|n| !(shown_under_header(n) || (host_only && is_damage(n))))
        .collect();
    if !rest.is_empty() {
        let _ = writeln!(o);
        for n in rest.iter().take(8) {
            wrap(&mut o, "note: ", n);
        }
        if rest.len() > 8 {
            let _ = writeln!(o, "    ({} more notes in the JSON report)", rest.len() - 8);
        }
    }
    if let Some(p) = perfetto {
        let _ = writeln!(
            o,
            "{}",
            cut(
                &format!(
                    "Open the timeline: ui.perfetto.dev  <-  {}",
                    escape_controls(p)
                ),
                WIDTH
            )
        );
    }
    o
}

/// Bytes for people, in powers of ten (as MB/s is).
pub fn bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.0} kB", b / 1e3)
    } else {
        format!("{b:.0} B")
    }
}

/// The last `n` characters of a path ("…/data/shard0.bin").
fn cut_left(s: &str, n: usize) -> String {
    let len = s.chars().count();
    if len <= n {
        s.to_string()
    } else {
        format!("…{}", s.chars().skip(len + 1 - n).collect::<String>())
    }
}

fn mb_per_s(w: &IoWaitReport) -> String {
    if w.mb_per_s >= 10.0 {
        format!("{:.0}", w.mb_per_s)
    } else {
        format!("{:.1}", w.mb_per_s)
    }
}

fn io_row(o: &mut String, what: &str, fs: &str, w: &IoWaitReport) {
    let line = format!(
        "  {:<44} {:<7} {:>8} {:>7} {:>9} {:>8}",
        cut_left(what, 44),
        cut(fs, 7),
        dur(w.wait_ns),
        w.calls,
        bytes(w.bytes),
        mb_per_s(w)
    );
    let _ = writeln!(o, "{}", cut(line.trim_end(), WIDTH));
}

/// Processes shown in a host-only report's tree; the rest are summed.
const TREE_ROWS: usize = 12;

/// The host part of a host-only report: I/O wait by filesystem and file,
/// the process tree with roles and CPU, and what was lost.
fn host_full(o: &mut String, h: &HostReport) {
    if !h.io_by_fs.is_empty() {
        let _ = writeln!(
            o,
            "\n{:<47}{:<7} {:>8} {:>7} {:>9} {:>8}",
            "I/O wait by filesystem", "", "wait", "calls", "bytes", "MB/s"
        );
        for w in &h.io_by_fs {
            io_row(o, &w.what, "", w);
        }
        let title = if h.more_files > 0 {
            format!(
                "by file (top {} of {})",
                h.io_by_file.len(),
                h.io_by_file.len() + h.more_files
            )
        } else {
            "by file".to_string()
        };
        let _ = writeln!(o, "{title:<47}fs");
        for w in &h.io_by_file {
            io_row(o, &w.what, &w.fs, w);
        }
    } else {
        let _ = writeln!(o, "\nNo file reads or writes long enough to record.");
    }
    let b = &h.io_below_threshold;
    if b.calls > 0 {
        let line = format!(
            "  + {} shorter calls (any fd, not by file): {}, {}",
            b.calls,
            bytes(b.bytes),
            dur(b.ns as i64)
        );
        let _ = writeln!(o, "{}", cut(&line, WIDTH));
    }
    if !h.processes.is_empty() {
        let _ = writeln!(
            o,
            "\n{:<46} {:<8} {:>9} {:>9}",
            "Processes", "role", "CPU", "I/O wait"
        );
        let shown: Vec<usize> = (0..h.processes.len().min(TREE_ROWS)).collect();
        for (i, depth) in tree_order(h) {
            if !shown.contains(&i) {
                continue;
            }
            let p = &h.processes[i];
            let label = format!(
                "{}{} {}",
                "  ".repeat(depth.min(6)),
                p.pid,
                short_command(&p.command)
            );
            let line = format!(
                "  {:<44} {:<8} {:>9} {:>9}",
                cut(&label, 44),
                p.role,
                dur(p.cpu_ns),
                dur(p.io_wait_ns)
            );
            let _ = writeln!(o, "{}", line.trim_end());
        }
        if h.processes.len() > TREE_ROWS {
            let rest = &h.processes[TREE_ROWS..];
            let _ = writeln!(
                o,
                "  … and {} more processes, {} CPU in all",
                rest.len(),
                dur(rest.iter().map(|p| p.cpu_ns).sum())
            );
        }
    }
    if h.dropped_records > 0 {
        let per: Vec<String> = h
            .processes
            .iter()
            .filter(|p| p.dropped_records > 0)
            .map(|p| format!("pid {} {}", p.pid, p.dropped_records))
            .collect();
        let line = format!(
            "    records dropped: {} ({})",
            h.dropped_records,
            per.join(", ")
        );
        let _ = writeln!(o, "\n{}", cut(&line, WIDTH));
    } else if !h.damage.is_empty() {
        let _ = writeln!(o);
    }
    for d in &h.damage {
        wrap(o, "damage: ", d);
    }
}

/// The processes as a tree: (index, depth), parents before children, each
/// pid's images in order, siblings by start.
fn tree_order(h: &HostReport) -> Vec<(usize, usize)> {
    let mut idx: Vec<usize> = (0..h.processes.len()).collect();
    idx.sort_by_key(|&i| (h.processes[i].start_ns, h.processes[i].pid));
    let pids: std::collections::HashSet<u32> = h.processes.iter().map(|p| p.pid).collect();
    let mut out = Vec::with_capacity(idx.len());
    let mut done: std::collections::HashSet<u32> = std::collections::HashSet::new();
    let mut stack: Vec<(u32, usize)> = Vec::new();
    let mut roots: Vec<u32> = Vec::new();
    for &i in &idx {
        let p = &h.processes[i];
        let first = idx.iter().find(|&&j| h.processes[j].pid == p.pid) == Some(&i);
        if first && (p.ppid == p.pid || !pids.contains(&p.ppid)) {
            roots.push(p.pid);
        }
    }
    for r in roots.into_iter().rev() {
        stack.push((r, 0));
    }
    let walk = |stack: &mut Vec<(u32, usize)>,
                out: &mut Vec<(usize, usize)>,
                done: &mut std::collections::HashSet<u32>| {
        while let Some((pid, depth)) = stack.pop() {
            if !done.insert(pid) {
                continue;
            }
            let images: Vec<usize> = idx
                .iter()
                .copied()
                .filter(|&j| h.processes[j].pid == pid)
                .collect();
            out.extend(images.iter().map(|&j| (j, depth)));
            let mut kids: Vec<u32> = Vec::new();
            for &j in &idx {
                let c = &h.processes[j];
                if c.ppid == pid && c.pid != pid && !kids.contains(&c.pid) {
                    kids.push(c.pid);
                }
            }
            for k in kids.into_iter().rev() {
                stack.push((k, depth + 1));
            }
        }
    };
    walk(&mut stack, &mut out, &mut done);
    // A cycle of pids (reuse) has no root: list what is left at the top.
    for &i in &idx {
        if !done.contains(&h.processes[i].pid) {
            stack.push((h.processes[i].pid, 0));
            walk(&mut stack, &mut out, &mut done);
        }
    }
    out
}

/// The host part of a GPU report: two lines at most, under the fixes.
fn host_brief(o: &mut String, h: &HostReport) {
    let mut lines = Vec::new();
    if !h.io_by_fs.is_empty() {
        let fs: Vec<String> = h
            .io_by_fs
            .iter()
            .take(3)
            .map(|w| format!("{} {} at {} MB/s", w.what, dur(w.wait_ns), mb_per_s(w)))
            .collect();
        let mut line = format!("host I/O wait: {}", fs.join(", "));
        if let Some(f) = h.io_by_file.first() {
            // A folder's files ("…/images/*") keep the folder's name.
            let cut = match f.what.strip_suffix("/*") {
                Some(dir) => dir.rfind('/').map_or(0, |i| i + 1),
                None => f.what.rfind('/').map_or(0, |i| i + 1),
            };
            let name = &f.what[cut..];
            line += &format!("; top file {} {}", name, dur(f.wait_ns));
        }
        lines.push(line);
    }
    let mut cpu = Vec::new();
    for (role, one, many) in [
        ("trainer", "trainer", "trainers"),
        ("worker", "worker", "workers"),
        ("launcher", "launcher", "launchers"),
        ("other", "other", "others"),
    ] {
        let (n, ns) = h.cpu_of(role);
        if n > 0 && ns > 0 {
            let busiest = h
                .processes
                .iter()
                .filter(|p| p.role == role)
                .map(|p| p.cpu_ns)
                .max()
                .unwrap_or(0);
            cpu.push(match n {
                1 => format!("{one} {}", dur(ns)),
                _ => format!("{n} {many} {} (busiest {})", dur(ns), dur(busiest)),
            });
        }
    }
    if !cpu.is_empty() {
        lines.push(format!("host CPU: {}", cpu.join(", ")));
    }
    if !lines.is_empty() {
        let _ = writeln!(o);
        for l in lines {
            let _ = writeln!(o, "{}", cut(&l, WIDTH));
        }
    }
}

/// The busiest device of a rank's report.
fn main_device(r: &Report) -> Option<&DeviceReport> {
    r.devices.iter().max_by_key(|d| d.busy_ns)
}

/// The slowest rank and what makes it so, for every output: "rank 7, the
/// others waited 45 ms for it at collectives (93% of all communication
/// time)", or "rank 1 (median step 20 ms, 12% over the median rank)".
pub fn slowest_said(s: &crate::analysis::ranks::Slowest) -> String {
    let pct = |p: Option<f64>| p.unwrap_or(0.0);
    match s.by {
        "collectives" => format!(
            "rank {}, the others waited {} for it at collectives ({:.0}% of all communication \
             time)",
            s.rank,
            dur(s.value_ns),
            pct(s.comm_share_pct)
        ),
        by => format!(
            "rank {} ({} {}, {:.0}% over the median rank)",
            s.rank,
            if by == "step_median" {
                "median step"
            } else {
                "GPU window"
            },
            dur(s.value_ns),
            pct(s.over_median_pct)
        ),
    }
}
/// Several ranks of one job: a table (rank, busy, idle, steps, top cause,
/// the slowest rank marked), for the per-rank reports printed below it.
pub fn render_ranks(reports: &[Report], cmp: Option<&RankComparison>) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "stallscope · {} ranks", reports.len());
    let _ = writeln!(
        o,
        "  {:>4}  {:>5}  {:>5}  {:>5}  {:>10}  top cause (saving)",
        "rank", "busy", "idle", "steps", "median"
    );
    let slowest = cmp.and_then(|c| c.slowest.as_ref()).map(|s| s.rank);
    for (i, r) in reports.iter().enumerate() {
        let rank = cmp
            .and_then(|c| c.ranks.get(i))
            .map_or(i as u32, |s| s.rank);
        let (busy, idle) = main_device(r).map_or((0.0, 0.0), |d| {
            let idle = r.idle_pct(d);
            (100.0 - idle, idle)
        });
        let top = r.findings.first().map_or_else(
            || "-".to_string(),
            |f| {
                let label = f.label();
                format!(
                    "{} ({:.0}%)",
                    escape_controls(&label),
                    100.0 * f.est_saving_ns as f64 / r.wall_ns.max(1) as f64
                )
            },
        );
        let mark = if slowest == Some(rank) {
            "<- slowest"
        } else {
            ""
        };
        let line = format!(
            "  {rank:>4}  {busy:>4.0}%  {idle:>4.0}%  {:>5}  {:>10}  {:<28} {mark}",
            r.steps.count,
            if r.steps.count > 0 {
                dur(r.steps.median_ns)
            } else {
                "-".into()
            },
            cut(&top, 28)
        );
        let _ = writeln!(o, "{}", cut(line.trim_end(), WIDTH));
    }
    if let Some(c) = cmp {
        if let Some(s) = &c.slowest {
            let _ = writeln!(
                o,
                "{}",
                cut(&format!("  slowest: {}", slowest_said(s)), WIDTH)
            );
        }
        // A lone straggler is the slowest rank, said just above.
        let named = c.slowest.as_ref().filter(|s| s.by == "collectives");
        if !c.stragglers.is_empty() && named.is_none_or(|s| c.stragglers != [s.rank]) {
            let list: Vec<String> = c.stragglers.iter().map(|r| r.to_string()).collect();
            let _ = writeln!(
                o,
                "  {}",
                cut(
                    &format!(
                        "stragglers at collectives (the others waited for them): rank {}",
                        list.join(", ")
                    ),
                    WIDTH - 2
                )
            );
        }
    }
    o
}

/// What `analyze` prints for several ranks: the table, then each rank's
/// report under a heading (`perfetto[i]` names rank i's Perfetto file).
pub fn render_multi(
    reports: &[Report],
    cmp: Option<&RankComparison>,
    perfetto: &[Option<&str>],
) -> String {
    let mut o = render_ranks(reports, cmp);
    for (i, r) in reports.iter().enumerate() {
        let rank = cmp
            .and_then(|c| c.ranks.get(i))
            .map_or(i as u32, |s| s.rank);
        let _ = writeln!(o, "\n── rank {rank} ({} of {}) ──", i + 1, reports.len());
        o.push_str(&render(r, perfetto.get(i).copied().flatten()));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::super::report::{CombinedReport, FindingReport, HostProcessReport};
    use super::*;

    /// The header's duration says what it covers, and a long name leaves it
    /// room within the width.
    #[test]
    fn the_header_says_what_its_duration_covers() {
        use super::super::report::StartupReport;
        use crate::model::{Source, Timeline};
        let name = "a_very_long_trace_name_from_a_serving_engine_capture_rank_0.pt.trace.json.gz";
        let mut tl = Timeline::new(Source::Kineto, name);
        tl.finalize();
        let mut r = Report::build(&tl, &crate::analysis::diagnose(&tl));
        r.command = "python -m sglang.launch_server --model-path Qwen/Qwen3-8B".into();
        let head = |r: &Report| render(r, None).lines().next().unwrap().to_string();
        let plain = head(&r);
        assert!(
            !plain.contains("start-up") && !plain.contains("GPU"),
            "{plain}"
        );
        for (all, want) in [(false, " after start-up"), (true, " of GPU activity")] {
            r.startup = Some(StartupReport {
                ns: 32_000_000,
                until_ns: 32_000_000,
                share_pct: 94.0,
                mostly: true,
                all,
                short_rest: true,
                items: Vec::new(),
            });
            let h = head(&r);
            assert!(h.ends_with(&format!("{}{want}", dur(r.wall_ns))), "{h}");
            assert!(h.chars().count() <= WIDTH, "{h}");
        }
    }

    #[test]
    fn a_trace_without_a_command_leaves_no_gap_in_the_header() {
        use crate::model::{Source, Timeline};
        let mut tl = Timeline::new(Source::Kineto, "serving.json");
        tl.finalize();
        let r = Report::build(&tl, &crate::analysis::diagnose(&tl));
        let text = render(&r, None);
        let head = text.lines().next().unwrap();
        assert!(
            head.starts_with("stallscope · serving.json · (0 processes) · "),
            "{head}"
        );
    }

    #[test]
    fn workers_started_each_epoch_say_how_many_ran_at_once() {
        use crate::model::{Source, Timeline};
        let mut tl = Timeline::new(Source::Native, "epochs");
        tl.finalize();
        let mut r = Report::build(&tl, &crate::analysis::diagnose(&tl));
        let head = |r: &Report| render(r, None).lines().next().unwrap().to_string();
        (r.processes.trainers, r.processes.workers) = (1, 8);
        r.processes.workers_at_once = 2;
        assert!(
            head(&r).contains("(1 trainer + 8 workers, 2 at a time)"),
            "{}",
            head(&r)
        );
        r.processes.workers_at_once = 8;
        assert!(head(&r).contains("(1 trainer + 8 workers)"), "{}", head(&r));
    }

    #[test]
    fn wrap_keeps_lines_within_the_width() {
        let mut o = String::new();
        let long = format!("short words then {} and more", "x".repeat(250));
        wrap(&mut o, "why: ", &long);
        assert!(o.lines().all(|l| l.chars().count() <= WIDTH), "{o}");
        assert_eq!(o.matches('x').count(), 250);
    }

    #[test]
    fn devices_are_labelled_by_name_else_by_what_is_known() {
        let d = |name: &str, arch: &'static str| DeviceReport {
            id: "2".into(),
            name: name.into(),
            arch,
            busy_ns: 0,
            idle_ns: 0,
            idle_by_cause_ns: Default::default(),
            busy_by_precision_ns: Default::default(),
            low_bit_gemm_ns: 0,
        };
        assert_eq!(
            device_label(&d("NVIDIA H100", "NVIDIA Hopper")),
            "NVIDIA H100"
        );
        assert_eq!(
            device_label(&d("", "AMD CDNA3")),
            "GPU 2 (unnamed AMD CDNA3)"
        );
        assert_eq!(
            device_label(&d("", "an unknown GPU")),
            "GPU 2 (unknown model)"
        );
    }

    #[test]
    fn no_fix_is_busy_only_when_the_gpu_was() {
        let d = |busy_ns: i64, idle: &[(&str, i64)]| DeviceReport {
            id: "0".into(),
            name: String::new(),
            arch: "AMD CDNA3",
            busy_ns,
            idle_ns: idle.iter().map(|x| x.1).sum(),
            idle_by_cause_ns: idle
                .iter()
                .map(|(c, v)| (c.to_string(), (*v).into()))
                .collect(),
            busy_by_precision_ns: Default::default(),
            low_bit_gemm_ns: 0,
        };
        use crate::model::{Source, Timeline};
        let mut tl = Timeline::new(Source::Kineto, "t.json");
        tl.finalize();
        let mut r = Report::build(&tl, &crate::analysis::diagnose(&tl));
        r.wall_ns = 1_000_000;
        let busy = "No stall worth fixing: the GPU was busy.";
        assert_eq!(no_fix_line(&r, &d(99, &[("launch", 1)])), busy);
        assert_eq!(no_fix_line(&r, &d(50, &[])), busy);
        let idle = d(50, &[("other", 45), ("launch", 5)]);
        let line = no_fix_line(&r, &idle);
        assert!(
            line.starts_with("No fix with a measurable saving: the GPU idled 50% (mostly other)")
        );
        assert!(line.lines().all(|l| l.chars().count() <= WIDTH), "{line}");
        // Minor fixes that save 0.5% only together are said to.
        let minor = |cause: &str| FindingReport {
            cause: cause.into(),
            sub_cause: "x".into(),
            share_pct: 1.0,
            est_saving_ns: 4_000,
            est_step_ns_after: 0,
            assumption: String::new(),
            evidence: String::new(),
            fix: String::new(),
            kernels: Vec::new(),
        };
        r.minor = vec![minor("io"), minor("cpu")];
        r.combined = Some(CombinedReport {
            est_step_ns_after: 0,
            est_saving_ns: 4_000,
            assumption: String::new(),
        });
        assert!(no_fix_line(&r, &idle).starts_with("No fix with a measurable saving"));
        r.combined.as_mut().unwrap().est_saving_ns = 9_000;
        let line = no_fix_line(&r, &idle);
        assert_eq!(
            line,
            "No fix saves 0.5% alone; the 2 minor ones together: window 1.0 ms -> 991 µs, saves 0.9%."
        );
        assert!(line.chars().count() <= WIDTH, "{line}");
    }

    fn io(what: &str, fs: &str, wait_ns: i64, read: u64) -> IoWaitReport {
        IoWaitReport {
            what: what.into(),
            fs: fs.into(),
            wait_ns,
            bytes: read,
            calls: 3,
            read_bytes: read,
            write_bytes: 0,
            mb_per_s: read as f64 * 1e3 / wait_ns as f64,
        }
    }

    fn process(pid: u32, ppid: u32, role: &'static str, cpu_ns: i64) -> HostProcessReport {
        HostProcessReport {
            pid,
            ppid,
            role,
            command: format!("python job.py {pid}"),
            cpu_ns,
            io_wait_ns: 0,
            start_ns: pid as i64,
            end_ns: 1_000,
            io_bytes: 0,
            run_delay_ns: 0,
            dropped_records: if pid == 12 { 40 } else { 0 },
        }
    }

    fn host() -> HostReport {
        HostReport {
            io_by_fs: vec![io("nfs", "nfs", 2_000_000_000, 170_000_000)],
            io_by_file: vec![io(
                "/mnt/datasets/imagenet/train/shard-000017-of-001024.tar",
                "nfs",
                1_500_000_000,
                120_000_000,
            )],
            processes: vec![
                process(11, 10, "worker", 3_000_000_000),
                process(12, 10, "worker", 2_000_000_000),
                process(10, 1, "main", 1_000_000_000),
                process(1, 0, "launcher", 5_000_000),
            ],
            dropped_records: 40,
            damage: vec![
                "skipped a damaged chunk: /r/12.sst: at byte offset 4096 (0x1000): bad".into(),
            ],
            more_files: 3,
            io_below_threshold: Default::default(),
        }
    }

    #[test]
    fn host_only_part_has_io_tree_with_roles_and_losses() {
        let mut o = String::new();
        host_full(&mut o, &host());
        assert!(o.lines().all(|l| l.chars().count() <= WIDTH), "{o}");
        let line = |start: &str| {
            o.lines()
                .find(|l| l.trim_start().starts_with(start))
                .unwrap_or_else(|| panic!("no {start:?} line in\n{o}"))
                .to_string()
        };
        assert!(
            line("nfs").contains("2.0 s") && line("nfs").contains(" 85"),
            "{o}"
        );
        // The path keeps its file name; 120 MB in 1.5 s.
        let f = line("…");
        assert!(
            f.ends_with(" 80") && f.contains("shard-000017-of-001024.tar"),
            "{f}"
        );
        assert!(o.contains("top 1 of 4"), "{o}");
        // A tree: the launcher, the main process under it, workers under that.
        assert!(line("1 python").starts_with("  1 ") && line("1 python").contains("launcher"));
        assert!(line("10 python").starts_with("    10 ") && line("10 python").contains("main"));
        assert!(line("11 python").starts_with("      11 ") && line("11 python").contains("3.0 s"));
        let order: Vec<usize> = ["1 python", "10 python", "11 python", "12 python"]
            .iter()
            .map(|s| o.find(&line(s)).unwrap())
            .collect();
        assert!(order.is_sorted(), "{o}");
        assert!(line("records dropped").contains("40 (pid 12 40)"), "{o}");
        assert!(
            line("damage:").contains("/r/12.sst: at byte offset 4096"),
            "{o}"
        );
    }

    #[test]
    fn gpu_report_host_part_is_two_lines() {
        let mut o = String::new();
        host_brief(&mut o, &host());
        let lines: Vec<&str> = o.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), 2, "{o}");
        assert!(
            lines[0].starts_with("host I/O wait: nfs 2.0 s at 85 MB/s")
                && lines[0].contains("top file shard-000017-of-001024.tar 1.5 s"),
            "{o}"
        );
        assert!(
            lines[1].contains("2 workers 5.0 s (busiest 3.0 s)")
                && lines[1].contains("launcher 5 ms"),
            "{o}"
        );
        // Nothing to say (a Kineto trace: no host I/O, no samples): no lines.
        let mut o = String::new();
        host_brief(&mut o, &HostReport::default());
        assert_eq!(o, "");
    }

    #[test]
    fn control_characters_are_escaped() {
        let s = escape_controls("\u{1b}]0;PWN\u{7}\u{1b}[2Jtrain\u{9b}");
        assert!(!s.chars().any(char::is_control), "{s:?}");
        assert!(s.contains("\\u{1b}]0;PWN\\u{7}") && s.ends_with("train\\u{9b}"));
    }
}
