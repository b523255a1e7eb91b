//! The state shared by GPU capture's parts: where it stands, and the loaded
//! library with everything read from it. Created once per process image,
//! never freed (CUPTI may call back at any time, even at exit).

use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicU64, Ordering};
use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

use cupti_sys::Layouts;

use super::api::Api;
use super::buffers::Pool;
use super::clock::GpuClock;
use super::names::{ApiFilter, Interner};

/// Nothing tried yet.
pub const IDLE: u8 = 0;
/// Loading and enabling CUPTI.
pub const STARTING: u8 = 1;
/// Capturing (possibly partially, see [`taken_over`]).
pub const ACTIVE: u8 = 2;
/// Turned off, unavailable or failed: nothing more will be tried.
pub const OFF: u8 = 3;
/// In a forked child: CUPTI is never touched again.
pub const DEAD: u8 = 4;

static STATE: AtomicU8 = AtomicU8::new(IDLE);
static SESSION: AtomicPtr<Session> = AtomicPtr::new(core::ptr::null_mut());
/// Another CUPTI client took the activity buffers or finalized CUPTI.
static TAKEN_OVER: AtomicBool = AtomicBool::new(false);
/// Another client registered activity callbacks before we started.
static OTHER_FIRST: AtomicBool = AtomicBool::new(false);

pub fn state() -> u8 {
    STATE.load(Ordering::Acquire)
}

pub fn set_state(s: u8) {
    STATE.store(s, Ordering::Release);
}

/// Moves from `from` to `to`; false if the state was something else.
pub fn transition(from: u8, to: u8) -> bool {
    STATE
        .compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
}

pub fn taken_over() -> bool {
    TAKEN_OVER.load(Ordering::Acquire)
}

/// Marks the take-over; true the first time.
pub fn take_over() -> bool {
    !TAKEN_OVER.swap(true, Ordering::AcqRel)
}

pub fn other_client_first() -> bool {
    OTHER_FIRST.load(Ordering::Acquire)
}

pub fn note_other_client_first() {
    OTHER_FIRST.store(true, Ordering::Release);
}

/// The session, unless this is a forked child.
pub fn live() -> Option<&'static Session> {
    if state() == DEAD {
        return None;
    }
    let p = SESSION.load(Ordering::Acquire);
    // SAFETY: sessions are leaked, never freed.
    (!p.is_null()).then(|| unsafe { &*p })
}

pub fn install(s: Session) -> &'static Session {
    let s: &'static Session = Box::leak(Box::new(s));
    SESSION.store(s as *const Session as *mut Session, Ordering::Release);
    s
}

/// Counts of records read but not written to the trace.
#[derive(Default)]
pub struct Counts {
    /// API records of functions the analysis does not use.
    pub filtered: AtomicU64,
    /// Records without timestamps (CUPTI's incomplete records after a forced flush).
    pub incomplete: AtomicU64,
    /// Records of kinds we do not read, or shorter than their layout.
    pub unreadable: AtomicU64,
    /// Records CUPTI wrote into the discard buffer.
    pub discarded: AtomicU64,
    /// Buffer requests declined for lack of a free buffer.
    pub declined: AtomicU64,
    /// Kernel and API records written.
    pub kernels: AtomicU64,
    pub apis: AtomicU64,
}

impl Counts {
    pub fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }
}

/// What buffer processing remembers between buffers.
#[derive(Default)]
pub struct Reader {
    pub strings: Interner,
    pub apis: ApiFilter,
    pub devices: HashSet<u32>,
    /// Context id to device id, learned from kernels and copies.
    pub ctx_device: HashMap<u32, u32>,
    pub first_device: Option<u32>,
}

/// A context announced by CUPTI's resource callback.
#[derive(Clone, Copy)]
pub struct Context {
    pub handle: usize,
    pub device: u32,
}

pub struct Session {
    pub api: Api,
    pub layouts: Layouts,
    pub clock: GpuClock,
    pub pool: Pool,
    pub handle: usize,
    pub counts: Counts,
    pub reader: Mutex<Reader>,
    pub contexts: Mutex<Vec<Context>>,
    /// Our subscriber holds the callback API (OOM capture works).
    pub subscribed: AtomicBool,
    /// API records come for the kept functions only (`api_select`).
    pub selective_api: AtomicBool,
}

impl Session {
    pub fn reader(&self) -> MutexGuard<'_, Reader> {
        self.reader.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn contexts(&self) -> MutexGuard<'_, Vec<Context>> {
        self.contexts.lock().unwrap_or_else(|e| e.into_inner())
    }
}
