//! The one-line `stallscope:` messages on stderr. Written with a single raw
//! write so they never interleave mid-line and never allocate on the caller's
//! behalf beyond the formatting buffer.

use core::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);

pub fn set_quiet(q: bool) {
    QUIET.store(q, Ordering::Relaxed);
}

/// Prints `stallscope: <msg>` on stderr, unless quiet.
pub fn say(msg: &str) {
    if QUIET.load(Ordering::Relaxed) {
        return;
    }
    let mut buf = [0u8; 512];
    let prefix = b"stallscope: ";
    let body = msg.as_bytes();
    let n = body.len().min(buf.len() - prefix.len() - 1);
    buf[..prefix.len()].copy_from_slice(prefix);
    buf[prefix.len()..prefix.len() + n].copy_from_slice(&body[..n]);
    buf[prefix.len() + n] = b'\n';
    let total = prefix.len() + n + 1;
    // SAFETY: raw write of our own buffer; a failed write is ignored on purpose.
    unsafe {
        libc::syscall(libc::SYS_write, 2, buf.as_ptr(), total);
    }
}
