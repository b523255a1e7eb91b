//! The shim's own threads (sampler, GPU watcher, CUPTI flush helper).
//!
//! Each one starts with every signal blocked: a process-directed signal is
//! delivered to any thread that does not block it, so a shim thread with an
//! open mask would take the program's SIGALRM (its reads would no longer see
//! EINTR), or die of a SIGTERM that the program blocks everywhere to take with
//! sigwait (issue 14, item 3). A new thread inherits its creator's mask, so
//! the mask is blocked around the spawn and restored right after.

use std::io;
use std::thread::JoinHandle;

/// Spawns a named thread with a small stack and every signal blocked.
pub fn spawn<F>(name: &str, f: F) -> io::Result<JoinHandle<()>>
where
    F: FnOnce() + Send + 'static,
{
    // SAFETY: sigset_t is plain data, filled by sigfillset; pthread_sigmask
    // only changes the calling thread's mask, and it is restored below.
    let mut all: libc::sigset_t = unsafe { core::mem::zeroed() };
    let mut old: libc::sigset_t = unsafe { core::mem::zeroed() };
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
    }
    let r = std::thread::Builder::new()
        .name(name.into())
        .stack_size(256 * 1024)
        .spawn(f);
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, core::ptr::null_mut()) };
    r
}

#[cfg(test)]
mod tests {
    #[test]
    fn spawned_threads_block_every_signal_and_the_caller_keeps_its_mask() {
        let sigs = [libc::SIGINT, libc::SIGTERM, libc::SIGALRM, libc::SIGUSR1];
        let (tx, rx) = std::sync::mpsc::channel();
        super::spawn("t", move || {
            let mut cur: libc::sigset_t = unsafe { core::mem::zeroed() };
            unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, core::ptr::null(), &mut cur) };
            let blocked: Vec<bool> = sigs
                .iter()
                .map(|&s| unsafe { libc::sigismember(&cur, s) } == 1)
                .collect();
            tx.send(blocked).unwrap();
        })
        .unwrap()
        .join()
        .unwrap();
        assert_eq!(rx.recv().unwrap(), vec![true; 4]);
        let mut cur: libc::sigset_t = unsafe { core::mem::zeroed() };
        unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, core::ptr::null(), &mut cur) };
        assert_eq!(unsafe { libc::sigismember(&cur, libc::SIGTERM) }, 0);
    }
}
