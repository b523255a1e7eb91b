//! What the constructor asks of the system, without running libc's code.
//!
//! Every process image of a traced job runs the constructor, and most (a
//! shell's `/bin/true`, a wrapper that only execs) run nothing else of the
//! shim. There, each code page touched costs a page fault, 4-5 us on the
//! 2-core test VM with the kernel's fault-around, and libc's `getenv`,
//! `fstat`, `geteuid` and friends each sit on a page of their own that a
//! trivial program never touches (issue 18, item 2: a process that records
//! nothing may add at most 200 us). So the environment is read by a scan
//! of `environ`, inlined, and the few system calls are made directly (on
//! x86-64; elsewhere through libc's `syscall`).
//!
//! Nothing here sets errno: failures come back as the error number.

use core::ffi::CStr;

unsafe extern "C" {
    /// libc's environment (what `getenv` scans).
    static environ: *const *const libc::c_char;
}

/// The value of `name` in libc's environment (as `getenv`), without its code.
///
/// # Safety
/// No other thread may change the environment meanwhile.
#[inline(always)]
pub unsafe fn env(name: &[u8]) -> Option<&'static [u8]> {
    // SAFETY: environ is a NULL-terminated array of NUL-terminated strings.
    unsafe {
        let mut e = environ;
        if e.is_null() {
            return None;
        }
        while !(*e).is_null() {
            let s = (*e).cast::<u8>();
            let mut i = 0;
            // Byte by byte: a slice comparison would call libc's bcmp.
            while i < name.len() && *s.add(i) == name[i] {
                i += 1;
            }
            if i == name.len() && *s.add(i) == b'=' {
                let v = s.add(i + 1);
                let mut n = 0;
                while *v.add(n) != 0 {
                    n += 1;
                }
                return Some(core::slice::from_raw_parts(v, n));
            }
            e = e.add(1);
        }
        None
    }
}

/// `fstat(fd)`.
#[inline(always)]
pub fn fstat(fd: i32, st: &mut libc::stat) -> Result<(), i32> {
    // SAFETY: a valid out-pointer of the kernel's struct stat layout, which
    // is libc's on the 64-bit targets the raw path serves.
    result(unsafe { raw::call2(libc::SYS_fstat, fd as usize, st as *mut _ as usize) })
}

/// `stat(path)`.
#[inline(always)]
pub fn stat(path: &CStr, st: &mut libc::stat) -> Result<(), i32> {
    // SAFETY: as in `fstat`; the path is NUL-terminated.
    result(unsafe {
        raw::call4(
            libc::SYS_newfstatat,
            libc::AT_FDCWD as usize,
            path.as_ptr() as usize,
            st as *mut _ as usize,
            0,
        )
    })
}

#[inline(always)]
pub fn geteuid() -> u32 {
    // SAFETY: no arguments, cannot fail.
    unsafe { raw::call0(libc::SYS_geteuid) as u32 }
}

#[inline(always)]
pub fn getpid() -> u32 {
    // SAFETY: no arguments, cannot fail.
    unsafe { raw::call0(libc::SYS_getpid) as u32 }
}

#[inline(always)]
pub fn getppid() -> u32 {
    // SAFETY: no arguments, cannot fail.
    unsafe { raw::call0(libc::SYS_getppid) as u32 }
}

/// The clock `id` in nanoseconds, by a system call: the vDSO's data page is
/// one more fault for a process that never reads a clock itself.
#[inline(always)]
pub fn clock_ns(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer.
    unsafe {
        raw::call2(
            libc::SYS_clock_gettime,
            id as usize,
            &mut ts as *mut _ as usize,
        )
    };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn result(r: isize) -> Result<(), i32> {
    if r < 0 { Err(-r as i32) } else { Ok(()) }
}

#[cfg(target_arch = "x86_64")]
mod raw {
    use core::arch::asm;

    #[inline(always)]
    pub unsafe fn call0(n: libc::c_long) -> isize {
        let r;
        // SAFETY: the caller passes a system call that takes no arguments.
        unsafe {
            asm!("syscall", inlateout("rax") n as isize => r,
                 lateout("rcx") _, lateout("r11") _, options(nostack));
        }
        r
    }

    #[inline(always)]
    pub unsafe fn call2(n: libc::c_long, a: usize, b: usize) -> isize {
        let r;
        // SAFETY: the caller passes valid arguments for `n`.
        unsafe {
            asm!("syscall", inlateout("rax") n as isize => r, in("rdi") a, in("rsi") b,
                 lateout("rcx") _, lateout("r11") _, options(nostack));
        }
        r
    }

    #[inline(always)]
    pub unsafe fn call4(n: libc::c_long, a: usize, b: usize, c: usize, d: usize) -> isize {
        let r;
        // SAFETY: the caller passes valid arguments for `n`.
        unsafe {
            asm!("syscall", inlateout("rax") n as isize => r, in("rdi") a, in("rsi") b,
                 in("rdx") c, in("r10") d, lateout("rcx") _, lateout("r11") _,
                 options(nostack));
        }
        r
    }
}

/// Elsewhere, libc's generic `syscall` (one page of libc's code), which
/// returns -1 and sets errno. The raw form is only written for the
/// architecture the project can test.
#[cfg(not(target_arch = "x86_64"))]
mod raw {
    fn back(r: libc::c_long) -> isize {
        if r == -1 {
            // SAFETY: errno is this thread's.
            -(unsafe { *libc::__errno_location() }) as isize
        } else {
            r as isize
        }
    }

    pub unsafe fn call0(n: libc::c_long) -> isize {
        back(unsafe { libc::syscall(n) })
    }

    pub unsafe fn call2(n: libc::c_long, a: usize, b: usize) -> isize {
        back(unsafe { libc::syscall(n, a, b) })
    }

    pub unsafe fn call4(n: libc::c_long, a: usize, b: usize, c: usize, d: usize) -> isize {
        back(unsafe { libc::syscall(n, a, b, c, d) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_libc() {
        assert_eq!(getpid(), std::process::id());
        // SAFETY: plain queries.
        assert_eq!(getppid(), unsafe { libc::getppid() } as u32);
        assert_eq!(geteuid(), unsafe { libc::geteuid() });
        let (mut a, mut b): (libc::stat, libc::stat) = unsafe { core::mem::zeroed() };
        stat(c"/proc/self", &mut a).unwrap();
        // SAFETY: valid path and out-pointer.
        assert_eq!(unsafe { libc::stat(c"/proc/self".as_ptr(), &mut b) }, 0);
        assert_eq!(
            (a.st_ino, a.st_mode, a.st_uid),
            (b.st_ino, b.st_mode, b.st_uid)
        );
        assert_eq!(stat(c"/no/such/dir", &mut a), Err(libc::ENOENT));
        let f = std::fs::File::open("/proc/self/status").unwrap();
        use std::os::fd::AsRawFd;
        fstat(f.as_raw_fd(), &mut a).unwrap();
        let m = f.metadata().unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!((a.st_dev, a.st_ino), (m.dev(), m.ino()));
        assert_eq!(fstat(-1, &mut a), Err(libc::EBADF));
        let before = clock_ns(libc::CLOCK_MONOTONIC);
        assert!(before > 0 && clock_ns(libc::CLOCK_MONOTONIC) >= before);
    }

    #[test]
    fn reads_the_environment_as_getenv_does() {
        // SAFETY: the test reads what the process was started with.
        let path = unsafe { env(b"PATH") }.map(|v| v.to_vec());
        assert_eq!(
            path,
            std::env::var_os("PATH").map(|v| v.into_encoded_bytes())
        );
        // A prefix of a name is not the name.
        assert_eq!(unsafe { env(b"PAT") }, None);
        assert_eq!(unsafe { env(b"STALLSCOPE_SURELY_UNSET_VARIABLE") }, None);
    }
}
