//! The shim keeps its promise (issue 14): the program's fds, signals and
//! output are its own, `record` behaves like the command it wraps, and every
//! kill leaves a readable trace. One test per defect the audit found; each
//! failed before its fix.

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// Compiles C source into `dir` (a shared library if `shared`).
fn cc(dir: &Path, name: &str, src: &str, shared: bool) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let out = dir.join(name);
    let mut cmd = Command::new("cc");
    cmd.arg("-O1").arg("-o").arg(&out).arg(&c);
    if shared {
        cmd.args(["-shared", "-fPIC", "-ldl"]);
    }
    let st = cmd
        .status()
        .expect("a C compiler (tests/setup installs one)");
    assert!(st.success(), "cc {name}");
    out
}

/// A command under raw LD_PRELOAD, recording into `rec` at threshold 0.
fn preloaded(program: impl AsRef<std::ffi::OsStr>, rec: &Path) -> Command {
    let mut c = Command::new(program);
    c.env("LD_PRELOAD", shim())
        .env("STALLSCOPE_OUT", rec)
        .env("STALLSCOPE_MIN_SPAN_US", "0");
    c
}

fn python_script(dir: &Path, name: &str, src: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, src).unwrap();
    p
}

/// The header state bits of every trace file of a recording.
fn header_states(rec: &Path) -> Vec<u64> {
    trace_files(rec)
        .iter()
        .map(|f| dump(f)[0]["state"].as_u64().unwrap())
        .collect()
}

/// Every `.sst` of `rec` reads back (there may be none).
fn assert_all_readable(rec: &Path) {
    if !rec.exists() {
        return;
    }
    for f in trace_files(rec) {
        let out = Command::new(stallscope())
            .arg("dump")
            .arg(&f)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{} does not read back: {}",
            f.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

const STOPPED: u64 = 1;

/// Item 1: a program's own file at any fd number (the shim's old fixed fd
/// 700, or numbers reused after closerange) is never grown by the shim.
#[test]
fn files_at_reused_fd_numbers_stay_the_programs() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rec");
    let files = tmp.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let data = tmp.path().join("d.bin");
    std::fs::write(&data, vec![1u8; 4096]).unwrap();
    let script = python_script(
        tmp.path(),
        "fds.py",
        r#"
import os, sys
files, data = sys.argv[1], sys.argv[2]
mine = os.open(os.path.join(files, "at700"), os.O_RDWR | os.O_CREAT, 0o600)
os.write(mine, b"123456789")
os.dup2(mine, 700)
os.close(mine)
os.closerange(3, 700)
fds = [os.open(os.path.join(files, f"f{i}"), os.O_RDWR | os.O_CREAT, 0o600) for i in range(1000)]
for fd in fds:
    os.write(fd, b"x")
src = os.open(data, os.O_RDONLY)
for _ in range(30000):  # many chunks: the trace file grows often
    os.pread(src, 64, 0)
os.write(700, b"!")
print("done")
"#,
    );
    let out = preloaded(python(), &rec)
        .arg(&script)
        .arg(&files)
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(files.join("at700")).unwrap(),
        b"123456789!",
        "the file at fd 700 was touched"
    );
    for i in 0..1000 {
        let len = std::fs::metadata(files.join(format!("f{i}")))
            .unwrap()
            .len();
        assert_eq!(len, 1, "f{i} was grown to {len} bytes");
    }
    let states = header_states(&rec);
    assert_eq!(states.len(), 1);
    assert_eq!(states[0] & STOPPED, 0, "recording stopped");
}

/// Item 1: `exec 700>log` in bash writes the program's lines to its log, and
/// the trace stays readable.
#[test]
fn bash_exec_onto_a_high_fd_is_the_programs() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rec");
    let log = tmp.path().join("log");
    let out = Command::new(stallscope())
        .args(["record", "-o"])
        .arg(&rec)
        .args(["--", "bash", "-c"])
        .arg(format!(
            "exec 700>{}; for i in $(seq 300); do echo line$i >&700; done",
            log.display()
        ))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.lines().count(), 300, "{text:?}");
    assert!(text.starts_with("line1\n") && text.ends_with("line300\n"));
    assert_all_readable(&rec);
    assert!(dump(&rec).iter().any(|r| r["kind"] == "span"));
}

/// Item 1: a vfork child that closes fds (and makes hooked calls in the
/// parent's memory) does not stop the parent's recording.
#[test]
fn a_vfork_child_closing_fds_leaves_the_parent_recording() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rec");
    let prog = cc(
        tmp.path(),
        "vfork_close",
        r#"
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
    char b[8];
    int z = open("/dev/zero", O_RDONLY);
    for (int i = 0; i < 1000; i++) read(z, b, 1);
    pid_t p = vfork();
    if (p == 0) {
        for (int fd = 3; fd < 1024; fd++) if (fd != z) close(fd);
        for (int i = 0; i < 5000; i++) read(z, b, 1);  /* fills the shared chunk */
        _exit(0);
    }
    waitpid(p, 0, 0);
    for (int i = 0; i < 5000; i++) read(z, b, 1);
    return 0;
}
"#,
        false,
    );
    let out = preloaded(&prog, &rec).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let states = header_states(&rec);
    assert_eq!(states.len(), 1);
    assert_eq!(
        states[0] & STOPPED,
        0,
        "recording stopped: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reads = dump(&rec)
        .iter()
        .filter(|r| r["kind"] == "span" && r["op"] == "read")
        .count();
    assert!(reads >= 11_000, "{reads} read spans");
}

/// Opens files until the limit, retrying a moment later (the shim may hold
/// an fd for a few microseconds), and prints how many it got.
const OPEN_ALL: &str = r#"
import os, sys, threading, time
n = int(sys.argv[1])
stop = threading.Event()
def worker():
    with open("/proc/self/stat", "rb") as f:
        f.read()
    stop.wait()
threads = [threading.Thread(target=worker) for _ in range(n)]
for t in threads:
    t.start()
time.sleep(0.6)  # the sampler lists the threads
fds = []
for attempt in range(5):
    try:
        while True:
            fds.append(os.open("/dev/null", os.O_RDONLY))
    except OSError:
        time.sleep(0.02)
print(len(fds))
stop.set()
for t in threads:
    t.join()
"#;

/// Item 4: the shim keeps a fixed (zero) number of fds whatever the number of
/// threads: under `ulimit -n 64` a 40-thread program opens as many files as
/// without the shim.
#[test]
fn the_fd_limit_is_the_programs_whatever_the_thread_count() {
    let tmp = tempfile::tempdir().unwrap();
    let script = python_script(tmp.path(), "open_all.py", OPEN_ALL);
    let run = |rec: Option<&Path>| {
        let mut c = match rec {
            Some(r) => preloaded(python(), r),
            None => Command::new(python()),
        };
        c.arg(&script).arg("40");
        // SAFETY: setrlimit is async-signal-safe.
        unsafe {
            c.pre_exec(|| {
                let r = libc::rlimit {
                    rlim_cur: 64,
                    rlim_max: 64,
                };
                libc::setrlimit(libc::RLIMIT_NOFILE, &r);
                Ok(())
            });
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse::<u32>()
            .unwrap()
    };
    let plain = run(None);
    let rec = tmp.path().join("rec");
    let traced = run(Some(&rec));
    assert!(plain >= 55, "plain run opened only {plain}");
    assert_eq!(traced, plain, "files opened under the shim vs without");
    // The threads were sampled all the same.
    let sampled: std::collections::HashSet<u64> = dump(&rec)
        .iter()
        .filter(|r| r["kind"] == "sample")
        .map(|r| r["tid"].as_u64().unwrap())
        .collect();
    assert!(sampled.len() >= 20, "{} threads sampled", sampled.len());
}

/// `stallscope record -- <args>` as a child with its stdout piped.
fn spawn_record(rec: &Path, args: &[&str]) -> Child {
    let mut c = Command::new(stallscope());
    c.args(["record", "-o"])
        .arg(rec)
        .arg("--")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    interruptible(&mut c).spawn().unwrap()
}

fn spawn_plain(args: &[&str]) -> Child {
    let mut c = Command::new(args[0]);
    c.args(&args[1..])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    interruptible(&mut c).spawn().unwrap()
}

/// SIGINT at its default in the child: tests started in the background of
/// a non-interactive shell inherit it ignored (POSIX: an asynchronous list
/// without job control ignores SIGINT), and Ctrl-C would then stop nothing,
/// with or without record.
fn interruptible(c: &mut Command) -> &mut Command {
    // SAFETY: signal() is async-signal-safe, as pre_exec requires.
    unsafe {
        c.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        })
    }
}

fn first_line(c: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(c.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    line.trim().to_string()
}

fn wait_at_most(c: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let t = Instant::now();
    while t.elapsed() < limit {
        if let Some(st) = c.try_wait().unwrap() {
            return Some(st);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = c.kill();
    None
}

fn killpg(c: &Child, sig: i32) {
    // SAFETY: signals our own child's process group.
    assert_eq!(unsafe { libc::kill(-(c.id() as i32), sig) }, 0);
}

/// Item 2: the job starts with the signal dispositions `record` had,
/// SIGPIPE included: Rust's runtime ignores it inside record and resets it
/// to the default before exec, so a job whose parent ignores SIGPIPE (a
/// launcher that traps it) would otherwise die of it under record only.
#[test]
fn record_leaves_signal_dispositions_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let show = "grep -E '^Sig(Ign|Blk)' /proc/self/status";
    for (i, parent) in ["", "trap '' PIPE; "].into_iter().enumerate() {
        let plain = Command::new("sh")
            .args(["-c", &format!("{parent}exec {show}")])
            .output()
            .unwrap();
        let traced = Command::new("sh")
            .args([
                "-c",
                &format!("{parent}exec \"$0\" record -o \"$1\" -- {show}"),
            ])
            .arg(stallscope())
            .arg(tmp.path().join(format!("rec{i}")))
            .output()
            .unwrap();
        assert!(traced.status.success(), "{traced:?}");
        let (plain, traced) = (
            String::from_utf8_lossy(&plain.stdout),
            String::from_utf8_lossy(&traced.stdout),
        );
        assert_eq!(traced, plain, "parent: {parent:?}");
        let ignored = plain
            .lines()
            .find_map(|l| l.strip_prefix("SigIgn:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .expect("SigIgn line");
        let sigpipe = 1 << (libc::SIGPIPE - 1);
        assert_eq!(ignored & sigpipe != 0, !parent.is_empty(), "{plain}");
    }
}

/// Item 2: Ctrl-C to the process group stops the job as without record, and
/// the job sees the signal once.
#[test]
fn ctrl_c_to_the_process_group_reaches_the_job_once() {
    let tmp = tempfile::tempdir().unwrap();
    let sleeper = ["sh", "-c", "echo up; exec sleep 30"];
    let mut plain = spawn_plain(&sleeper);
    assert_eq!(first_line(&mut plain), "up");
    killpg(&plain, libc::SIGINT);
    let plain = wait_at_most(&mut plain, Duration::from_secs(10)).unwrap();
    let mut traced = spawn_record(&tmp.path().join("a"), &sleeper);
    assert_eq!(first_line(&mut traced), "up");
    killpg(&traced, libc::SIGINT);
    let traced = wait_at_most(&mut traced, Duration::from_secs(10))
        .expect("the job ignored Ctrl-C under record");
    assert_eq!(traced.signal(), Some(libc::SIGINT));
    assert_eq!(traced.into_raw(), plain.into_raw());

    let counter = python_script(
        tmp.path(),
        "count.py",
        r#"
import signal, time
n = 0
def on_int(sig, frame):
    global n
    n += 1
signal.signal(signal.SIGINT, on_int)
print("up", flush=True)
for _ in range(500):
    if n:
        break
    time.sleep(0.01)
time.sleep(0.5)
print(n, flush=True)
"#,
    );
    let py = python().to_str().unwrap();
    let mut traced = spawn_record(&tmp.path().join("b"), &[py, counter.to_str().unwrap()]);
    assert_eq!(first_line(&mut traced), "up");
    killpg(&traced, libc::SIGINT);
    let out = traced.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
}

/// Item 2: `kill -TERM` of record ends the job; it is not orphaned.
#[test]
fn terminating_record_terminates_the_job() {
    let tmp = tempfile::tempdir().unwrap();
    let py = python().to_str().unwrap();
    let mut traced = spawn_record(
        &tmp.path().join("rec"),
        &[
            py,
            "-c",
            "import os, time; print(os.getpid(), flush=True); time.sleep(30)",
        ],
    );
    let job: i32 = first_line(&mut traced).parse().unwrap();
    // SAFETY: a signal to the record process only.
    unsafe { libc::kill(traced.id() as i32, libc::SIGTERM) };
    let st = wait_at_most(&mut traced, Duration::from_secs(10)).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: probing (and cleaning up) a pid.
    let alive = unsafe { libc::kill(job, 0) } == 0;
    if alive {
        unsafe { libc::kill(job, libc::SIGKILL) };
    }
    assert!(!alive, "the job (pid {job}) outlived record");
    assert_eq!(st.signal(), Some(libc::SIGTERM));
}

/// Item 2: record's exit status is the job's, signal deaths included.
#[test]
fn record_exits_as_the_command_does() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, script) in ["exit 3", "kill -TERM $$", "kill -SEGV $$", "exit 0"]
        .iter()
        .enumerate()
    {
        let plain = Command::new("sh").args(["-c", script]).status().unwrap();
        let traced = Command::new(stallscope())
            .args(["record", "-o"])
            .arg(tmp.path().join(format!("r{i}")))
            .args(["--", "sh", "-c", script])
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert_eq!(
            (traced.code(), traced.signal()),
            (plain.code(), plain.signal()),
            "{script}"
        );
    }
    let out = Command::new(stallscope())
        .args(["record", "-o"])
        .arg(tmp.path().join("missing"))
        .args(["--", "/no/such/program"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127), "{out:?}");
}

/// Item 3: a server that blocks SIGTERM everywhere and takes it with sigwait
/// shuts down gracefully under the shim (the GPU watcher and the sampler
/// block every signal).
#[test]
fn a_sigwait_server_still_gets_its_signal() {
    let tmp = tempfile::tempdir().unwrap();
    let script = python_script(
        tmp.path(),
        "server.py",
        r#"
import signal, threading, time
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
t = threading.Thread(target=lambda: open("/proc/self/stat").read())
t.start(); t.join()
print("ready", flush=True)
time.sleep(1.0)  # SIGTERM arrives now: every thread of the program blocks it
signal.sigwait({signal.SIGTERM})
print("graceful", flush=True)
"#,
    );
    let mut c = preloaded(python(), &tmp.path().join("rec"));
    let mut child = c.arg(&script).stdout(Stdio::piped()).spawn().unwrap();
    assert_eq!(first_line(&mut child), "ready");
    std::thread::sleep(Duration::from_millis(300)); // the sampler is up
    // SAFETY: a signal to our child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "graceful");
}

/// Item 3: every thread of the shim blocks the program's signals.
#[test]
fn shim_threads_block_every_signal() {
    let tmp = tempfile::tempdir().unwrap();
    let script = python_script(
        tmp.path(),
        "masks.py",
        r#"
import os, threading, time
t = threading.Thread(target=lambda: open("/proc/self/stat").read())
t.start(); t.join()
time.sleep(0.3)
for tid in os.listdir("/proc/self/task"):
    name = open(f"/proc/self/task/{tid}/comm").read().strip()
    for line in open(f"/proc/self/task/{tid}/status"):
        if line.startswith("SigBlk:"):
            print(name, line.split()[1])
"#,
    );
    let out = preloaded(python(), &tmp.path().join("rec"))
        .env("STALLSCOPE_SAMPLE_HZ", "100")
        .arg(&script)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let ours: Vec<(&str, u64)> = text
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(n, _)| n.starts_with("stallscope"))
        .map(|(n, m)| (n, u64::from_str_radix(m, 16).unwrap()))
        .collect();
    let names: Vec<&str> = ours.iter().map(|(n, _)| *n).collect();
    assert!(
        names.contains(&"stallscope") && names.contains(&"stallscope-gpu"),
        "{text}"
    );
    for (name, mask) in ours {
        for sig in [
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGALRM,
            libc::SIGUSR1,
            libc::SIGCHLD,
        ] {
            assert_ne!(mask & (1 << (sig - 1)), 0, "{name} takes signal {sig}");
        }
    }
}

/// Item 5: a kill while the trace file is being set up leaves no unreadable
/// `.sst` (before, a SIGKILL then left a 0-byte or all-zero file). The kill
/// comes from a preloaded mmap that kills the process as the shim maps the
/// new file, the widest window of the creation.
#[test]
fn a_kill_during_trace_creation_leaves_no_unreadable_file() {
    let tmp = tempfile::tempdir().unwrap();
    let killer = cc(
        tmp.path(),
        "killer.so",
        r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
void *mmap(void *a, size_t len, int prot, int flags, int fd, off_t off) {
    static void *(*real)(void *, size_t, int, int, int, off_t);
    if (!real) real = dlsym(RTLD_NEXT, "mmap");
    if (fd >= 0 && (flags & MAP_SHARED)) {
        char link[64], path[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, path, sizeof path - 1);
        if (n > 0) {
            path[n] = 0;
            if (strstr(path, "/killed-rec/")) kill(getpid(), SIGKILL);
        }
    }
    return real(a, len, prot, flags, fd, off);
}
"#,
        true,
    );
    let rec = tmp.path().join("killed-rec");
    // A process that records nothing makes no file (issue 18, item 2): this
    // one records its sleep.
    let st = Command::new("/bin/sleep")
        .arg("0.01")
        .env(
            "LD_PRELOAD",
            format!("{}:{}", shim().display(), killer.display()),
        )
        .env("STALLSCOPE_OUT", &rec)
        .status()
        .unwrap();
    assert_eq!(st.signal(), Some(libc::SIGKILL), "the kill did not happen");
    assert_all_readable(&rec);
}

/// Item 7: once the program has reused fd 2 for its own file, `stallscope:`
/// lines go to stallscope.log in the output directory, not into that file.
#[test]
fn stallscope_lines_never_land_in_the_programs_files() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rec");
    let data = tmp.path().join("d.bin");
    std::fs::write(&data, vec![1u8; 4096]).unwrap();
    let own = tmp.path().join("own.txt");
    let script = python_script(
        tmp.path(),
        "reuse2.py",
        r#"
import os, sys
os.close(2)
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
assert fd == 2
os.write(fd, b"DATA\n")
src = os.open(sys.argv[2], os.O_RDONLY)
for _ in range(20000):  # past the file size limit: the shim stops and says so
    os.pread(src, 64, 0)
os.write(fd, b"END\n")
"#,
    );
    let mut c = preloaded(python(), &rec);
    c.arg(&script).arg(&own).arg(&data);
    // SAFETY: setrlimit is async-signal-safe.
    unsafe {
        c.pre_exec(|| {
            let r = libc::rlimit {
                rlim_cur: 512 * 1024,
                rlim_max: 512 * 1024,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &r);
            Ok(())
        });
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read_to_string(&own).unwrap(), "DATA\nEND\n");
    let log = std::fs::read_to_string(rec.join("stallscope.log")).unwrap();
    assert!(
        log.contains("stallscope: ") && log.contains("file size limit"),
        "{log}"
    );
}

/// Item 9: record makes its output directory private whatever the umask,
/// and refuses one that others can write or that someone else owns.
#[test]
fn output_directories_are_private() {
    let tmp = tempfile::tempdir().unwrap();
    let made = tmp.path().join("made");
    let mut c = Command::new(stallscope());
    c.args(["record", "-o"])
        .arg(&made)
        .args(["--", "true"])
        .stderr(Stdio::null());
    // SAFETY: umask is async-signal-safe.
    unsafe {
        c.pre_exec(|| {
            libc::umask(0);
            Ok(())
        });
    }
    assert!(c.status().unwrap().success());
    let mode = std::fs::metadata(&made).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "mode {mode:o}");

    let open = tmp.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = Command::new(stallscope())
        .args(["record", "-o"])
        .arg(&open)
        .args(["--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(open.to_str().unwrap()) && err.contains("writable by group or others"),
        "{err}"
    );
    // The shim alone refuses it too, with one line, and the program runs.
    let out = Command::new("/bin/echo")
        .arg("hi")
        .env("LD_PRELOAD", shim())
        .env("STALLSCOPE_OUT", &open)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("writable by group or others"));
    assert!(trace_files(&open).is_empty());

    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let theirs = tmp.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        let out = Command::new(stallscope())
            .args(["record", "-o"])
            .arg(&theirs)
            .args(["--", "true"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("belongs to uid 65534"), "{err}");
    }
}

/// Item 10: a relative STALLSCOPE_OUT means the first process's directory,
/// for every descendant, whatever directory it runs in.
#[test]
fn a_relative_output_directory_is_resolved_once() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let out = Command::new(python())
        .args([
            "-c",
            "import os, subprocess, sys; os.chdir('../b'); \
             subprocess.run([sys.executable, '-c', 'pass'], check=True)",
        ])
        .current_dir(&a)
        .env("LD_PRELOAD", shim())
        .env("STALLSCOPE_OUT", "rec")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(!b.join("rec").exists(), "a trace went to b/rec");
    assert_eq!(trace_files(&a.join("rec")).len(), 2);
}

/// Item 12: a full disk is called a full disk, not the size cap. A
/// preloaded fallocate fails with ENOSPC once the trace file has its first
/// chunks.
#[test]
fn a_full_disk_is_called_a_full_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let enospc = cc(
        tmp.path(),
        "enospc.so",
        r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
static int calls;
static int fake(void) { return ++calls > 4; }
int fallocate(int fd, int mode, off_t off, off_t len) {
    static int (*real)(int, int, off_t, off_t);
    if (!real) real = dlsym(RTLD_NEXT, "fallocate");
    if (fake()) { errno = ENOSPC; return -1; }
    return real(fd, mode, off, len);
}
int fallocate64(int fd, int mode, off_t off, off_t len) {
    static int (*real)(int, int, off_t, off_t);
    if (!real) real = dlsym(RTLD_NEXT, "fallocate64");
    if (fake()) { errno = ENOSPC; return -1; }
    return real(fd, mode, off, len);
}
"#,
        true,
    );
    let data = tmp.path().join("d.bin");
    std::fs::write(&data, vec![1u8; 4096]).unwrap();
    let rec = tmp.path().join("rec");
    let out = Command::new(python())
        .arg(workload("pread_loop.py"))
        .arg(&data)
        .arg("20000")
        .env(
            "LD_PRELOAD",
            format!("{}:{}", shim().display(), enospc.display()),
        )
        .env("STALLSCOPE_OUT", &rec)
        .env("STALLSCOPE_MIN_SPAN_US", "0")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("disk is full"), "{err}");
    let out = Command::new(stallscope())
        .arg("analyze")
        .arg(&rec)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("disk was full"), "{text}");
    assert!(!text.contains("raise --max-mb"), "{text}");
}

/// Issue 18, item 4: record's flags take their defaults from the
/// STALLSCOPE_* variables, and --help says so.
#[test]
fn record_flags_default_to_the_environment() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rec");
    let out: Output = Command::new(stallscope())
        .args(["record", "-o"])
        .arg(&rec)
        // A process that records nothing makes no file: this one sleeps.
        .args(["--", "sleep", "0.01"])
        .env("STALLSCOPE_MIN_SPAN_US", "7")
        .env("STALLSCOPE_SAMPLE_HZ", "0")
        .env("STALLSCOPE_FLIGHT", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let h = &dump(&rec)[0];
    assert_eq!(h["min_span_ns"], 7000, "{h}");
    assert_eq!(h["sample_hz"], 0, "{h}");
    assert_eq!(h["flags"].as_u64().unwrap() & 1, 1, "flight recorder: {h}");
    // An explicit flag still wins.
    let rec2 = tmp.path().join("rec2");
    Command::new(stallscope())
        .args(["record", "--min-span-us", "9", "-o"])
        .arg(&rec2)
        .args(["--", "sleep", "0.01"])
        .env("STALLSCOPE_MIN_SPAN_US", "7")
        .output()
        .unwrap();
    assert_eq!(dump(&rec2)[0]["min_span_ns"], 9000);
    let help = Command::new(stallscope())
        .args(["record", "--help"])
        .output()
        .unwrap();
    let h = String::from_utf8_lossy(&help.stdout);
    for v in [
        "STALLSCOPE_MIN_SPAN_US",
        "STALLSCOPE_SAMPLE_HZ",
        "STALLSCOPE_MAX_MB",
        "STALLSCOPE_FLIGHT",
        "STALLSCOPE_GPU",
        "STALLSCOPE_OUT",
    ] {
        assert!(h.contains(&format!("[env: {v}")), "{v} missing from:\n{h}");
    }
}

/// Issue 18, item 2: the code every process image runs (constructor, exit
/// hook, fork handler) sits together in `.text.startup`, so a process that
/// records nothing faults in one page of the shim's code for it, not one per
/// function (each such fault cost 4-5 us on the test VM).
#[test]
fn start_up_code_sits_together() {
    let readelf = |flag: &str| {
        let out = Command::new("readelf")
            .arg(flag)
            .arg(shim())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let sections = readelf("-SW");
    let fields: Vec<&str> = sections
        .lines()
        .find_map(|l| l.split_once("] .text.startup "))
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_else(|| panic!("no .text.startup section:\n{sections}"));
    let hex = |s: &str| u64::from_str_radix(s, 16).unwrap();
    // Type, address, offset, size.
    let (start, size) = (hex(fields[1]), hex(fields[3]));
    let symbols = readelf("-sW");
    for name in [
        "9lifecycle7on_load",
        "9lifecycle9on_unload",
        "9lifecycle19after_fork_in_child",
    ] {
        let addr = symbols
            .lines()
            .find(|l| l.contains(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .map(hex)
            .unwrap_or_else(|| panic!("no symbol {name}"));
        assert!(
            (start..start + size).contains(&addr),
            "{name} at {addr:#x}, outside .text.startup ({start:#x}, {size:#x} bytes)"
        );
    }
}

/// Item 2: the closing line comes from record's detached reporter once the
/// job has ended: where the trace is, or why there is none, and nothing when
/// the command cannot be started. The reporter is never the job's child.
#[test]
fn record_says_where_the_trace_went_when_the_job_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let record = |dir: &str, args: &[&str]| {
        let rec = tmp.path().join(dir);
        // output() reads stderr to its end, which the reporter holds open.
        let out = Command::new(stallscope())
            .args(["record", "-o"])
            .arg(&rec)
            .arg("--")
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (rec, out, err)
    };
    let children = "import os, time; time.sleep(0.05); p = os.getpid(); \
                    print(open(f'/proc/{p}/task/{p}/children').read().strip() or 'none')";
    let py = python().to_str().unwrap();
    let (rec, out, err) = record("job", &[py, "-c", children]);
    assert!(out.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "none", "{err}");
    let said = format!("stallscope: trace in {} (1 process", rec.display());
    assert!(err.contains(&said), "{err}");

    let (_, out, err) = record("quiet", &["/bin/true"]);
    assert!(out.status.success());
    assert!(err.contains("stallscope: no trace was written to"), "{err}");

    let (_, out, err) = record("missing", &["/no/such/program"]);
    assert_eq!(out.status.code(), Some(127));
    assert!(err.contains("cannot run /no/such/program"), "{err}");
    assert!(!err.contains("trace"), "{err}");
}
