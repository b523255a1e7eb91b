//! Device initialization on the first CUDA call, as libcuda's cuInit does it:
//! load the library named by `CUDA_INJECTION64_PATH` and call its
//! `InitializeInjection` (once per process), then announce the new context to
//! CUPTI subscribers (RESOURCE / CONTEXT_CREATED).
//!
//! Source for the injection contract: the CUPTI documentation on
//! "CUDA_INJECTION64_PATH" (the named library is loaded during cuInit and its
//! `int InitializeInjection(void)` is called).

use std::cell::Cell;
use std::ffi::{CString, c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};

use cupti_sys::consts::*;
use cupti_sys::v12::{CUcontext, CUpti_ResourceData, CUpti_ResourceData__bindgen_ty_1, CUstream};

use crate::callbacks;
use crate::state::state;

static DEVICE_READY: AtomicBool = AtomicBool::new(false);
static INIT_LOCK: Mutex<()> = Mutex::new(());
static INJECTION: Once = Once::new();

thread_local! {
    /// This thread is inside initialization (e.g. in InitializeInjection).
    static INITIALIZING: Cell<bool> = const { Cell::new(false) };
}

/// The one context's handle: a stable, non-null address, never dereferenced
/// by anyone.
pub fn context() -> CUcontext {
    static CONTEXT: u8 = 0;
    (&raw const CONTEXT).cast_mut().cast()
}

/// Makes sure the device exists; cheap after the first call.
pub fn ensure() {
    if DEVICE_READY.load(Ordering::Acquire) || INITIALIZING.get() {
        // Re-entry from InitializeInjection proceeds without waiting on
        // itself.
        return;
    }
    let _guard = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if DEVICE_READY.load(Ordering::Acquire) {
        return;
    }
    INITIALIZING.set(true);
    INJECTION.call_once(run_injection);
    {
        let mut st = state();
        st.device_ready = true;
        st.maybe_push_device_record();
    }
    announce_context();
    INITIALIZING.set(false);
    DEVICE_READY.store(true, Ordering::Release);
}

/// Tests only: the next CUDA call initializes the device again (the
/// injection library is still loaded only once per process).
pub(crate) fn forget_device() {
    DEVICE_READY.store(false, Ordering::Release);
}

fn announce_context() {
    let data = CUpti_ResourceData {
        context: context(),
        resourceHandle: CUpti_ResourceData__bindgen_ty_1 {
            stream: std::ptr::null_mut(),
        },
        resourceDescriptor: std::ptr::null_mut(),
    };
    callbacks::invoke(
        CUPTI_CB_DOMAIN_RESOURCE,
        CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
        (&raw const data).cast(),
    );
}

/// Announces a new stream (RESOURCE / STREAM_CREATED).
pub fn announce_stream(stream: CUstream) {
    let data = CUpti_ResourceData {
        context: context(),
        resourceHandle: CUpti_ResourceData__bindgen_ty_1 { stream },
        resourceDescriptor: std::ptr::null_mut(),
    };
    callbacks::invoke(
        CUPTI_CB_DOMAIN_RESOURCE,
        CUPTI_CBID_RESOURCE_STREAM_CREATED,
        (&raw const data).cast(),
    );
}

fn run_injection() {
    let Some(path) = std::env::var_os("CUDA_INJECTION64_PATH") else {
        return;
    };
    if path.is_empty() {
        return;
    }
    let Ok(cpath) = CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str())) else {
        eprintln!("gpusim: CUDA_INJECTION64_PATH contains a NUL byte");
        return;
    };
    // SAFETY: a valid C string; the handle is kept for the life of the
    // process (an injection library is never unloaded).
    let handle = unsafe { libc::dlopen(cpath.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    if handle.is_null() {
        eprintln!(
            "gpusim: cannot load CUDA_INJECTION64_PATH={}",
            path.display()
        );
        return;
    }
    // SAFETY: a valid handle and C string.
    let sym: *mut c_void = unsafe { libc::dlsym(handle, c"InitializeInjection".as_ptr()) };
    if sym.is_null() {
        eprintln!(
            "gpusim: {} has no InitializeInjection",
            std::path::Path::new(&path).display()
        );
        return;
    }
    // SAFETY: the injection contract gives the symbol this signature.
    let init: extern "C" fn() -> c_int = unsafe { std::mem::transmute(sym) };
    init();
}
