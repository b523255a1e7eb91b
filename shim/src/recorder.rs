//! The recorder API the hooks, the sampler and the CUPTI consumer call.
//!
//! Hot path ([`enter`] / [`leave_fd`] / [`leave_addr`]): one relaxed load of the
//! global switch, the thread's reentrancy guard, two tick reads and three
//! counter updates in the thread's slot of the mapped file; for a short call
//! on a file, a few compares and stores to extend the thread's run of them
//! (`burst`). No locks, no allocation, no system calls. Only calls that last
//! at least the span threshold take the cold path, which timestamps the span,
//! classifies the fd and appends a record to the thread's chunk; so do a
//! call that starts a run and a run that ends worth a record.

use core::cell::Cell;
use core::ffi::c_int;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::panic::{AssertUnwindSafe, catch_unwind};

use stallscope_format::HostOp;
use stallscope_format::layout::{ChunkKind, counter_offset, state};
use stallscope_format::records::{self, Burst, Clock, Note, Span};
use stallscope_format::writer::{Claim, MetaStream, Region, ThreadSlot};

use crate::burst::{self, Run};
use crate::clock::{self, ticks, ticks_to_ns};
use crate::tls::{STATE, ThreadState, gettid};
use crate::trace_file::{TraceFile, file_state, strerror, transient};
use crate::{diag, fd_room, fdinfo, sampler};

/// Everything about the current process's recording. Created once per process
/// image (and again in each forked child); never freed, so references stay
/// valid for threads that are still running when recording stops.
pub struct Recorder {
    pub region: Region,
    pub file: TraceFile,
    pub meta: MetaStream,
    pub pid: u32,
    next_string: AtomicU32,
    next_object: AtomicU32,
    cap_reported: AtomicBool,
    /// A passing fd shortage kept the file from growing (reported once).
    fd_short_reported: AtomicBool,
    /// The start clock pair, recorded first once the file exists.
    start_clock: Clock,
    /// The start pair and the deferred records have been written.
    file_started: AtomicBool,
}

/// What to record as soon as the file exists (a `fn()`; 0 for nothing): the
/// GPU capture state known at start-up, which alone does not make a file.
static ON_FILE: AtomicUsize = AtomicUsize::new(0);

static RECORDER: AtomicPtr<Recorder> = AtomicPtr::new(core::ptr::null_mut());
static ENABLED: AtomicBool = AtomicBool::new(false);
/// Set by the first `stop`, so the reason is told once even when several
/// threads fail at the same time (or the stop note itself cannot be written).
static STOPPING: AtomicBool = AtomicBool::new(false);
static THRESHOLD_TICKS: AtomicU64 = AtomicU64::new(u64::MAX);
/// The span threshold in nanoseconds, for rescaling `THRESHOLD_TICKS`.
static MIN_SPAN_NS: AtomicU64 = AtomicU64::new(0);
/// `burst::GAP_NS` in ticks.
static GAP_TICKS: AtomicU64 = AtomicU64::new(0);
/// `burst::LONGEST_OVER_FILES_NS` in ticks.
static LONGEST_TICKS: AtomicU64 = AtomicU64::new(0);

/// Counters of threads that found no free slot; never part of the file.
#[repr(C, align(64))]
struct Spare([u8; stallscope_format::layout::THREAD_SLOT_SIZE]);
static mut SPARE: Spare = Spare([0; stallscope_format::layout::THREAD_SLOT_SIZE]);

/// The start of a hooked call; `t0 == 0` means "not recording this call".
/// It carries the thread's state so the end of the call needs no second TLS
/// lookup (in a shared library each one is a call to __tls_get_addr).
#[derive(Clone, Copy)]
pub struct Entry {
    t0: u64,
    state: *const ThreadState,
}

impl Entry {
    const NONE: Entry = Entry {
        t0: 0,
        state: core::ptr::null(),
    };
}

/// The start-up function of an armed process image (a `fn()`), 0 when none.
static ARMED: AtomicUsize = AtomicUsize::new(0);
/// The process the arming belongs to: a vfork child shares the parent's
/// memory, and must not begin the parent's recording with its own pid.
static ARMED_PID: AtomicU32 = AtomicU32::new(0);

/// Arms recording: `begin` runs at the process image's first hooked call
/// (but mmap: see [`enter_passive`]), on that thread, as the shim. It lays
/// out the trace and calls [`install`]. A process image that makes no such
/// call (a wrapper that only execs, `/bin/true`) pays for nothing but the
/// loader and the constructor's few system calls: no allocation, no
/// mapping, no clock calibration, no thread, no file (issue 18, item 2).
pub fn arm(begin: fn(), pid: u32) {
    ARMED_PID.store(pid, Ordering::Relaxed);
    ARMED.store(begin as usize, Ordering::Release);
}

/// Disarms (before installing a recorder some other way, or in a child).
pub fn disarm() {
    ARMED.store(0, Ordering::Release);
}

/// Whether recording is armed but has not begun.
pub fn armed() -> bool {
    ARMED.load(Ordering::Acquire) != 0
}

/// Runs the armed start-up function once, now, if this process image has
/// one and this thread may: not while the shim runs on it (a signal handler
/// in the middle of the shim's own work), not in a vfork child. Another
/// thread's hooked calls pass unrecorded meanwhile. Keeps errno. True if
/// recording is on afterwards.
#[cold]
#[inline(never)]
pub fn begin_if_armed() -> bool {
    let f = ARMED.load(Ordering::Acquire);
    if f == 0 || STATE.with(|s| s.busy.get()) {
        return false;
    }
    // SAFETY: getpid has no preconditions.
    if unsafe { libc::getpid() } as u32 != ARMED_PID.load(Ordering::Relaxed) {
        return false;
    }
    if ARMED
        .compare_exchange(f, 0, Ordering::AcqRel, Ordering::Relaxed)
        .is_err()
    {
        return false;
    }
    // SAFETY: thread-local errno; the program must see the value it left.
    let saved = unsafe { *libc::__errno_location() };
    STATE.with(|s| s.busy.set(true));
    // SAFETY: stored from a `fn()` by `arm`.
    let begin: fn() = unsafe { core::mem::transmute::<usize, fn()>(f) };
    let _ = catch_unwind(begin);
    STATE.with(|s| s.busy.set(false));
    unsafe { *libc::__errno_location() = saved };
    ENABLED.load(Ordering::Acquire)
}

/// Starts timing a hooked call, unless recording is off or the shim itself is
/// running on this thread. The first such call of a process image begins its
/// recording (see [`arm`]).
#[inline(always)]
pub fn enter() -> Entry {
    if !ENABLED.load(Ordering::Relaxed) && !begin_if_armed() {
        return Entry::NONE;
    }
    timed()
}

/// As [`enter`], but never the call that begins the recording: for calls
/// that allocators make while holding their own locks (mmap), where the
/// allocations of [`arm`]'s start-up function could deadlock.
#[inline(always)]
pub fn enter_passive() -> Entry {
    if !ENABLED.load(Ordering::Relaxed) {
        return Entry::NONE;
    }
    timed()
}

#[inline(always)]
fn timed() -> Entry {
    STATE.with(|s| {
        if s.busy.get() {
            return Entry::NONE;
        }
        s.busy.set(true);
        Entry {
            t0: ticks(),
            state: s,
        }
    })
}

/// Ends a call on an fd. `moved` is the call's return value (bytes for data
/// calls); `force` records a span regardless of duration (mmap of files).
#[inline(always)]
pub fn leave_fd(e: Entry, op: HostOp, fd: c_int, moved: i64, force: bool) {
    if e.t0 != 0 {
        leave(
            e,
            op,
            Target::Fd(fd),
            if moved > 0 { moved as u64 } else { 0 },
            force,
        );
    }
}

/// Ends an open: remembers the path for describing the file later, cheaply,
/// and whether the open may have created the file; notes how close the
/// program is to its fd limit (`fd_room`).
#[inline(always)]
pub fn leave_open(e: Entry, fd: c_int, path: *const core::ffi::c_char, flags: c_int) {
    if e.t0 != 0 {
        fd_room::opened(fd);
        fdinfo::remember_path(fd, path, flags & libc::O_CREAT != 0);
        leave(e, HostOp::Open, Target::Fd(fd), 0, false);
    }
}

/// Ends a close: the fd's remembered path no longer applies.
#[inline(always)]
pub fn leave_close(e: Entry, fd: c_int) {
    if e.t0 != 0 {
        fd_room::closed(fd);
        // SAFETY: as in `leave`.
        let s = unsafe { &*e.state };
        let run = s.run.get();
        if run.fd == fd {
            if run.files == 1 && run.worth(THRESHOLD_TICKS.load(Ordering::Relaxed)) {
                // A file worth a record alone: no later file continues it,
                // and a process may leave by `_exit` before another call.
                end_run(s);
            } else {
                // The next file opened may get this fd number, and its reads
                // may continue the run (`burst::Run::continues`).
                s.run.set(Run {
                    fd: burst::CLOSED,
                    ..run
                });
            }
        }
        fdinfo::forget_path(fd);
        leave(e, HostOp::Close, Target::Fd(-1), 0, false);
    }
}

/// Ends a wait on a synchronization object at `addr` (0 for sleeps).
#[inline(always)]
pub fn leave_addr(e: Entry, op: HostOp, addr: usize) {
    if e.t0 != 0 {
        leave(e, op, Target::Addr(addr as u64), 0, false);
    }
}

#[derive(Clone, Copy)]
enum Target {
    Fd(c_int),
    Addr(u64),
}

#[inline(always)]
fn leave(e: Entry, op: HostOp, target: Target, bytes: u64, force: bool) {
    let t1 = ticks();
    let d = t1.wrapping_sub(e.t0);
    // SAFETY: `enter` took this pointer from the calling thread's TLS, which
    // outlives the call.
    let s = unsafe { &*e.state };
    let mut slot = s.slot.get();
    if slot.is_null() {
        slot = attach_thread(s);
    }
    // SAFETY: the slot is ours (or the spare) and the offsets are counter offsets.
    unsafe {
        slot.add(counter_offset(op, 0), 1);
        slot.add(counter_offset(op, 1), bytes);
        slot.add(counter_offset(op, 2), d);
    }
    let threshold = THRESHOLD_TICKS.load(Ordering::Relaxed);
    let span = force || d >= threshold;
    if let Target::Fd(fd) = target
        && burst::runs(op)
        && !span
    {
        // SAFETY: the run is this thread's, and nothing else touches it
        // while this call runs (the shim's own calls pass through).
        let run = unsafe { &mut *s.run.as_ptr() };
        if run.extend(fd, op, e.t0, t1, bytes, GAP_TICKS.load(Ordering::Relaxed)) {
            if run.needs_object(threshold) {
                resolve_run(s);
            }
        } else if fdinfo::opened(fd) {
            start_run(s, Run::first(fd, op, e.t0, t1, bytes));
        }
    } else if !span && burst::joins(op) {
        // SAFETY: as above.
        let run = unsafe { &mut *s.run.as_ptr() };
        run.join(e.t0, t1, GAP_TICKS.load(Ordering::Relaxed));
    }
    if span || t1 >= sampler::next_self_sample() {
        slow(s, op, target, e.t0, t1, bytes, span);
    }
    s.busy.set(false);
}

/// Gives the calling thread its counter slot.
#[cold]
#[inline(never)]
fn attach_thread(s: &ThreadState) -> ThreadSlot {
    let tid = gettid();
    s.tid.set(tid);
    if recorder().is_some_and(|r| r.pid != tid) {
        // A second thread: from now on a sampler thread costs nothing extra.
        sampler::ensure_thread();
    }
    let slot = recorder()
        .and_then(|r| r.region.claim_slot(tid))
        // SAFETY: the spare is only ever used as a scratch counter block.
        .unwrap_or_else(|| unsafe { spare_slot() });
    s.slot.set(slot);
    slot
}

unsafe fn spare_slot() -> ThreadSlot {
    // SAFETY: SPARE is a static scratch block; racing writes only garble
    // counters nobody reads.
    unsafe { ThreadSlot::from_raw(core::ptr::addr_of_mut!(SPARE) as *mut u8) }
}

/// The cold path: a span record, and/or the single thread's self-sample.
#[cold]
#[inline(never)]
fn slow(s: &ThreadState, op: HostOp, target: Target, t0: u64, t1: u64, bytes: u64, span: bool) {
    if span {
        // The run ended before this call began: its record goes first.
        end_run(s);
        span_slow(s, op, target, t0, t1, bytes);
    }
    if t1 >= sampler::next_self_sample() {
        let saved = unsafe { *libc::__errno_location() };
        let r = catch_unwind(AssertUnwindSafe(|| {
            if let Some(rec) = recorder() {
                sampler::sample_self(&mut Writer { rec, s }, t1);
            }
        }));
        if r.is_err() {
            stop("internal error while sampling; recording stopped");
        }
        unsafe { *libc::__errno_location() = saved };
        bridge_own_time(s, t1);
    }
}

/// The shim's own work inside a call that ends the thread's run (a sample,
/// describing the file, a record) is no gap the program left between its
/// calls: the run stretches over it, or it would break at every sample.
#[inline]
fn bridge_own_time(s: &ThreadState, t1: u64) {
    // SAFETY: as in `leave`.
    let run = unsafe { &mut *s.run.as_ptr() };
    if run.calls > 0 && run.end == t1 {
        run.end = ticks();
    }
}

fn span_slow(s: &ThreadState, op: HostOp, target: Target, t0: u64, t1: u64, bytes: u64) {
    // SAFETY: thread-local errno; the program must see the value the real call left.
    let saved = unsafe { *libc::__errno_location() };
    let r = catch_unwind(AssertUnwindSafe(|| {
        let Some(rec) = recorder() else { return };
        let end = clock::mono_ns();
        if clock::refine_if_due(end) {
            rescale(rec);
        }
        let dur = ticks_to_ns(t1.wrapping_sub(t0));
        let mut w = Writer { rec, s };
        let (obj, bytes) = match target {
            Target::Fd(fd) if fd >= 0 => (fdinfo::object_for(&mut w, fd), bytes),
            Target::Fd(_) => (0, bytes),
            Target::Addr(a) => (0, a),
        };
        let span = Span {
            op: op as u8,
            obj,
            ts: end.saturating_sub(dur),
            dur,
            bytes,
        };
        w.event(Span::LEN, &mut |b| span.encode(b));
    }));
    if r.is_err() {
        stop("internal error while recording a span; recording stopped");
    }
    unsafe { *libc::__errno_location() = saved };
}

/// Ends the thread's run (its record if worth one) and begins `next`, or
/// goes on into `next`'s file if the run reads files one after another.
#[cold]
#[inline(never)]
fn start_run(s: &ThreadState, next: Run) {
    let mut run = s.run.get();
    let gap = GAP_TICKS.load(Ordering::Relaxed);
    let threshold = THRESHOLD_TICKS.load(Ordering::Relaxed);
    if run.continues(&next, gap, threshold, LONGEST_TICKS.load(Ordering::Relaxed)) {
        run.absorb(next);
        s.run.set(run);
        name_folder(s);
    } else {
        end_run(s);
        s.run.set(next);
        // SAFETY: the folder is this thread's, and only the shim's cold
        // paths on it touch it.
        unsafe { (*s.folder.get()).clear() };
    }
    bridge_own_time(s, next.end);
}

/// The run reads files one after another: its object becomes the folder
/// that holds them all, described again only when a file lies outside it.
/// A file opened by a relative path is taken to be in the folder.
fn name_folder(s: &ThreadState) {
    let fd = s.run.get().fd;
    // SAFETY: as in `start_run`.
    let folder = unsafe { &mut *s.folder.get() };
    let mut obj = 0;
    // Inside `guarded`: readlink and stat may set errno.
    guarded(
        "internal error while describing a folder; recording stopped",
        || {
            let mut path = [0u8; burst::FOLDER_MAX + 16];
            let n = match fdinfo::stashed(fd, &mut path) {
                0 if folder.is_empty() => fdinfo::fd_path(fd, &mut path),
                n => n,
            };
            if folder.cover(&path[..n])
                && let Some(rec) = recorder()
            {
                obj = fdinfo::folder_object(&mut Writer { rec, s }, folder.path());
            }
        },
    );
    if obj != 0 {
        let mut run = s.run.get();
        run.obj = obj;
        s.run.set(run);
    }
}

/// Ends the thread's run, writing its record if worth one.
fn end_run(s: &ThreadState) {
    let mut run = s.run.get();
    if run.calls == 0 {
        return;
    }
    let done = run.take(THRESHOLD_TICKS.load(Ordering::Relaxed));
    s.run.set(run);
    let Some(r) = done else { return };
    guarded(
        "internal error while recording a run of calls; recording stopped",
        || {
            let Some(rec) = recorder() else { return };
            // The run ended `now - r.end` ticks ago.
            let (now, now_ticks) = (clock::mono_ns(), ticks());
            let end = now.saturating_sub(ticks_to_ns(now_ticks.saturating_sub(r.end)));
            let dur = ticks_to_ns(r.end.wrapping_sub(r.start));
            let b = Burst {
                op: r.op,
                obj: if r.obj == burst::UNRESOLVED { 0 } else { r.obj },
                ts: end.saturating_sub(dur),
                dur,
                bytes: r.bytes,
                calls: r.calls.min(u32::MAX as u64) as u32,
                files: r.files,
                busy: ticks_to_ns(r.busy),
            };
            Writer { rec, s }.event(Burst::LEN, &mut |buf| b.encode(buf));
        },
    );
}

/// Looks up the object of the run's fd, which is open now.
#[cold]
#[inline(never)]
fn resolve_run(s: &ThreadState) {
    let mut obj = 0;
    guarded(
        "internal error while describing a file; recording stopped",
        || {
            if let Some(rec) = recorder() {
                obj = fdinfo::object_for(&mut Writer { rec, s }, s.run.get().fd);
            }
        },
    );
    let mut run = s.run.get();
    run.obj = obj;
    s.run.set(run);
    bridge_own_time(s, run.end);
}

/// Runs the shim's own work `f` inside a hooked call: keeps errno, and stops
/// recording with `failed` if `f` panics.
fn guarded(failed: &str, f: impl FnOnce()) {
    // SAFETY: thread-local errno; the program must see the value the real call left.
    let saved = unsafe { *libc::__errno_location() };
    if catch_unwind(AssertUnwindSafe(f)).is_err() {
        stop(failed);
    }
    unsafe { *libc::__errno_location() = saved };
}

/// Ends the calling thread's run of short calls (at exit: a later call
/// would have ended it).
pub fn end_own_run() {
    STATE.with(|s| {
        let was = s.busy.replace(true);
        end_run(s);
        s.busy.set(was);
    });
}

/// The recorder of this process, if recording.
pub fn recorder() -> Option<&'static Recorder> {
    let p = RECORDER.load(Ordering::Acquire);
    // SAFETY: recorders are leaked, never freed.
    (!p.is_null()).then(|| unsafe { &*p })
}

pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Installs a new recorder and turns recording on.
pub fn install(
    file: TraceFile,
    region: Region,
    pid: u32,
    min_span_ns: u64,
    start_clock: Clock,
) -> &'static Recorder {
    let rec: &'static Recorder = Box::leak(Box::new(Recorder {
        region,
        file,
        meta: MetaStream::new(),
        pid,
        next_string: AtomicU32::new(1),
        next_object: AtomicU32::new(1),
        cap_reported: AtomicBool::new(false),
        fd_short_reported: AtomicBool::new(false),
        start_clock,
        file_started: AtomicBool::new(false),
    }));
    ON_FILE.store(0, Ordering::Relaxed);
    set_threshold(min_span_ns);
    STOPPING.store(false, Ordering::Release);
    RECORDER.store(rec as *const Recorder as *mut Recorder, Ordering::Release);
    ENABLED.store(true, Ordering::Release);
    rec
}

/// Runs `f` (which records) once the trace file exists: now if it does.
pub fn when_file(f: fn()) {
    match recorder().map(|r| r.file.state()) {
        Some(file_state::PENDING) => ON_FILE.store(f as usize, Ordering::Release),
        Some(file_state::READY) => f(),
        _ => {}
    }
}

/// Counted time below which a process image that recorded nothing leaves
/// no file: every call it made was shorter than the span threshold, and all
/// of them together are too short to matter to any diagnosis, while making
/// a file costs 0.1 to 1 ms and 400 KB (launcher scripts, `pyenv`'s shims,
/// shells reading a line: issue 18, item 2).
pub const COUNTED_NS_WORTH_A_FILE: u64 = 1_000_000;

/// Whether this process image has anything worth a file at exit: a record
/// was written (the file exists), or its counted calls took at least
/// [`COUNTED_NS_WORTH_A_FILE`] together.
pub fn worth_a_file(rec: &Recorder) -> bool {
    if rec.file.state() != file_state::PENDING {
        return true;
    }
    let geo = rec.region.geometry();
    let slots = rec.file.slots_claimed().min(geo.thread_slots);
    let mut ticks = 0u64;
    for i in 0..slots {
        let off = geo.slot_offset(i) as usize;
        for op in HostOp::ALL {
            // SAFETY: claimed slots lie in the staged thread table; counters
            // are 8-aligned and only ever updated whole.
            let c = unsafe {
                &*(rec.region.base().add(off + counter_offset(op, 2)) as *const AtomicU64)
            };
            ticks = ticks.saturating_add(c.load(Ordering::Relaxed));
        }
    }
    clock::ticks_to_ns(ticks) >= COUNTED_NS_WORTH_A_FILE
}

/// Forgets the recorder (in a forked child, before installing its own).
pub fn uninstall() {
    ENABLED.store(false, Ordering::Release);
    RECORDER.store(core::ptr::null_mut(), Ordering::Release);
}

/// After the tick rate is refined: the threshold in ticks, and the rate in
/// the file's header (which converts the per-thread tick totals).
pub fn rescale(rec: &Recorder) {
    set_threshold(MIN_SPAN_NS.load(Ordering::Relaxed));
    rec.region.set_ticks_per_sec(clock::ticks_per_sec());
}

/// Recomputes the threshold in ticks (after the tick rate is refined).
pub fn set_threshold(min_span_ns: u64) {
    MIN_SPAN_NS.store(min_span_ns, Ordering::Relaxed);
    THRESHOLD_TICKS.store(clock::ns_to_ticks(min_span_ns), Ordering::Relaxed);
    GAP_TICKS.store(clock::ns_to_ticks(burst::GAP_NS), Ordering::Relaxed);
    LONGEST_TICKS.store(
        clock::ns_to_ticks(burst::LONGEST_OVER_FILES_NS),
        Ordering::Relaxed,
    );
}

/// Turns recording off for good, with one line on stderr.
pub fn stop(reason: &str) {
    stop_with(records::note::STOPPED, 0, reason);
}

/// Stops recording: sets `bits` (and STOPPED) in the header, records a note
/// with `code` while the recorder still accepts it, then tells the user.
fn stop_with(code: u32, bits: u32, reason: &str) {
    if !ENABLED.load(Ordering::Acquire) || STOPPING.swap(true, Ordering::AcqRel) {
        return;
    }
    if let Some(rec) = recorder() {
        rec.region.set_state(state::STOPPED | bits);
        // May fail on a full disk: the header bits say it then.
        let _ = with_writer(|w| w.note(code, reason));
    }
    ENABLED.store(false, Ordering::Release);
    diag::say(reason);
}

/// Forgets the calling thread's slot and chunk (after fork, in the child).
pub fn reset_thread() {
    STATE.with(|s| {
        s.busy.set(false);
        s.slot.set(ThreadSlot::NULL);
        s.chunk.set(stallscope_format::writer::ChunkWriter::EMPTY);
        s.tid.set(0);
        s.run.set(Run::EMPTY);
        // SAFETY: the calling thread's own state.
        unsafe { (*s.folder.get()).clear() };
    });
}

/// Ends the shim's own work on this thread (hooked calls are recorded again).
pub fn release_thread() {
    STATE.with(|s| s.busy.set(false));
}

/// Marks the calling thread as the shim's own for good (the sampler, CUPTI's
/// worker): the calls it makes are not recorded.
pub fn own_thread() {
    STATE.with(|s| s.busy.set(true));
}

/// Runs `f` with the calling thread's writer, as the shim: hooked calls made
/// meanwhile pass through unrecorded. None if not recording.
pub fn with_writer<R>(f: impl FnOnce(&mut Writer<'_>) -> R) -> Option<R> {
    let rec = recorder()?;
    STATE.with(|s| {
        let was = s.busy.replace(true);
        if s.slot.get().is_null() {
            attach_thread(s);
        }
        let r = catch_unwind(AssertUnwindSafe(|| f(&mut Writer { rec, s })));
        s.busy.set(was);
        r.ok()
    })
}

/// Appends records for the calling thread.
pub struct Writer<'a> {
    rec: &'static Recorder,
    s: &'a ThreadState,
}

impl Writer<'_> {
    pub fn recorder(&self) -> &'static Recorder {
        self.rec
    }

    pub fn tid(&self) -> u32 {
        self.s.tid.get()
    }

    /// Backs file ranges; `failed` tells afterwards whether growing failed.
    fn grow<'f>(&'f self, failed: &'f Cell<bool>) -> impl FnMut(u64, u64) -> bool + 'f {
        move |off, len| {
            let ok = self.rec.file.grow(off, len);
            if !ok {
                failed.set(true);
            }
            ok
        }
    }

    /// Appends an event record of `len` bytes to this thread's chunk. False if
    /// it was dropped (cap reached or disk full); drops are counted.
    pub fn event(&mut self, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> bool {
        if !enabled() || !self.ensure_file() {
            return false;
        }
        let mut w = self.s.chunk.get();
        // SAFETY: the chunk belongs to this thread.
        if unsafe { w.write(len, &mut *fill) } {
            self.s.chunk.set(w);
            return true;
        }
        unsafe { w.seal() };
        let failed = Cell::new(false);
        let claim = self.rec.region.claim_chunk(
            ChunkKind::Thread,
            self.s.tid.get(),
            &mut self.grow(&failed),
        );
        let ok = match claim {
            Claim::Chunk(c) => {
                w = c;
                unsafe { w.write(len, &mut *fill) }
            }
            Claim::Full => {
                self.report_cap();
                false
            }
            Claim::NoSpace => {
                self.report_no_space();
                false
            }
        };
        self.s.chunk.set(w);
        if !ok {
            let slot = self.s.slot.get();
            if slot.is_null() {
                self.rec.region.add_dropped(1);
            } else {
                // SAFETY: our own slot.
                unsafe { slot.add_dropped(1) };
            }
        }
        ok
    }

    /// Appends a shared definition (string, fd object). False if dropped.
    pub fn meta(&mut self, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> bool {
        // Before the meta stream's lock: making the file records.
        if !self.ensure_file() {
            return false;
        }
        let failed = Cell::new(false);
        let ok = self
            .rec
            .meta
            .write(&self.rec.region, len, fill, &mut self.grow(&failed));
        if !ok && failed.get() {
            self.report_no_space();
        }
        ok
    }

    /// The file exists (made now if this is the first record).
    #[inline]
    fn ensure_file(&mut self) -> bool {
        match self.rec.file.state() {
            file_state::READY => true,
            file_state::FAILED => false,
            _ => self.make_file(),
        }
    }

    #[cold]
    #[inline(never)]
    fn make_file(&mut self) -> bool {
        match self.rec.file.make() {
            Ok(true) => {}
            Ok(false) => return false,
            Err(msg) => {
                stop(&format!("{msg}; not recording (the program runs normally)"));
                return false;
            }
        }
        // Only the thread that made the file gets here with a fresh one;
        // the start pair goes first, then what waited for the file.
        if !self.rec.file_started.swap(true, Ordering::AcqRel) {
            let c = self.rec.start_clock;
            self.event(Clock::LEN, &mut |b| c.encode(b));
            let f = ON_FILE.swap(0, Ordering::AcqRel);
            if f != 0 {
                // SAFETY: stored from a `fn()` by `when_file`.
                let f: fn() = unsafe { core::mem::transmute::<usize, fn()>(f) };
                f();
            }
        }
        true
    }

    /// Defines a string and returns its id (0 if it could not be written).
    pub fn string(&mut self, text: &[u8]) -> u32 {
        let id = self.rec.next_string.fetch_add(1, Ordering::Relaxed);
        let len = records::string_record_len(text);
        if self.meta(len, &mut |b| records::encode_string(b, id, text)) {
            id
        } else {
            0
        }
    }

    /// A fresh object id for an fd classification.
    pub fn next_object(&self) -> u32 {
        self.rec.next_object.fetch_add(1, Ordering::Relaxed)
    }

    /// Records a note for the user.
    pub fn note(&mut self, code: u32, text: &str) {
        let text_id = self.string(text.as_bytes());
        let n = Note {
            level: 1,
            code,
            ts: clock::mono_ns(),
            text: text_id,
        };
        self.event(Note::LEN, &mut |b| n.encode(b));
    }

    fn report_cap(&mut self) {
        if !self.rec.cap_reported.swap(true, Ordering::Relaxed) {
            let msg = format!(
                "trace size cap reached for {} ({} MiB); further records are counted as dropped \
                 (raise STALLSCOPE_MAX_MB, or set STALLSCOPE_FLIGHT=1 to keep the newest)",
                self.rec.file.path(),
                self.rec
                    .region
                    .geometry()
                    .chunk_offset(self.rec.region.geometry().chunk_count)
                    >> 20
            );
            diag::say(&msg);
            let text = self.string(msg.as_bytes());
            let n = Note {
                level: 1,
                code: records::note::CAP_REACHED,
                ts: clock::mono_ns(),
                text,
            };
            // The note itself may not fit any more; the header state says it too.
            let mut w = self.s.chunk.get();
            unsafe { w.write(Note::LEN, |b| n.encode(b)) };
            self.s.chunk.set(w);
        }
    }

    /// The file could not grow. A passing fd shortage (the program holds
    /// every fd it may have) only drops records meanwhile: the shim gives way
    /// and keeps no fd in reserve. Anything else stops recording, and the
    /// header says whether the disk was full or the file size limit was hit
    /// (issue 14, item 12: not to be confused with the size cap).
    fn report_no_space(&mut self) {
        let e = self.rec.file.last_errno();
        let path = &self.rec.file.path();
        if transient(e) {
            if !self.rec.fd_short_reported.swap(true, Ordering::Relaxed) {
                let msg = format!(
                    "could not extend {path} for a moment ({}); records are dropped until \
                     it can be (the program's fds come first)",
                    strerror(e)
                );
                diag::say(&msg);
                self.note(records::note::INFO, &msg);
            }
            return;
        }
        let (bits, msg) = match e {
            libc::ENOSPC | libc::EDQUOT => (
                state::DISK_FULL,
                format!(
                    "the disk is full: cannot grow {path} ({}); recording stopped, the program \
                     continues",
                    strerror(e)
                ),
            ),
            libc::EFBIG => (
                state::FILE_LIMIT,
                format!(
                    "the file size limit (ulimit -f) keeps {path} from growing ({}); recording \
                     stopped, the program continues",
                    strerror(e)
                ),
            ),
            _ => (
                0,
                format!(
                    "cannot grow {path} ({}); recording stopped, the program continues",
                    strerror(e)
                ),
            ),
        };
        stop_with(records::note::DISK_FULL, bits, &msg);
    }
}
