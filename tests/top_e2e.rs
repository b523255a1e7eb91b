//! `record --live` (the `stallscope top` view) in a real pseudo-terminal:
//! tmux runs it on a data-bound gpusim job, and the captured screen shows
//! the data cause at the top of the idle causes while the job runs. The tmux
//! server has a socket of its own and is killed at the end, even when an
//! assertion fails.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;

/// Kills the test's tmux server when dropped.
struct Tmux(String);

impl Tmux {
    fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.arg("-L").arg(&self.0);
        c
    }

    fn screen(&self) -> Option<String> {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", "top"])
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").output();
    }
}

/// The first cause listed under "idle by cause", with its line.
fn top_cause(screen: &str) -> Option<(String, String)> {
    let mut lines = screen.lines().skip_while(|l| !l.contains("idle by cause"));
    lines.next()?;
    let row = lines.next()?;
    let word = row
        .trim_matches(|c: char| c == '│' || c.is_whitespace())
        .split_whitespace()
        .next()?;
    Some((word.to_string(), row.to_string()))
}

fn script(dir: &Path) -> std::path::PathBuf {
    let gpusim = built_lib("libgpusim.so");
    let s = dir.join("run.sh");
    std::fs::write(
        &s,
        format!(
            "#!/bin/sh\nexport SCENARIO_DIR='{dir}' SCENARIO_STEPS=100\n\
             exec '{bin}' record -o '{dir}/rec' --cupti '{sim}' --live -- '{py}' '{wl}' '{sim}' data_cpu\n",
            dir = dir.display(),
            bin = stallscope().display(),
            sim = gpusim.display(),
            py = python().display(),
            wl = workload("scenario.py").display(),
        ),
    )
    .unwrap();
    s
}

/// How many `stallscope top` processes watch a recording under `dir`.
fn views_of(dir: &Path) -> usize {
    let want = dir.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(" top --pid ") && c.contains(&want))
        .count()
}

#[test]
fn top_in_a_terminal_shows_data_first_for_a_data_bound_job() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let run = script(dir);
    let tmux = Tmux(format!("stallscope-top-{}", std::process::id()));
    let st = tmux
        .cmd()
        .args(["new-session", "-d", "-s", "top", "-x", "120", "-y", "40"])
        .arg(format!("sh '{}'; sleep 5", run.display()))
        .status()
        .expect("tmux is needed: run tests/setup");
    assert!(st.success());
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut last = String::new();
    let mut firsts = Vec::new();
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(500));
        let Some(s) = tmux.screen() else { break };
        if let Some((cause, row)) = top_cause(&s) {
            firsts.push(cause.clone());
            // Past the first ticks, data must lead and be well above zero.
            if cause == "data" && !row.contains(" 0.0%") && firsts.len() >= 3 {
                assert!(s.contains("GPU 0"), "{s}");
                assert!(s.contains("top finding"), "{s}");
                let log = std::fs::read_to_string(dir.join("rec/output.log")).unwrap_or_default();
                assert!(!s.contains("ok\n") || log.contains("ok"), "{s}");
                // Its terminal gone, the view ends (it had spun on the
                // closed terminal for good).
                drop(tmux);
                let gone = Instant::now() + Duration::from_secs(10);
                while views_of(dir) > 0 && Instant::now() < gone {
                    std::thread::sleep(Duration::from_millis(100));
                }
                assert_eq!(views_of(dir), 0, "top outlived its terminal");
                return;
            }
        }
        last = s;
    }
    panic!("the view never showed data first (first causes seen: {firsts:?}):\n{last}");
}
