//! The CUPTI functions the consumer calls, resolved with dlsym from the
//! loaded library. Types are the bindgen `PFN_*` types of the 12.x headers;
//! every function used here has the same signature in 13.x.

use core::ffi::{CStr, c_char, c_void};

use cupti_sys::consts::*;
use cupti_sys::v12::{
    CUpti_CallbackDomain, CUptiResult, PFN_cuptiActivityEnable, PFN_cuptiActivityFlushAll,
    PFN_cuptiActivityGetNextRecord, PFN_cuptiActivityGetNumDroppedRecords,
    PFN_cuptiActivityRegisterCallbacks, PFN_cuptiActivityRegisterTimestampCallback,
    PFN_cuptiEnableCallback, PFN_cuptiGetDeviceId, PFN_cuptiGetTimestamp, PFN_cuptiGetVersion,
    PFN_cuptiSetThreadIdType, PFN_cuptiSubscribe,
};

/// `cuptiGetCallbackName` (cupti_callbacks.h, CUDA 12.0 and later); not in
/// the generated bindings.
pub type GetCallbackNameFn =
    unsafe extern "C" fn(CUpti_CallbackDomain, u32, *mut *const c_char) -> CUptiResult;

/// `cuptiActivityEnableRuntimeApi` and `cuptiActivityEnableDriverApi`
/// (cupti_activity.h, CUPTI 12.5 and later): a callback id and a flag.
pub type EnableApiFn = unsafe extern "C" fn(u32, u8) -> CUptiResult;

pub struct Api {
    pub get_version: PFN_cuptiGetVersion,
    pub activity_enable: PFN_cuptiActivityEnable,
    pub register_callbacks: PFN_cuptiActivityRegisterCallbacks,
    pub get_next_record: PFN_cuptiActivityGetNextRecord,
    pub flush_all: PFN_cuptiActivityFlushAll,
    pub get_num_dropped: Option<PFN_cuptiActivityGetNumDroppedRecords>,
    pub register_timestamp: Option<PFN_cuptiActivityRegisterTimestampCallback>,
    pub get_timestamp: Option<PFN_cuptiGetTimestamp>,
    pub set_thread_id_type: Option<PFN_cuptiSetThreadIdType>,
    pub subscribe: Option<PFN_cuptiSubscribe>,
    pub enable_callback: Option<PFN_cuptiEnableCallback>,
    pub get_callback_name: Option<GetCallbackNameFn>,
    pub get_device_id: Option<PFN_cuptiGetDeviceId>,
    pub enable_runtime_api: Option<EnableApiFn>,
    pub enable_driver_api: Option<EnableApiFn>,
}

fn sym(handle: usize, name: &CStr) -> Option<*mut c_void> {
    // SAFETY: a handle from dlopen and a C string.
    let p = unsafe { libc::dlsym(handle as *mut c_void, name.as_ptr()) };
    (!p.is_null()).then_some(p)
}

macro_rules! resolve {
    ($h:expr, required $name:literal as $t:ty) => {{
        match sym($h, $name) {
            // SAFETY: the library's definition of this CUPTI function.
            Some(p) => unsafe { core::mem::transmute::<*mut c_void, $t>(p) },
            None => return Err(format!("it has no {}", $name.to_string_lossy())),
        }
    }};
    ($h:expr, $name:literal as $t:ty) => {
        // SAFETY: as above.
        sym($h, $name).map(|p| unsafe { core::mem::transmute::<*mut c_void, $t>(p) })
    };
}

impl Api {
    /// Resolves every function; Err names a missing required one.
    pub fn resolve(h: usize) -> Result<Api, String> {
        Ok(Api {
            get_version: resolve!(h, required c"cuptiGetVersion" as PFN_cuptiGetVersion),
            activity_enable: resolve!(h, required c"cuptiActivityEnable" as PFN_cuptiActivityEnable),
            register_callbacks: resolve!(h, required c"cuptiActivityRegisterCallbacks"
                as PFN_cuptiActivityRegisterCallbacks),
            get_next_record: resolve!(h, required c"cuptiActivityGetNextRecord"
                as PFN_cuptiActivityGetNextRecord),
            flush_all: resolve!(h, required c"cuptiActivityFlushAll" as PFN_cuptiActivityFlushAll),
            get_num_dropped: resolve!(
                h,
                c"cuptiActivityGetNumDroppedRecords" as PFN_cuptiActivityGetNumDroppedRecords
            ),
            register_timestamp: resolve!(
                h,
                c"cuptiActivityRegisterTimestampCallback"
                    as PFN_cuptiActivityRegisterTimestampCallback
            ),
            get_timestamp: resolve!(h, c"cuptiGetTimestamp" as PFN_cuptiGetTimestamp),
            set_thread_id_type: resolve!(h, c"cuptiSetThreadIdType" as PFN_cuptiSetThreadIdType),
            subscribe: resolve!(h, c"cuptiSubscribe" as PFN_cuptiSubscribe),
            enable_callback: resolve!(h, c"cuptiEnableCallback" as PFN_cuptiEnableCallback),
            get_callback_name: resolve!(h, c"cuptiGetCallbackName" as GetCallbackNameFn),
            get_device_id: resolve!(h, c"cuptiGetDeviceId" as PFN_cuptiGetDeviceId),
            enable_runtime_api: resolve!(h, c"cuptiActivityEnableRuntimeApi" as EnableApiFn),
            enable_driver_api: resolve!(h, c"cuptiActivityEnableDriverApi" as EnableApiFn),
        })
    }
}

/// A result code as `NAME (n)`. Our own table: cuptiGetResultString itself
/// fails (999) in the libraries whose failures we most need to report.
pub fn result_name(r: CUptiResult) -> String {
    let name = match r {
        CUPTI_SUCCESS => "CUPTI_SUCCESS",
        CUPTI_ERROR_INVALID_PARAMETER => "CUPTI_ERROR_INVALID_PARAMETER",
        CUPTI_ERROR_INVALID_OPERATION => "CUPTI_ERROR_INVALID_OPERATION",
        CUPTI_ERROR_OUT_OF_MEMORY => "CUPTI_ERROR_OUT_OF_MEMORY",
        CUPTI_ERROR_MAX_LIMIT_REACHED => "CUPTI_ERROR_MAX_LIMIT_REACHED",
        CUPTI_ERROR_NOT_READY => "CUPTI_ERROR_NOT_READY",
        CUPTI_ERROR_NOT_COMPATIBLE => "CUPTI_ERROR_NOT_COMPATIBLE",
        CUPTI_ERROR_NOT_INITIALIZED => "CUPTI_ERROR_NOT_INITIALIZED",
        CUPTI_ERROR_INVALID_KIND => "CUPTI_ERROR_INVALID_KIND",
        CUPTI_ERROR_DISABLED => "CUPTI_ERROR_DISABLED",
        CUPTI_ERROR_NOT_SUPPORTED => "CUPTI_ERROR_NOT_SUPPORTED",
        CUPTI_ERROR_INSUFFICIENT_PRIVILEGES => "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
        CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED => {
            "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
        }
        CUPTI_ERROR_UNKNOWN => "CUPTI_ERROR_UNKNOWN",
        _ => "CUPTI error",
    };
    format!("{name} ({r})")
}

/// Results that mean CUPTI cannot work in this process at all (no driver, no
/// permission), as opposed to one feature missing.
pub fn is_fatal(r: CUptiResult) -> bool {
    matches!(
        r,
        CUPTI_ERROR_NOT_INITIALIZED
            | CUPTI_ERROR_UNKNOWN
            | CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
            | CUPTI_ERROR_NOT_COMPATIBLE
            | CUPTI_ERROR_DISABLED
    ) || r == cupti_sys::v12::CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_names() {
        assert_eq!(result_name(15), "CUPTI_ERROR_NOT_INITIALIZED (15)");
        assert_eq!(result_name(999), "CUPTI_ERROR_UNKNOWN (999)");
        assert_eq!(result_name(12345), "CUPTI error (12345)");
        assert!(is_fatal(15) && is_fatal(999) && !is_fatal(CUPTI_ERROR_NOT_SUPPORTED));
    }

    #[test]
    fn a_library_without_cupti_is_refused_by_name() {
        let libc = unsafe { libc::dlopen(c"libc.so.6".as_ptr(), libc::RTLD_NOW) } as usize;
        let e = Api::resolve(libc).err().unwrap();
        assert_eq!(e, "it has no cuptiGetVersion");
    }
}
