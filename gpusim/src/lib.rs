//! gpusim: a CPU stand-in for one GPU, for tests only (never shipped).
//!
//! Built as `libgpusim.so`, it exports a CUDA-runtime subset (`cuda.rs`) and
//! the CUPTI subset a CUPTI consumer uses (`cupti.rs`), so that a consumer
//! that dlopens it as libcupti runs its real code path: callbacks, activity
//! buffers, and records in the exact layout of the CUPTI version chosen by
//! `GPUSIM_CUPTI_VERSION`. Simulated work takes real wall time. See README.md.
//!
//! The C API is `extern "C"` and also callable from Rust through this rlib.

mod activity;
mod callbacks;
pub mod clock;
pub mod cuda;
pub mod cupti;
pub mod device;
mod init;
pub mod records;
pub mod state;
#[cfg(test)]
mod tests;

pub use cuda::*;
pub use cupti::*;

/// Test support: reset gpusim to a fresh device that reports `api_version`
/// (what `GPUSIM_CUPTI_VERSION` sets at load time). Not exported to C.
#[doc(hidden)]
pub fn reset_for_tests(api_version: state::ApiVersion) {
    state::reset(api_version);
}

/// Test support: an attribute value stored by `cuptiActivitySetAttribute`.
#[doc(hidden)]
pub fn stored_attribute(attr: u32) -> Option<Vec<u8>> {
    state::state().attributes.get(&attr).cloned()
}
