//! Runs of short calls on files. A loop that reads a file in 4 KiB pieces
//! makes thousands of calls, each far below the span threshold on a fast
//! disk (8 µs on a CI machine's), so no span would show where its time went:
//! only the thread's counters, and the sampler seeing it blocked in the
//! kernel. Calls on one fd, each starting within `GAP_NS` of the last one's
//! end, are kept as one run, and a run whose calls add up to the threshold
//! becomes one `Burst` record.
//!
//! A loop over many small files (open, read, close, next: an image folder,
//! one sample per file) makes a run per file, each too short to be worth a
//! record. So a run whose file was closed goes on into the next file's
//! reads, and the opens and closes between them count as its time; its
//! object is then the files' folder (`Folder`).
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

/// Longest run over files: past it, the next file begins a new run. A
/// run's record is written when it ends, and a process that leaves by
/// `_exit` (Python's multiprocessing workers do) loses the one in progress;
/// a loop over small files keeps its pace in 10 ms pieces.
pub const LONGEST_OVER_FILES_NS: u64 = 10_000_000;

/// Object id not looked up yet (0 is "no object").
pub const UNRESOLVED: u32 = u32::MAX;

/// `Run::fd` once the run's file is closed: no call extends the run, and
/// the next file's first read may continue it (`Run::continues`).
pub const CLOSED: c_int = -2;

/// One thread's current run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub fd: c_int,
    pub op: u8,
    /// The fd's object, looked up once the run is worth a record.
    pub obj: u32,
    pub calls: u64,
    /// Files read, one after another.
    pub files: u32,
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
        files: 0,
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
            files: 1,
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

    /// Adds an open or a close [t0, t1) begun within `gap` ticks of the
    /// run's end: part of reading files one after another.
    #[inline(always)]
    pub fn join(&mut self, t0: u64, t1: u64, gap: u64) {
        if self.calls > 0 && t0.wrapping_sub(self.end) <= gap {
            self.end = t1;
            self.busy = self.busy.wrapping_add(t1.wrapping_sub(t0));
        }
    }

    /// Whether `next`, the first call on another file, continues this run:
    /// its file is closed, `next` began within `gap` ticks of its end, it
    /// is a run over files already or too short to be worth a record on
    /// its own (a big file read in small pieces keeps its own record), and
    /// with `next` it stays in calls for half its extent at least, and
    /// within `longest` ticks. Files read between stretches of the
    /// program's own work (a cached sample, then its decoding) so make no
    /// run, and cost no more than before.
    pub fn continues(&self, next: &Run, gap: u64, threshold: u64, longest: u64) -> bool {
        let extent = next.end.wrapping_sub(self.start);
        self.calls > 0
            && self.fd == CLOSED
            && self.op == next.op
            && next.start.wrapping_sub(self.end) <= gap
            && (self.files > 1 || !self.worth(threshold))
            && self.busy.wrapping_add(next.busy).saturating_mul(2) >= extent
            && extent <= longest
    }

    /// Takes in `next` (see `continues`): one more file.
    pub fn absorb(&mut self, next: Run) {
        self.fd = next.fd;
        self.end = next.end;
        self.busy = self.busy.wrapping_add(next.busy);
        self.bytes = self.bytes.wrapping_add(next.bytes);
        self.calls += next.calls;
        self.files = self.files.saturating_add(1);
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

/// Ops that join a run begun before them without starting one: the opens
/// and closes of files read one after another.
#[inline(always)]
pub fn joins(op: HostOp) -> bool {
    matches!(op, HostOp::Open | HostOp::Close)
}

/// Longest folder path kept: the fd stash's longest path.
pub const FOLDER_MAX: usize = 240;

/// The folder that holds every file of a run over files: the parent of the
/// first file seen, shortened to what the later ones share.
pub struct Folder {
    len: usize,
    bytes: [u8; FOLDER_MAX],
}

impl Folder {
    pub const EMPTY: Folder = Folder {
        len: 0,
        bytes: [0; FOLDER_MAX],
    };

    pub fn clear(&mut self) {
        self.len = 0;
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The folder's absolute path ("/" for the root).
    pub fn path(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// Makes the folder hold `file` (an absolute path); true if it changed.
    pub fn cover(&mut self, file: &[u8]) -> bool {
        if file.first() != Some(&b'/') {
            return false;
        }
        let slash = file.iter().rposition(|&b| b == b'/').unwrap_or(0);
        let parent = &file[..slash.max(1)];
        if self.len == 0 {
            if parent.len() > FOLDER_MAX {
                return false;
            }
            self.bytes[..parent.len()].copy_from_slice(parent);
            self.len = parent.len();
            return true;
        }
        let held = self.path();
        let same = held.iter().zip(parent).take_while(|(a, b)| a == b).count();
        let at_boundary = |p: &[u8], i: usize| p.len() == i || p[i] == b'/';
        if held == b"/" || (same == held.len() && at_boundary(parent, same)) {
            return false; // already under the folder
        }
        // The longest shared prefix that ends at a folder boundary.
        let cut = if same == parent.len() && at_boundary(held, same) {
            same // `parent` holds the folder
        } else {
            held[..same].iter().rposition(|&b| b == b'/').unwrap_or(0)
        };
        self.len = cut.max(1);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAP: u64 = 5;
    const THRESHOLD: u64 = 20;
    const LONGEST: u64 = 1_000;

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

    /// Files of `reads` calls each: open, the reads, close, `gap` apart.
    fn files(r: &mut Run, n: u64, reads: u64, gap: u64) {
        let mut t = r.end + gap;
        for k in 0..n {
            let fd = 3 + (k % 2) as c_int;
            r.join(t, t + 2, GAP); // open
            t += 2 + gap;
            for _ in 0..reads {
                if !r.extend(fd, HostOp::Read, t, t + 4, 4096, GAP) {
                    let next = Run::first(fd, HostOp::Read, t, t + 4, 4096);
                    if r.continues(&next, GAP, THRESHOLD, LONGEST) {
                        r.absorb(next);
                    } else {
                        *r = next;
                    }
                }
                t += 4 + gap;
            }
            r.fd = CLOSED;
            r.join(t, t + 1, GAP); // close
            t += 1 + gap;
        }
    }

    #[test]
    fn small_files_read_one_after_another_make_one_run() {
        let mut r = Run::first(3, HostOp::Read, 0, 4, 4096);
        r.fd = CLOSED;
        r.join(5, 6, GAP);
        files(&mut r, 9, 1, 1);
        assert_eq!((r.calls, r.files), (10, 10));
        // The opens and closes are time in the run's calls.
        assert_eq!(r.busy, 4 + 1 + 9 * (2 + 4 + 1));
        assert!(r.worth(THRESHOLD));
    }

    #[test]
    fn a_big_file_keeps_its_own_run_and_a_long_pause_ends_one() {
        // 10 reads on one file: worth a record alone.
        let mut r = Run::EMPTY;
        calls(&mut r, 3, 0, 10, 4, 1);
        r.fd = CLOSED;
        let next = Run::first(4, HostOp::Read, r.end + 1, r.end + 5, 1);
        assert!(!r.continues(&next, GAP, THRESHOLD, LONGEST));
        // Short, but the next file comes after a long pause, or is written.
        let mut r = Run::first(3, HostOp::Read, 0, 4, 1);
        r.fd = CLOSED;
        assert!(!r.continues(
            &Run::first(4, HostOp::Read, 4 + GAP + 1, 20, 1),
            GAP,
            THRESHOLD,
            LONGEST,
        ));
        assert!(!r.continues(
            &Run::first(4, HostOp::Write, 5, 9, 1),
            GAP,
            THRESHOLD,
            LONGEST
        ));
        assert!(r.continues(
            &Run::first(4, HostOp::Read, 4 + GAP, 20, 1),
            GAP,
            THRESHOLD,
            LONGEST
        ));
        // Mostly the program's own time between its files.
        let mut sparse = Run::first(3, HostOp::Read, 0, 2, 1);
        sparse.fd = CLOSED;
        sparse.join(5, 6, GAP); // the close
        assert!(!sparse.continues(
            &Run::first(4, HostOp::Read, 6 + GAP, 6 + GAP + 1, 1),
            GAP,
            THRESHOLD,
            LONGEST,
        ));
        // Its file still open: reading another file does not continue it.
        r.fd = 3;
        assert!(!r.continues(
            &Run::first(4, HostOp::Read, 5, 9, 1),
            GAP,
            THRESHOLD,
            LONGEST
        ));
        // A run over files goes on, worth a record already or not.
        let mut r = Run::first(3, HostOp::Read, 0, 4, 1);
        r.fd = CLOSED;
        files(&mut r, 20, 1, 1);
        assert!(r.worth(THRESHOLD) && r.files == 21);
        r.fd = CLOSED;
        assert!(r.continues(
            &Run::first(9, HostOp::Read, r.end + 1, r.end + 5, 1),
            GAP,
            THRESHOLD,
            LONGEST,
        ));
    }

    /// A loop over files is cut in pieces of `longest`: each written when
    /// the next begins.
    #[test]
    fn a_run_over_files_ends_at_its_longest() {
        let mut r = Run::first(3, HostOp::Read, 0, 4, 1);
        let mut done = 0;
        let mut t = 5;
        for _ in 0..1_000 {
            r.fd = CLOSED;
            let next = Run::first(4, HostOp::Read, t, t + 4, 1);
            if r.continues(&next, GAP, THRESHOLD, LONGEST) {
                r.absorb(next);
            } else {
                assert!(r.end - r.start <= LONGEST);
                done += r.take(THRESHOLD).map_or(0, |r| r.files);
                r = next;
            }
            t += 5;
        }
        assert_eq!(done + r.files, 1_001, "every file in one piece or another");
        assert!(done >= 900, "{done}");
    }

    #[test]
    fn opens_and_closes_join_only_a_run_in_progress() {
        let mut r = Run::EMPTY;
        r.join(0, 10, GAP);
        assert_eq!(r, Run::EMPTY);
        let mut r = Run::first(3, HostOp::Read, 0, 4, 1);
        r.join(4 + GAP + 1, 20, GAP);
        assert_eq!((r.end, r.busy), (4, 4), "after a long pause");
        assert!(joins(HostOp::Open) && joins(HostOp::Close) && !joins(HostOp::Read));
    }

    fn covered(files: &[&str]) -> String {
        let mut f = Folder::EMPTY;
        for p in files {
            f.cover(p.as_bytes());
        }
        String::from_utf8(f.path().to_vec()).unwrap()
    }

    #[test]
    fn a_folder_holds_every_file_of_the_run() {
        assert_eq!(
            covered(&["/d/train/a/1.jpg", "/d/train/a/2.jpg"]),
            "/d/train/a"
        );
        // ImageFolder: a class folder per file.
        assert_eq!(
            covered(&["/d/train/a/1.jpg", "/d/train/b/2.jpg"]),
            "/d/train"
        );
        // A name that only starts alike is another folder.
        assert_eq!(covered(&["/d/tr/1", "/d/train/2"]), "/d");
        assert_eq!(covered(&["/d/train/a/1", "/d/train/2"]), "/d/train");
        assert_eq!(covered(&["/d/train/1", "/d/train/a/b/2"]), "/d/train");
        assert_eq!(covered(&["/x/1", "/y/2"]), "/");
        assert_eq!(covered(&["/1", "/d/2"]), "/");
        // Relative or overlong paths are not known.
        assert_eq!(covered(&["d/1"]), "");
        let long = format!("/{}/1", "x".repeat(FOLDER_MAX));
        assert_eq!(covered(&[long.as_str()]), "");
        let mut f = Folder::EMPTY;
        assert!(f.cover(b"/d/a/1") && !f.cover(b"/d/a/2") && f.cover(b"/d/b/3"));
        f.clear();
        assert!(f.is_empty());
    }
}
