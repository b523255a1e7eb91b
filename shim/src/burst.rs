//! Runs of short calls on one file. A loop that reads a file in 4 KiB pieces
//! makes thousands of calls, each far below the span threshold on a fast
//! disk (8 µs on a CI machine's), so no span would show where its time went:
//! only the thread's counters, and the sampler seeing it blocked in the
//! kernel. Calls on one fd, each starting within `GAP_NS` of the last one's
//! end, are kept as one run, and a run whose calls add up to the threshold
//! becomes one `Burst` record.
//!
//! All in ticks, on the calling thread, with no atomics: the run lives in the
//! thread's TLS state.

use core::ffi::c_int;

use stallscope_format::HostOp;

/// Longest gap between two calls of one run: the default span threshold.
/// Python's per-call cost between two `os.pread` calls is about 1 µs, but
/// a loop of 4 KiB reads from a disk (28 µs each) paused for 6-25 µs once
/// or twice in every 600 calls (another thread, an interrupt), and a 5 µs
/// gap split its runs there. What a longer gap lets in is bounded by
/// `Run::worth`: the calls fill at least half the run.
pub const GAP_NS: u64 = 20_000;

/// Object id not looked up yet (0 is "no object").
pub const UNRESOLVED: u32 = u32::MAX;

/// One thread's current run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub fd: c_int,
    pub op: u8,
    /// The fd's object, looked up once the run is worth a record.
    pub obj: u32,
    pub calls: u64,
    /// Ticks: the first call's start, the last call's end, time in calls.
    pub start: u64,
    pub end: u64,
    pub busy: u64,
    pub bytes: u64,
}

impl Run {
    pub const EMPTY: Run = Run {
        fd: -1,
        op: 0,
        obj: UNRESOLVED,
        calls: 0,
        start: 0,
        end: 0,
        busy: 0,
        bytes: 0,
    };

    /// A run of one call, [t0, t1).
    #[inline]
    pub fn first(fd: c_int, op: HostOp, t0: u64, t1: u64, bytes: u64) -> Run {
        Run {
            fd,
            op: op as u8,
            obj: UNRESOLVED,
            calls: 1,
            start: t0,
            end: t1,
            busy: t1.wrapping_sub(t0),
            bytes,
        }
    }

    /// Adds the call [t0, t1) if it continues this run (same fd and op,
    /// begun within `gap` ticks of the run's end). False if it does not.
    #[inline(always)]
    pub fn extend(
        &mut self,
        fd: c_int,
        op: HostOp,
        t0: u64,
        t1: u64,
        bytes: u64,
        gap: u64,
    ) -> bool {
        // A tick clock that steps back between CPUs makes a huge difference:
        // no run.
        if self.fd != fd || self.op != op as u8 || t0.wrapping_sub(self.end) > gap {
            return false;
        }
        self.end = t1;
        self.busy = self.busy.wrapping_add(t1.wrapping_sub(t0));
        self.bytes = self.bytes.wrapping_add(bytes);
        self.calls += 1;
        true
    }

    /// Time in calls reached `threshold` ticks with the object not looked
    /// up: the fd is open now, and may not be when the run ends.
    #[inline(always)]
    pub fn needs_object(&self, threshold: u64) -> bool {
        self.obj == UNRESOLVED && self.busy >= threshold
    }

    /// Worth a record: two calls at least, together at least `threshold`
    /// ticks, and in calls for half the run's extent at least (else the
    /// time between calls is the thread's own work, which the sampler
    /// describes better).
    pub fn worth(&self, threshold: u64) -> bool {
        self.calls >= 2
            && self.busy >= threshold
            && self.busy.saturating_mul(2) >= self.end.wrapping_sub(self.start)
    }

    /// Ends the run: returns it if worth a record, and leaves `EMPTY`.
    pub fn take(&mut self, threshold: u64) -> Option<Run> {
        let r = core::mem::replace(self, Run::EMPTY);
        r.worth(threshold).then_some(r)
    }
}

/// Ops whose short calls may form runs: data moved on a file (a socket's
/// `recv` moves a producer's data).
#[inline(always)]
pub fn runs(op: HostOp) -> bool {
    (op.is_read() && op != HostOp::Recv) || op.is_write()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAP: u64 = 5;
    const THRESHOLD: u64 = 20;

    /// `n` calls of `len` ticks, `gap` ticks apart, from `t`.
    fn calls(r: &mut Run, fd: c_int, t: u64, n: u64, len: u64, gap: u64) -> u64 {
        let mut t = t;
        for _ in 0..n {
            if !r.extend(fd, HostOp::Pread, t, t + len, 4096, GAP) {
                assert!(r.take(THRESHOLD).is_none() || r.calls == 0);
                *r = Run::first(fd, HostOp::Pread, t, t + len, 4096);
            }
            t += len + gap;
        }
        t
    }

    #[test]
    fn close_calls_on_one_fd_make_one_run() {
        let mut r = Run::EMPTY;
        calls(&mut r, 3, 100, 10, 4, 1);
        assert_eq!(r.calls, 10);
        assert_eq!((r.start, r.end), (100, 100 + 10 * 5 - 1));
        assert_eq!((r.busy, r.bytes), (40, 40960));
        assert!(r.needs_object(THRESHOLD));
        let done = r.take(THRESHOLD).expect("worth a record");
        assert_eq!(done.calls, 10);
        assert_eq!(r, Run::EMPTY);
    }

    #[test]
    fn another_fd_op_or_a_long_gap_ends_a_run() {
        let mut r = Run::first(3, HostOp::Pread, 0, 4, 1);
        assert!(!r.extend(4, HostOp::Pread, 5, 9, 1, GAP), "another fd");
        assert!(!r.extend(3, HostOp::Read, 5, 9, 1, GAP), "another op");
        assert!(
            !r.extend(3, HostOp::Pread, 4 + GAP + 1, 20, 1, GAP),
            "a long gap"
        );
        assert!(
            r.extend(3, HostOp::Pread, 4 + GAP, 20, 1, GAP),
            "a gap just short enough"
        );
        assert_eq!(r.calls, 2);
    }

    #[test]
    fn a_clock_that_steps_back_ends_a_run() {
        let mut r = Run::first(3, HostOp::Pread, 100, 104, 1);
        assert!(!r.extend(3, HostOp::Pread, 90, 95, 1, GAP));
    }

    #[test]
    fn short_sparse_or_single_runs_are_not_worth_a_record() {
        // Together shorter than the threshold.
        let mut r = Run::EMPTY;
        calls(&mut r, 3, 0, 4, 4, 1);
        assert!(r.take(THRESHOLD).is_none());
        // In calls for less than half the extent.
        let mut r = Run::EMPTY;
        calls(&mut r, 3, 0, 20, 2, 3);
        assert!(r.busy >= THRESHOLD);
        assert!(r.take(THRESHOLD).is_none());
        // One call (a long one is a span, not a run).
        let r = Run::first(3, HostOp::Pread, 0, 100, 1);
        assert!(!r.worth(THRESHOLD));
        assert!(!Run::EMPTY.worth(0));
    }

    #[test]
    fn only_data_calls_form_runs() {
        assert!(runs(HostOp::Read) && runs(HostOp::Pwrite));
        assert!(!runs(HostOp::Open) && !runs(HostOp::Close) && !runs(HostOp::Fsync));
        assert!(!runs(HostOp::Recv) && !runs(HostOp::Mmap));
    }
}
