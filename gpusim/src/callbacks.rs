//! The CUPTI callback API: one subscriber, callbacks enabled per domain or per
//! callback id, invoked without holding gpusim's lock.

use std::ffi::{CStr, c_void};

use cupti_sys::consts::*;
use cupti_sys::v12::CUpti_CallbackData;

use crate::init;
use std::sync::atomic::Ordering;

use crate::state::{SUBSCRIBED, state};

/// Calls the subscriber for `(domain, cbid)` if that callback is enabled.
pub fn invoke(domain: u32, cbid: u32, data: *const c_void) {
    if !SUBSCRIBED.load(Ordering::Relaxed) {
        return;
    }
    let (callback, userdata) = {
        let st = state();
        if !st.callback_enabled(domain, cbid) {
            return;
        }
        let s = st.subscriber.as_ref().expect("enabled implies subscribed");
        (s.callback, s.userdata)
    };
    if let Some(f) = callback {
        // SAFETY: the subscriber registered this function for these calls.
        unsafe { f(userdata as *mut c_void, domain, cbid, data) };
    }
}

/// What a runtime API callback is told about one call.
pub struct ApiCall<'a> {
    pub cbid: u32,
    pub name: &'static CStr,
    /// The call's `*_params` struct.
    pub params: *const c_void,
    pub correlation_id: u32,
    /// Shared by the ENTER and EXIT callbacks of one call.
    pub correlation_data: &'a mut u64,
}

/// Runtime API callback at `site` (CUPTI_API_ENTER or CUPTI_API_EXIT);
/// `ret` is the call's cudaError_t (meaningful at exit).
pub fn runtime_api(site: u32, call: &mut ApiCall<'_>, ret: &mut i32) {
    let data = CUpti_CallbackData {
        callbackSite: site,
        functionName: call.name.as_ptr(),
        functionParams: call.params,
        functionReturnValue: (ret as *mut i32).cast(),
        symbolName: std::ptr::null(),
        context: init::context(),
        contextUid: 1,
        correlationData: &raw mut *call.correlation_data,
        correlationId: call.correlation_id,
    };
    invoke(
        CUPTI_CB_DOMAIN_RUNTIME_API,
        call.cbid,
        (&raw const data).cast(),
    );
}
