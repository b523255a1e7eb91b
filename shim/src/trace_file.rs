//! The trace file on disk: created safely, grown on demand, mapped shared.
//!
//! Safety rules: the file is created with O_CREAT|O_EXCL|O_NOFOLLOW and mode
//! 0600 inside the output directory, so a planted symlink or an existing file is
//! never followed or overwritten. Every byte range is backed with fallocate
//! before it is touched through the mapping (touching an unbacked page of a
//! shared mapping raises SIGBUS), and growth beyond RLIMIT_FSIZE is refused up
//! front (exceeding it would raise SIGXFSZ in the traced program).

use core::ffi::c_int;
use core::sync::atomic::{AtomicI32, Ordering};
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;

use stallscope_format::layout::{Geometry, HeaderInit, encode_header};
use stallscope_format::writer::fixed_part_len;

use crate::real;

/// Our fd is moved above this number to stay out of the program's way.
const HIGH_FD: c_int = 700;

pub struct TraceFile {
    fd: c_int,
    base: *mut u8,
    map_len: usize,
    pub geo: Geometry,
    pub path: String,
    last_errno: AtomicI32,
}

// The mapping is shared by design; all concurrent access goes through atomics
// in the format crate's writer.
unsafe impl Send for TraceFile {}
unsafe impl Sync for TraceFile {}

fn errno() -> c_int {
    // SAFETY: thread-local errno.
    unsafe { *libc::__errno_location() }
}

pub fn strerror(e: c_int) -> String {
    std::io::Error::from_raw_os_error(e).to_string()
}

impl TraceFile {
    /// Creates `<dir>/<pid>.sst` (or `<pid>-N.sst` if taken), sized for `init`,
    /// and writes its header.
    pub fn create(
        dir: &OsStr,
        init: &HeaderInit,
        chunk_size: u32,
        slots: u32,
    ) -> Result<TraceFile, String> {
        let geo = Geometry::new(init.capacity, chunk_size, slots)
            .ok_or_else(|| format!("trace size cap of {} bytes is too small", init.capacity))?;
        let dir_c = CString::new(dir.as_bytes())
            .map_err(|_| "output directory name contains a NUL byte".to_string())?;
        let shown = dir.to_string_lossy();
        // SAFETY: valid C string; failure is checked through errno.
        if unsafe { libc::mkdir(dir_c.as_ptr(), 0o700) } != 0 && errno() != libc::EEXIST {
            return Err(format!(
                "cannot create output directory {shown}: {}",
                strerror(errno())
            ));
        }
        let dirfd = unsafe {
            real::open(
                dir_c.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
                0,
            )
        };
        if dirfd < 0 {
            return Err(format!(
                "cannot open output directory {shown}: {}",
                strerror(errno())
            ));
        }
        let result = Self::create_in(dirfd, &shown, init, geo);
        unsafe { real::close(dirfd) };
        result
    }

    fn create_in(
        dirfd: c_int,
        shown: &str,
        init: &HeaderInit,
        geo: Geometry,
    ) -> Result<TraceFile, String> {
        let flags =
            libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        let mut name = String::new();
        let mut fd = -1;
        for n in 0..1000 {
            name = if n == 0 {
                format!("{}.sst", init.pid)
            } else {
                format!("{}-{n}.sst", init.pid)
            };
            let c = CString::new(name.as_str()).expect("no NUL in a number");
            fd = unsafe { real::openat(dirfd, c.as_ptr(), flags, 0o600) };
            if fd >= 0 || errno() != libc::EEXIST {
                break;
            }
        }
        let path = format!("{shown}/{name}");
        if fd < 0 {
            return Err(format!("cannot create {path}: {}", strerror(errno())));
        }
        let high = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, HIGH_FD) };
        if high >= 0 {
            unsafe { real::close(fd) };
            fd = high;
        }
        let map_len = geo.chunk_offset(geo.chunk_count) as usize;
        let mut file = TraceFile {
            fd,
            base: core::ptr::null_mut(),
            map_len,
            geo,
            path,
            last_errno: AtomicI32::new(0),
        };
        let fail = |file: &TraceFile, what: &str| {
            let msg = format!(
                "cannot {what} {}: {}",
                file.path,
                strerror(file.last_errno.load(Ordering::Relaxed))
            );
            let c = CString::new(name.as_str()).expect("no NUL in a number");
            // The file is ours and holds nothing yet: do not leave a stub behind.
            unsafe {
                libc::unlinkat(dirfd, c.as_ptr(), 0);
                real::close(file.fd);
            }
            msg
        };
        if !file.grow(0, fixed_part_len(&geo)) {
            return Err(fail(&file, "allocate space for"));
        }
        // Mapping past the end of the file is allowed; pages are backed by
        // `grow` before first use.
        let base = unsafe {
            real::mmap(
                core::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            file.last_errno.store(errno(), Ordering::Relaxed);
            return Err(fail(&file, "map"));
        }
        file.base = base as *mut u8;
        // SAFETY: the header region is mapped and backed.
        let header =
            unsafe { core::slice::from_raw_parts_mut(file.base, fixed_part_len(&geo) as usize) };
        encode_header(header, init, &geo);
        Ok(file)
    }

    pub fn base(&self) -> *mut u8 {
        self.base
    }

    pub fn map_len(&self) -> usize {
        self.map_len
    }

    /// The errno of the last failed growth.
    pub fn last_errno(&self) -> c_int {
        self.last_errno.load(Ordering::Relaxed)
    }

    /// Backs `[off, off+len)` with disk blocks. False if the disk or the file
    /// size limit refuses; the traced program never sees the failure.
    pub fn grow(&self, off: u64, len: u64) -> bool {
        let end = off + len;
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut lim) } == 0
            && lim.rlim_cur != libc::RLIM_INFINITY
            && end > lim.rlim_cur
        {
            self.last_errno.store(libc::EFBIG, Ordering::Relaxed);
            return false;
        }
        let saved = errno();
        let ok = match unsafe { libc::fallocate(self.fd, 0, off as i64, len as i64) } {
            0 => true,
            _ if matches!(errno(), libc::EOPNOTSUPP | libc::ENOSYS) => {
                self.grow_by_writing(off, len)
            }
            _ => {
                self.last_errno.store(errno(), Ordering::Relaxed);
                false
            }
        };
        unsafe { *libc::__errno_location() = saved };
        ok
    }

    /// For filesystems without fallocate: write zeros, which also allocates.
    fn grow_by_writing(&self, mut off: u64, len: u64) -> bool {
        static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];
        let end = off + len;
        while off < end {
            let n = ((end - off) as usize).min(ZEROS.len());
            let w = unsafe { real::pwrite(self.fd, ZEROS.as_ptr().cast(), n, off as i64) };
            if w <= 0 {
                self.last_errno.store(
                    if w < 0 { errno() } else { libc::ENOSPC },
                    Ordering::Relaxed,
                );
                return false;
            }
            off += w as u64;
        }
        true
    }

    /// Closes our fd (in a forked child, which must not grow the parent's file).
    pub fn close_fd(&self) {
        unsafe { real::close(self.fd) };
    }
}
