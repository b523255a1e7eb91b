//! `stallscope record`: run a command with the shim preloaded.
//!
//! `record` becomes the command: after setting up the output directory and
//! the environment it execs the command in its own process. The job then has
//! record's pid, parent, process group and signal dispositions, so Ctrl-C,
//! `kill` of that pid and the exit status (signal deaths included) are
//! exactly those of the command run without record (issue 14, item 2). A
//! waiting parent could not promise that: it would have to ignore or forward
//! signals, and a signal sent to the whole process group would reach the job
//! twice. The closing "trace in DIR" line comes from a small detached helper
//! that waits for the job to end (see [`Reporter`]).

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use clap::builder::FalseyValueParser;

use super::live_helper::Helper;
use super::shim_path;

/// Where the shim writes its `stallscope:` lines once the program has
/// reused fd 2 (shim/src/diag.rs).
const LOG_NAME: &str = "stallscope.log";

/// Run a command under the recorder. Every process it starts (DataLoader
/// workers included) writes its own trace file into the output directory.
///
/// record runs the command in its own place: the command keeps record's pid,
/// gets its signals (Ctrl-C, kill) and its exit status is record's. Where
/// the trace is gets printed when the command ends.
///
/// Each option takes its default from the STALLSCOPE_* variable shown
/// beside it, when that is set.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Output directory, created with mode 0700 [default: stallscope-YYYYMMDD-HHMMSS]
    #[arg(short, long, value_name = "DIR", env = "STALLSCOPE_OUT")]
    pub output: Option<PathBuf>,

    /// Record a span for calls that last at least this long (µs); shorter calls are only counted
    #[arg(
        long,
        value_name = "US",
        default_value_t = 20,
        env = "STALLSCOPE_MIN_SPAN_US"
    )]
    pub min_span_us: u64,

    /// Thread samples per second (0 turns the sampler off)
    #[arg(
        long,
        value_name = "HZ",
        default_value_t = 100,
        env = "STALLSCOPE_SAMPLE_HZ"
    )]
    pub sample_hz: u32,

    /// Size cap per process, in MiB; records past it are counted as dropped
    #[arg(
        long,
        value_name = "MIB",
        default_value_t = 256,
        env = "STALLSCOPE_MAX_MB"
    )]
    pub max_mb: u64,

    /// Flight recorder: when the cap is reached, overwrite the oldest records
    #[arg(long, env = "STALLSCOPE_FLIGHT", value_parser = FalseyValueParser::new())]
    pub flight: bool,

    /// Do not capture GPU activity (host only) [env: STALLSCOPE_GPU=0 does the same]
    #[arg(long)]
    pub no_gpu: bool,

    /// libcupti to use instead of searching for it
    #[arg(long, value_name = "PATH", env = "STALLSCOPE_CUPTI")]
    pub cupti: Option<PathBuf>,

    /// Serve the job's idle causes as Prometheus metrics on ADDR while it runs (see `stallscope export`)
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,

    /// A label added to every metric (repeat for several): --label job=llama-ft
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = super::export::parse_label, requires = "metrics")]
    pub labels: Vec<(String, String)>,

    /// Watch the job in this terminal (`stallscope top`); its output goes to DIR/output.log meanwhile
    #[arg(long)]
    pub live: bool,

    /// The command to record, after `--`
    #[arg(required = true, last = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// Values that turn a STALLSCOPE_* switch off (as the shim reads them).
fn falsey(v: &std::ffi::OsStr) -> bool {
    matches!(
        v.to_str().map(|s| s.trim().to_ascii_lowercase()).as_deref(),
        Some("0" | "" | "false" | "no" | "off" | "n" | "f")
    )
}

pub fn run(mut a: RecordArgs) -> anyhow::Result<ExitCode> {
    if std::env::var_os("STALLSCOPE_GPU").is_some_and(|v| falsey(&v)) {
        a.no_gpu = true;
    }
    let shim = shim_path::find()?;
    let out = a.output.clone().unwrap_or_else(default_dir);
    prepare_dir(&out)?;
    let out = out
        .canonicalize()
        .with_context(|| format!("resolving {}", out.display()))?;

    let mut preload = OsString::from(&shim);
    if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        preload.push(":");
        preload.push(old);
    }
    let mut cmd = std::process::Command::new(&a.command[0]);
    cmd.args(&a.command[1..])
        .env("LD_PRELOAD", preload)
        .env("STALLSCOPE_OUT", &out)
        .env("STALLSCOPE_MIN_SPAN_US", a.min_span_us.to_string())
        .env("STALLSCOPE_SAMPLE_HZ", a.sample_hz.to_string())
        .env("STALLSCOPE_MAX_MB", a.max_mb.to_string())
        .env("STALLSCOPE_FLIGHT", if a.flight { "1" } else { "0" })
        .env("STALLSCOPE_GPU", if a.no_gpu { "0" } else { "1" });
    if !a.no_gpu {
        // CUDA calls InitializeInjection() in this library at cuInit, so GPU
        // capture starts before the first kernel.
        match std::env::var_os("CUDA_INJECTION64_PATH") {
            Some(p) if !p.is_empty() => eprintln!(
                "stallscope: CUDA_INJECTION64_PATH is already set ({}); GPU capture starts lazily instead",
                p.to_string_lossy()
            ),
            _ => {
                cmd.env("CUDA_INJECTION64_PATH", &shim);
            }
        }
    }
    if let Some(c) = &a.cupti {
        cmd.env("STALLSCOPE_CUPTI", c);
    }

    if sigpipe::ignored_at_start() {
        // SAFETY: one async-signal-safe call between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGPIPE, libc::SIG_IGN);
                Ok(())
            })
        };
    }
    start_live_helpers(&a, &out, &mut cmd)?;
    let reporter = Reporter::start(&out);
    // Only returns if the command could not be started.
    let err = cmd.exec();
    if let Some(r) = reporter {
        r.exec_failed();
    }
    eprintln!(
        "stallscope: cannot run {}: {err}",
        a.command[0].to_string_lossy()
    );
    // As a shell reports a command it cannot run.
    Ok(ExitCode::from(
        if err.kind() == std::io::ErrorKind::NotFound {
            127
        } else {
            126
        },
    ))
}

/// SIGPIPE as this process inherited it. Rust's runtime sets it to ignored
/// before `main`, and `Command` resets it to the default before exec; a job
/// started by a parent that ignores SIGPIPE must get it ignored, as without
/// record (a write to a closed pipe is then an EPIPE error, not a death).
mod sigpipe {
    use std::sync::atomic::{AtomicBool, Ordering};

    static IGNORED: AtomicBool = AtomicBool::new(false);

    /// Runs before Rust's runtime starts (ELF constructors run before `main`).
    #[used]
    #[unsafe(link_section = ".init_array")]
    static NOTE: extern "C" fn() = note;

    extern "C" fn note() {
        // SAFETY: a query into a zeroed sigaction.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut old) } == 0;
        IGNORED.store(ok && old.sa_sigaction == libc::SIG_IGN, Ordering::Relaxed);
    }

    pub fn ignored_at_start() -> bool {
        IGNORED.load(Ordering::Relaxed)
    }
}

/// `--metrics` and `--live`: the exporter and the view run beside the job
/// (see `live_helper`). The view owns the terminal, so the job's output goes
/// to a file in the recording then.
fn start_live_helpers(
    a: &RecordArgs,
    out: &Path,
    cmd: &mut std::process::Command,
) -> anyhow::Result<()> {
    if let Some(addr) = &a.metrics {
        super::export::parse_addr(addr)?;
        if !Helper::exporter(addr, &a.labels, out)?.start() {
            eprintln!("stallscope: could not start the metrics exporter");
        }
    }
    if a.live {
        if std::io::stdout().is_terminal() {
            let log = out.join("output.log");
            let f = std::fs::File::create(&log)
                .with_context(|| format!("cannot create {}", log.display()))?;
            eprintln!(
                "stallscope: the job's output goes to {} while the live view runs",
                log.display()
            );
            cmd.stdout(f.try_clone()?).stderr(f);
        }
        if !Helper::top(out)?.start() {
            eprintln!("stallscope: could not start the live view");
        }
    }
    Ok(())
}

/// Prints where the trace is once the job (this very process, after exec)
/// has ended. It runs as a grandchild adopted by init, in a session of its
/// own: never the job's child (a program that waits for any child must not
/// find it), and out of reach of the job's terminal signals. It learns that
/// the exec failed through a close-on-exec pipe, and that the job ended
/// through a pidfd (Linux 5.3); without pidfds there is no closing line.
///
/// Both the go-between and the reporter share this address space
/// (`CLONE_VM`) instead of copying it as fork would: no page tables are
/// copied, and at exec the kernel leaves this image's memory to the
/// reporter instead of tearing it down, so the job starts about 0.35 ms
/// sooner (issue 18, item 2: a shell loop of 200 processes under record).
/// Until the exec, the reporter only blocks in `read` on the pipe and
/// touches nothing this process uses: its fd plumbing is done by the
/// go-between while this thread waits, as libc writes a failed call's
/// errno into the thread descriptor they all share. Afterwards it runs on
/// this thread's descriptor, whose tid word the kernel zeroes at the exec (its
/// clear_child_tid, since the memory is still in use): glibc reads it to
/// record or check a pthread mutex's owner, and the reporter takes no
/// pthread mutex (std's locks and malloc's are not those).
struct Reporter {
    exec_failed: OwnedFd,
}

/// What the reporter needs, leaked into the address space it inherits.
struct ReporterArgs {
    exec_failed: libc::c_int,
    exec_failed_write: libc::c_int,
    job: libc::c_int,
    out: PathBuf,
    stack_top: *mut u8,
}

/// The reporter's stack, and above it the go-between's.
const REPORTER_STACK: usize = 224 << 10;
const GO_BETWEEN_STACK: usize = 32 << 10;

impl Reporter {
    fn start(out: &Path) -> Option<Reporter> {
        // SAFETY: plain system calls; every fd is owned right away. The
        // process is single-threaded here. The go-between runs while this
        // thread waits (CLONE_VFORK); the reporter runs beside it but only
        // makes system calls until this process has exec'ed.
        unsafe {
            let pidfd = libc::syscall(libc::SYS_pidfd_open, libc::getpid(), 0);
            if pidfd < 0 {
                return None;
            }
            let pidfd = OwnedFd::from_raw_fd(pidfd as i32);
            let mut p = [0; 2];
            if libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
                return None;
            }
            let (rd, wr) = (OwnedFd::from_raw_fd(p[0]), OwnedFd::from_raw_fd(p[1]));
            let len = REPORTER_STACK + GO_BETWEEN_STACK;
            let stacks = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            );
            if stacks == libc::MAP_FAILED {
                return None;
            }
            let stacks = stacks.cast::<u8>();
            let args = Box::into_raw(Box::new(ReporterArgs {
                exec_failed: rd.as_raw_fd(),
                exec_failed_write: wr.as_raw_fd(),
                job: pidfd.as_raw_fd(),
                out: out.to_path_buf(),
                stack_top: stacks.add(REPORTER_STACK),
            }));
            let go_between = libc::clone(
                start_reporter,
                stacks.add(len).cast(),
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                args.cast(),
            );
            if go_between < 0 {
                drop(Box::from_raw(args));
                libc::munmap(stacks.cast(), len);
                return None;
            }
            let mut st = 0;
            libc::waitpid(go_between, &mut st, 0);
            // The reporter holds its own copies of the fds, and `args`
            // (leaked: it goes with this image, at exec).
            Some(Reporter { exec_failed: wr })
        }
    }

    /// Tells the helper to leave without a word.
    fn exec_failed(self) {
        // SAFETY: a one-byte write to our pipe.
        unsafe { libc::write(self.exec_failed.as_raw_fd(), b"x".as_ptr().cast(), 1) };
    }
}

/// The go-between: leaves the session, sets up the reporter's fds (its own
/// table, which the reporter copies), starts the reporter, and exits, so
/// that init adopts the reporter.
extern "C" fn start_reporter(args: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `args` is the leaked ReporterArgs; its stack is ours alone,
    // and the fds are this table's.
    unsafe {
        libc::setsid();
        let a = &*args.cast::<ReporterArgs>();
        libc::close(a.exec_failed_write);
        // Nothing waits for EOF on stdin or stdout because of the reporter.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
            if null > 2 {
                libc::close(null);
            }
        }
        libc::clone(
            run_reporter,
            a.stack_top.cast(),
            libc::CLONE_VM | libc::SIGCHLD,
            args,
        );
    }
    0
}

extern "C" fn run_reporter(args: *mut libc::c_void) -> libc::c_int {
    // SAFETY: as in `start_reporter`.
    let a = unsafe { &*args.cast::<ReporterArgs>() };
    report_when_done(a.exec_failed, a.job, &a.out)
}

fn report_when_done(exec_failed: libc::c_int, job: libc::c_int, out: &Path) -> ! {
    // SAFETY: plain waits on fds this process owns.
    unsafe {
        let mut b = 0u8;
        let n = loop {
            let n = libc::read(exec_failed, (&mut b as *mut u8).cast(), 1);
            if n >= 0 || *libc::__errno_location() != libc::EINTR {
                break n;
            }
        };
        if n == 0 {
            let mut p = libc::pollfd {
                fd: job,
                events: libc::POLLIN,
                revents: 0,
            };
            while libc::poll(&mut p, 1, -1) < 0 && *libc::__errno_location() == libc::EINTR {}
            report(out);
        }
        libc::_exit(0)
    }
}

fn default_dir() -> PathBuf {
    // SAFETY: time and localtime_r with valid out-pointers.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    unsafe {
        let t = libc::time(std::ptr::null_mut());
        libc::localtime_r(&t, &mut tm);
    }
    PathBuf::from(format!(
        "stallscope-{:04}{:02}{:02}-{:02}{:02}{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    ))
}

/// Creates the directory with mode 0700 whatever the umask. An existing one
/// must be ours, writable by no one else (another user could replace the
/// trace), and hold no traces, so recordings never mix.
fn prepare_dir(dir: &Path) -> anyhow::Result<()> {
    match std::fs::metadata(dir) {
        Ok(m) => {
            if !m.is_dir() {
                bail!("{} exists and is not a directory", dir.display());
            }
            check_private(dir, &m)?;
            let has_traces = std::fs::read_dir(dir)
                .with_context(|| format!("reading {}", dir.display()))?
                .flatten()
                .any(|e| e.path().extension().is_some_and(|x| x == "sst"));
            if has_traces {
                bail!(
                    "{} already holds a recording; choose another -o or remove it",
                    dir.display()
                );
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("cannot create {}", parent.display()))?;
            }
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .with_context(|| format!("cannot set the mode of {}", dir.display()))
        }
        Err(e) => Err(e).with_context(|| format!("cannot use {}", dir.display())),
    }
}

fn check_private(dir: &Path, m: &std::fs::Metadata) -> anyhow::Result<()> {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if m.uid() != me {
        bail!(
            "refusing output directory {}: it belongs to uid {}, not to you (uid {me}), \
             so its owner could replace the trace; choose another -o",
            dir.display(),
            m.uid()
        );
    }
    if m.mode() & 0o022 != 0 {
        bail!(
            "refusing output directory {}: it is writable by group or others (mode {:04o}), \
             so another user could replace the trace; `chmod go-w` it or choose another -o",
            dir.display(),
            m.mode() & 0o7777
        );
    }
    Ok(())
}

fn report(out: &Path) {
    let mut files = 0;
    let mut bytes = 0u64;
    if let Ok(rd) = std::fs::read_dir(out) {
        for e in rd.flatten() {
            if e.path().extension().is_some_and(|x| x == "sst") {
                files += 1;
                bytes += e.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
    }
    if files == 0 {
        // A process writes its file on its first record, so an empty
        // directory usually means a job too short or too quiet to record.
        let log = out.join(LOG_NAME);
        let why = if log.metadata().is_ok_and(|m| m.len() > 0) {
            format!("see the messages in {}", log.display())
        } else {
            "no process recorded anything: a file is written on a process's first \
             record (I/O or a wait over the span threshold, a CPU sample, GPU activity)"
                .to_string()
        };
        let _ = writeln!(
            std::io::stderr(),
            "stallscope: no trace was written to {}: {why}",
            out.display()
        );
        return;
    }
    let _ = writeln!(
        std::io::stderr(),
        "stallscope: trace in {} ({files} process{}, {:.1} MiB); next: stallscope analyze {}",
        out.display(),
        if files == 1 { "" } else { "es" },
        bytes as f64 / (1 << 20) as f64,
        out.display()
    );
}
