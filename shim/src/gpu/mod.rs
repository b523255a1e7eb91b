//! GPU capture through CUPTI, loaded with dlopen at run time (never linked).
//!
//! * [`loader`]: finding libcupti, and telling whether CUDA is in use.
//! * [`api`]: the CUPTI functions, resolved with dlsym.
//! * [`api_select`]: API records for the functions the analysis keeps only.
//! * [`lifecycle`]: start (at cuInit through `InitializeInjection`, or lazily),
//!   the exit flush with a timeout, the fork child, other CUPTI clients.
//! * [`buffers`], [`activity`], [`decode`]: activity buffers and their records,
//!   read at the offsets of the library's own layout version.
//! * [`callbacks`]: allocation failures (OOM) and context creation.
//! * [`clock`]: GPU timestamps on CLOCK_MONOTONIC.
//! * [`names`]: kernel-name interning and the kept CUDA API functions.
//! * [`session`]: the shared state (where capture stands, the loaded library).
//! * [`status`]: GpuStatus records, notes and the one `stallscope:` line.
//!
//! Nothing here runs on the host hooks' hot path: CUPTI calls us on CUDA API
//! calls we chose (allocations only), and on its own buffer thread.

mod activity;
mod api;
mod api_select;
mod buffers;
mod callbacks;
mod clock;
mod decode;
mod lifecycle;
mod loader;
mod names;
mod session;
mod status;

pub use lifecycle::{
    flush_at_exit, forget_in_child, injection, interposed_finalize, interposed_register_callbacks,
    on_start, poll_lazy,
};
