//! Attention run unfused: QK^T, softmax and PV as separate kernels, the
//! score matrix written to memory and read back (eager attention in
//! Hugging Face models, a hand-written `softmax(q @ k.T) @ v`). Fused
//! attention (FlashAttention, SDPA's kernels) never writes it out, so the
//! softmax kernels are what fusing removes.

use super::busy::KernelMix;
use crate::model::{Ns, Precision};

/// Softmax kernels this big a share of kernel time are attention's: a
/// classifier's or a sampler's softmax over one row per sample is far
/// smaller.
pub const MIN_SOFTMAX_PCT: f64 = 5.0;

/// Whether attention runs unfused: softmax kernels take at least
/// `MIN_SOFTMAX_PCT` of the kernel time, and longer than any fused
/// attention kernels (a model that fuses most of its attention has little
/// left to gain).
pub fn unfused(a: &KernelMix, busy_by_precision: &[(Precision, Ns)]) -> bool {
    let kernels: Ns = busy_by_precision.iter().map(|x| x.1).sum();
    kernels > 0
        && 100.0 * a.softmax_ns as f64 >= MIN_SOFTMAX_PCT * kernels as f64
        && a.fused_ns < a.softmax_ns
}
