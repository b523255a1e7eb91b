//! Whether the program has fd numbers to spare, so that the shim may hold
//! one for a moment: the sampler's /proc reads, the trace file opened again
//! to grow.
//!
//! An fd takes the lowest free number, and RLIMIT_NOFILE bounds the numbers.
//! A program that opens files up to its limit needs every number below it:
//! while the shim held one, the program's own open failed with EMFILE (the
//! equivalence test `fd_limit_64_with_40_threads` saw the program open one
//! file fewer under the shim, now and then). The open and close hooks note
//! which numbers the program gets; near its limit, the shim takes no fd
//! until the program closes fds again.

use core::ffi::c_int;
use core::sync::atomic::{AtomicI32, Ordering};

/// The fd the program's last open returned (the lowest free number then),
/// lowered by every close below it; `i32::MAX` after an open failed for want
/// of fds. An estimate: the shim sees opens, not every call that takes an fd.
static LOWEST_FREE: AtomicI32 = AtomicI32::new(0);

/// The soft RLIMIT_NOFILE, as last read (at the start of the recording, by
/// the sampler every tenth tick, and before the trace file grows).
static LIMIT: AtomicI32 = AtomicI32::new(i32::MAX);

/// Numbers kept free for the program below its limit. The shim holds one fd
/// at a time, for a few microseconds; the program would have to open this
/// many files in that time to reach the limit before the shim lets go.
const MARGIN: i32 = 16;

/// Notes the result of one of the program's opens.
#[inline]
pub fn opened(fd: c_int) {
    // errno only matters (and is only read) when the open failed.
    note_open(&LOWEST_FREE, fd, if fd < 0 { errno() } else { 0 });
}

/// Notes one of the program's closes.
#[inline]
pub fn closed(fd: c_int) {
    note_close(&LOWEST_FREE, fd);
}

#[inline]
fn note_open(lowest_free: &AtomicI32, fd: c_int, errno: c_int) {
    if fd >= 0 {
        lowest_free.store(fd, Ordering::Relaxed);
    } else if matches!(errno, libc::EMFILE | libc::ENFILE) {
        lowest_free.store(i32::MAX, Ordering::Relaxed);
    }
}

#[inline]
fn note_close(lowest_free: &AtomicI32, fd: c_int) {
    if fd >= 0 {
        lowest_free.fetch_min(fd, Ordering::Relaxed);
    }
}

/// Reads the limit again (the program may have changed it).
pub(crate) fn refresh_limit() {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid out-pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } == 0 {
        LIMIT.store(
            i32::try_from(r.rlim_cur).unwrap_or(i32::MAX),
            Ordering::Relaxed,
        );
    }
}

/// Whether the shim may hold an fd for a moment now: the program's last
/// open left `MARGIN` numbers free, else (the estimate may be stale: the
/// shim sees neither fclose's close nor close_range) the numbers just below
/// the limit say so, and the estimate starts again from there.
#[inline]
pub fn room() -> bool {
    let limit = LIMIT.load(Ordering::Relaxed);
    if leaves_room(LOWEST_FREE.load(Ordering::Relaxed), limit) {
        return true;
    }
    let free = free_at_the_top(limit);
    if free {
        LOWEST_FREE.store(0, Ordering::Relaxed);
    }
    free
}

#[inline]
fn leaves_room(lowest_free: i32, limit: i32) -> bool {
    lowest_free < limit.saturating_sub(MARGIN)
}

/// Whether at least `MARGIN` of the 64 numbers below `limit` are free,
/// asked without taking one (fcntl F_GETFD answers EBADF for a free number).
#[cold]
fn free_at_the_top(limit: i32) -> bool {
    let saved = errno();
    let mut free = 0;
    for fd in (limit.saturating_sub(64).max(0)..limit).rev() {
        // SAFETY: F_GETFD only reads the fd's flags.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
            free += 1;
            if free == MARGIN {
                break;
            }
        }
    }
    // SAFETY: this thread's errno: a hooked call's caller must see its own.
    unsafe { *libc::__errno_location() = saved };
    free == MARGIN
}

fn errno() -> c_int {
    // SAFETY: the calling thread's errno, read only.
    unsafe { *libc::__errno_location() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_room_near_the_limit_until_the_program_closes_fds() {
        // A hint of its own: other tests grow trace files through `room`.
        let hint = AtomicI32::new(0);
        let room = |h: &AtomicI32| leaves_room(h.load(Ordering::Relaxed), 64);
        note_open(&hint, 10, 0);
        assert!(room(&hint));
        note_open(&hint, 47, 0);
        assert!(room(&hint), "16 numbers left");
        note_open(&hint, 48, 0);
        assert!(!room(&hint), "15 left");
        note_close(&hint, 60);
        assert!(
            !room(&hint),
            "a close above the last open frees nothing below it"
        );
        note_close(&hint, 20);
        assert!(room(&hint));
        note_open(&hint, -1, libc::EMFILE);
        assert!(!room(&hint), "at the limit");
        note_close(&hint, 63);
        assert!(!room(&hint));
        note_close(&hint, 3);
        assert!(room(&hint));
        note_open(&hint, -1, libc::ENOENT);
        assert!(room(&hint), "other failures say nothing about fds");
    }

    #[test]
    fn the_numbers_below_the_limit_are_read_without_taking_one() {
        // Twenty fds in a row: a limit just above them leaves none free
        // below it, a limit far above leaves many.
        let fds: Vec<c_int> = (0..20)
            .map(|_| unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY) })
            .collect();
        assert!(fds.iter().all(|&f| f >= 0));
        let top = *fds.last().unwrap();
        // Every number below the first was taken when it was opened (other
        // tests may close a few since, not sixteen).
        if fds.windows(2).all(|w| w[1] == w[0] + 1) {
            assert!(!free_at_the_top(top + 1));
        }
        assert!(free_at_the_top(top + 1 + 64));
        unsafe { *libc::__errno_location() = libc::ENOENT };
        free_at_the_top(top + 1);
        assert_eq!(errno(), libc::ENOENT, "errno is kept");
        for f in fds {
            unsafe { libc::close(f) };
        }
    }
}
