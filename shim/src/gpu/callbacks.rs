//! The CUPTI callback API: allocation failures (OOM records) at API exit,
//! and contexts as they are created (for dropped-record counts).
//!
//! Only the allocation functions are enabled, so ordinary CUDA calls
//! (launches, copies) never reach us. A failed allocation asks
//! `cudaMemGetInfo` for the memory state; a thread-local guard keeps that
//! call, and anything it triggers, from re-entering this code.

use core::cell::Cell;
use core::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use cupti_sys::consts::*;
use cupti_sys::v12 as c;
use stallscope_format::records::{Oom, api_domain};

use super::loader;
use super::session::{self, Context, Session};
use crate::{clock, recorder};

thread_local! {
    /// Inside one of our callbacks on this thread.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
    /// Runtime allocations in progress on this thread: their nested driver
    /// allocation fails too, and only the runtime call gets an OOM record.
    static RUNTIME_ALLOCS: Cell<u32> = const { Cell::new(0) };
}

const RUNTIME_ALLOCS_CBIDS: &[u32] = &[
    c::CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
    c::CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020,
    c::CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000,
    c::CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
    c::CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
];

const DRIVER_ALLOCS_CBIDS: &[u32] = &[
    c::CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
    c::CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
    c::CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged,
    c::CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
    c::CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
    c::CUPTI_DRIVER_TRACE_CBID_cuMemCreate,
];

/// Subscribes and enables our callbacks. Err says why OOM capture is off.
pub fn subscribe(s: &'static Session) -> Result<(), String> {
    let (Some(sub), Some(enable)) = (s.api.subscribe, s.api.enable_callback) else {
        return Err("the library has no callback API; allocation failures are not captured".into());
    };
    let mut handle: c::CUpti_SubscriberHandle = core::ptr::null_mut();
    // SAFETY: a valid out-pointer and a callback with CUPTI's signature.
    let r = unsafe { sub(&mut handle, Some(on_callback), core::ptr::null_mut()) };
    if r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED {
        return Err(
            "another CUPTI client (torch.profiler, Nsight Systems...) holds the callback API \
             (cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED); GPU activity is \
             recorded, allocation failures (OOM) are not"
                .into(),
        );
    }
    if r != CUPTI_SUCCESS {
        return Err(format!(
            "cuptiSubscribe failed ({}); allocation failures (OOM) are not captured",
            super::api::result_name(r)
        ));
    }
    s.subscribed
        .store(true, core::sync::atomic::Ordering::Release);
    let mut failed = 0;
    let on = |domain, cbid| {
        // SAFETY: our subscriber handle.
        unsafe { enable(1, handle, domain, cbid) }
    };
    for (domain, cbid) in [
        (
            CUPTI_CB_DOMAIN_RESOURCE,
            CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
        ),
        (
            CUPTI_CB_DOMAIN_RESOURCE,
            CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING,
        ),
    ]
    .into_iter()
    .chain(
        RUNTIME_ALLOCS_CBIDS
            .iter()
            .map(|&c| (CUPTI_CB_DOMAIN_RUNTIME_API, c)),
    )
    .chain(
        DRIVER_ALLOCS_CBIDS
            .iter()
            .map(|&c| (CUPTI_CB_DOMAIN_DRIVER_API, c)),
    ) {
        if on(domain, cbid) != CUPTI_SUCCESS {
            failed += 1;
        }
    }
    if failed > 0 {
        // gpusim has no driver domain: its driver ids are refused, harmlessly.
        let all = 2 + RUNTIME_ALLOCS_CBIDS.len() + DRIVER_ALLOCS_CBIDS.len();
        if failed == all {
            return Err("cuptiEnableCallback failed; allocation failures are not captured".into());
        }
    }
    Ok(())
}

/// `CUpti_CallbackFunc`.
unsafe extern "C" fn on_callback(_user: *mut c_void, domain: u32, cbid: u32, data: *const c_void) {
    if data.is_null() || INSIDE.get() {
        return;
    }
    // In a forked child: nothing.
    let Some(s) = session::live() else { return };
    INSIDE.set(true);
    let _ = catch_unwind(AssertUnwindSafe(|| match domain {
        CUPTI_CB_DOMAIN_RESOURCE => {
            // SAFETY: resource callbacks carry a CUpti_ResourceData.
            resource(s, cbid, unsafe { &*(data as *const c::CUpti_ResourceData) })
        }
        CUPTI_CB_DOMAIN_RUNTIME_API | CUPTI_CB_DOMAIN_DRIVER_API => {
            // SAFETY: API callbacks carry a CUpti_CallbackData.
            api(s, domain, cbid, unsafe {
                &*(data as *const c::CUpti_CallbackData)
            })
        }
        _ => {}
    }));
    INSIDE.set(false);
}

fn resource(s: &Session, cbid: u32, d: &c::CUpti_ResourceData) {
    let ctx = d.context as usize;
    if ctx == 0 {
        return;
    }
    match cbid {
        CUPTI_CBID_RESOURCE_CONTEXT_CREATED => {
            let mut device = 0u32;
            if let Some(get) = s.api.get_device_id {
                // SAFETY: the context being announced; a valid out-pointer.
                unsafe { get(d.context, &mut device) };
            }
            s.contexts().push(Context {
                handle: ctx,
                device,
            });
        }
        CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING => {
            // Its dropped count can only be read while it exists.
            let gone = {
                let mut v = s.contexts();
                v.iter()
                    .position(|c| c.handle == ctx)
                    .map(|i| v.swap_remove(i))
            };
            if let (Some(c), Some(get)) = (gone, s.api.get_num_dropped) {
                let mut n = 0usize;
                // SAFETY: the context still exists during this callback.
                if unsafe { get(d.context, 0, &mut n) } == CUPTI_SUCCESS {
                    recorder::with_writer(|w| super::status::dropped(w, c.device, n as u64));
                }
            }
        }
        _ => {}
    }
}

fn api(s: &Session, domain: u32, cbid: u32, d: &c::CUpti_CallbackData) {
    let runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    if d.callbackSite == CUPTI_API_ENTER {
        if runtime {
            RUNTIME_ALLOCS.set(RUNTIME_ALLOCS.get() + 1);
        }
        return;
    }
    if runtime {
        RUNTIME_ALLOCS.set(RUNTIME_ALLOCS.get().saturating_sub(1));
    } else if RUNTIME_ALLOCS.get() > 0 {
        return; // the runtime call around it reports the failure
    }
    if d.functionReturnValue.is_null() {
        return;
    }
    // SAFETY: at API exit the return value is a cudaError_t / CUresult.
    let result = unsafe { *(d.functionReturnValue as *const i32) };
    let oom = if runtime {
        result == cudaErrorMemoryAllocation as i32
    } else {
        result == CUDA_ERROR_OUT_OF_MEMORY as i32
    };
    if !oom {
        return;
    }
    // SAFETY: `functionParams` is this function's `*_params` struct.
    let requested = unsafe { requested_bytes(domain, cbid, d.functionParams) };
    let (free, total) = mem_info(s).unwrap_or((0, 0));
    recorder::with_writer(|w| {
        let o = Oom {
            domain: if runtime {
                api_domain::RUNTIME
            } else {
                api_domain::DRIVER
            },
            tid: w.tid(),
            ts: clock::mono_ns(),
            requested,
            free,
            total,
            cbid,
            result,
        };
        w.event(Oom::LEN, &mut |b| o.encode(b));
    });
}

/// The size an allocation asked for, from its parameter struct.
///
/// # Safety
/// `p` must be null or the parameter struct of `(domain, cbid)`.
unsafe fn requested_bytes(domain: u32, cbid: u32, p: *const c_void) -> u64 {
    if p.is_null() {
        return 0;
    }
    macro_rules! field {
        ($t:ty, |$x:ident| $e:expr) => {{
            // SAFETY: upheld by the caller.
            let $x = unsafe { &*(p as *const $t) };
            ($e) as u64
        }};
    }
    match (domain, cbid) {
        (CUPTI_CB_DOMAIN_RUNTIME_API, c::CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020) => {
            field!(c::cudaMalloc_v3020_params, |x| x.size)
        }
        (CUPTI_CB_DOMAIN_RUNTIME_API, c::CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020) => {
            field!(c::cudaMallocPitch_v3020_params, |x| x
                .width
                .saturating_mul(x.height))
        }
        (CUPTI_CB_DOMAIN_RUNTIME_API, c::CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000) => {
            field!(c::cudaMallocManaged_v6000_params, |x| x.size)
        }
        (
            CUPTI_CB_DOMAIN_RUNTIME_API,
            c::CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020
            | c::CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
        ) => field!(c::cudaMallocAsync_v11020_params, |x| x.size),
        (CUPTI_CB_DOMAIN_DRIVER_API, c::CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2) => {
            field!(c::cuMemAlloc_v2_params, |x| x.bytesize)
        }
        (CUPTI_CB_DOMAIN_DRIVER_API, c::CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2) => {
            field!(c::cuMemAllocPitch_v2_params, |x| x
                .WidthInBytes
                .saturating_mul(x.Height))
        }
        (CUPTI_CB_DOMAIN_DRIVER_API, c::CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged) => {
            field!(c::cuMemAllocManaged_params, |x| x.bytesize)
        }
        (
            CUPTI_CB_DOMAIN_DRIVER_API,
            c::CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync
            | c::CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
        ) => field!(c::cuMemAllocAsync_params, |x| x.bytesize),
        (CUPTI_CB_DOMAIN_DRIVER_API, c::CUPTI_DRIVER_TRACE_CBID_cuMemCreate) => {
            field!(c::cuMemCreate_params, |x| x.size)
        }
        _ => 0,
    }
}

type MemGetInfo = unsafe extern "C" fn(*mut usize, *mut usize) -> i32;

/// Free and total device memory, from the CUDA runtime the program loaded
/// (`cudaMemGetInfo`), or the driver's `cuMemGetInfo_v2`. Resolved on the
/// first failure, never by loading anything.
fn mem_info(s: &Session) -> Option<(u64, u64)> {
    static FN: OnceLock<Option<usize>> = OnceLock::new();
    let f = (*FN.get_or_init(|| resolve_mem_get_info(s.handle)))?;
    // SAFETY: both candidates have this signature.
    let f: MemGetInfo = unsafe { core::mem::transmute(f) };
    let (mut free, mut total) = (0usize, 0usize);
    (unsafe { f(&mut free, &mut total) } == 0).then_some((free as u64, total as u64))
}

fn resolve_mem_get_info(cupti: usize) -> Option<usize> {
    let find = |h: *mut c_void, name: &core::ffi::CStr| {
        // SAFETY: a valid handle (or pseudo-handle) and C string.
        let p = unsafe { libc::dlsym(h, name.as_ptr()) };
        (!p.is_null()).then_some(p as usize)
    };
    // A stand-in (gpusim) carries the runtime itself.
    if let Some(p) = find(cupti as *mut c_void, c"cudaMemGetInfo") {
        return Some(p);
    }
    for rt in loader::loaded_objects("libcudart.so") {
        let Ok(path) = std::ffi::CString::new(rt.as_os_str().as_encoded_bytes()) else {
            continue;
        };
        // SAFETY: NOLOAD only returns a handle to a library already loaded.
        let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        if let Some(p) = (!h.is_null()).then(|| find(h, c"cudaMemGetInfo")).flatten() {
            return Some(p);
        }
    }
    find(libc::RTLD_DEFAULT, c"cudaMemGetInfo")
        .or_else(|| loader::driver_symbol(c"cuMemGetInfo_v2"))
}

const _: c::CUpti_CallbackFunc = Some(on_callback);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requested_sizes_from_params() {
        let mut out: *mut c_void = core::ptr::null_mut();
        let p = c::cudaMalloc_v3020_params {
            devPtr: &mut out,
            size: 4 << 30,
        };
        let got = unsafe {
            requested_bytes(
                CUPTI_CB_DOMAIN_RUNTIME_API,
                c::CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
                (&raw const p).cast(),
            )
        };
        assert_eq!(got, 4 << 30);
        let mut dptr: c::CUdeviceptr = 0;
        let p = c::cuMemAllocPitch_v2_params {
            dptr: &mut dptr,
            pPitch: core::ptr::null_mut(),
            WidthInBytes: 1024,
            Height: 3,
            ElementSizeBytes: 4,
        };
        let got = unsafe {
            requested_bytes(
                CUPTI_CB_DOMAIN_DRIVER_API,
                c::CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
                (&raw const p).cast(),
            )
        };
        assert_eq!(got, 3072);
        assert_eq!(
            unsafe { requested_bytes(CUPTI_CB_DOMAIN_DRIVER_API, 1, core::ptr::null()) },
            0
        );
    }
}
