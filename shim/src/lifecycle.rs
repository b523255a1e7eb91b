//! Process lifecycle: start-up (constructor), fork (the child records into its
//! own file; GPU capture is dead there), and exit (flush GPU records, then mark
//! the file as cleanly ended).
//!
//! Exec needs nothing: LD_PRELOAD stays in the environment, so the new image
//! loads the shim again and starts a new file for the same pid.

use std::ffi::OsString;
use std::panic::catch_unwind;
use std::sync::OnceLock;

use stallscope_format::layout::{self, HeaderInit, flags, state};
use stallscope_format::records::{Clock, ProcessEnd, end_reason};
use stallscope_format::writer::Region;

use crate::clock::{self, Pair};
use crate::config::{self, Config};
use crate::trace_file::TraceFile;
use crate::{diag, fdinfo, gpu, real, recorder, sampler};

static CONFIG: OnceLock<Config> = OnceLock::new();

/// Runs when the library is loaded (LD_PRELOAD or dlopen).
#[used]
#[unsafe(link_section = ".init_array")]
static ON_LOAD: extern "C" fn() = on_load;

/// Runs at exit() and at unload.
#[used]
#[unsafe(link_section = ".fini_array")]
static ON_UNLOAD: extern "C" fn() = on_unload;

extern "C" fn on_load() {
    let _ = catch_unwind(start);
}

extern "C" fn on_unload() {
    let _ = catch_unwind(finish);
}

extern "C" fn after_fork_in_child() {
    let _ = catch_unwind(restart_in_child);
}

/// The configuration read at start-up.
pub fn config() -> Option<&'static Config> {
    CONFIG.get()
}

fn start() {
    recorder::own_thread();
    real::resolve_all();
    let mut problems = Vec::new();
    let cfg = CONFIG.get_or_init(|| {
        let mut cfg = Config::from_env(&mut problems);
        cfg.out = cfg.out.take().map(absolute_out);
        cfg
    });
    diag::init(cfg.quiet, cfg.out.as_deref());
    for p in &problems {
        diag::say(p);
    }
    let Some(out) = cfg.out.clone() else {
        diag::say("STALLSCOPE_OUT is not set; not recording (use `stallscope record`)");
        recorder::release_thread();
        return;
    };
    let t0 = clock::init();
    // SAFETY: getppid has no preconditions.
    let ppid = unsafe { libc::getppid() } as u32;
    if begin(cfg, &out, t0, ppid) {
        // SAFETY: registering a plain function; the handler runs in the child only.
        unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
        sampler::start(cfg.sample_hz, t0);
        gpu::on_start(cfg);
    }
    recorder::release_thread();
}

/// Lays out this process's trace file and turns recording on. The file
/// itself is made by the first record (see trace_file.rs).
fn begin(cfg: &Config, out: &OsString, t0: Pair, ppid: u32) -> bool {
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() } as u32;
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
        start_mono_ns: t0.mono,
        start_real_ns: clock::real_ns(),
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
        real_ns: init.start_real_ns,
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
fn absolute_out(out: OsString) -> OsString {
    use std::os::unix::ffi::OsStrExt;
    let p = std::path::Path::new(&out);
    if p.is_absolute() {
        return out;
    }
    let Ok(cwd) = std::env::current_dir() else {
        return out;
    };
    let abs = cwd.join(p).into_os_string();
    if single_threaded()
        && let Ok(v) = std::ffi::CString::new(abs.as_bytes())
    {
        // SAFETY: NUL-terminated strings; no other thread reads the
        // environment (checked above).
        unsafe { libc::setenv(c"STALLSCOPE_OUT".as_ptr(), v.as_ptr(), 1) };
    }
    abs
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

/// In a forked child (the only thread there): leave the parent's file alone
/// and start a new one that names the parent.
fn restart_in_child() {
    gpu::forget_in_child();
    let parent = recorder::recorder();
    recorder::uninstall();
    recorder::reset_thread();
    recorder::own_thread();
    fdinfo::reset();
    // The parent's mapping stays (unused: the child writes its own file);
    // the shim holds no fd of it to close.
    let cfg = CONFIG.get();
    if let (Some(cfg), Some(parent), Some(out)) = (cfg, parent, cfg.and_then(|c| c.out.clone())) {
        let t0 = clock::pair();
        if begin(cfg, &out, t0, parent.pid) {
            sampler::start(cfg.sample_hz, t0);
        }
    }
    recorder::release_thread();
}

fn finish() {
    let Some(rec) = recorder::recorder() else {
        return;
    };
    if !recorder::enabled() {
        return;
    }
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
