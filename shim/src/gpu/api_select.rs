//! API activity records for the functions the analysis keeps, and no others.
//!
//! The RUNTIME and DRIVER activity kinds record every CUDA call, and PyTorch
//! makes about twenty calls the analysis never reads (`cudaGetDevice`,
//! `cudaGetLastError`, `cuCtxGetCurrent`, ...) per kernel it launches: a
//! GPT-style training step on an H200 produced 330,000 such records in 48
//! steps, each timed and written by CUPTI on the calling thread. CUPTI 12.5
//! and later enable API records function by function
//! (`cuptiActivityEnableRuntimeApi` / `cuptiActivityEnableDriverApi`,
//! cupti_activity.h); with them only the kept functions ([`names::kept`]) are
//! recorded. Older libraries, or one that refuses, get the whole kinds, and
//! the buffer thread drops the rest as before. On an H200 (CUPTI 13.0) this
//! kept every kernel tied to its launch; the step time of a host-bound loop
//! did not measurably change (CUPTI's kernel tracing costs more), but the
//! buffer thread no longer reads and drops those records on a core the job
//! may need.
//!
//! The switches work only when made before the first context exists: one
//! made later, with its kind off, is accepted and records nothing (observed
//! with CUPTI 13.0 on an RTX 3060 by another CUPTI consumer's tests). So only
//! a start at cuInit, through CUDA_INJECTION64_PATH, uses them, and once
//! kernels arrive [`check_once`] makes sure the calls' records do too.

use core::ffi::c_char;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use cupti_sys::consts::*;
use stallscope_format::records::api_domain;

use super::api::{Api, EnableApiFn};
use super::names;
use super::session::Session;
use super::status;

/// Callback ids are dense from 1; past the newest headers' tables
/// (about 800 driver functions) with room to grow.
const MAX_CBID: u32 = 4096;

/// How many functions of each domain got API records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selected {
    pub runtime: u32,
    pub driver: u32,
}

/// Enables API records for the kept functions only. None when the library
/// cannot (the caller then enables the RUNTIME and DRIVER kinds, which
/// override anything enabled here).
pub fn enable_kept(api: &Api) -> Option<Selected> {
    let (Some(rt), Some(drv)) = (api.enable_runtime_api, api.enable_driver_api) else {
        return None;
    };
    let runtime = enable_domain(api, api_domain::RUNTIME, rt)?;
    let driver = enable_domain(api, api_domain::DRIVER, drv)?;
    Some(Selected { runtime, driver })
}

fn enable_domain(api: &Api, domain: u8, enable: EnableApiFn) -> Option<u32> {
    let mut on = 0;
    for cbid in kept_cbids(api, domain) {
        // SAFETY: a plain id and flag.
        if unsafe { enable(cbid, 1) } != CUPTI_SUCCESS {
            return None;
        }
        on += 1;
    }
    (on > 0).then_some(on)
}

/// The callback ids of the kept functions: by the library's own names where
/// it has `cuptiGetCallbackName`, else from the built-in table.
fn kept_cbids(api: &Api, domain: u8) -> Vec<u32> {
    let Some(get) = api.get_callback_name else {
        return names::fallback_cbids(domain)
            .filter(|&c| names::fallback_name(domain, c).is_some_and(names::kept))
            .collect();
    };
    let cupti_domain = if domain == api_domain::RUNTIME {
        CUPTI_CB_DOMAIN_RUNTIME_API
    } else {
        CUPTI_CB_DOMAIN_DRIVER_API
    };
    (1..MAX_CBID)
        .filter(|&cbid| {
            let mut p: *const c_char = core::ptr::null();
            // SAFETY: a valid out-pointer; the name is CUPTI's static string.
            let ok = unsafe { get(cupti_domain, cbid, &mut p) } == CUPTI_SUCCESS && !p.is_null();
            // SAFETY: a C string from CUPTI.
            ok && names::kept(&unsafe { core::ffi::CStr::from_ptr(p) }.to_string_lossy())
        })
        .collect()
}

/// Once the first kernels are read: if the switched-on calls recorded
/// nothing, records every call from then on (the RUNTIME and DRIVER kinds)
/// and says so. A call's record is complete when it returns, before any
/// kernel it launched ends, so a flush of completed records delivers the
/// launches of the kernels already read. Runs on a thread of its own, once,
/// after the buffer callback that saw the kernels has returned.
pub fn check_once(s: &'static Session) {
    static STARTED: AtomicBool = AtomicBool::new(false);
    if !s.selective_api.load(Ordering::Relaxed) || STARTED.swap(true, Ordering::Relaxed) {
        return;
    }
    let _ = crate::threads::spawn("stallscope-api", move || {
        std::thread::sleep(Duration::from_millis(100));
        // SAFETY: no pointers; flag 0 leaves incomplete records in place.
        unsafe { (s.api.flush_all)(0) };
        if s.counts.apis.load(Ordering::Relaxed) > 0 {
            return;
        }
        let mut failed = 0;
        for kind in [CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER] {
            // SAFETY: a plain enum argument.
            if unsafe { (s.api.activity_enable)(kind) } != CUPTI_SUCCESS {
                failed += 1;
            }
        }
        s.selective_api.store(false, Ordering::Relaxed);
        status::info(&format!(
            "kernels came but none of the CUDA calls switched on one by one \
             (cuptiActivityEnableRuntimeApi); every call is recorded from then on{}: \
             the first kernels are not tied to their launches",
            if failed > 0 {
                " (enabling the API kinds failed)"
            } else {
                ""
            }
        ));
    });
}
