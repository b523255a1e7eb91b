//! The one-line `stallscope:` messages. Written with a single raw write so
//! they never interleave mid-line and never allocate on the caller's behalf
//! beyond the formatting buffer.
//!
//! They go to stderr only while fd 2 is still the file it was when the
//! process image started (same device and inode). A program that closed fd 2
//! and reused the number for its own data would otherwise find our line in
//! the middle of its file (issue 14, item 7). Then the line is appended to
//! `stallscope.log` in the output directory instead.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::sync::OnceLock;

use crate::real;

static QUIET: AtomicBool = AtomicBool::new(false);
/// Before `init` (a message from another library's constructor), fd 2 is
/// taken to be stderr.
static INIT: AtomicBool = AtomicBool::new(false);
/// fd 2's identity at start; `STDERR_OPEN` is false if fd 2 was not open.
static STDERR_OPEN: AtomicBool = AtomicBool::new(false);
static STDERR_DEV: AtomicU64 = AtomicU64::new(0);
static STDERR_INO: AtomicU64 = AtomicU64::new(0);
/// `<output dir>/stallscope.log`.
static LOG: OnceLock<CString> = OnceLock::new();

/// The log file's name in the output directory.
pub const LOG_NAME: &str = "stallscope.log";

/// Called at start-up: remembers what fd 2 is. Allocates nothing.
pub fn init(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
    let (open, dev, ino) = fd2_identity().map_or((false, 0, 0), |(d, i)| (true, d, i));
    STDERR_DEV.store(dev, Ordering::Relaxed);
    STDERR_INO.store(ino, Ordering::Relaxed);
    STDERR_OPEN.store(open, Ordering::Relaxed);
    INIT.store(true, Ordering::Release);
}

/// Called when recording begins: where the log would go.
pub fn set_log_dir(out: Option<&OsStr>) {
    if let Some(out) = out {
        let mut p = out.as_bytes().to_vec();
        p.extend_from_slice(b"/");
        p.extend_from_slice(LOG_NAME.as_bytes());
        if let Ok(c) = CString::new(p) {
            let _ = LOG.set(c);
        }
    }
}

fn fd2_identity() -> Option<(u64, u64)> {
    // SAFETY: a plain struct of integers.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    crate::early::fstat(2, &mut st).ok()?;
    Some((st.st_dev, st.st_ino))
}

fn stderr_is_original() -> bool {
    if !INIT.load(Ordering::Acquire) {
        return true;
    }
    STDERR_OPEN.load(Ordering::Relaxed)
        && fd2_identity().is_some_and(|(d, i)| {
            d == STDERR_DEV.load(Ordering::Relaxed) && i == STDERR_INO.load(Ordering::Relaxed)
        })
}

/// Prints `stallscope: <msg>` on stderr (or into the log), unless quiet.
pub fn say(msg: &str) {
    if QUIET.load(Ordering::Relaxed) {
        return;
    }
    // SAFETY: errno is thread-local; the program must see its own value.
    let saved = unsafe { *libc::__errno_location() };
    let mut buf = [0u8; 512];
    let prefix = b"stallscope: ";
    let body = msg.as_bytes();
    let n = body.len().min(buf.len() - prefix.len() - 1);
    buf[..prefix.len()].copy_from_slice(prefix);
    buf[prefix.len()..prefix.len() + n].copy_from_slice(&body[..n]);
    buf[prefix.len() + n] = b'\n';
    let total = prefix.len() + n + 1;
    if stderr_is_original() {
        // SAFETY: raw write of our own buffer; a failed write is ignored on purpose.
        unsafe {
            libc::syscall(libc::SYS_write, 2, buf.as_ptr(), total);
        }
    } else if let Some(log) = LOG.get() {
        append(log, &buf[..total]);
    }
    unsafe { *libc::__errno_location() = saved };
}

/// Appends one line to the log through an fd held only for this call.
fn append(path: &CString, line: &[u8]) {
    // SAFETY: NUL-terminated path; our own buffer.
    let fd = unsafe {
        real::open(
            path.as_ptr(),
            libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_CLOEXEC | libc::O_NOFOLLOW,
            0o600,
        )
    };
    if fd >= 0 {
        unsafe {
            libc::syscall(libc::SYS_write, fd, line.as_ptr(), line.len());
            real::close(fd);
        }
    }
}
