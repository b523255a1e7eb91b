//! Waiting calls: poll, select, epoll, semaphores, condition variables, sleeps.

use core::ffi::c_int;

use libc::{
    clockid_t, epoll_event, fd_set, nfds_t, pollfd, pthread_cond_t, pthread_mutex_t, sem_t,
    sigset_t, timespec, timeval,
};
use stallscope_format::HostOp;

use crate::{real, recorder};

/// Defines a hook on a wait for fds; `fd` names the fd it is attributed to.
macro_rules! fd_wait_hook {
    ($(
        $name:ident => $real:ident ($($a:ident : $t:ty),*) -> $ret:ty, $op:expr, fd = $fd:expr;
    )*) => {$(
        #[unsafe(no_mangle)]
        pub unsafe extern "C-unwind" fn $name($($a: $t),*) -> $ret {
            let e = recorder::enter();
            let fd = $fd;
            let r = unsafe { real::$real($($a),*) };
            recorder::leave_fd(e, $op, fd, 0, false);
            r
        }
    )*};
}

/// Defines a hook on a wait for a synchronization object at `addr`.
macro_rules! addr_wait_hook {
    ($(
        $name:ident => $real:ident ($($a:ident : $t:ty),*) -> $ret:ty, $op:expr, addr = $addr:expr;
    )*) => {$(
        #[unsafe(no_mangle)]
        pub unsafe extern "C-unwind" fn $name($($a: $t),*) -> $ret {
            let e = recorder::enter();
            let r = unsafe { real::$real($($a),*) };
            recorder::leave_addr(e, $op, $addr);
            r
        }
    )*};
}

/// The first polled fd: DataLoader-style waits poll one pipe.
fn first_pollfd(fds: *const pollfd, n: nfds_t) -> c_int {
    if fds.is_null() || n == 0 {
        -1
    } else {
        unsafe { (*fds).fd }
    }
}

/// The lowest fd in a select read set (read before the call overwrites it).
fn first_selected(n: c_int, set: *const fd_set) -> c_int {
    if set.is_null() {
        return -1;
    }
    (0..n.min(libc::FD_SETSIZE as c_int))
        .find(|&fd| unsafe { libc::FD_ISSET(fd, set) })
        .unwrap_or(-1)
}

fd_wait_hook! {
    poll => poll(fds: *mut pollfd, nfds: nfds_t, timeout: c_int) -> c_int,
        HostOp::Poll, fd = first_pollfd(fds, nfds);
    ppoll => ppoll(fds: *mut pollfd, nfds: nfds_t, ts: *const timespec, mask: *const sigset_t) -> c_int,
        HostOp::Poll, fd = first_pollfd(fds, nfds);
    select => select(n: c_int, r: *mut fd_set, w: *mut fd_set, e: *mut fd_set, tv: *mut timeval) -> c_int,
        HostOp::Select, fd = first_selected(n, r);
    pselect => pselect(n: c_int, r: *mut fd_set, w: *mut fd_set, e: *mut fd_set, ts: *const timespec, mask: *const sigset_t) -> c_int,
        HostOp::Select, fd = first_selected(n, r);
    epoll_wait => epoll_wait(epfd: c_int, ev: *mut epoll_event, max: c_int, timeout: c_int) -> c_int,
        HostOp::EpollWait, fd = epfd;
    epoll_pwait => epoll_pwait(epfd: c_int, ev: *mut epoll_event, max: c_int, timeout: c_int, mask: *const sigset_t) -> c_int,
        HostOp::EpollWait, fd = epfd;
}

addr_wait_hook! {
    sem_wait => sem_wait(sem: *mut sem_t) -> c_int, HostOp::SemWait, addr = sem as usize;
    sem_timedwait => sem_timedwait(sem: *mut sem_t, abstime: *const timespec) -> c_int,
        HostOp::SemWait, addr = sem as usize;
    sem_clockwait => sem_clockwait(sem: *mut sem_t, clock: clockid_t, abstime: *const timespec) -> c_int,
        HostOp::SemWait, addr = sem as usize;
    pthread_cond_wait => pthread_cond_wait(c: *mut pthread_cond_t, m: *mut pthread_mutex_t) -> c_int,
        HostOp::CondWait, addr = c as usize;
    pthread_cond_timedwait => pthread_cond_timedwait(c: *mut pthread_cond_t, m: *mut pthread_mutex_t, abstime: *const timespec) -> c_int,
        HostOp::CondWait, addr = c as usize;
    pthread_cond_clockwait => pthread_cond_clockwait(c: *mut pthread_cond_t, m: *mut pthread_mutex_t, clock: clockid_t, abstime: *const timespec) -> c_int,
        HostOp::CondWait, addr = c as usize;
    nanosleep => nanosleep(req: *const timespec, rem: *mut timespec) -> c_int, HostOp::Sleep, addr = 0;
    clock_nanosleep => clock_nanosleep(clock: clockid_t, flags: c_int, req: *const timespec, rem: *mut timespec) -> c_int,
        HostOp::Sleep, addr = 0;
}
