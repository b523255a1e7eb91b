//! The trace file on disk: created safely, grown on demand, mapped shared.
//!
//! The file is made only when the process records something (issue 18,
//! item 2): until then the header and the thread table live in anonymous
//! memory laid out exactly like the file. The first record (or an exit
//! after counted calls of 1 ms or more in all, see
//! `recorder::worth_a_file`) writes that memory into a new file and maps the file over
//! it at the same address, so every pointer into it stays valid. A process
//! image that records nothing, a wrapper that only execs, `/bin/true`,
//! leaves no file and pays no file-system cost (creating a file costs
//! 0.1 to 1 ms on a busy ext4: its inode allocator scans recently deleted
//! inodes).
//!
//! Safety rules:
//! * The output directory must belong to us and be writable by no one else;
//!   a new one is made with mode 0700 whatever the umask.
//! * The file is created under a temporary name with
//!   O_CREAT|O_EXCL|O_NOFOLLOW and mode 0600, so a planted symlink or an
//!   existing file is never followed or overwritten. It gets its final name
//!   (`<pid>.sst`) only once its header is complete, so a kill at any moment
//!   leaves either no trace or a readable one (issue 14, item 5).
//! * The shim keeps no fd open: the file is mapped and the fd closed at once.
//!   Growing it opens the file again for the moment of the fallocate. A
//!   long-lived fd could be hit by the program's dup2, close or closerange
//!   (issue 14, item 1: a program's file fallocate'd, then SIGBUS).
//! * Every byte range is backed with fallocate before it is touched through
//!   the mapping (touching an unbacked page of a shared mapping raises SIGBUS),
//!   and growth beyond RLIMIT_FSIZE is refused up front (exceeding it would
//!   raise SIGXFSZ in the traced program).

use core::ffi::c_int;
use core::sync::atomic::{AtomicI32, AtomicU8, Ordering};
use std::ffi::{CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::sync::{Mutex, OnceLock};

use stallscope_format::layout::{
    Geometry, HEADER_SIZE, HeaderInit, PAGE, THREAD_SLOT_SIZE, encode_cmdline, encode_header, hdr,
};
use stallscope_format::writer::fixed_part_len;

use crate::real;

pub struct TraceFile {
    base: *mut u8,
    map_len: usize,
    pub geo: Geometry,
    /// The output directory and the pid the file is named after.
    dir: CString,
    shown_dir: String,
    pid: u32,
    /// PENDING until the first record needs the file, then READY or FAILED.
    state: AtomicU8,
    /// Held while the file is made (the cold path of a first record).
    making: Mutex<()>,
    named: OnceLock<Named>,
    last_errno: AtomicI32,
}

/// The file once it exists on disk.
struct Named {
    /// The file's final path, as shown to the user.
    path: String,
    /// The same, for opening the file again to grow it.
    path_c: CString,
    /// The file's identity: a reopened path must still name it.
    dev: u64,
    ino: u64,
}

/// [`TraceFile::state`] values.
pub mod file_state {
    pub const PENDING: u8 = 0;
    pub const READY: u8 = 1;
    pub const FAILED: u8 = 2;
}

// The mapping is shared by design; all concurrent access goes through atomics
// in the format crate's writer.
unsafe impl Send for TraceFile {}
unsafe impl Sync for TraceFile {}

fn errno() -> c_int {
    // SAFETY: thread-local errno.
    unsafe { *libc::__errno_location() }
}

fn set_errno(e: c_int) {
    // SAFETY: thread-local errno.
    unsafe { *libc::__errno_location() = e };
}

pub fn strerror(e: c_int) -> String {
    std::io::Error::from_raw_os_error(e).to_string()
}

/// Whether a failure to grow is passing (the program holds every fd it may
/// have, or memory is short) rather than the disk refusing.
pub fn transient(e: c_int) -> bool {
    matches!(
        e,
        libc::EMFILE | libc::ENFILE | libc::ENOMEM | libc::EINTR | libc::EAGAIN
    )
}

/// Closes an fd of ours when dropped.
struct Fd(c_int);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: the fd is ours and closed once.
        unsafe { real::close(self.0) };
    }
}

/// Makes `dir` (mode 0700, whatever the umask) unless it exists, and checks
/// that it is ours and writable by no one else, so no other user can replace
/// or plant a trace in it (issue 14, item 9).
///
/// The name shown in errors is made only on error: every process calls this
/// from the constructor, where each code page touched costs a page fault.
#[unsafe(link_section = ".text.startup.stallscope")] // see lifecycle::on_load
pub fn prepare_dir(dir: &CStr) -> Result<(), String> {
    let shown = || dir.to_string_lossy();
    // SAFETY: a plain struct of integers.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    // A stat first: the directory exists for every process but the first,
    // and a mkdir that fails with EEXIST costs more (it locks the parent
    // directory).
    if let Err(e) = crate::early::stat(dir, &mut st) {
        if e != libc::ENOENT {
            return Err(format!(
                "cannot open output directory {}: {}",
                shown(),
                strerror(e)
            ));
        }
        // SAFETY: a NUL-terminated path, here and in chmod.
        if unsafe { libc::mkdir(dir.as_ptr(), 0o700) } == 0 {
            // The umask may have taken bits away; 0700 exactly.
            unsafe { libc::chmod(dir.as_ptr(), 0o700) };
        } else if errno() != libc::EEXIST {
            return Err(format!(
                "cannot create output directory {}: {}",
                shown(),
                strerror(errno())
            ));
        }
        if let Err(e) = crate::early::stat(dir, &mut st) {
            return Err(format!(
                "cannot open output directory {}: {}",
                shown(),
                strerror(e)
            ));
        }
    }
    check_dir_owner(&st).map_err(|problem| format!("output directory {} {problem}", shown()))
}

/// Refuses a directory that belongs to someone else or that others may
/// write: the problem, to follow the directory's name.
pub fn check_dir_owner(st: &libc::stat) -> Result<(), String> {
    let me = crate::early::geteuid();
    if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
        return Err("is not a directory".into());
    }
    if st.st_uid != me {
        return Err(format!(
            "belongs to uid {}, not to this user (uid {me}); \
             another user could replace the trace",
            st.st_uid
        ));
    }
    if st.st_mode & 0o022 != 0 {
        return Err(format!(
            "is writable by group or others (mode {:04o}); \
             another user could replace the trace (chmod go-w it, or use another directory)",
            st.st_mode & 0o7777
        ));
    }
    Ok(())
}

impl TraceFile {
    /// Lays out `<dir>/<pid>.sst` for `init` in anonymous memory, header
    /// written; no file is made until [`TraceFile::make`].
    pub fn stage(
        dir: &OsStr,
        init: &HeaderInit,
        chunk_size: u32,
        slots: u32,
    ) -> Result<TraceFile, String> {
        let geo = Geometry::new(init.capacity, chunk_size, slots)
            .ok_or_else(|| format!("trace size cap of {} bytes is too small", init.capacity))?;
        let dir_c = CString::new(dir.as_bytes())
            .map_err(|_| "output directory name contains a NUL byte".to_string())?;
        // The directory is checked now (two system calls), so a bad one is
        // told at start-up, by every process; the file waits.
        prepare_dir(&dir_c)?;
        let map_len = geo.chunk_offset(geo.chunk_count) as usize;
        // Private: a forked child gets a copy it never uses, not a share.
        let base = unsafe {
            real::mmap(
                core::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(format!(
                "cannot reserve memory for the trace: {}",
                strerror(errno())
            ));
        }
        let base = base as *mut u8;
        // SAFETY: fresh anonymous memory, at least the fixed part long.
        let header =
            unsafe { core::slice::from_raw_parts_mut(base, fixed_part_len(&geo) as usize) };
        encode_header(header, init, &geo);
        Ok(TraceFile {
            base,
            map_len,
            geo,
            dir: dir_c,
            shown_dir: dir.to_string_lossy().into_owned(),
            pid: init.pid,
            state: AtomicU8::new(file_state::PENDING),
            making: Mutex::new(()),
            named: OnceLock::new(),
            last_errno: AtomicI32::new(0),
        })
    }

    /// PENDING, READY or FAILED (see [`file_state`]).
    #[inline]
    pub fn state(&self) -> u8 {
        self.state.load(Ordering::Acquire)
    }

    /// Thread slots claimed so far (a process that made no hooked call has none).
    pub fn slots_claimed(&self) -> u32 {
        // SAFETY: the header is mapped; the field is 4-aligned.
        let a =
            unsafe { &*(self.base.add(hdr::NEXT_SLOT) as *const core::sync::atomic::AtomicU32) };
        a.load(Ordering::Relaxed)
    }

    /// Makes the file, once: true when it exists (now or before). On a
    /// failure the error is returned to the one caller that tried; the
    /// others get false.
    pub fn make(&self) -> Result<bool, String> {
        let _one = self.making.lock().unwrap_or_else(|e| e.into_inner());
        match self.state() {
            file_state::READY => return Ok(true),
            file_state::FAILED => return Ok(false),
            _ => {}
        }
        match self.create() {
            Ok(()) => {
                self.state.store(file_state::READY, Ordering::Release);
                Ok(true)
            }
            Err(e) => {
                self.state.store(file_state::FAILED, Ordering::Release);
                Err(e)
            }
        }
    }

    /// Creates `<dir>/<pid>.sst` (or `<pid>-N.sst` if taken) from the staged
    /// memory, and maps it in that memory's place.
    fn create(&self) -> Result<(), String> {
        let shown = &self.shown_dir;
        prepare_dir(&self.dir)?;
        let dirfd = unsafe {
            real::open(
                self.dir.as_ptr(),
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
        let dirfd = Fd(dirfd);
        self.create_in(dirfd.0)
    }

    fn create_in(&self, dirfd: c_int) -> Result<(), String> {
        let shown = &self.shown_dir;
        let pid = self.pid;
        let geo = self.geo;
        let flags =
            libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // A hidden name without the .sst extension: readers of the directory
        // never see a file that is still being set up.
        let mut tmp = CString::default();
        let mut fd = -1;
        for n in 0..1000 {
            tmp = CString::new(if n == 0 {
                format!(".{pid}.sst.tmp")
            } else {
                format!(".{pid}-{n}.sst.tmp")
            })
            .expect("no NUL in a number");
            fd = unsafe { real::openat(dirfd, tmp.as_ptr(), flags, 0o600) };
            if fd >= 0 || errno() != libc::EEXIST {
                break;
            }
        }
        if fd < 0 {
            return Err(format!(
                "cannot create a trace file in {shown}: {}",
                strerror(errno())
            ));
        }
        let fd = Fd(fd);
        let unlink_tmp = || unsafe { libc::unlinkat(dirfd, tmp.as_ptr(), 0) };
        let mut st: libc::stat = unsafe { core::mem::zeroed() };
        unsafe { libc::fstat(fd.0, &mut st) };
        let fail = |what: &str, e: c_int| {
            // The file is ours and holds nothing yet: do not leave a stub behind.
            unlink_tmp();
            format!("cannot {what} {shown}/{pid}.sst: {}", strerror(e))
        };
        if !self.grow_fd(fd.0, 0, fixed_part_len(&geo)) {
            return Err(fail("allocate space for", self.last_errno()));
        }
        // The command line now, not at start-up (see lifecycle.rs). The file
        // has no final name yet, so no reader sees the header change.
        let cmdline = std::fs::read("/proc/self/cmdline").unwrap_or_default();
        // SAFETY: the staged header is mapped and only this thread writes
        // its command line.
        let header = unsafe { core::slice::from_raw_parts_mut(self.base, HEADER_SIZE) };
        encode_cmdline(header, &cmdline);
        // The header and the slots claimed so far (the rest is zeros).
        let slots = self.slots_claimed().min(geo.thread_slots) as u64;
        let used =
            (geo.thread_table_offset + slots * THREAD_SLOT_SIZE as u64).div_ceil(PAGE) * PAGE;
        let used = used.min(fixed_part_len(&geo));
        let mut off = 0u64;
        while off < used {
            // SAFETY: the staged memory covers the fixed part.
            let w = unsafe {
                real::pwrite(
                    fd.0,
                    self.base.add(off as usize).cast(),
                    (used - off) as usize,
                    off as i64,
                )
            };
            if w <= 0 {
                return Err(fail("write", if w < 0 { errno() } else { libc::ENOSPC }));
            }
            off += w as u64;
        }
        // The file takes the staged memory's place: hooked calls that count
        // meanwhile on other threads may lose an increment, nothing else
        // (no chunk exists before the file does). Mapping past the end of
        // the file is allowed; pages are backed by `grow` before first use.
        let base = unsafe {
            real::mmap(
                self.base.cast(),
                self.map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                fd.0,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            let e = errno();
            // Keep the range usable for counters whatever mmap left there.
            unsafe {
                real::mmap(
                    self.base.cast(),
                    self.map_len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            return Err(fail("map", e));
        }
        drop(fd);
        match publish(dirfd, &tmp, pid) {
            Ok(name) => {
                let path = format!("{shown}/{name}");
                let path_c = CString::new(path.as_bytes())
                    .map_err(|_| "output directory name contains a NUL byte".to_string())?;
                let _ = self.named.set(Named {
                    path,
                    path_c,
                    dev: st.st_dev,
                    ino: st.st_ino,
                });
                Ok(())
            }
            Err(e) => Err(fail("name", e)),
        }
    }

    /// The file's path, as shown to the user (its expected name until it exists).
    pub fn path(&self) -> String {
        match self.named.get() {
            Some(n) => n.path.clone(),
            None => format!("{}/{}.sst", self.shown_dir, self.pid),
        }
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

    /// Backs `[off, off+len)` with disk blocks, through an fd opened for this
    /// call only. False if the disk, the file size limit or the fd limit
    /// refuses (see [`TraceFile::last_errno`]); the traced program never sees
    /// the failure, and its errno is kept.
    pub fn grow(&self, off: u64, len: u64) -> bool {
        let Some(named) = self.named.get() else {
            self.last_errno.store(libc::ESTALE, Ordering::Relaxed);
            return false;
        };
        let saved = errno();
        // Near its fd limit the program needs every number, even for the
        // moment this fd lives (another of its threads may be opening).
        crate::fd_room::refresh_limit();
        if !crate::fd_room::room() {
            self.last_errno.store(libc::EMFILE, Ordering::Relaxed);
            return false;
        }
        let fd = unsafe {
            real::open(
                named.path_c.as_ptr(),
                libc::O_RDWR | libc::O_CLOEXEC | libc::O_NOFOLLOW,
                0,
            )
        };
        let ok = if fd < 0 {
            self.last_errno.store(errno(), Ordering::Relaxed);
            false
        } else {
            let fd = Fd(fd);
            let mut st: libc::stat = unsafe { core::mem::zeroed() };
            if unsafe { libc::fstat(fd.0, &mut st) } != 0
                || st.st_dev != named.dev
                || st.st_ino != named.ino
            {
                // Renamed away or replaced: never grow another file.
                self.last_errno.store(libc::ESTALE, Ordering::Relaxed);
                false
            } else {
                self.grow_fd(fd.0, off, len)
            }
        };
        set_errno(saved);
        ok
    }

    fn grow_fd(&self, fd: c_int, off: u64, len: u64) -> bool {
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
        let ok = match unsafe { libc::fallocate(fd, 0, off as i64, len as i64) } {
            0 => true,
            _ if matches!(errno(), libc::EOPNOTSUPP | libc::ENOSYS) => {
                self.grow_by_writing(fd, off, len)
            }
            _ => {
                self.last_errno.store(errno(), Ordering::Relaxed);
                false
            }
        };
        set_errno(saved);
        ok
    }

    /// For filesystems without fallocate: write zeros, which also allocates.
    fn grow_by_writing(&self, fd: c_int, mut off: u64, len: u64) -> bool {
        static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];
        let end = off + len;
        while off < end {
            let n = ((end - off) as usize).min(ZEROS.len());
            let w = unsafe { real::pwrite(fd, ZEROS.as_ptr().cast(), n, off as i64) };
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
}

/// Gives the finished temporary file its final name, `<pid>.sst` or the
/// first free `<pid>-N.sst` (a second image of the same pid after exec),
/// never replacing a file. Returns the name, or an errno.
fn publish(dirfd: c_int, tmp: &CStr, pid: u32) -> Result<String, c_int> {
    for n in 0..1000 {
        let name = if n == 0 {
            format!("{pid}.sst")
        } else {
            format!("{pid}-{n}.sst")
        };
        let c = CString::new(name.as_str()).expect("no NUL in a number");
        match rename_noreplace(dirfd, tmp, &c) {
            Ok(()) => return Ok(name),
            Err(libc::EEXIST) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(libc::EEXIST)
}

/// rename without replacing: renameat2(RENAME_NOREPLACE), or where the
/// filesystem lacks it, a hard link and unlink, or as a last resort a
/// check then a plain rename (one process per pid, so no one races us for
/// the name).
fn rename_noreplace(dirfd: c_int, from: &CStr, to: &CStr) -> Result<(), c_int> {
    // SAFETY: valid fds and C strings, here and below.
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            dirfd,
            from.as_ptr(),
            dirfd,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let e = errno();
    if !matches!(e, libc::EINVAL | libc::ENOSYS) {
        return Err(e);
    }
    if unsafe { libc::linkat(dirfd, from.as_ptr(), dirfd, to.as_ptr(), 0) } == 0 {
        unsafe { libc::unlinkat(dirfd, from.as_ptr(), 0) };
        return Ok(());
    }
    if errno() == libc::EEXIST {
        return Err(libc::EEXIST);
    }
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    if unsafe { libc::fstatat(dirfd, to.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } == 0 {
        return Err(libc::EEXIST);
    }
    if unsafe { libc::renameat(dirfd, from.as_ptr(), dirfd, to.as_ptr()) } == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_never_replace_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let c = CString::new(dir.path().to_str().unwrap()).unwrap();
        let dirfd = Fd(unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY) });
        std::fs::write(dir.path().join("7.sst"), b"earlier image").unwrap();
        std::fs::write(dir.path().join(".t"), b"new").unwrap();
        assert_eq!(publish(dirfd.0, c".t", 7).unwrap(), "7-1.sst");
        assert_eq!(
            std::fs::read(dir.path().join("7.sst")).unwrap(),
            b"earlier image"
        );
        assert_eq!(std::fs::read(dir.path().join("7-1.sst")).unwrap(), b"new");
        assert!(!dir.path().join(".t").exists());
    }

    #[test]
    fn directories_of_others_or_open_to_others_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("new");
        let c = CString::new(sub.to_str().unwrap()).unwrap();
        let old = unsafe { libc::umask(0) };
        let made = prepare_dir(&c);
        unsafe { libc::umask(old) };
        made.unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&sub).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = prepare_dir(&c).unwrap_err();
        assert!(
            e.contains("new") && e.contains("writable by group or others"),
            "{e}"
        );
        let mut st: libc::stat = unsafe { core::mem::zeroed() };
        unsafe { libc::stat(c.as_ptr(), &mut st) };
        st.st_mode = libc::S_IFDIR | 0o700;
        st.st_uid = unsafe { libc::geteuid() }.wrapping_add(1);
        let e = check_dir_owner(&st).unwrap_err();
        assert!(e.starts_with("belongs to uid"), "{e}");
    }
}
