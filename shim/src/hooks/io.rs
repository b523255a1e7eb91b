//! File and socket calls: open, close, read, write, sync, mmap, recv.

use core::ffi::{c_char, c_int, c_void};

use libc::{iovec, mode_t, msghdr, off_t, size_t, sockaddr, socklen_t, ssize_t};
use stallscope_format::HostOp;

use crate::{real, recorder};

/// Defines a hook that forwards to `real::$real` and reports the call on an fd.
/// `fd` and `moved` are expressions over the arguments and the result `r`.
macro_rules! fd_hook {
    ($(
        $name:ident => $real:ident ($($a:ident : $t:ty),*) -> $ret:ty,
            $op:expr, fd = $fd:expr, moved = |$r:ident| $moved:expr, force = $force:expr
            $(, $enter:ident)?;
    )*) => {$(
        #[unsafe(no_mangle)]
        pub unsafe extern "C-unwind" fn $name($($a: $t),*) -> $ret {
            let e = fd_hook!(@enter $($enter)?);
            let $r = unsafe { real::$real($($a),*) };
            recorder::leave_fd(e, $op, $fd, $moved, $force);
            $r
        }
    )*};
    (@enter) => { recorder::enter() };
    (@enter $enter:ident) => { recorder::$enter() };
}

/// Defines an open hook: the recorder also remembers the path it opened.
macro_rules! open_hook {
    ($( $name:ident => $real:ident ($($a:ident : $t:ty),*) -> c_int, path = $path:ident, flags = $flags:ident; )*) => {$(
        #[unsafe(no_mangle)]
        pub unsafe extern "C-unwind" fn $name($($a: $t),*) -> c_int {
            let e = recorder::enter();
            let r = unsafe { real::$real($($a),*) };
            recorder::leave_open(e, r, $path, $flags);
            r
        }
    )*};
}

open_hook! {
    open => open(path: *const c_char, flags: c_int, mode: mode_t) -> c_int, path = path, flags = flags;
    open64 => open64(path: *const c_char, flags: c_int, mode: mode_t) -> c_int, path = path, flags = flags;
    openat => openat(dirfd: c_int, path: *const c_char, flags: c_int, mode: mode_t) -> c_int, path = path, flags = flags;
    openat64 => openat64(dirfd: c_int, path: *const c_char, flags: c_int, mode: mode_t) -> c_int, path = path, flags = flags;
    __open_2 => open_2(path: *const c_char, flags: c_int) -> c_int, path = path, flags = flags;
    __open64_2 => open64_2(path: *const c_char, flags: c_int) -> c_int, path = path, flags = flags;
    __openat_2 => openat_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int, path = path, flags = flags;
    __openat64_2 => openat64_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int, path = path, flags = flags;
}

/// The fd is gone once close returns, so a slow close carries no object.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn close(fd: c_int) -> c_int {
    let e = recorder::enter();
    let r = unsafe { real::close(fd) };
    recorder::leave_close(e, fd);
    r
}

/// mmap of a file always gets a span: it is rare, and later page faults on the
/// mapping can only be tied to the file through it. Allocators call mmap
/// holding their locks, so an mmap never begins a recording
/// (`recorder::enter_passive`).
fn file_mapping(flags: c_int, fd: c_int, r: *mut c_void) -> bool {
    fd >= 0 && flags & libc::MAP_ANONYMOUS == 0 && r != libc::MAP_FAILED
}

fd_hook! {
    read => read(fd: c_int, buf: *mut c_void, n: size_t) -> ssize_t,
        HostOp::Read, fd = fd, moved = |r| r as i64, force = false;
    __read_chk => read_chk(fd: c_int, buf: *mut c_void, n: size_t, buflen: size_t) -> ssize_t,
        HostOp::Read, fd = fd, moved = |r| r as i64, force = false;
    pread => pread(fd: c_int, buf: *mut c_void, n: size_t, off: off_t) -> ssize_t,
        HostOp::Pread, fd = fd, moved = |r| r as i64, force = false;
    pread64 => pread64(fd: c_int, buf: *mut c_void, n: size_t, off: off_t) -> ssize_t,
        HostOp::Pread, fd = fd, moved = |r| r as i64, force = false;
    readv => readv(fd: c_int, iov: *const iovec, cnt: c_int) -> ssize_t,
        HostOp::Readv, fd = fd, moved = |r| r as i64, force = false;
    preadv => preadv(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t) -> ssize_t,
        HostOp::Preadv, fd = fd, moved = |r| r as i64, force = false;
    preadv64 => preadv64(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t) -> ssize_t,
        HostOp::Preadv, fd = fd, moved = |r| r as i64, force = false;
    preadv2 => preadv2(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t, flags: c_int) -> ssize_t,
        HostOp::Preadv, fd = fd, moved = |r| r as i64, force = false;
    preadv64v2 => preadv64v2(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t, flags: c_int) -> ssize_t,
        HostOp::Preadv, fd = fd, moved = |r| r as i64, force = false;
    write => write(fd: c_int, buf: *const c_void, n: size_t) -> ssize_t,
        HostOp::Write, fd = fd, moved = |r| r as i64, force = false;
    pwrite => pwrite(fd: c_int, buf: *const c_void, n: size_t, off: off_t) -> ssize_t,
        HostOp::Pwrite, fd = fd, moved = |r| r as i64, force = false;
    pwrite64 => pwrite64(fd: c_int, buf: *const c_void, n: size_t, off: off_t) -> ssize_t,
        HostOp::Pwrite, fd = fd, moved = |r| r as i64, force = false;
    fsync => fsync(fd: c_int) -> c_int,
        HostOp::Fsync, fd = fd, moved = |r| 0, force = false;
    fdatasync => fdatasync(fd: c_int) -> c_int,
        HostOp::Fdatasync, fd = fd, moved = |r| 0, force = false;
    mmap => mmap(addr: *mut c_void, len: size_t, prot: c_int, flags: c_int, fd: c_int, off: off_t) -> *mut c_void,
        HostOp::Mmap, fd = fd, moved = |r| len as i64, force = file_mapping(flags, fd, r), enter_passive;
    mmap64 => mmap64(addr: *mut c_void, len: size_t, prot: c_int, flags: c_int, fd: c_int, off: off_t) -> *mut c_void,
        HostOp::Mmap, fd = fd, moved = |r| len as i64, force = file_mapping(flags, fd, r), enter_passive;
    recv => recv(fd: c_int, buf: *mut c_void, n: size_t, flags: c_int) -> ssize_t,
        HostOp::Recv, fd = fd, moved = |r| r as i64, force = false;
    recvfrom => recvfrom(fd: c_int, buf: *mut c_void, n: size_t, flags: c_int, addr: *mut sockaddr, alen: *mut socklen_t) -> ssize_t,
        HostOp::Recv, fd = fd, moved = |r| r as i64, force = false;
    recvmsg => recvmsg(fd: c_int, msg: *mut msghdr, flags: c_int) -> ssize_t,
        HostOp::Recv, fd = fd, moved = |r| r as i64, force = false;
}
