//! Process lifecycle: start-up (the constructor arms recording; the first
//! hooked call begins it), fork (the child records into its own file; GPU
//! capture is dead there), and exit (flush GPU records, then mark the file
//! as cleanly ended).
//!
//! Exec needs nothing: LD_PRELOAD stays in the environment, so the new image
//! loads the shim again and starts a new file for the same pid.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::panic::catch_unwind;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use stallscope_format::layout::{self, HeaderInit, flags, state};
use stallscope_format::records::{Clock, ProcessEnd, end_reason};
use stallscope_format::writer::Region;

use crate::clock::{self, Pair};
use crate::config::{self, Config};
use crate::trace_file::{self, TraceFile};
use crate::{diag, fdinfo, gpu, recorder, sampler};

static CONFIG: OnceLock<Config> = OnceLock::new();

/// Runs when the library is loaded (LD_PRELOAD or dlopen).
#[used]
#[unsafe(link_section = ".init_array")]
static ON_LOAD: extern "C" fn() = on_load;

/// Runs at exit() and at unload.
#[used]
#[unsafe(link_section = ".fini_array")]
static ON_UNLOAD: extern "C" fn() = on_unload;

// Every process image runs the constructor and the exit hook, most of them
// (`/bin/true` in a shell loop) nothing else of the shim. Their code goes in
// `.text.startup`, which the linker keeps together as one output section
// (see build.rs): one code page fault for it all, instead of one per
// function scattered over the 450 KB of text (each costs 4-5 us on the test
// VM, with the kernel's fault-around; issue 18, item 2). The fork handler
// runs in every forked child before it execs, so it goes there too.
#[unsafe(link_section = ".text.startup.stallscope")]
extern "C" fn on_load() {
    let _ = catch_unwind(start);
}

#[unsafe(link_section = ".text.startup.stallscope")]
extern "C" fn on_unload() {
    let _ = catch_unwind(finish);
}

#[unsafe(link_section = ".text.startup.stallscope")]
extern "C" fn after_fork_in_child() {
    let _ = catch_unwind(restart_in_child);
}

/// The configuration read at start-up.
pub fn config() -> Option<&'static Config> {
    CONFIG.get()
}

/// Where and when this process image started: taken by the constructor (or
/// the fork handler), written into the header when recording begins.
struct Origin {
    mono: AtomicU64,
    real: AtomicU64,
    ppid: AtomicU32,
}

static ORIGIN: Origin = Origin {
    mono: AtomicU64::new(0),
    real: AtomicU64::new(0),
    ppid: AtomicU32::new(0),
};

/// The tick source is chosen and calibrated (inherited by forked children).
static CLOCK_READY: AtomicBool = AtomicBool::new(false);

/// This process image is a forked child (set by the fork handler).
static FORKED: AtomicBool = AtomicBool::new(false);

/// A relative STALLSCOPE_OUT made absolute by the constructor.
static ABSOLUTE_OUT: OnceLock<OsString> = OnceLock::new();

/// The constructor does only what must be done before `main`, with no
/// allocation: it notes the start time and parent, remembers what fd 2 is,
/// and arms recording. Everything else (configuration, clock calibration,
/// the staged trace, threads) waits for the first hooked call (see
/// `recorder::arm`): a wrapper that only execs, or `/bin/true`, pays for
/// none of it (issue 18, item 2).
fn start() {
    recorder::own_thread();
    let quiet = config::flag_now(config::env::QUIET, false);
    let Some(out) = config::raw_now(config::env::OUT) else {
        diag::init(quiet);
        diag::say("STALLSCOPE_OUT is not set; not recording (use `stallscope record`)");
        recorder::release_thread();
        return;
    };
    diag::init(quiet);
    if !out.starts_with(b"/") {
        absolute_out(std::ffi::OsStr::from_bytes(out));
    }
    // The directory is checked now (a stat), so a bad one is told by every
    // process, whether or not it makes a hooked call.
    if let Err(msg) = check_out_dir(out) {
        diag::say(&format!("{msg}; not recording (the program runs normally)"));
        recorder::release_thread();
        return;
    }
    note_origin(ppid());
    at_fork_in_child(after_fork_in_child);
    recorder::arm(begin_here, pid());
    recorder::release_thread();
}

/// Makes or checks the output directory (see `trace_file::prepare_dir`).
fn check_out_dir(out: &[u8]) -> Result<(), String> {
    let dir = ABSOLUTE_OUT.get().map_or(out, |a| a.as_bytes());
    let mut buf = [0u8; 512];
    // Short paths need no allocation. A plain loop, not `contains` or the
    // checked CStr constructors: those call core's memchr, whose code page
    // every process would fault in (see `on_load`).
    #[allow(clippy::manual_contains)] // `contains` is the memchr call
    let short = dir.len() < buf.len() && !dir.iter().any(|&b| b == 0);
    if short {
        buf[..dir.len()].copy_from_slice(dir);
        // SAFETY: one NUL, at the end (the buffer is zeroed past `dir`).
        let c = unsafe { std::ffi::CStr::from_bytes_with_nul_unchecked(&buf[..=dir.len()]) };
        return trace_file::prepare_dir(c);
    }
    let c = std::ffi::CString::new(dir)
        .map_err(|_| "output directory name contains a NUL byte".to_string())?;
    trace_file::prepare_dir(&c)
}

/// Registers `child` to run in the child after every fork.
///
/// glibc's `pthread_atfork` is a stub linked from libc_nonshared.a, far
/// from the constructor's code; its body is this one call (glibc
/// nptl/pthread_atfork.c), so the constructor makes it itself.
#[cfg(target_env = "gnu")]
fn at_fork_in_child(child: extern "C" fn()) {
    unsafe extern "C" {
        fn __register_atfork(
            prepare: Option<extern "C" fn()>,
            parent: Option<extern "C" fn()>,
            child: Option<extern "C" fn()>,
            dso_handle: *const u8,
        ) -> libc::c_int;
        /// This library's handle, defined by crtbeginS.o: handlers
        /// registered under it go when the library is unloaded.
        static __dso_handle: u8;
    }
    // SAFETY: registering a plain function under this object's handle.
    unsafe { __register_atfork(None, None, Some(child), &raw const __dso_handle) };
}

#[cfg(not(target_env = "gnu"))]
fn at_fork_in_child(child: extern "C" fn()) {
    // SAFETY: registering a plain function; it runs in the child only.
    unsafe { libc::pthread_atfork(None, None, Some(child)) };
}

fn pid() -> u32 {
    crate::early::getpid()
}

fn ppid() -> u32 {
    crate::early::getppid()
}

fn note_origin(ppid: u32) {
    use crate::early::clock_ns;
    ORIGIN
        .mono
        .store(clock_ns(libc::CLOCK_MONOTONIC), Ordering::Relaxed);
    ORIGIN
        .real
        .store(clock_ns(libc::CLOCK_REALTIME), Ordering::Relaxed);
    ORIGIN.ppid.store(ppid, Ordering::Relaxed);
}

/// Recording begins: at the process image's first hooked call, or when
/// CUDA calls `InitializeInjection` first. Runs as the shim on the calling
/// thread (see `recorder::begin_if_armed`).
fn begin_here() {
    let mut problems = Vec::new();
    let cfg = CONFIG.get_or_init(|| {
        let mut cfg = Config::from_env(&mut problems);
        if let Some(abs) = ABSOLUTE_OUT.get() {
            cfg.out = Some(abs.clone());
        }
        cfg
    });
    diag::set_log_dir(cfg.out.as_deref());
    for p in &problems {
        diag::say(p);
    }
    let Some(out) = cfg.out.clone() else {
        return;
    };
    // A forked child keeps the parent's calibration.
    let t0 = if CLOCK_READY.swap(true, Ordering::Relaxed) {
        clock::pair()
    } else {
        clock::init()
    };
    if begin(cfg, &out, t0) {
        sampler::start(cfg.sample_hz, t0);
        // GPU capture is the first image's: a forked child never starts
        // CUPTI lazily (see gpu/lifecycle.rs).
        if !FORKED.load(Ordering::Relaxed) {
            gpu::on_start(cfg);
        }
    }
}

/// Begins recording now if it is armed and has not begun (CUDA's
/// `InitializeInjection` may come before any hooked call).
pub fn begin_now() {
    recorder::begin_if_armed();
}

/// Lays out this process's trace file and turns recording on. The file
/// itself is made by the first record (see trace_file.rs).
fn begin(cfg: &Config, out: &OsString, t0: Pair) -> bool {
    crate::fd_room::refresh_limit();
    let pid = pid();
    let ppid = ORIGIN.ppid.load(Ordering::Relaxed);
    let start_mono = ORIGIN.mono.load(Ordering::Relaxed);
    let start_real = ORIGIN.real.load(Ordering::Relaxed);
    let init = HeaderInit {
        chunk_size: layout::DEFAULT_CHUNK_SIZE,
        thread_slots: config::THREAD_SLOTS,
        capacity: cfg.max_bytes,
        pid,
        ppid,
        flags: (if cfg.flight {
            flags::FLIGHT_RECORDER
        } else {
            0
        }) | (if clock::using_tsc() {
            flags::TSC_TICKS
        } else {
            0
        }),
        // The image's start, not the first hooked call's.
        start_mono_ns: start_mono,
        start_real_ns: start_real,
        start_ticks: t0.ticks,
        ticks_per_sec: if clock::using_tsc() {
            clock::ticks_per_sec()
        } else {
            0
        },
        min_span_ns: cfg.min_span_ns,
        sample_hz: cfg.sample_hz,
        producer: concat!("stallscope ", env!("CARGO_PKG_VERSION")).into(),
        hostname: hostname(),
        // Read when the file is made: a process image that never makes one
        // does not pay for the /proc lookup.
        cmdline: Vec::new(),
    };
    let file = match TraceFile::stage(out, &init, layout::DEFAULT_CHUNK_SIZE, config::THREAD_SLOTS)
    {
        Ok(f) => f,
        Err(msg) => {
            diag::say(&format!("{msg}; not recording (the program runs normally)"));
            return false;
        }
    };
    // SAFETY: the mapping covers the whole geometry; header and thread table are backed.
    let region = unsafe { Region::new(file.base(), file.geo, cfg.flight) };
    let c = Clock {
        reserved: 0,
        mono_ns: t0.mono,
        real_ns: clock::real_ns(),
        ticks: t0.ticks,
    };
    recorder::install(file, region, pid, cfg.min_span_ns, c);
    true
}

/// Makes a relative STALLSCOPE_OUT absolute, once, in the first process,
/// and exports the absolute path: every descendant, whatever directory it
/// runs in, then writes into the same directory (issue 14, item 10: a
/// relative `../trace` scattered traces over three directories).
///
/// Changing the environment is safe here: the constructor runs before
/// `main` and before the program has threads, and setenv replaces the value
/// of an existing variable in place, in the same `environ` array that
/// `main`'s `envp` points to, so the program sees one consistent value. If
/// threads already exist (the shim was dlopen'ed late), the environment is
/// left alone and only this process uses the absolute path.
fn absolute_out(out: &std::ffi::OsStr) {
    use std::os::unix::ffi::OsStrExt;
    let Ok(cwd) = std::env::current_dir() else {
        return;
    };
    let abs = cwd.join(out).into_os_string();
    if single_threaded()
        && let Ok(v) = std::ffi::CString::new(abs.as_bytes())
    {
        // SAFETY: NUL-terminated strings; no other thread reads the
        // environment (checked above).
        unsafe { libc::setenv(c"STALLSCOPE_OUT".as_ptr(), v.as_ptr(), 1) };
    }
    let _ = ABSOLUTE_OUT.set(abs);
}

fn single_threaded() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.strip_prefix("Threads:").is_some_and(|n| n.trim() == "1"))
    })
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: writable buffer of the given size.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return String::new();
    }
    let n = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// In a forked child (the only thread there): leave the parent's file alone;
/// the child's own recording begins at its first hooked call, and names the
/// parent.
fn restart_in_child() {
    gpu::forget_in_child();
    let parent = pid_of_parent_image();
    recorder::uninstall();
    recorder::reset_thread();
    recorder::own_thread();
    fdinfo::reset();
    // The parent's mapping stays (unused: the child writes its own file);
    // the shim holds no fd of it to close.
    FORKED.store(true, Ordering::Relaxed);
    if let Some(parent) = parent {
        note_origin(parent);
        recorder::arm(begin_here, pid());
    }
    recorder::release_thread();
}

/// The parent's pid, if the parent was recording or armed (else None: the
/// child does not record either).
fn pid_of_parent_image() -> Option<u32> {
    if let Some(rec) = recorder::recorder() {
        return Some(rec.pid);
    }
    recorder::armed().then(ppid)
}

fn finish() {
    // Never begun (no hooked call): nothing to write, no file.
    let Some(rec) = recorder::recorder() else {
        return;
    };
    if !recorder::enabled() {
        return;
    }
    recorder::end_own_run();
    // An image that recorded nothing, and counted next to nothing, leaves
    // no file (issue 18, item 2).
    if !recorder::worth_a_file(rec) {
        return;
    }
    // GPU records still in CUPTI's buffers belong before the end record.
    gpu::flush_at_exit();
    let now = clock::mono_ns();
    let end = ProcessEnd {
        reason: end_reason::EXIT,
        ts: now,
    };
    recorder::with_writer(|w| w.event(ProcessEnd::LEN, &mut |b| end.encode(b)));
    rec.region.set_end(now);
    rec.region.set_state(state::CLEAN_EXIT);
}
