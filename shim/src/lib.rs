//! libstallscope.so: preloaded into a training job (LD_PRELOAD, and
//! CUDA_INJECTION64_PATH for CUDA), it records host I/O and waits, thread
//! samples and (through CUPTI) GPU activity into one crash-safe trace file per
//! process.
//!
//! Layers, outermost first:
//! * [`hooks`]: the exported `extern "C"` symbols. They only forward.
//! * [`recorder`]: the plain Rust API the hooks call: a clock read, a
//!   reentrancy guard and per-thread counters on the hot path; span records,
//!   runs of short calls on a file (`burst`), fd classification and chunk
//!   management on the cold path.
//! * `trace_file`: creating, growing and mapping the file; bytes on disk are
//!   defined by `stallscope-format`.
//! * `sampler`, [`lifecycle`]: the background thread and process events
//!   (start, fork, exit).
//! * `gpu`: the CUPTI consumer (GPU kernels, copies, syncs, CUDA API calls,
//!   allocation failures), loaded at run time.
//!
//! The shim never changes the traced program's behaviour: every failure turns
//! the failing part off with one `stallscope:` line on stderr.

mod burst;
pub mod clock;
pub mod config;
mod diag;
mod early;
mod fd_room;
mod fdinfo;
mod gpu;
pub mod hooks;
pub mod lifecycle;
pub mod real;
pub mod recorder;
mod sampler;
mod threads;
mod tls;
mod trace_file;
