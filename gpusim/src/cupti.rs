//! The exported CUPTI subset. Signatures are checked at compile time against
//! the `PFN_*` types generated from the CUPTI headers.

use std::ffi::{c_char, c_void};

use cupti_sys::consts::*;
use cupti_sys::v12::{
    self, CUcontext, CUpti_Activity, CUpti_ActivityAttribute, CUpti_ActivityKind,
    CUpti_ActivityThreadIdType, CUpti_BuffersCallbackCompleteFunc,
    CUpti_BuffersCallbackRequestFunc, CUpti_CallbackDomain, CUpti_CallbackFunc, CUpti_CallbackId,
    CUpti_SubscriberHandle, CUpti_TimestampCallbackFunc, CUptiResult, CUstream,
};

use crate::activity;
use crate::clock::own_now;
use std::sync::atomic::Ordering;

use crate::state::{ApiVersion, MAX_CBID, SUBSCRIBED, Subscriber, state};

/// Every CUPTI call fails like this under `GPUSIM_CUPTI_VERSION=fail`.
fn failing() -> bool {
    state().api_version == ApiVersion::Fail
}

macro_rules! check_fail {
    () => {
        if failing() {
            return CUPTI_ERROR_UNKNOWN;
        }
    };
}

fn subscriber_handle() -> CUpti_SubscriberHandle {
    static HANDLE: u8 = 0;
    (&raw const HANDLE).cast_mut().cast()
}

/// # Safety
/// `version` must be null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiGetVersion(version: *mut u32) -> CUptiResult {
    let v = state().api_version;
    let ApiVersion::Number(n) = v else {
        return CUPTI_ERROR_UNKNOWN;
    };
    if version.is_null() {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    // SAFETY: non-null, valid per the caller.
    unsafe { *version = n };
    CUPTI_SUCCESS
}

fn result_name(result: CUptiResult) -> Option<&'static std::ffi::CStr> {
    Some(match result {
        CUPTI_SUCCESS => c"CUPTI_SUCCESS",
        CUPTI_ERROR_INVALID_PARAMETER => c"CUPTI_ERROR_INVALID_PARAMETER",
        v12::CUPTI_ERROR_INVALID_DEVICE => c"CUPTI_ERROR_INVALID_DEVICE",
        v12::CUPTI_ERROR_INVALID_CONTEXT => c"CUPTI_ERROR_INVALID_CONTEXT",
        CUPTI_ERROR_INVALID_OPERATION => c"CUPTI_ERROR_INVALID_OPERATION",
        CUPTI_ERROR_OUT_OF_MEMORY => c"CUPTI_ERROR_OUT_OF_MEMORY",
        CUPTI_ERROR_MAX_LIMIT_REACHED => c"CUPTI_ERROR_MAX_LIMIT_REACHED",
        CUPTI_ERROR_NOT_READY => c"CUPTI_ERROR_NOT_READY",
        CUPTI_ERROR_NOT_COMPATIBLE => c"CUPTI_ERROR_NOT_COMPATIBLE",
        CUPTI_ERROR_NOT_INITIALIZED => c"CUPTI_ERROR_NOT_INITIALIZED",
        CUPTI_ERROR_QUEUE_EMPTY => c"CUPTI_ERROR_QUEUE_EMPTY",
        v12::CUPTI_ERROR_INVALID_STREAM => c"CUPTI_ERROR_INVALID_STREAM",
        CUPTI_ERROR_INVALID_KIND => c"CUPTI_ERROR_INVALID_KIND",
        CUPTI_ERROR_DISABLED => c"CUPTI_ERROR_DISABLED",
        CUPTI_ERROR_NOT_SUPPORTED => c"CUPTI_ERROR_NOT_SUPPORTED",
        CUPTI_ERROR_INSUFFICIENT_PRIVILEGES => c"CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
        CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED => {
            c"CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
        }
        CUPTI_ERROR_UNKNOWN => c"CUPTI_ERROR_UNKNOWN",
        _ => return None,
    })
}

/// # Safety
/// `str_` must be null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiGetResultString(
    result: CUptiResult,
    str_: *mut *const c_char,
) -> CUptiResult {
    check_fail!();
    let Some(name) = result_name(result) else {
        return CUPTI_ERROR_INVALID_PARAMETER;
    };
    if str_.is_null() {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    // SAFETY: non-null, valid per the caller.
    unsafe { *str_ = name.as_ptr() };
    CUPTI_SUCCESS
}

/// # Safety
/// `subscriber` must be null or valid for a write; `callback` is called with
/// `userdata` from any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiSubscribe(
    subscriber: *mut CUpti_SubscriberHandle,
    callback: CUpti_CallbackFunc,
    userdata: *mut c_void,
) -> CUptiResult {
    check_fail!();
    if subscriber.is_null() {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    let mut st = state();
    if st.subscriber.is_some() {
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    st.subscriber = Some(Subscriber {
        callback,
        userdata: userdata as usize,
    });
    st.switches = Default::default();
    SUBSCRIBED.store(true, Ordering::Relaxed);
    // SAFETY: non-null, valid per the caller.
    unsafe { *subscriber = subscriber_handle() };
    CUPTI_SUCCESS
}

/// # Safety
/// No pointer is dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiUnsubscribe(subscriber: CUpti_SubscriberHandle) -> CUptiResult {
    check_fail!();
    let mut st = state();
    if subscriber != subscriber_handle() || st.subscriber.is_none() {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    st.subscriber = None;
    SUBSCRIBED.store(false, Ordering::Relaxed);
    CUPTI_SUCCESS
}

fn valid_domain(domain: CUpti_CallbackDomain) -> bool {
    (CUPTI_CB_DOMAIN_DRIVER_API..v12::CUPTI_CB_DOMAIN_SIZE).contains(&domain)
}

/// # Safety
/// No pointer is dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiEnableCallback(
    enable: u32,
    subscriber: CUpti_SubscriberHandle,
    domain: CUpti_CallbackDomain,
    cbid: CUpti_CallbackId,
) -> CUptiResult {
    check_fail!();
    let mut st = state();
    if subscriber != subscriber_handle()
        || st.subscriber.is_none()
        || !valid_domain(domain)
        || cbid >= MAX_CBID
    {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    st.switches.set(domain, cbid, enable != 0);
    CUPTI_SUCCESS
}

/// # Safety
/// No pointer is dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiEnableDomain(
    enable: u32,
    subscriber: CUpti_SubscriberHandle,
    domain: CUpti_CallbackDomain,
) -> CUptiResult {
    check_fail!();
    let mut st = state();
    if subscriber != subscriber_handle() || st.subscriber.is_none() || !valid_domain(domain) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    st.switches.set_domain(domain, enable != 0);
    CUPTI_SUCCESS
}

fn valid_kind(kind: CUpti_ActivityKind) -> bool {
    // Any kind the newest headers name is accepted; kinds with nothing to
    // simulate simply never produce records.
    (1..cupti_sys::v13::CUPTI_ACTIVITY_KIND_COUNT).contains(&kind)
}

/// # Safety
/// No pointer is dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiActivityEnable(kind: CUpti_ActivityKind) -> CUptiResult {
    check_fail!();
    if !valid_kind(kind) {
        return CUPTI_ERROR_INVALID_KIND;
    }
    let mut st = state();
    if st.enabled_kinds.insert(kind) && kind == CUPTI_ACTIVITY_KIND_DEVICE {
        st.device_record_sent = false;
        st.maybe_push_device_record();
    }
    CUPTI_SUCCESS
}

/// API records for one function, as CUPTI 12.5 and later have them; older
/// versions lack the function, and answer CUPTI_ERROR_NOT_SUPPORTED here.
/// As on a card (an RTX 3060 with CUDA 13.0): a function switched on before
/// the context exists is recorded though its kind is off; switched on after,
/// with its kind off, it is accepted and records nothing.
fn enable_api(kind: u32, cbid: u32, enable: u8) -> CUptiResult {
    check_fail!();
    let mut st = state();
    if matches!(st.api_version, ApiVersion::Number(v) if v < 23) {
        return CUPTI_ERROR_NOT_SUPPORTED;
    }
    if st.api_switches_inert || (st.device_ready && !st.kind_enabled(kind)) {
        return CUPTI_SUCCESS;
    }
    if enable != 0 {
        st.enabled_apis.insert((kind, cbid));
    } else {
        st.enabled_apis.remove(&(kind, cbid));
    }
    CUPTI_SUCCESS
}

/// # Safety
/// No pointer is dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiActivityEnableRuntimeApi(cbid: u32, enable: u8) -> CUptiResult {
    enable_api(CUPTI_ACTIVITY_KIND_RUNTIME, cbid, enable)
}

/// # Safety
/// No pointer is dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiActivityEnableDriverApi(cbid: u32, enable: u8) -> CUptiResult {
    enable_api(CUPTI_ACTIVITY_KIND_DRIVER, cbid, enable)
}

/// # Safety
/// No pointer is dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiActivityDisable(kind: CUpti_ActivityKind) -> CUptiResult {
    check_fail!();
    if !valid_kind(kind) {
        return CUPTI_ERROR_INVALID_KIND;
    }
    state().enabled_kinds.remove(&kind);
    CUPTI_SUCCESS
}

/// # Safety
/// The callbacks are called from gpusim's flush thread and from
/// `cuptiActivityFlushAll` callers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiActivityRegisterCallbacks(
    func_buffer_requested: CUpti_BuffersCallbackRequestFunc,
    func_buffer_completed: CUpti_BuffersCallbackCompleteFunc,
) -> CUptiResult {
    check_fail!();
    if func_buffer_requested.is_none() || func_buffer_completed.is_none() {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    {
        let mut st = state();
        st.request = func_buffer_requested;
        st.complete = func_buffer_completed;
    }
    activity::start_flusher();
    CUPTI_SUCCESS
}

/// # Safety
/// No pointer is dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiActivityFlushAll(flag: u32) -> CUptiResult {
    check_fail!();
    activity::deliver(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED != 0);
    CUPTI_SUCCESS
}

/// # Safety
/// `buffer` must hold `valid_buffer_size_bytes` bytes delivered by gpusim;
/// `record` must be valid for reads and writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiActivityGetNextRecord(
    buffer: *mut u8,
    valid_buffer_size_bytes: usize,
    record: *mut *mut CUpti_Activity,
) -> CUptiResult {
    check_fail!();
    if buffer.is_null() || record.is_null() {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    // SAFETY: valid per the caller.
    let current = unsafe { *record }.cast::<u8>();
    // SAFETY: the buffer came from a delivery round (caller's contract).
    match unsafe { activity::next_record(buffer, valid_buffer_size_bytes, current) } {
        Some(next) => {
            // SAFETY: as above.
            unsafe { *record = next.cast_mut().cast() };
            CUPTI_SUCCESS
        }
        None => CUPTI_ERROR_MAX_LIMIT_REACHED,
    }
}

/// # Safety
/// `dropped` must be null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiActivityGetNumDroppedRecords(
    _context: CUcontext,
    _stream_id: u32,
    dropped: *mut usize,
) -> CUptiResult {
    check_fail!();
    if dropped.is_null() {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    // One global queue; the count resets when read, as documented for CUPTI.
    let n = std::mem::take(&mut state().dropped);
    // SAFETY: non-null, valid per the caller.
    unsafe { *dropped = n };
    CUPTI_SUCCESS
}

/// # Safety
/// `value_size` and `value` must be valid, `value` for `*value_size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiActivitySetAttribute(
    attr: CUpti_ActivityAttribute,
    value_size: *mut usize,
    value: *mut c_void,
) -> CUptiResult {
    check_fail!();
    if value_size.is_null() || value.is_null() {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    // SAFETY: valid per the caller.
    let bytes = unsafe { std::slice::from_raw_parts(value.cast::<u8>(), *value_size) }.to_vec();
    // Stored only: gpusim's buffers come from the consumer either way.
    state().attributes.insert(attr, bytes);
    CUPTI_SUCCESS
}

/// # Safety
/// `func_timestamp`, if set, is called from any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiActivityRegisterTimestampCallback(
    func_timestamp: CUpti_TimestampCallbackFunc,
) -> CUptiResult {
    check_fail!();
    state().timestamp = func_timestamp;
    CUPTI_SUCCESS
}

/// # Safety
/// `timestamp` must be null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiGetTimestamp(timestamp: *mut u64) -> CUptiResult {
    check_fail!();
    if timestamp.is_null() {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    // gpusim's own clock, even with a timestamp callback registered: the
    // callback replaces record timestamps only.
    // SAFETY: non-null, valid per the caller.
    unsafe { *timestamp = own_now() };
    CUPTI_SUCCESS
}

/// # Safety
/// No pointer is dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiSetThreadIdType(type_: CUpti_ActivityThreadIdType) -> CUptiResult {
    check_fail!();
    if type_ != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT
        && type_ != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM
    {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    state().thread_id_type = type_;
    CUPTI_SUCCESS
}

/// # Safety
/// `type_` must be null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiGetThreadIdType(
    type_: *mut CUpti_ActivityThreadIdType,
) -> CUptiResult {
    check_fail!();
    if type_.is_null() {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    // SAFETY: non-null, valid per the caller.
    unsafe { *type_ = state().thread_id_type };
    CUPTI_SUCCESS
}

/// # Safety
/// `device_id` must be null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiGetDeviceId(_context: CUcontext, device_id: *mut u32) -> CUptiResult {
    check_fail!();
    if device_id.is_null() {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    // SAFETY: non-null, valid per the caller.
    unsafe { *device_id = crate::records::DEVICE_ID };
    CUPTI_SUCCESS
}

/// # Safety
/// `context_id` must be null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiGetContextId(
    context: CUcontext,
    context_id: *mut u32,
) -> CUptiResult {
    check_fail!();
    if context_id.is_null() {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    if context != crate::init::context() {
        return v12::CUPTI_ERROR_INVALID_CONTEXT;
    }
    // SAFETY: non-null, valid per the caller.
    unsafe { *context_id = crate::records::CONTEXT_ID };
    CUPTI_SUCCESS
}

/// # Safety
/// `stream_id` must be null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiGetStreamId(
    context: CUcontext,
    stream: CUstream,
    stream_id: *mut u32,
) -> CUptiResult {
    // SAFETY: forwarded contract.
    unsafe { cuptiGetStreamIdEx(context, stream, 0, stream_id) }
}

/// # Safety
/// `stream_id` must be null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiGetStreamIdEx(
    _context: CUcontext,
    stream: CUstream,
    _per_thread_stream: u8,
    stream_id: *mut u32,
) -> CUptiResult {
    check_fail!();
    if stream_id.is_null() {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    let st = state();
    let Some(id) = crate::cuda::stream_index(&st, stream.cast())
        .and_then(|i| st.device.stream(i))
        .map(|s| s.id)
    else {
        return v12::CUPTI_ERROR_INVALID_STREAM;
    };
    // SAFETY: non-null, valid per the caller.
    unsafe { *stream_id = id };
    CUPTI_SUCCESS
}

// Each export must have exactly the C signature of the real CUPTI function.
const _: v12::PFN_cuptiGetVersion = cuptiGetVersion;
const _: v12::PFN_cuptiGetResultString = cuptiGetResultString;
const _: v12::PFN_cuptiSubscribe = cuptiSubscribe;
const _: v12::PFN_cuptiUnsubscribe = cuptiUnsubscribe;
const _: v12::PFN_cuptiEnableCallback = cuptiEnableCallback;
const _: v12::PFN_cuptiEnableDomain = cuptiEnableDomain;
const _: v12::PFN_cuptiActivityEnable = cuptiActivityEnable;
const _: v12::PFN_cuptiActivityDisable = cuptiActivityDisable;
const _: v12::PFN_cuptiActivityRegisterCallbacks = cuptiActivityRegisterCallbacks;
const _: v12::PFN_cuptiActivityFlushAll = cuptiActivityFlushAll;
const _: v12::PFN_cuptiActivityGetNextRecord = cuptiActivityGetNextRecord;
const _: v12::PFN_cuptiActivityGetNumDroppedRecords = cuptiActivityGetNumDroppedRecords;
const _: v12::PFN_cuptiActivitySetAttribute = cuptiActivitySetAttribute;
const _: v12::PFN_cuptiActivityRegisterTimestampCallback = cuptiActivityRegisterTimestampCallback;
const _: v12::PFN_cuptiGetTimestamp = cuptiGetTimestamp;
const _: v12::PFN_cuptiSetThreadIdType = cuptiSetThreadIdType;
const _: v12::PFN_cuptiGetThreadIdType = cuptiGetThreadIdType;
const _: v12::PFN_cuptiGetDeviceId = cuptiGetDeviceId;
const _: v12::PFN_cuptiGetContextId = cuptiGetContextId;
const _: v12::PFN_cuptiGetStreamId = cuptiGetStreamId;
const _: v12::PFN_cuptiGetStreamIdEx = cuptiGetStreamIdEx;
