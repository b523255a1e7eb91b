//! Activity buffers: records are packed into buffers from the consumer's
//! request callback and handed back through its complete callback, from a
//! gpusim thread every [`FLUSH_PERIOD`] (sooner when many are waiting) and
//! synchronously from `cuptiActivityFlushAll`.

use std::cell::Cell;
use std::sync::{Condvar, Mutex, Once};
use std::time::Duration;

use cupti_sys::consts::*;

use crate::clock::{Stamper, mono_now, own_now};
use crate::records::{Rec, encode_record, record_size};
use crate::state::{pid, state};

pub const FLUSH_PERIOD: Duration = Duration::from_millis(100);
/// Wake the flusher early once this many records wait.
const EARLY_FLUSH_AT: usize = 4096;
/// CUPTI requires 8-byte aligned records.
pub const ALIGN: usize = 8;

/// One delivery round at a time, so buffers are completed in order.
static DELIVERY: Mutex<()> = Mutex::new(());
static WAKE: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());
static FLUSHER: Once = Once::new();

thread_local! {
    /// This thread is inside a delivery round (in a consumer callback).
    static DELIVERING: Cell<bool> = const { Cell::new(false) };
}

/// Waits out any delivery round and keeps new ones from starting while the
/// guard lives (tests reset the state under it).
pub fn pause_delivery() -> std::sync::MutexGuard<'static, ()> {
    DELIVERY.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn align_up(x: usize) -> usize {
    x.div_ceil(ALIGN) * ALIGN
}

/// Starts the periodic flusher (once per process).
pub fn start_flusher() {
    FLUSHER.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("gpusim-flush".into())
            .spawn(|| {
                loop {
                    {
                        let (lock, cv) = &WAKE;
                        let mut woken = lock.lock().unwrap_or_else(|e| e.into_inner());
                        if !*woken {
                            woken = cv
                                .wait_timeout(woken, FLUSH_PERIOD)
                                .unwrap_or_else(|e| e.into_inner())
                                .0;
                        }
                        *woken = false;
                    }
                    deliver(false);
                }
            });
        if let Err(e) = spawned {
            eprintln!("gpusim: cannot start the flush thread: {e}");
        }
    });
}

/// Wakes the flusher if many records wait.
pub fn nudge(pending: usize) {
    if pending >= EARLY_FLUSH_AT {
        let (lock, cv) = &WAKE;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_one();
    }
}

/// Delivers every record whose work is done. `forced` adds an OVERHEAD
/// record for the flush (if that kind is on), as a forced flush costs time.
pub fn deliver(forced: bool) {
    if DELIVERING.get() {
        // A consumer callback flushing again would deadlock on DELIVERY.
        return;
    }
    let _round = DELIVERY.lock().unwrap_or_else(|e| e.into_inner());
    DELIVERING.set(true);
    let t0 = mono_now();
    deliver_round(t0);
    DELIVERING.set(false);
    if forced {
        let mut st = state();
        let tid = st.thread_id();
        st.push(
            0,
            Rec::Overhead {
                overhead_kind: CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH,
                start: t0,
                end: mono_now(),
                pid: pid(),
                tid,
            },
        );
    }
}

fn deliver_round(now: u64) {
    let (taken, request, complete, versions, timestamp) = {
        let mut st = state();
        let (Some(request), Some(complete)) = (st.request, st.complete) else {
            return; // held until the consumer registers buffer callbacks
        };
        let taken = std::mem::take(&mut st.pending);
        (taken, request, complete, st.layouts.versions, st.timestamp)
    };
    // Sorted outside the lock, which API calls on other threads wait for.
    let mut records = Vec::with_capacity(taken.len());
    let mut waiting = std::collections::VecDeque::new();
    for (at, rec) in taken {
        if at <= now {
            records.push(rec);
        } else {
            waiting.push_back((at, rec));
        }
    }
    if !waiting.is_empty() {
        // Ahead of anything queued meanwhile, to keep the original order.
        let mut st = state();
        let newer = std::mem::replace(&mut st.pending, waiting);
        st.pending.extend(newer);
    }
    if records.is_empty() {
        return;
    }
    let stamper = match timestamp {
        // SAFETY: the consumer registered this clock for record timestamps.
        Some(f) => Stamper::new(|| unsafe { f() }),
        None => Stamper::new(own_now),
    };
    let mut buf: Option<Buffer> = None;
    let mut dropped = 0;
    for rec in &records {
        let Some(bytes) = encode_record(rec, &versions, |t| stamper.stamp(t)) else {
            dropped += 1;
            continue;
        };
        loop {
            if buf.is_none() {
                match Buffer::request(request) {
                    Some(b) => buf = Some(b),
                    None => {
                        dropped += 1;
                        break;
                    }
                }
            }
            let b = buf.as_mut().expect("set above");
            if b.push(&bytes) {
                break;
            }
            let fresh = b.used == b.first;
            buf.take().expect("set above").complete(complete);
            if fresh {
                // Even an empty buffer from the consumer cannot hold it.
                dropped += 1;
                break;
            }
        }
    }
    if let Some(b) = buf {
        b.complete(complete);
    }
    if dropped > 0 {
        state().dropped += dropped;
    }
}

/// A consumer buffer being filled.
struct Buffer {
    base: *mut u8,
    size: usize,
    /// Offset of the first record (the buffer start, rounded up to 8).
    first: usize,
    used: usize,
    max_records: usize,
    records: usize,
}

impl Buffer {
    fn request(
        request: unsafe extern "C" fn(*mut *mut u8, *mut usize, *mut usize),
    ) -> Option<Self> {
        let (mut base, mut size, mut max_records) = (std::ptr::null_mut(), 0usize, 0usize);
        // SAFETY: valid out-pointers, as the callback's contract requires.
        unsafe { request(&mut base, &mut size, &mut max_records) };
        if base.is_null() || size == 0 {
            return None;
        }
        let first = align_up(base as usize) - base as usize;
        Some(Buffer {
            base,
            size,
            first,
            used: first,
            max_records,
            records: 0,
        })
    }

    /// Appends one record; false if it does not fit.
    fn push(&mut self, bytes: &[u8]) -> bool {
        let at = align_up(self.used);
        if at + bytes.len() > self.size
            || (self.max_records != 0 && self.records == self.max_records)
        {
            return false;
        }
        // SAFETY: the consumer gave us `size` writable bytes at `base`.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.base.add(at), bytes.len());
        }
        self.used = at + bytes.len();
        self.records += 1;
        true
    }

    fn complete(
        self,
        complete: unsafe extern "C" fn(cupti_sys::v12::CUcontext, u32, *mut u8, usize, usize),
    ) {
        // SAFETY: hands the consumer back its own buffer; records from the
        // global queue carry no context and stream 0, as in real CUPTI.
        unsafe { complete(std::ptr::null_mut(), 0, self.base, self.size, self.used) };
    }
}

/// `cuptiActivityGetNextRecord`: the record after `current` (or the first
/// one when `current` is null), or `None` at the end of the valid bytes.
///
/// # Safety
/// `buffer` must hold `valid` readable bytes written by a delivery round.
pub unsafe fn next_record(
    buffer: *const u8,
    valid: usize,
    current: *const u8,
) -> Option<*const u8> {
    let layouts = state().layouts;
    let off = if current.is_null() {
        align_up(buffer as usize) - buffer as usize
    } else {
        let here = current as usize - buffer as usize;
        // SAFETY: `current` is a record inside the buffer (caller's contract).
        let kind = unsafe { current.cast::<u32>().read_unaligned() };
        align_up(here + record_size(kind, &layouts)?)
    };
    if off + 4 > valid {
        return None;
    }
    // SAFETY: within the valid bytes.
    let kind = unsafe { buffer.add(off).cast::<u32>().read_unaligned() };
    let size = record_size(kind, &layouts)?;
    // SAFETY: checked against the valid length just below.
    (off + size <= valid).then(|| unsafe { buffer.add(off) })
}
