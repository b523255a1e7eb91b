//! The exported symbols that interpose libc. Each one times the real call
//! through the recorder and returns its result untouched: no logic lives here.
//!
//! They are `extern "C-unwind"` because several are thread cancellation points:
//! glibc cancels a thread by unwinding through these frames, which must let it
//! pass (an `extern "C"` frame would abort the process). The frames hold nothing
//! that needs dropping.
//!
//! Variadic `open`/`openat` are declared with the optional `mode` as a fixed
//! argument: on the x86-64 and AArch64 Linux ABIs a variadic integer argument
//! travels in the same register as a fixed one (Rust cannot define C-variadic
//! functions on stable), and the real function ignores it unless O_CREAT or
//! O_TMPFILE is set.

#![allow(clippy::missing_safety_doc)]

mod cuda;
mod io;
mod wait;
