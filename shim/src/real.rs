//! The real libc functions behind the hooks, found with dlsym(RTLD_NEXT).
//!
//! Each is resolved on its first use, so a process pays only for the functions
//! it calls (a constructor that resolved all of them cost every process about
//! 20 us: issue 18, item 2). dlsym may allocate, and
//! an allocator's own start-up may read files; a hook entered while this thread
//! is resolving therefore uses a raw system call instead of recursing.

#![allow(clippy::missing_safety_doc)]

use core::cell::Cell;
use core::ffi::{c_char, c_int, c_void};
use core::sync::atomic::{AtomicUsize, Ordering};

use libc::{
    clockid_t, epoll_event, fd_set, iovec, mode_t, msghdr, nfds_t, off_t, pollfd, pthread_cond_t,
    pthread_mutex_t, sem_t, sigset_t, size_t, sockaddr, socklen_t, ssize_t, timespec, timeval,
};

thread_local! {
    static RESOLVING: Cell<bool> = const { Cell::new(false) };
}

fn resolve(name: &core::ffi::CStr, version: Option<&core::ffi::CStr>) -> usize {
    let was = RESOLVING.with(|r| r.replace(true));
    // SAFETY: plain symbol lookups with NUL-terminated names.
    let mut p = match version {
        Some(v) => unsafe { libc::dlvsym(libc::RTLD_NEXT, name.as_ptr(), v.as_ptr()) },
        None => core::ptr::null_mut(),
    };
    if p.is_null() {
        p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    }
    RESOLVING.with(|r| r.set(was));
    p as usize
}

fn set_errno(e: c_int) {
    // SAFETY: errno location of the calling thread.
    unsafe { *libc::__errno_location() = e };
}

/// Fallback for functions that have no direct system call.
fn unavailable<T: From<i8>>() -> T {
    set_errno(libc::ENOSYS);
    T::from(-1)
}

macro_rules! real_fns {
    ($(
        $name:ident = $sym:literal $(@ $ver:literal)? :
            fn($($arg:ident : $ty:ty),*) -> $ret:ty, fallback $fallback:expr;
    )*) => {
        $(
            #[inline]
            pub unsafe fn $name($($arg: $ty),*) -> $ret {
                static PTR: AtomicUsize = AtomicUsize::new(0);
                let mut p = PTR.load(Ordering::Relaxed);
                if p == 0 {
                    if RESOLVING.with(|r| r.get()) {
                        #[allow(unused_unsafe)]
                        return unsafe { $fallback };
                    }
                    p = resolve($sym, None $(.or(Some($ver)))?);
                    if p == 0 {
                        #[allow(unused_unsafe)]
                        return unsafe { $fallback };
                    }
                    PTR.store(p, Ordering::Relaxed);
                }
                // SAFETY: `p` is the next definition of this very symbol.
                let f: unsafe extern "C-unwind" fn($($ty),*) -> $ret = unsafe { core::mem::transmute(p) };
                unsafe { f($($arg),*) }
            }
        )*
    };
}

use libc::{SYS_close, SYS_mmap, SYS_openat, SYS_pread64, SYS_read, SYS_write, syscall};

real_fns! {
    open = c"open": fn(path: *const c_char, flags: c_int, mode: mode_t) -> c_int,
        fallback syscall(SYS_openat, libc::AT_FDCWD, path, flags, mode) as c_int;
    open64 = c"open64": fn(path: *const c_char, flags: c_int, mode: mode_t) -> c_int,
        fallback syscall(SYS_openat, libc::AT_FDCWD, path, flags, mode) as c_int;
    openat = c"openat": fn(dirfd: c_int, path: *const c_char, flags: c_int, mode: mode_t) -> c_int,
        fallback syscall(SYS_openat, dirfd, path, flags, mode) as c_int;
    openat64 = c"openat64": fn(dirfd: c_int, path: *const c_char, flags: c_int, mode: mode_t) -> c_int,
        fallback syscall(SYS_openat, dirfd, path, flags, mode) as c_int;
    open_2 = c"__open_2": fn(path: *const c_char, flags: c_int) -> c_int,
        fallback syscall(SYS_openat, libc::AT_FDCWD, path, flags) as c_int;
    open64_2 = c"__open64_2": fn(path: *const c_char, flags: c_int) -> c_int,
        fallback syscall(SYS_openat, libc::AT_FDCWD, path, flags) as c_int;
    openat_2 = c"__openat_2": fn(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int,
        fallback syscall(SYS_openat, dirfd, path, flags) as c_int;
    openat64_2 = c"__openat64_2": fn(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int,
        fallback syscall(SYS_openat, dirfd, path, flags) as c_int;
    close = c"close": fn(fd: c_int) -> c_int,
        fallback syscall(SYS_close, fd) as c_int;
    read = c"read": fn(fd: c_int, buf: *mut c_void, n: size_t) -> ssize_t,
        fallback syscall(SYS_read, fd, buf, n) as ssize_t;
    read_chk = c"__read_chk": fn(fd: c_int, buf: *mut c_void, n: size_t, buflen: size_t) -> ssize_t,
        fallback syscall(SYS_read, fd, buf, n.min(buflen)) as ssize_t;
    pread = c"pread": fn(fd: c_int, buf: *mut c_void, n: size_t, off: off_t) -> ssize_t,
        fallback syscall(SYS_pread64, fd, buf, n, off) as ssize_t;
    pread64 = c"pread64": fn(fd: c_int, buf: *mut c_void, n: size_t, off: off_t) -> ssize_t,
        fallback syscall(SYS_pread64, fd, buf, n, off) as ssize_t;
    readv = c"readv": fn(fd: c_int, iov: *const iovec, cnt: c_int) -> ssize_t,
        fallback unavailable::<ssize_t>();
    preadv = c"preadv": fn(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t) -> ssize_t,
        fallback unavailable::<ssize_t>();
    preadv64 = c"preadv64": fn(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t) -> ssize_t,
        fallback unavailable::<ssize_t>();
    preadv2 = c"preadv2": fn(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t, flags: c_int) -> ssize_t,
        fallback unavailable::<ssize_t>();
    preadv64v2 = c"preadv64v2": fn(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t, flags: c_int) -> ssize_t,
        fallback unavailable::<ssize_t>();
    write = c"write": fn(fd: c_int, buf: *const c_void, n: size_t) -> ssize_t,
        fallback syscall(SYS_write, fd, buf, n) as ssize_t;
    pwrite = c"pwrite": fn(fd: c_int, buf: *const c_void, n: size_t, off: off_t) -> ssize_t,
        fallback unavailable::<ssize_t>();
    pwrite64 = c"pwrite64": fn(fd: c_int, buf: *const c_void, n: size_t, off: off_t) -> ssize_t,
        fallback unavailable::<ssize_t>();
    fsync = c"fsync": fn(fd: c_int) -> c_int,
        fallback unavailable::<c_int>();
    fdatasync = c"fdatasync": fn(fd: c_int) -> c_int,
        fallback unavailable::<c_int>();
    mmap = c"mmap": fn(addr: *mut c_void, len: size_t, prot: c_int, flags: c_int, fd: c_int, off: off_t) -> *mut c_void,
        fallback syscall(SYS_mmap, addr, len, prot, flags, fd, off) as *mut c_void;
    mmap64 = c"mmap64": fn(addr: *mut c_void, len: size_t, prot: c_int, flags: c_int, fd: c_int, off: off_t) -> *mut c_void,
        fallback syscall(SYS_mmap, addr, len, prot, flags, fd, off) as *mut c_void;
    poll = c"poll": fn(fds: *mut pollfd, nfds: nfds_t, timeout: c_int) -> c_int,
        fallback unavailable::<c_int>();
    ppoll = c"ppoll": fn(fds: *mut pollfd, nfds: nfds_t, ts: *const timespec, mask: *const sigset_t) -> c_int,
        fallback unavailable::<c_int>();
    select = c"select": fn(n: c_int, r: *mut fd_set, w: *mut fd_set, e: *mut fd_set, tv: *mut timeval) -> c_int,
        fallback unavailable::<c_int>();
    pselect = c"pselect": fn(n: c_int, r: *mut fd_set, w: *mut fd_set, e: *mut fd_set, ts: *const timespec, mask: *const sigset_t) -> c_int,
        fallback unavailable::<c_int>();
    epoll_wait = c"epoll_wait": fn(epfd: c_int, ev: *mut epoll_event, max: c_int, timeout: c_int) -> c_int,
        fallback unavailable::<c_int>();
    epoll_pwait = c"epoll_pwait": fn(epfd: c_int, ev: *mut epoll_event, max: c_int, timeout: c_int, mask: *const sigset_t) -> c_int,
        fallback unavailable::<c_int>();
    recv = c"recv": fn(fd: c_int, buf: *mut c_void, n: size_t, flags: c_int) -> ssize_t,
        fallback unavailable::<ssize_t>();
    recvfrom = c"recvfrom": fn(fd: c_int, buf: *mut c_void, n: size_t, flags: c_int, addr: *mut sockaddr, alen: *mut socklen_t) -> ssize_t,
        fallback unavailable::<ssize_t>();
    recvmsg = c"recvmsg": fn(fd: c_int, msg: *mut msghdr, flags: c_int) -> ssize_t,
        fallback unavailable::<ssize_t>();
    sem_wait = c"sem_wait": fn(sem: *mut sem_t) -> c_int,
        fallback unavailable::<c_int>();
    sem_timedwait = c"sem_timedwait": fn(sem: *mut sem_t, abstime: *const timespec) -> c_int,
        fallback unavailable::<c_int>();
    sem_clockwait = c"sem_clockwait": fn(sem: *mut sem_t, clock: clockid_t, abstime: *const timespec) -> c_int,
        fallback unavailable::<c_int>();
    // Versioned: a plain dlsym can return the pre-2.3.2 compatibility symbol,
    // which expects the old condvar layout (glibc bug 19351 discussion; the
    // same workaround is used by other interposers such as libfaketime).
    pthread_cond_wait = c"pthread_cond_wait" @ c"GLIBC_2.3.2": fn(c: *mut pthread_cond_t, m: *mut pthread_mutex_t) -> c_int,
        fallback libc::EINVAL;
    pthread_cond_timedwait = c"pthread_cond_timedwait" @ c"GLIBC_2.3.2": fn(c: *mut pthread_cond_t, m: *mut pthread_mutex_t, abstime: *const timespec) -> c_int,
        fallback libc::EINVAL;
    pthread_cond_clockwait = c"pthread_cond_clockwait": fn(c: *mut pthread_cond_t, m: *mut pthread_mutex_t, clock: clockid_t, abstime: *const timespec) -> c_int,
        fallback libc::EINVAL;
    nanosleep = c"nanosleep": fn(req: *const timespec, rem: *mut timespec) -> c_int,
        fallback unavailable::<c_int>();
    clock_nanosleep = c"clock_nanosleep": fn(clock: clockid_t, flags: c_int, req: *const timespec, rem: *mut timespec) -> c_int,
        fallback libc::ENOSYS;
}
