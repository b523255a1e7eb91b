//! GPU timestamps on the shim's clock (CLOCK_MONOTONIC).
//!
//! Preferred: CUPTI stamps records with our own clock through
//! `cuptiActivityRegisterTimestampCallback`. Otherwise CUPTI's clock (real
//! libcupti: nanoseconds since the epoch; gpusim: a deliberately offset
//! clock) is mapped through an offset measured from (clock_gettime,
//! cuptiGetTimestamp, clock_gettime) triples, refreshed before each buffer is
//! read so that drift between the clocks stays below a buffer period.

use core::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use cupti_sys::consts::CUPTI_SUCCESS;
use cupti_sys::v12::PFN_cuptiGetTimestamp;

use crate::clock::mono_ns;

/// Registered with CUPTI: every record timestamp comes from here.
pub unsafe extern "C" fn timestamp() -> u64 {
    mono_ns()
}

pub struct GpuClock {
    /// Records carry CLOCK_MONOTONIC already.
    native: AtomicBool,
    /// CUPTI clock minus CLOCK_MONOTONIC, when not native.
    offset: AtomicI64,
    get: Option<PFN_cuptiGetTimestamp>,
}

impl GpuClock {
    pub fn native() -> Self {
        GpuClock {
            native: AtomicBool::new(true),
            offset: AtomicI64::new(0),
            get: None,
        }
    }

    /// A calibrated clock, or None if CUPTI's clock cannot be read.
    pub fn calibrated(get: PFN_cuptiGetTimestamp) -> Option<Self> {
        let c = GpuClock {
            native: AtomicBool::new(false),
            offset: AtomicI64::new(0),
            get: Some(get),
        };
        c.calibrate().then_some(c)
    }

    pub fn is_native(&self) -> bool {
        self.native.load(Ordering::Relaxed)
    }

    /// Re-measures the offset (a no-op for the native clock). False if
    /// CUPTI's clock could not be read; the previous offset stays.
    pub fn calibrate(&self) -> bool {
        let Some(get) = self.get else {
            return true;
        };
        if self.is_native() {
            return true;
        }
        match offset_from(|| {
            let mut t = 0u64;
            // SAFETY: a valid out-pointer.
            (unsafe { get(&mut t) } == CUPTI_SUCCESS).then_some(t)
        }) {
            Some(o) => {
                self.offset.store(o, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    /// A CUPTI timestamp on CLOCK_MONOTONIC; 0 stays 0 (CUPTI's "unknown").
    #[inline]
    pub fn to_mono(&self, t: u64) -> u64 {
        if t == 0 || self.is_native() {
            return t;
        }
        let v = i128::from(t) - i128::from(self.offset.load(Ordering::Relaxed));
        v.clamp(1, i128::from(u64::MAX)) as u64
    }
}

/// Offset of `other` against CLOCK_MONOTONIC from the tightest of a few
/// bracketed readings.
fn offset_from(other: impl Fn() -> Option<u64>) -> Option<i64> {
    let mut best: Option<(u64, i64)> = None;
    for _ in 0..7 {
        let a = mono_ns();
        let t = other()?;
        let b = mono_ns();
        let width = b.saturating_sub(a);
        let mid = a + width / 2;
        let off = (i128::from(t) - i128::from(mid)).clamp(i64::MIN.into(), i64::MAX.into()) as i64;
        if best.is_none_or(|(w, _)| width < w) {
            best = Some((width, off));
        }
    }
    best.map(|(_, o)| o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_of_a_shifted_clock() {
        let o = offset_from(|| Some(mono_ns() + 7_000_000_000)).unwrap();
        assert!((o - 7_000_000_000).abs() < 1_000_000, "{o}");
        assert_eq!(offset_from(|| None), None);
    }

    #[test]
    fn conversion() {
        let c = GpuClock {
            native: AtomicBool::new(false),
            offset: AtomicI64::new(1_000),
            get: None,
        };
        assert_eq!(c.to_mono(5_000), 4_000);
        assert_eq!(c.to_mono(0), 0, "unknown stays unknown");
        assert_eq!(GpuClock::native().to_mono(5_000), 5_000);
    }
}
