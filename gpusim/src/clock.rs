//! Clocks. The simulated device runs on CLOCK_MONOTONIC (it sleeps in real
//! time); records are stamped on the consumer's timestamp callback if one is
//! registered, otherwise on gpusim's own clock: CLOCK_MONOTONIC_RAW plus a
//! fixed offset, so a consumer that skips calibration gets visibly wrong times.

use std::sync::{LazyLock, Mutex};
use std::time::Duration;

/// How far gpusim's own clock runs ahead of CLOCK_MONOTONIC when it starts.
pub const OWN_CLOCK_OFFSET_NS: u64 = 7_000_000_000;

fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; both clocks exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The simulation timeline (CLOCK_MONOTONIC, ns).
pub fn mono_now() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// gpusim's own record clock (what `cuptiGetTimestamp` returns):
/// CLOCK_MONOTONIC_RAW plus an offset fixed at first use. The offset is taken
/// against CLOCK_MONOTONIC, because RAW and MONOTONIC drift apart while NTP
/// slews (about 0.26 s in the first 25 minutes of a VM measured here), and a
/// bare RAW + 7 s could land anywhere after days of uptime.
pub fn own_now() -> u64 {
    static OFFSET: LazyLock<i128> = LazyLock::new(|| {
        i128::from(mono_now()) - i128::from(read(libc::CLOCK_MONOTONIC_RAW))
            + i128::from(OWN_CLOCK_OFFSET_NS)
    });
    (i128::from(read(libc::CLOCK_MONOTONIC_RAW)) + *OFFSET) as u64
}

/// Blocks until the simulation clock reaches `t`: sleeps for the bulk, then
/// spins the last stretch, since a sleep overshoots by tens of microseconds.
pub fn wait_until(t: u64) {
    const SPIN_NS: u64 = 60_000;
    loop {
        let now = mono_now();
        if now >= t {
            return;
        }
        let left = t - now;
        if left > SPIN_NS {
            std::thread::sleep(Duration::from_nanos(left - SPIN_NS));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Burns `ns` of host time on the calling thread (the cost of a launch).
pub fn spin_for(ns: u64) {
    let end = mono_now() + ns;
    while mono_now() < end {
        std::hint::spin_loop();
    }
}

/// Maps simulation times to record timestamps for one delivery round, from a
/// pair of readings taken together, so that all records of a round share one
/// offset and keep their order.
#[derive(Clone, Copy, Debug)]
pub struct Stamper {
    /// Record clock minus simulation clock.
    offset: i128,
}

impl Stamper {
    /// `record_now` reads the record clock (the callback, or [`own_now`]).
    ///
    /// A reading's offset is off by up to half its width (the time between
    /// the two simulation-clock reads), and a thread preempted between them
    /// makes that microseconds or more: records of two rounds then overlap on
    /// one stream, which a real GPU's clock never does. So the narrowest of
    /// three readings is taken, and the last round's offset is kept while the
    /// new reading agrees with it within both readings' widths; clocks that
    /// really drift apart (NTP slewing) soon move past that and are followed.
    pub fn new(record_now: impl Fn() -> u64) -> Self {
        static LAST: Mutex<Option<(i128, i128)>> = Mutex::new(None);
        let (offset, width) = (0..3)
            .map(|_| {
                let a = mono_now();
                let b = record_now();
                let c = mono_now();
                let offset = i128::from(b) - (i128::from(a) + i128::from(c)) / 2;
                (offset, (i128::from(c) - i128::from(a)) / 2 + 1)
            })
            .min_by_key(|r| r.1)
            .expect("three readings");
        let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
        let offset = match *last {
            Some((o, w)) if (o - offset).abs() <= w + width => o,
            _ => {
                *last = Some((offset, width));
                offset
            }
        };
        Stamper { offset }
    }

    pub fn stamp(&self, mono: u64) -> u64 {
        (i128::from(mono) + self.offset).clamp(0, i128::from(u64::MAX)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_clock_is_not_monotonic() {
        let d = own_now() as i128 - mono_now() as i128;
        // The offset, give or take NTP's slewing since first use.
        assert!((d - OWN_CLOCK_OFFSET_NS as i128).abs() < 50_000_000, "{d}");
    }

    #[test]
    fn wait_until_really_waits() {
        let t0 = mono_now();
        wait_until(t0 + 2_000_000);
        let dt = mono_now() - t0;
        assert!((2_000_000..50_000_000).contains(&dt), "{dt}");
    }

    #[test]
    fn stamper_follows_the_record_clock() {
        let s = Stamper::new(|| mono_now() + 1_000_000_000_000);
        let t = mono_now();
        let d = s.stamp(t) as i128 - t as i128 - 1_000_000_000_000;
        assert!(d.abs() < 1_000_000, "{d}");
        let own = Stamper::new(own_now);
        let d = own.stamp(t) as i128 - t as i128;
        assert!((d - OWN_CLOCK_OFFSET_NS as i128).abs() < 50_000_000, "{d}");
    }
}
