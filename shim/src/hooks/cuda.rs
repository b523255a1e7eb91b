//! CUDA's injection entry point, and the two CUPTI functions through which
//! another CUPTI client ends our capture. They only forward.

use core::ffi::c_int;

use cupti_sys::v12::{
    CUpti_BuffersCallbackCompleteFunc, CUpti_BuffersCallbackRequestFunc, CUptiResult,
};

use crate::gpu;

/// Called by the CUDA driver during cuInit when `CUDA_INJECTION64_PATH`
/// names this library (CUPTI documentation, "CUDA_INJECTION64_PATH").
/// Returns 1: the library initialized (whether or not capture could start).
#[unsafe(no_mangle)]
pub extern "C" fn InitializeInjection() -> c_int {
    gpu::injection();
    1
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiActivityRegisterCallbacks(
    requested: CUpti_BuffersCallbackRequestFunc,
    completed: CUpti_BuffersCallbackCompleteFunc,
) -> CUptiResult {
    unsafe { gpu::interposed_register_callbacks(requested, completed) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiFinalize() -> CUptiResult {
    unsafe { gpu::interposed_finalize() }
}

// Exactly CUPTI's signatures.
const _: cupti_sys::v12::PFN_cuptiActivityRegisterCallbacks = cuptiActivityRegisterCallbacks;
