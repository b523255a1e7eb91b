//! When GPU capture starts and ends.
//!
//! * Start: the CUDA driver calls our `InitializeInjection` at cuInit when
//!   `CUDA_INJECTION64_PATH` names this library (`stallscope record` sets
//!   it). With LD_PRELOAD alone, a watcher thread starts capture once the
//!   program has initialized CUDA itself; it never initializes CUDA, since a
//!   driver initialized before a fork breaks CUDA in the children.
//! * Exit: an atexit handler (registered at start, so it runs before the
//!   CUDA libraries' own destructors) flushes CUPTI's buffers on a helper
//!   thread and waits at most [`FLUSH_TIMEOUT`]. Never cuptiFinalize, never
//!   dlclose.
//! * Fork: a child of a process that started CUPTI marks capture dead and
//!   never calls CUPTI again.
//! * Other CUPTI clients: see [`interposed_register_callbacks`].

use core::ffi::c_void;
use std::ffi::OsString;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, Once};
use std::time::Duration;

use cupti_sys::consts::*;
use cupti_sys::v12::{
    CUpti_BuffersCallbackCompleteFunc, CUpti_BuffersCallbackRequestFunc, CUptiResult,
};
use stallscope_format::records::gpu_status;

use super::activity::{self, buffer_completed, buffer_requested};
use super::api::{Api, is_fatal, result_name};
use super::buffers::Pool;
use super::clock::{GpuClock, timestamp};
use super::session::{self, ACTIVE, DEAD, IDLE, OFF, STARTING, Session};
use super::{api_select, callbacks, loader, status};
use crate::config::Config;
use crate::{diag, recorder};

/// How long the exit flush may take.
pub const FLUSH_TIMEOUT: Duration = Duration::from_secs(2);
/// `STALLSCOPE_GPU_CLOCK=calibrate` maps CUPTI's own clock instead of
/// registering ours (for tests and for a library whose callback misbehaves).
const CLOCK_ENV: &str = "STALLSCOPE_GPU_CLOCK";

#[derive(Clone, Copy)]
enum Trigger {
    Injection,
    Lazy,
}

impl Trigger {
    fn describe(self) -> &'static str {
        match self {
            Trigger::Injection => "started at cuInit (CUDA_INJECTION64_PATH)",
            Trigger::Lazy => "started lazily, after the program initialized CUDA",
        }
    }
}

/// Called once recording has begun in a new process image.
pub fn on_start(cfg: &Config) {
    if !cfg.gpu {
        session::set_state(OFF);
        // Recorded with the process's first record: by itself it does not
        // make a file (issue 18, item 2).
        recorder::when_file(report_disabled);
        return;
    }
    let expected = loader::injection_expected();
    if cfg.sample_hz > 0 && expected {
        // CUDA will call InitializeInjection; in case it does not, the
        // sampler polls for CUDA (`poll_lazy`). No thread of our own until
        // the program has several: see sampler.rs.
        WATCH_EXPECTED.store(expected, Ordering::Relaxed);
        WATCH_HELD.store(0, Ordering::Relaxed);
        WATCH_POLLS.store(0, Ordering::Relaxed);
        WATCH_ON.store(true, Ordering::Release);
        return;
    }
    let standin = cfg.cupti.clone();
    let spawned = crate::threads::spawn("stallscope-gpu", move || watch(expected, standin));
    if let (Err(e), false) = (spawned, expected) {
        diag::say(&format!(
            "cannot start the GPU watcher thread ({e}); GPU capture starts only through \
             CUDA_INJECTION64_PATH"
        ));
    }
}

fn report_disabled() {
    status::report(
        gpu_status::DISABLED,
        0,
        "GPU capture turned off (STALLSCOPE_GPU=0, or `stallscope record --no-gpu`)",
        false,
    );
}

static WATCH_ON: AtomicBool = AtomicBool::new(false);
static WATCH_EXPECTED: AtomicBool = AtomicBool::new(false);
static WATCH_HELD: AtomicU32 = AtomicU32::new(0);
static WATCH_POLLS: AtomicU64 = AtomicU64::new(0);
/// With injection expected the driver normally starts us first; the lazy
/// start only steps in if that never happens within this many polls.
const GRACE_POLLS: u32 = 10;

/// One step of the lazy start, called by the sampler about ten times a
/// second (once a second after the first minute).
pub fn poll_lazy() {
    if !WATCH_ON.load(Ordering::Acquire) {
        return;
    }
    let polls = WATCH_POLLS.fetch_add(1, Ordering::Relaxed);
    if polls >= 600 && !polls.is_multiple_of(10) {
        return;
    }
    if session::state() != IDLE || !recorder::enabled() {
        WATCH_ON.store(false, Ordering::Release);
        return;
    }
    let standin = crate::lifecycle::config().and_then(|c| c.cupti.clone());
    let hit = loader::cuda_initialized() || standin.as_deref().is_some_and(loader::standin_loaded);
    let held = if hit {
        WATCH_HELD.fetch_add(1, Ordering::Relaxed) + 1
    } else {
        0
    };
    if !hit {
        WATCH_HELD.store(0, Ordering::Relaxed);
    }
    let needed = if WATCH_EXPECTED.load(Ordering::Relaxed) {
        GRACE_POLLS
    } else {
        1
    };
    if held >= needed {
        WATCH_ON.store(false, Ordering::Release);
        start(Trigger::Lazy);
    }
}

/// `InitializeInjection`: the driver is in cuInit on this thread.
pub fn injection() {
    // CUDA may come before the first hooked call that begins recording.
    crate::lifecycle::begin_now();
    let _ = catch_unwind(|| start(Trigger::Injection));
}

/// In a forked child: if the parent had started (or was starting) CUPTI,
/// its threads did not survive the fork and its state belongs to the parent:
/// nothing calls it again. If the parent never tried, the child is like a
/// new process: its own cuInit may still start capture through injection.
pub fn forget_in_child() {
    if session::state() != IDLE {
        session::set_state(DEAD);
    }
}

/// Waits for CUDA to show up, then starts capture. With injection expected
/// the driver normally starts us first; the watcher only steps in if that
/// never happens within a grace period.
fn watch(injection_expected: bool, standin: Option<OsString>) {
    recorder::own_thread();
    let mut held = 0u32;
    let mut polls = 0u64;
    loop {
        // 10 Hz for a minute, then 1 Hz: cheap either way.
        let period = if polls < 600 { 100 } else { 1000 };
        std::thread::sleep(Duration::from_millis(period));
        polls += 1;
        if session::state() != IDLE || !recorder::enabled() {
            return;
        }
        let hit =
            loader::cuda_initialized() || standin.as_deref().is_some_and(loader::standin_loaded);
        held = if hit { held + 1 } else { 0 };
        if held >= if injection_expected { GRACE_POLLS } else { 1 } {
            start(Trigger::Lazy);
            return;
        }
    }
}

fn start(trigger: Trigger) {
    if !session::transition(IDLE, STARTING) {
        return; // started, starting elsewhere, off, or a forked child
    }
    let cfg = crate::lifecycle::config();
    if recorder::recorder().is_none() || !cfg.is_some_and(|c| c.gpu) {
        session::set_state(OFF);
        return;
    }
    let cfg = cfg.expect("checked above");
    // As the shim: CUPTI's own file reads are not the program's.
    let outcome = recorder::with_writer(|_| begin(cfg, trigger));
    match outcome {
        Some(Ok(started)) => {
            session::set_state(ACTIVE);
            // CUDA runs threads of its own now: sample every thread.
            crate::sampler::ensure_thread();
            status::report(
                gpu_status::ACTIVE,
                started.version,
                &started.describe,
                false,
            );
            if !started.failed_kinds.is_empty() {
                status::info(&format!(
                    "GPU capture: CUPTI refused these activity kinds: {}",
                    started.failed_kinds.join(", ")
                ));
            }
            if !started.partial.is_empty() {
                status::report(
                    gpu_status::PARTIAL,
                    started.version,
                    &started.partial.join("; "),
                    true,
                );
            }
        }
        Some(Err((version, reason))) => {
            session::set_state(OFF);
            status::report(gpu_status::UNAVAILABLE, version, &reason, true);
        }
        None => {
            session::set_state(OFF);
            status::report(
                gpu_status::UNAVAILABLE,
                0,
                "internal error while starting CUPTI",
                true,
            );
        }
    }
}

struct Started {
    version: u32,
    describe: String,
    partial: Vec<String>,
    failed_kinds: Vec<&'static str>,
}

type Failure = (u32, String);

fn begin(cfg: &Config, trigger: Trigger) -> Result<Started, Failure> {
    if session::other_client_first() {
        return Err((
            0,
            "another CUPTI client (torch.profiler, Nsight Systems...) already receives the \
             activity records; stallscope does not take them over"
                .into(),
        ));
    }
    let lib = loader::load(cfg.cupti.as_deref()).map_err(|e| (0, e))?;
    let path = lib.path.clone();
    if !loader::driver_loaded() && !loader::safe_without_driver(&path) {
        return Err((
            0,
            format!(
                "no CUDA driver (libcuda.so.1) is loaded in this process, and {path} is not \
                 called without one (libcupti 13.2 crashes in cuptiGetVersion then)"
            ),
        ));
    }
    let api = Api::resolve(lib.handle).map_err(|e| (0, format!("{path} is not usable: {e}")))?;
    let mut version = 0u32;
    // SAFETY: a valid out-pointer.
    let r = unsafe { (api.get_version)(&mut version) };
    if r != CUPTI_SUCCESS {
        return Err((
            0,
            format!(
                "cuptiGetVersion failed in {path}: {} (no CUDA driver or GPU?)",
                result_name(r)
            ),
        ));
    }
    let Some(layouts) = cupti_sys::layouts(version) else {
        return Err((
            version,
            format!(
                "{path} reports CUPTI API version {version}, which this stallscope cannot read \
                 (it reads 18-24 and 26-28, CUDA 12.0-12.9, and 1300zz-1305zz, CUDA 13.0-13.5)"
            ),
        ));
    };
    let fail = |call: &str, r: CUptiResult| {
        (
            version,
            format!(
                "{call} failed in {path} (CUPTI {}, API {version}): {}{}",
                layouts.cuda_release,
                result_name(r),
                if r == CUPTI_ERROR_NOT_INITIALIZED {
                    " (is there a CUDA driver and GPU?)"
                } else {
                    ""
                }
            ),
        )
    };
    let mut partial = Vec::new();

    // The clock first: CUPTI takes it before any kind is enabled.
    let want_native = std::env::var_os(CLOCK_ENV).is_none_or(|v| v != "calibrate");
    let mut clock = None;
    if let (true, Some(reg)) = (want_native, api.register_timestamp) {
        // SAFETY: `timestamp` has CUPTI's callback signature.
        let r = unsafe { reg(Some(timestamp)) };
        if r == CUPTI_SUCCESS {
            clock = Some(GpuClock::native());
        } else if is_fatal(r) {
            return Err(fail("cuptiActivityRegisterTimestampCallback", r));
        }
    }
    let clock = match clock {
        Some(c) => c,
        None => api
            .get_timestamp
            .and_then(GpuClock::calibrated)
            .ok_or_else(|| {
                (
                    version,
                    format!("{path} cannot put GPU times on the host clock (no timestamp callback, cuptiGetTimestamp failed)"),
                )
            })?,
    };
    match api.set_thread_id_type {
        Some(set) => {
            // SAFETY: a plain enum argument.
            let r = unsafe { set(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) };
            if r != CUPTI_SUCCESS {
                if is_fatal(r) {
                    return Err(fail("cuptiSetThreadIdType", r));
                }
                partial.push(format!(
                    "cuptiSetThreadIdType(SYSTEM) failed ({}): CUDA API calls cannot be tied to host threads",
                    result_name(r)
                ));
            }
        }
        None => partial
            .push("no cuptiSetThreadIdType: CUDA API calls cannot be tied to host threads".into()),
    }

    let s: &'static Session = session::install(Session {
        pool: Pool::new(version),
        layouts,
        clock,
        handle: lib.handle,
        counts: Default::default(),
        reader: Default::default(),
        contexts: Default::default(),
        subscribed: Default::default(),
        selective_api: Default::default(),
        api,
    });
    let req: CUpti_BuffersCallbackRequestFunc = Some(buffer_requested);
    let done: CUpti_BuffersCallbackCompleteFunc = Some(buffer_completed);
    // SAFETY: callbacks with CUPTI's signatures, valid for the process's life.
    let r = unsafe { (s.api.register_callbacks)(req, done) };
    if r != CUPTI_SUCCESS {
        return Err(fail("cuptiActivityRegisterCallbacks", r));
    }
    // CONCURRENT_KERNEL, never KERNEL: KERNEL serializes every kernel.
    // SAFETY: plain enum arguments, here and below.
    let r = unsafe { (s.api.activity_enable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) };
    if r != CUPTI_SUCCESS {
        return Err(fail("cuptiActivityEnable(CONCURRENT_KERNEL)", r));
    }
    let mut failed_kinds = Vec::new();
    // Per-function switches made once a context exists record nothing
    // (api_select): only a start at cuInit comes before every context.
    let selected = match trigger {
        Trigger::Injection if !cfg.all_api => api_select::enable_kept(&s.api),
        _ => None,
    };
    s.selective_api.store(selected.is_some(), Ordering::Relaxed);
    for (kind, name) in [
        (CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"),
        (CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"),
        (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION"),
        (CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME"),
        (CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER"),
        (CUPTI_ACTIVITY_KIND_MEMORY2, "MEMORY2"),
        (CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD"),
        (CUPTI_ACTIVITY_KIND_MARKER, "MARKER"),
        (CUPTI_ACTIVITY_KIND_DEVICE, "DEVICE"),
    ] {
        if selected.is_some()
            && matches!(
                kind,
                CUPTI_ACTIVITY_KIND_RUNTIME | CUPTI_ACTIVITY_KIND_DRIVER
            )
        {
            continue;
        }
        if unsafe { (s.api.activity_enable)(kind) } != CUPTI_SUCCESS {
            failed_kinds.push(name);
        }
    }
    if let Err(why) = callbacks::subscribe(s) {
        partial.push(why);
    }
    register_exit_flush();
    Ok(Started {
        version,
        describe: format!(
            "CUPTI {} (API {version}) from {path}, {}{}{}",
            layouts.cuda_release,
            trigger.describe(),
            if s.clock.is_native() {
                ""
            } else {
                "; GPU times calibrated against CUPTI's clock"
            },
            match selected {
                Some(n) => format!(
                    "; API records of {} runtime and {} driver functions",
                    n.runtime, n.driver
                ),
                None => String::new(),
            }
        ),
        partial,
        failed_kinds,
    })
}

fn register_exit_flush() {
    static ONCE: Once = Once::new();
    extern "C" fn at_exit() {
        let _ = catch_unwind(flush_at_exit);
    }
    ONCE.call_once(|| {
        // SAFETY: registering a plain function; this library is never unloaded.
        unsafe { libc::atexit(at_exit) };
    });
}

/// Flushes CUPTI's buffers before the process ends, on a helper thread so
/// a stuck driver costs at most [`FLUSH_TIMEOUT`]. Runs once: from the
/// atexit handler, or from the shim's destructor if that comes first.
pub fn flush_at_exit() {
    static FLUSHED: Once = Once::new();
    if session::state() != ACTIVE {
        return;
    }
    FLUSHED.call_once(|| {
        let Some(s) = session::live() else { return };
        // Another client owns CUPTI now: a flush would call its callbacks,
        // and after cuptiFinalize nothing of ours is left to flush.
        if !session::taken_over() {
            flush_with_timeout(s);
        }
        if let Some(text) = activity::summary(s) {
            status::info(&text);
        }
    });
}

fn flush_with_timeout(s: &'static Session) {
    let done = Arc::new((Mutex::new(false), Condvar::new()));
    let signal = Arc::clone(&done);
    let spawned = crate::threads::spawn("stallscope-flush", move || {
        recorder::own_thread();
        // SAFETY: a plain flag; CUPTI completes the buffers on this thread.
        unsafe { (s.api.flush_all)(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) };
        recorder::with_writer(|w| activity::query_dropped(s, w));
        let (lock, cv) = &*signal;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_all();
    });
    if let Err(e) = spawned {
        status::info(&format!(
            "GPU capture: cannot start the exit flush thread ({e}); the last GPU records are lost"
        ));
        return;
    }
    let (lock, cv) = &*done;
    let guard = lock.lock().unwrap_or_else(|e| e.into_inner());
    let (flushed, _) = cv
        .wait_timeout_while(guard, FLUSH_TIMEOUT, |d| !*d)
        .unwrap_or_else(|e| e.into_inner());
    if !*flushed {
        let msg = format!(
            "CUPTI did not finish flushing GPU records within {} s at exit; the rest are lost",
            FLUSH_TIMEOUT.as_secs()
        );
        diag::say(&msg);
        status::info(&format!("GPU capture: {msg}"));
    }
}

/// The next definition of a CUPTI function after this library.
fn next(name: &core::ffi::CStr, cache: &AtomicUsize) -> Option<usize> {
    let p = cache.load(Ordering::Relaxed);
    if p != 0 {
        return Some(p);
    }
    // SAFETY: plain symbol lookups with C strings.
    let mut f = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    if let (true, Some(s)) = (f.is_null(), session::live()) {
        f = unsafe { libc::dlsym(s.handle as *mut c_void, name.as_ptr()) };
    }
    if f.is_null() {
        return None;
    }
    cache.store(f as usize, Ordering::Relaxed);
    Some(f as usize)
}

/// Another CUPTI client is taking over: what it means depends on whether
/// capture has started.
fn other_client(reason: &str) {
    match session::state() {
        ACTIVE if session::take_over() => {
            let v = session::live().map_or(0, |s| s.layouts.api_version);
            status::report(gpu_status::PARTIAL, v, reason, true);
        }
        IDLE | STARTING => session::note_other_client_first(),
        _ => {}
    }
}

/// Our `cuptiActivityRegisterCallbacks`, seen by programs that link
/// libcupti (PyTorch's kineto): CUPTI keeps one pair of buffer callbacks, so
/// a second client's registration silently ends ours. Forwarded unchanged.
///
/// # Safety
/// CUPTI's contract for the real function.
pub unsafe fn interposed_register_callbacks(
    requested: CUpti_BuffersCallbackRequestFunc,
    completed: CUpti_BuffersCallbackCompleteFunc,
) -> CUptiResult {
    static REAL: AtomicUsize = AtomicUsize::new(0);
    let Some(f) = next(c"cuptiActivityRegisterCallbacks", &REAL) else {
        return CUPTI_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: the real function has this signature.
    let f: unsafe extern "C" fn(
        CUpti_BuffersCallbackRequestFunc,
        CUpti_BuffersCallbackCompleteFunc,
    ) -> CUptiResult = unsafe { core::mem::transmute(f) };
    let r = unsafe { f(requested, completed) };
    let ours =
        requested.map(|p| p as *const () as usize) == Some(buffer_requested as *const () as usize);
    if r == CUPTI_SUCCESS && !ours {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            other_client(
                "another CUPTI client (torch.profiler or another profiler) registered its own \
                 activity buffers; GPU records after this point go to it, not to the trace",
            )
        }));
    }
    r
}

/// Our `cuptiFinalize`, forwarded unchanged: after another client finalizes
/// CUPTI, nothing of ours is left.
///
/// # Safety
/// CUPTI's contract for the real function.
pub unsafe fn interposed_finalize() -> CUptiResult {
    static REAL: AtomicUsize = AtomicUsize::new(0);
    let _ = catch_unwind(|| {
        if session::state() == ACTIVE {
            other_client(
                "another CUPTI client called cuptiFinalize; GPU capture ended at this point",
            );
        }
    });
    let Some(f) = next(c"cuptiFinalize", &REAL) else {
        return CUPTI_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: the real function has this signature.
    let f: unsafe extern "C" fn() -> CUptiResult = unsafe { core::mem::transmute(f) };
    unsafe { f() }
}
