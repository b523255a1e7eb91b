//! Clocks. Spans are timestamped with CLOCK_MONOTONIC (the one clock of the
//! whole recording). Durations on the hot path are measured in ticks of the CPU
//! timestamp counter when it is invariant (rdtsc costs ~11 ns here, against
//! ~30 ns for a vDSO clock_gettime; see DESIGN.md "Facts measured"), and in
//! CLOCK_MONOTONIC nanoseconds otherwise.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static USE_TSC: AtomicBool = AtomicBool::new(false);
/// Ticks per second, refined as the process runs; 1e9 when ticks are nanoseconds.
static TICKS_PER_SEC: AtomicU64 = AtomicU64::new(1_000_000_000);
/// The pair every rate is measured from (set by `init`).
static START_TICKS: AtomicU64 = AtomicU64::new(0);
static START_MONO: AtomicU64 = AtomicU64::new(0);
/// When `refine_if_due` next measures the rate (CLOCK_MONOTONIC ns).
static NEXT_REFINE: AtomicU64 = AtomicU64::new(u64::MAX);
/// The provisional calibration's window (see `init`).
const PROVISIONAL_NS: u64 = 2_000;
/// Refinements come at least this far apart at the start (the first spans).
const MIN_REFINE_STEP_NS: u64 = 10_000;

/// CLOCK_MONOTONIC in nanoseconds.
#[inline]
pub fn mono_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CLOCK_REALTIME in nanoseconds.
pub fn real_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

#[inline]
fn clock_ns(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer; clock_gettime cannot fail for these clocks.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A duration counter: TSC ticks or monotonic nanoseconds.
#[inline(always)]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    if USE_TSC.load(Ordering::Relaxed) {
        // SAFETY: rdtsc has no preconditions; USE_TSC is only set when the TSC is invariant.
        return unsafe { core::arch::x86_64::_rdtsc() };
    }
    mono_ns()
}

pub fn ticks_per_sec() -> u64 {
    TICKS_PER_SEC.load(Ordering::Relaxed)
}

pub fn using_tsc() -> bool {
    USE_TSC.load(Ordering::Relaxed)
}

/// Converts a tick delta to nanoseconds.
#[inline]
pub fn ticks_to_ns(t: u64) -> u64 {
    let hz = TICKS_PER_SEC.load(Ordering::Relaxed);
    if hz == 1_000_000_000 {
        t
    } else {
        (t as u128 * 1_000_000_000 / hz.max(1) as u128) as u64
    }
}

/// Converts nanoseconds to ticks.
pub fn ns_to_ticks(ns: u64) -> u64 {
    (ns as u128 * TICKS_PER_SEC.load(Ordering::Relaxed) as u128 / 1_000_000_000) as u64
}

/// A (ticks, monotonic ns) pair taken as close together as possible.
#[derive(Debug, Clone, Copy)]
pub struct Pair {
    pub ticks: u64,
    pub mono: u64,
}

pub fn pair() -> Pair {
    // Bracket the clock read between two counter reads and keep the tightest of
    // a few tries, so the pair is accurate to a few tens of nanoseconds.
    let mut best = (u64::MAX, Pair { ticks: 0, mono: 0 });
    for _ in 0..5 {
        let a = ticks();
        let m = mono_ns();
        let b = ticks();
        if b - a < best.0 {
            best = (
                b - a,
                Pair {
                    ticks: a + (b - a) / 2,
                    mono: m,
                },
            );
        }
    }
    best.1
}

/// True if the CPU advertises an invariant TSC (constant and non-stop).
fn tsc_is_invariant() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        // CPUID 0x80000007 EDX bit 8: invariant TSC.
        let max_ext = core::arch::x86_64::__cpuid(0x8000_0000).eax;
        if max_ext >= 0x8000_0007 {
            let r = core::arch::x86_64::__cpuid(0x8000_0007);
            return r.edx & (1 << 8) != 0;
        }
    }
    false
}

/// Picks the tick source and makes a first, provisional calibration over
/// about 2 µs. It only places the span threshold and the first self-sample:
/// every span converts its ticks with a rate measured again from the start
/// pair over a window at least as long as the span itself (`refine_if_due`),
/// so a duration is right to a pair's error (tens of nanoseconds) whatever
/// the process's age. A start-up calibration that waited 50 µs cost every
/// process that much, wrappers and `/bin/true` included (issue 18, item 2).
/// Returns the start pair.
pub fn init() -> Pair {
    if tsc_is_invariant() && std::env::var_os("STALLSCOPE_NO_TSC").is_none() {
        USE_TSC.store(true, Ordering::Relaxed);
        let a = pair();
        let mut b = pair();
        while b.mono - a.mono < PROVISIONAL_NS {
            b = pair();
        }
        set_rate(a, b);
        START_TICKS.store(a.ticks, Ordering::Relaxed);
        START_MONO.store(a.mono, Ordering::Relaxed);
        // The first span refines at once.
        NEXT_REFINE.store(a.mono, Ordering::Relaxed);
        a
    } else {
        USE_TSC.store(false, Ordering::Relaxed);
        TICKS_PER_SEC.store(1_000_000_000, Ordering::Relaxed);
        NEXT_REFINE.store(u64::MAX, Ordering::Relaxed);
        pair()
    }
}

/// Measures the rate again from the start pair once `now` (CLOCK_MONOTONIC)
/// passes the next refinement time, which then moves twice as far from the
/// start. The first span of a process always refines, so a span of length
/// L converted with a rate measured over a window W has an error of about
/// L/W times a pair's error, and L < 2W until the next refinement: a
/// bounded error of a few hundred nanoseconds at most, from the first
/// millisecond on, however loaded the machine (a pair keeps the tightest of
/// several bracketed reads, so a preemption does not spoil it). The windows
/// double, so a long run refines a few dozen times. True if the rate was
/// measured (the caller rescales what depends on it).
pub fn refine_if_due(now: u64) -> bool {
    let due = NEXT_REFINE.load(Ordering::Relaxed);
    if now < due {
        return false;
    }
    let start = start_pair();
    let next = start
        .mono
        .saturating_add(2 * now.saturating_sub(start.mono).max(MIN_REFINE_STEP_NS));
    // One thread takes each refinement.
    if NEXT_REFINE
        .compare_exchange(due, next, Ordering::Relaxed, Ordering::Relaxed)
        .is_err()
    {
        return false;
    }
    refine_now();
    true
}

/// Measures the rate again from the start pair, now; returns the new pair.
pub fn refine_now() -> Pair {
    let p = pair();
    set_rate(start_pair(), p);
    p
}

/// The pair `init` took, that rates are measured from.
fn start_pair() -> Pair {
    Pair {
        ticks: START_TICKS.load(Ordering::Relaxed),
        mono: START_MONO.load(Ordering::Relaxed),
    }
}

/// Sets the tick rate from two pairs; used again later with pairs further apart.
pub fn set_rate(a: Pair, b: Pair) {
    if !using_tsc() || b.mono <= a.mono || b.ticks <= a.ticks {
        return;
    }
    let hz = (b.ticks - a.ticks) as u128 * 1_000_000_000 / (b.mono - a.mono) as u128;
    if hz > 0 {
        TICKS_PER_SEC.store(hz as u64, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests here reset the process's clock state.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn calibration_tracks_monotonic() {
        let _one = ONE_AT_A_TIME.lock();
        let start = init();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let end = pair();
        set_rate(start, end);
        let measured = ticks_to_ns(end.ticks - start.ticks);
        let truth = end.mono - start.mono;
        let err = (measured as f64 - truth as f64).abs() / truth as f64;
        assert!(err < 0.001, "tick conversion off by {err}");
        // Through whole nanoseconds and back: at more than 1 GHz a tick is
        // finer than a nanosecond, so up to ticks-per-ns (+1 for rounding) are lost.
        let back = ns_to_ticks(ticks_to_ns(1_000_000));
        let slack = ticks_per_sec() / 1_000_000_000 + 1;
        assert!(back.abs_diff(1_000_000) <= slack, "{back} (slack {slack})");
    }

    /// The first refinement is due at once (the first span), later ones on
    /// a doubling schedule from the start, each taken once, and they bring
    /// the rate back onto CLOCK_MONOTONIC.
    #[test]
    fn refinement_doubles_its_window() {
        let _one = ONE_AT_A_TIME.lock();
        let start = init();
        if !using_tsc() {
            assert!(!refine_if_due(start.mono + 10_000_000), "nothing to refine");
            return;
        }
        // A provisional rate 1% off, which the refinement must correct.
        TICKS_PER_SEC.store(ticks_per_sec() / 100 * 101, Ordering::Relaxed);
        std::thread::sleep(std::time::Duration::from_millis(20));
        let now = mono_ns();
        assert!(refine_if_due(now), "the first refinement is due at once");
        assert!(!refine_if_due(now), "each refinement is taken once");
        let due = NEXT_REFINE.load(Ordering::Relaxed);
        assert_eq!(due - start.mono, 2 * (now - start.mono));
        assert!(!refine_if_due(due - 1));
        let end = pair();
        let measured = ticks_to_ns(end.ticks - start.ticks);
        let truth = end.mono - start.mono;
        let err = (measured as f64 - truth as f64).abs() / truth as f64;
        assert!(err < 1e-4, "tick conversion off by {err}");
    }

    /// A short span early in the process converts to within a pair's error:
    /// the rate is measured over a window at least as long as the span.
    #[test]
    fn early_spans_convert_exactly() {
        let _one = ONE_AT_A_TIME.lock();
        let start = init();
        if !using_tsc() {
            return;
        }
        // A provisional rate 2% off.
        TICKS_PER_SEC.store(ticks_per_sec() / 100 * 102, Ordering::Relaxed);
        let a = pair();
        while mono_ns() - a.mono < 300_000 {}
        let b = pair();
        assert!(refine_if_due(b.mono.max(start.mono)));
        let got = ticks_to_ns(b.ticks - a.ticks) as f64;
        let truth = (b.mono - a.mono) as f64;
        assert!(
            (got - truth).abs() < truth * 0.001 + 200.0,
            "{got} ns for {truth} ns"
        );
    }
}
