//! `stallscope top [DIR]`: a terminal view of a recording in progress,
//! refreshed every second: busy % per GPU, idle time by cause (last window
//! and since the start), step rate and mean step, the current top finding,
//! the CPU of the DataLoader workers and the files with the most I/O wait.
//! `record --live` starts it beside the job. It reads only the new records
//! on each tick. When stdout is not a terminal it prints plain lines instead.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use stallscope_analyzer::analysis::Cause;
use stallscope_analyzer::live::Monitor;

use super::export::pid_alive;

/// Watch a recording in progress: why the GPU is idle, refreshed every second.
///
/// q (or Esc) quits. Works over ssh; when stdout is not a terminal it prints
/// plain lines instead, and stops once every process has ended.
#[derive(Debug, Args)]
pub struct TopArgs {
    /// Seconds between two refreshes
    #[arg(long, value_name = "SECS", default_value_t = 1.0)]
    pub interval: f64,

    /// Seconds of recent timeline the "last" column looks at
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub window: u64,

    /// The job's pid: stop once it has ended, and pass Ctrl-C on to it (set by `record --live`)
    #[arg(long, hide = true)]
    pub pid: Option<u32>,

    /// The recording directory [default: the newest stallscope-* directory here]
    pub dir: Option<PathBuf>,
}

pub fn run(a: TopArgs) -> anyhow::Result<ExitCode> {
    let dir = match a.dir.clone() {
        Some(d) => d,
        None => newest_recording()?,
    };
    let interval = Duration::from_secs_f64(a.interval.clamp(0.1, 3600.0));
    let mut monitor = Monitor::new(&dir, a.window.max(1) as i64 * 1_000_000_000);
    let title = dir.display().to_string();
    if std::io::stdout().is_terminal() {
        tui(&mut monitor, &title, interval, a.pid)?;
    } else {
        plain(&mut monitor, interval, a.pid)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The newest `stallscope-*` directory in the current one (`record`'s default).
fn newest_recording() -> anyhow::Result<PathBuf> {
    std::fs::read_dir(".")?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("stallscope-"))
        .filter(|e| e.path().is_dir())
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .map(|e| e.path())
        .context("no recording given and no stallscope-* directory here")
}

fn job_over(monitor: &Monitor, pid: Option<u32>) -> bool {
    match pid {
        Some(p) => !pid_alive(p),
        None => monitor.reader().all_exited(),
    }
}

/// Plain lines, one block per refresh; stops when the job has ended.
fn plain(monitor: &mut Monitor, interval: Duration, pid: Option<u32>) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    loop {
        let over = job_over(monitor, pid);
        monitor.tick();
        for l in screen(monitor) {
            writeln!(out, "{l}")?;
        }
        writeln!(out)?;
        out.flush()?;
        if over {
            return Ok(());
        }
        std::thread::sleep(interval);
    }
}

/// Restores the terminal however the view ends.
struct Screen;

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = disable_raw_mode();
        let _ = execute!(std::io::stdout(), LeaveAlternateScreen);
    }
}

fn tui(
    monitor: &mut Monitor,
    title: &str,
    interval: Duration,
    pid: Option<u32>,
) -> anyhow::Result<()> {
    enable_raw_mode().context("the terminal does not support raw mode")?;
    let _restore = Screen;
    execute!(std::io::stdout(), EnterAlternateScreen)?;
    let mut term = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    let mut next = Instant::now();
    loop {
        if Instant::now() >= next {
            monitor.tick();
            next = Instant::now() + interval;
            let lines: Vec<Line> = screen(monitor)
                .into_iter()
                .enumerate()
                .map(|(i, l)| {
                    if i == 0 || l.starts_with("idle by cause") {
                        Line::styled(l, Style::default().add_modifier(Modifier::BOLD))
                    } else {
                        Line::raw(l)
                    }
                })
                .collect();
            term.draw(|f| {
                let block = Block::default()
                    .borders(Borders::ALL)
                    .title(format!(" stallscope top · {title} · q quits "));
                f.render_widget(
                    Paragraph::new(lines)
                        .block(block)
                        .wrap(Wrap { trim: false }),
                    f.area(),
                );
            })?;
        }
        if pid.is_some() && job_over(monitor, pid) {
            return Ok(());
        }
        match wait_for_input(Duration::from_millis(100)) {
            Input::Nothing => continue,
            // The terminal closed (a killed tmux or ssh session): nobody
            // watches, and crossterm would read its end of file forever.
            Input::Gone => return Ok(()),
            Input::Ready => {}
        }
        if event::poll(Duration::ZERO)?
            && let Event::Key(k) = event::read()?
            && k.kind == KeyEventKind::Press
        {
            match k.code {
                KeyCode::Char('q') | KeyCode::Esc => return Ok(()),
                KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                    // Raw mode keeps Ctrl-C from the job: pass it on.
                    if let Some(p) = pid {
                        // SAFETY: sends a signal to the job we were started for.
                        unsafe { libc::kill(p as i32, libc::SIGINT) };
                    }
                    return Ok(());
                }
                _ => {}
            }
        }
    }
}

/// What the terminal has after waiting up to some time.
enum Input {
    Nothing,
    Ready,
    /// It hung up: it polls as readable, and reads give end of file.
    Gone,
}

fn wait_for_input(t: Duration) -> Input {
    let mut p = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one pollfd, ours.
    if unsafe { libc::poll(&mut p, 1, t.as_millis() as libc::c_int) } <= 0 {
        Input::Nothing
    } else if p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
        Input::Gone
    } else {
        Input::Ready
    }
}

fn pct(part: i64, whole: i64) -> f64 {
    if whole <= 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn bar(p: f64) -> String {
    let n = (p / 5.0).round().clamp(0.0, 20.0) as usize;
    format!("{}{}", "█".repeat(n), "░".repeat(20 - n))
}

fn ms(ns: i64) -> String {
    format!("{:.1} ms", ns as f64 / 1e6)
}

/// The view's lines; the TUI and the plain mode print the same.
fn screen(m: &Monitor) -> Vec<String> {
    let mut v = Vec::new();
    let Some(snap) = m.last() else {
        return vec!["waiting for the recording...".into()];
    };
    let r = m.reader();
    let win_s = (snap.window.1 - snap.window.0) as f64 / 1e9;
    v.push(format!(
        "{} · {} processes · {} records read{}",
        r.command().unwrap_or("(no process yet)"),
        snap.processes.len(),
        r.records(),
        if snap.finished { " · finished" } else { "" }
    ));
    let Some(d) = &snap.diagnosis else {
        v.push("no GPU work seen yet".into());
        return v;
    };
    let totals = m.totals();
    for dev in &d.devices {
        let w = dev.window.1 - dev.window.0;
        let all = totals.gpus.get(&dev.gpu);
        let all_busy = all.map_or(0.0, |g| {
            pct(g.busy_ns, g.busy_ns + g.idle_ns.iter().sum::<i64>())
        });
        v.push(format!(
            "GPU {}  busy {:5.1}% {}  (last {:.0} s)   {:5.1}% since start",
            dev.gpu,
            pct(dev.busy_ns, w),
            bar(pct(dev.busy_ns, w)),
            win_s,
            all_busy
        ));
    }
    // Idle by cause, summed over the GPUs, largest in the window first.
    let mut last = [0i64; 8];
    let mut wall = 0i64;
    for dev in &d.devices {
        wall += dev.window.1 - dev.window.0;
        for c in Cause::ALL {
            last[c.index()] += dev.idle_by_cause[c.index()];
        }
    }
    let mut since = [0i64; 8];
    let mut since_wall = 0i64;
    for g in totals.gpus.values() {
        since_wall += g.busy_ns + g.idle_ns.iter().sum::<i64>();
        for c in Cause::ALL {
            since[c.index()] += g.idle_ns[c.index()];
        }
    }
    v.push(String::new());
    v.push(format!(
        "idle by cause      last {win_s:>3.0} s        since start"
    ));
    let mut causes: Vec<Cause> = Cause::ALL
        .into_iter()
        .filter(|c| last[c.index()] > 0 || since[c.index()] > 0)
        .collect();
    causes.sort_by_key(|c| {
        (
            std::cmp::Reverse(last[c.index()]),
            std::cmp::Reverse(since[c.index()]),
        )
    });
    for c in causes {
        v.push(format!(
            "  {:<10} {:>6.1}% {:>9}   {:>6.1}% {:>9}",
            c.name(),
            pct(last[c.index()], wall),
            ms(last[c.index()]),
            pct(since[c.index()], since_wall),
            ms(since[c.index()])
        ));
    }
    v.push(String::new());
    let steps = &d.steps;
    let span_s = match (steps.steps.first(), steps.steps.last()) {
        (Some(a), Some(b)) if b.end > a.start => (b.end - a.start) as f64 / 1e9,
        _ => 0.0,
    };
    v.push(format!(
        "steps   {:.2}/s, mean {} (last {:.0} s)   {} since start, mean {}",
        if span_s > 0.0 {
            steps.steps.len() as f64 / span_s
        } else {
            0.0
        },
        ms(steps.mean_ns),
        win_s,
        totals.steps,
        ms(if totals.steps > 0 {
            totals.step_sum_ns / totals.steps as i64
        } else {
            0
        })
    ));
    match d.findings.first() {
        Some(f) => {
            let cause = if f.sub_cause.is_empty() {
                f.cause.clone()
            } else {
                format!("{}/{}", f.cause, f.sub_cause)
            };
            v.push(format!(
                "top finding   {cause}: {:.0}% of the window; {}",
                f.share_pct, f.evidence
            ));
            if !f.fix.is_empty() {
                v.push(format!("  fix: {}", f.fix));
            }
        }
        None => v.push("top finding   none yet".into()),
    }
    // The producers: children of the processes that launch GPU work.
    let gpu_pids: Vec<u32> = snap
        .processes
        .iter()
        .filter(|p| p.uses_gpu)
        .map(|p| p.pid)
        .collect();
    let mut workers: Vec<_> = snap
        .processes
        .iter()
        .filter(|p| gpu_pids.contains(&p.ppid) && !gpu_pids.contains(&p.pid))
        .collect();
    workers.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct).then(a.pid.cmp(&b.pid)));
    if !workers.is_empty() {
        let list: Vec<String> = workers
            .iter()
            .take(8)
            .map(|p| format!("{} {:.0}%", p.pid, p.cpu_pct))
            .collect();
        v.push(format!(
            "workers CPU   {} ({} DataLoader workers, {:.0}% of a core each on average)",
            list.join("  "),
            workers.len(),
            workers.iter().map(|p| p.cpu_pct).sum::<f64>() / workers.len() as f64
        ));
    }
    let mut files: Vec<(&String, &i64)> = r.io_totals().by_file.iter().collect();
    files.sort_by_key(|(n, t)| (std::cmp::Reverse(**t), n.as_str()));
    if !files.is_empty() {
        v.push("I/O wait by file (since start)".into());
        for (name, t) in files.into_iter().take(5) {
            v.push(format!("  {:>10}  {name}", ms(*t)));
        }
    }
    v
}
