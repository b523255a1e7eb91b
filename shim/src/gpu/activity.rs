//! CUPTI's buffer callbacks: hand out buffers from the pool, and read the
//! completed ones into trace records on the thread CUPTI completes them on
//! (its own worker, or the thread that flushes). That thread writes as the
//! shim (`with_writer`), so the calls it makes meanwhile are not recorded.

use core::ffi::c_char;
use core::sync::atomic::Ordering;
use std::panic::{AssertUnwindSafe, catch_unwind};

use cupti_sys::consts::*;
use cupti_sys::read::Record as Raw;
use cupti_sys::v12::{CUcontext, CUpti_Activity};
use stallscope_format::records::{
    Api, Device, Kernel, Marker, Memcpy, Memory, Memset, Overhead, Sync, api_domain,
};

use super::api_select;
use super::buffers::Grant;
use super::decode::{Decoded, decode, record_size};
use super::names;
use super::session::{self, Counts, Reader, Session};
use super::status;
use crate::recorder::{self, Writer};

/// `CUpti_BuffersCallbackRequestFunc`.
pub unsafe extern "C" fn buffer_requested(
    buffer: *mut *mut u8,
    size: *mut usize,
    max_records: *mut usize,
) {
    if buffer.is_null() || size.is_null() {
        return;
    }
    let grant = catch_unwind(|| match session::live() {
        Some(s) => {
            let g = s.pool.request(false);
            if g == Grant::Declined {
                Counts::add(&s.counts.declined, 1);
            }
            (g, s.pool.buffer_size())
        }
        // A forked child (whose pool lock a parent thread may have held at
        // the fork) or no session: nothing to give.
        None => (Grant::Declined, 0),
    })
    .unwrap_or((Grant::Declined, 0));
    // SAFETY: CUPTI passes valid out-pointers.
    unsafe {
        match grant {
            (Grant::Buffer(b) | Grant::Discard(b), n) => {
                *buffer = b as *mut u8;
                *size = n;
            }
            (Grant::Declined, _) => {
                *buffer = core::ptr::null_mut();
                *size = 0;
            }
        }
        if !max_records.is_null() {
            *max_records = 0;
        }
    }
}

/// `CUpti_BuffersCallbackCompleteFunc`.
pub unsafe extern "C" fn buffer_completed(
    _context: CUcontext,
    _stream_id: u32,
    buffer: *mut u8,
    _size: usize,
    valid: usize,
) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // In a forked child this does nothing at all.
        let Some(s) = session::live() else { return };
        if buffer.is_null() {
            return;
        }
        if s.pool.is_discard(buffer as usize) {
            let n = count_records(s, buffer, valid);
            Counts::add(&s.counts.discarded, n);
            recorder::with_writer(|w| status::dropped(w, first_device(s), n));
            return;
        }
        recorder::with_writer(|w| read_buffer(s, w, buffer, valid));
        s.pool.give_back(buffer as usize);
        if s.counts.kernels.load(Ordering::Relaxed) > 0 {
            api_select::check_once(s);
        }
    }));
}

fn first_device(s: &Session) -> u32 {
    s.reader().first_device.unwrap_or(0)
}

/// Walks a buffer with `cuptiActivityGetNextRecord`, calling `f` on each.
fn for_each(s: &Session, buffer: *mut u8, valid: usize, mut f: impl FnMut(Raw<'_>)) {
    let end = buffer as usize + valid;
    let mut rec: *mut CUpti_Activity = core::ptr::null_mut();
    loop {
        // SAFETY: a buffer CUPTI completed, with `valid` bytes of records.
        let r = unsafe { (s.api.get_next_record)(buffer, valid, &mut rec) };
        if r != CUPTI_SUCCESS || rec.is_null() {
            // MAX_LIMIT_REACHED ends a buffer; anything else ends it too.
            return;
        }
        let at = rec as usize;
        if at < buffer as usize || at >= end {
            return;
        }
        // SAFETY: the record lies inside the valid bytes; its kind is first.
        let kind = unsafe { (rec as *const u32).read_unaligned() };
        let want = record_size(&s.layouts, kind).unwrap_or(4);
        let len = want.min(end - at);
        // SAFETY: `len` bytes from `at` are inside the buffer.
        f(unsafe { Raw::from_raw(at as *const u8, len) });
    }
}

fn count_records(s: &Session, buffer: *mut u8, valid: usize) -> u64 {
    let mut n = 0;
    for_each(s, buffer, valid, |_| n += 1);
    n
}

fn read_buffer(s: &Session, w: &mut Writer<'_>, buffer: *mut u8, valid: usize) {
    s.clock.calibrate();
    let mut r = s.reader();
    let conv = |t: u64| s.clock.to_mono(t);
    for_each(s, buffer, valid, |raw| {
        match decode(&s.layouts, raw, &conv) {
            Some(d) => emit(s, &mut r, w, d),
            None => Counts::add(&s.counts.unreadable, 1),
        }
    });
    drop(r);
    query_dropped(s, w);
}

/// CUPTI's own count of records it could not store, per context and for
/// the global queue; each read resets it.
pub fn query_dropped(s: &Session, w: &mut Writer<'_>) {
    let Some(get) = s.api.get_num_dropped else {
        return;
    };
    let mut queues: Vec<(usize, u32)> = s.contexts().iter().map(|c| (c.handle, c.device)).collect();
    queues.push((0, first_device(s)));
    for (ctx, device) in queues {
        let mut n: usize = 0;
        // SAFETY: a context CUPTI announced (or NULL for the global queue).
        if unsafe { get(ctx as CUcontext, 0, &mut n) } == CUPTI_SUCCESS {
            status::dropped(w, device, n as u64);
        }
    }
}

fn note_device(r: &mut Reader, context: u32, device: u32) {
    r.ctx_device.entry(context).or_insert(device);
    r.first_device.get_or_insert(device);
}

/// The name of a CUDA API function, from CUPTI or the built-in table.
fn api_name(s: &Session, domain: u8, cbid: u32) -> Option<String> {
    if let Some(get) = s.api.get_callback_name {
        let cupti_domain = if domain == api_domain::RUNTIME {
            CUPTI_CB_DOMAIN_RUNTIME_API
        } else {
            CUPTI_CB_DOMAIN_DRIVER_API
        };
        let mut p: *const c_char = core::ptr::null();
        // SAFETY: a valid out-pointer; the name is CUPTI's static string.
        if unsafe { get(cupti_domain, cbid, &mut p) } == CUPTI_SUCCESS && !p.is_null() {
            let n = unsafe { core::ffi::CStr::from_ptr(p) };
            return Some(n.to_string_lossy().into_owned());
        }
    }
    names::fallback_name(domain, cbid).map(str::to_string)
}

fn emit(s: &Session, r: &mut Reader, w: &mut Writer<'_>, d: Decoded) {
    match d {
        Decoded::Kernel(mut k, name) => {
            note_device(r, k.context, k.device);
            // SAFETY: CUPTI's kernel name, valid while the module is loaded.
            k.name = unsafe { r.strings.id_of(w, name) };
            w.event(Kernel::LEN, &mut |b| k.encode(b));
            Counts::add(&s.counts.kernels, 1);
        }
        Decoded::Memcpy(m) => {
            note_device(r, m.context, m.device);
            w.event(Memcpy::LEN, &mut |b| m.encode(b));
        }
        Decoded::Memset(m) => {
            note_device(r, m.context, m.device);
            w.event(Memset::LEN, &mut |b| m.encode(b));
        }
        Decoded::Sync(mut y) => {
            y.device = r
                .ctx_device
                .get(&y.context)
                .copied()
                .or(r.first_device)
                .unwrap_or(u32::MAX);
            w.event(Sync::LEN, &mut |b| y.encode(b));
        }
        Decoded::Api(a) => {
            let Reader { strings, apis, .. } = r;
            if apis.keep(w, strings, a.domain, a.cbid, || {
                api_name(s, a.domain, a.cbid)
            }) {
                w.event(Api::LEN, &mut |b| a.encode(b));
                Counts::add(&s.counts.apis, 1);
            } else {
                Counts::add(&s.counts.filtered, 1);
            }
        }
        Decoded::Memory(m) => {
            w.event(Memory::LEN, &mut |b| m.encode(b));
        }
        Decoded::Overhead(o) => {
            w.event(Overhead::LEN, &mut |b| o.encode(b));
        }
        Decoded::Marker(mut m, name, domain) => {
            // SAFETY: CUPTI's NVTX strings (or null).
            m.name = unsafe { r.strings.id_of(w, name) };
            m.domain = unsafe { r.strings.id_of(w, domain) };
            w.event(Marker::LEN, &mut |b| m.encode(b));
        }
        Decoded::Device(mut d, name) => {
            if r.devices.insert(d.device) {
                r.first_device.get_or_insert(d.device);
                // SAFETY: CUPTI's device name.
                d.name = unsafe { r.strings.id_of(w, name) };
                w.event(Device::LEN, &mut |b| d.encode(b));
            }
        }
        Decoded::Incomplete => Counts::add(&s.counts.incomplete, 1),
        Decoded::Other(_) => Counts::add(&s.counts.unreadable, 1),
    }
}

/// Totals for the final note.
pub fn summary(s: &Session) -> Option<String> {
    let c = &s.counts;
    let get = |a: &core::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let (f, i, u, d, n) = (
        get(&c.filtered),
        get(&c.incomplete),
        get(&c.unreadable),
        get(&c.discarded),
        get(&c.declined),
    );
    let mut parts = Vec::new();
    // "1 record was", "2 records were".
    let plural = |n: u64| if n == 1 { ("", "was") } else { ("s", "were") };
    if get(&c.kernels) > 0 && get(&c.apis) == 0 && s.selective_api.load(Ordering::Relaxed) {
        parts.push(format!(
            "this libcupti recorded {} kernels but none of the CUDA calls switched on one by one \
             (cuptiActivityEnableRuntimeApi), so kernels cannot be tied to their launches: \
             record again with {}=1",
            get(&c.kernels),
            crate::config::env::ALL_API
        ));
    }
    if f > 0 {
        parts.push(format!(
            "{f} CUDA API record{} of functions the analysis does not use {} not kept",
            plural(f).0,
            plural(f).1
        ));
    }
    if i > 0 {
        parts.push(format!(
            "{i} incomplete GPU record{} (no timestamps) {} skipped",
            plural(i).0,
            plural(i).1
        ));
    }
    if u > 0 {
        parts.push(format!(
            "{u} GPU record{} of unexpected kinds or sizes {} skipped",
            plural(u).0,
            plural(u).1
        ));
    }
    if d > 0 || n > 0 {
        parts.push(format!(
            "{d} GPU record{} {} discarded and {n} buffer request{} declined for lack of a free \
             buffer",
            plural(d).0,
            plural(d).1,
            plural(n).0
        ));
    }
    (!parts.is_empty()).then(|| format!("GPU capture: {}", parts.join("; ")))
}

// The callbacks have exactly CUPTI's types.
const _: cupti_sys::v12::CUpti_BuffersCallbackRequestFunc = Some(buffer_requested);
const _: cupti_sys::v12::CUpti_BuffersCallbackCompleteFunc = Some(buffer_completed);
