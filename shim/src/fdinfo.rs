//! Classifying fds: what a span's fd refers to (a file with its path and
//! filesystem type, a pipe, a socket...). Done on the cold path only, once per
//! distinct (device, inode): a small lock-free table remembers which objects
//! this process already described in its trace.
//!
//! An inode is not a file for good: ext4 gives a file created after another
//! was deleted the freed inode at once, and its I/O would count to the
//! deleted file's path. So an fd opened with O_CREAT is checked once: if its
//! path is not the one its inode was described with, it is a new object.

use core::ffi::c_int;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering, fence};

use stallscope_format::FdClass;
use stallscope_format::records::Object;

use crate::clock;
use crate::recorder::Writer;

const TABLE: usize = 4096;
const PROBES: usize = 16;
/// Marks a bucket whose key is being written.
const WRITING: u32 = u32::MAX;

/// Paths as opened, per fd number (absolute paths only), so describing a
/// file rarely needs readlink(/proc/self/fd/N): 3 µs there, against 0.9 µs for
/// the stat() that checks a remembered path still names the fd's file.
const STASH_FDS: usize = 1024;
const STASH_WORDS: usize = 31;
const STASH_BYTES: usize = (STASH_WORDS - 1) * 8;
/// Word 0: length (0 = nothing known), the `CREATED` and `OPENED` bits; then the bytes,
/// 8 per word.
static STASH: [[AtomicU64; STASH_WORDS]; STASH_FDS] =
    [const { [const { AtomicU64::new(0) }; STASH_WORDS] }; STASH_FDS];

/// In a stash's word 0: the fd was opened with O_CREAT, and its file not yet
/// checked against the object its inode names (see the module comment).
const CREATED: u64 = 1 << 63;
/// In a stash's word 0: the fd came from a hooked open (a file, a device or
/// a FIFO; never a pipe or socket), whatever its path.
const OPENED: u64 = 1 << 62;
/// In a stash's word 0: the bits that hold the path's length.
const LEN: u64 = !(CREATED | OPENED);

/// Remembers the path an fd was opened with (called on every open), and
/// whether the open may have created the file.
#[inline]
pub fn remember_path(fd: c_int, path: *const core::ffi::c_char, created: bool) {
    if fd < 0 || fd as usize >= STASH_FDS || path.is_null() {
        return;
    }
    let slot = &STASH[fd as usize];
    let created = if created { CREATED | OPENED } else { OPENED };
    slot[0].store(created, Ordering::Relaxed);
    // SAFETY: `path` is the NUL-terminated string the program passed to open;
    // strlen stops at its NUL and the copy below never reads past it.
    let p = path as *const u8;
    if unsafe { *p } != b'/' {
        return; // relative: the fd's directory is not known here
    }
    let len = unsafe { libc::strlen(path) };
    if len > STASH_BYTES {
        return; // too long to keep
    }
    // Whole words, then the tail: a word at a time was 8x fewer instructions
    // per open than a byte at a time (Python opens a file per sample).
    let bytes = unsafe { core::slice::from_raw_parts(p, len) };
    let mut chunks = bytes.chunks_exact(8);
    let mut w = 1;
    for c in &mut chunks {
        let mut b = [0u8; 8];
        b.copy_from_slice(c);
        slot[w].store(u64::from_le_bytes(b), Ordering::Relaxed);
        w += 1;
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let mut b = [0u8; 8];
        b[..tail.len()].copy_from_slice(tail);
        slot[w].store(u64::from_le_bytes(b), Ordering::Relaxed);
    }
    slot[0].store(len as u64 | created, Ordering::Release);
}

/// Whether `fd` was opened with O_CREAT since its file was last checked;
/// clears the mark.
#[inline]
fn take_created(fd: c_int) -> bool {
    if fd < 0 || fd as usize >= STASH_FDS {
        return false;
    }
    let w = &STASH[fd as usize][0];
    w.load(Ordering::Relaxed) & CREATED != 0
        && w.fetch_and(!CREATED, Ordering::Relaxed) & CREATED != 0
}

/// Whether `fd` came from a hooked open and is not closed since: runs of
/// short calls (`burst`) are kept for files only, where a pipe's or a
/// socket's would be a producer's pace, not storage.
#[inline(always)]
pub fn opened(fd: c_int) -> bool {
    fd >= 0
        && (fd as usize) < STASH_FDS
        && STASH[fd as usize][0].load(Ordering::Relaxed) & OPENED != 0
}

/// The path `fd` was opened with (absolute), unchecked, into `out`; 0 if
/// none is remembered or it does not fit. For naming a folder: a wrong
/// path costs a label, and checking it would cost a stat per file.
pub fn stashed(fd: c_int, out: &mut [u8]) -> usize {
    if !opened(fd) {
        return 0;
    }
    let slot = &STASH[fd as usize];
    let len = (slot[0].load(Ordering::Acquire) & LEN) as usize;
    if len > out.len() {
        return 0;
    }
    // A word at a time: this runs once per file of a run over files.
    for (k, chunk) in out[..len].chunks_mut(8).enumerate() {
        let word = slot[k + 1].load(Ordering::Relaxed).to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
    len
}

/// Returns the object id of the folder at `path`, describing it in the
/// trace on first sight (a `Dir` object). 0 if it cannot be stat'ed.
pub fn folder_object(w: &mut Writer<'_>, path: &[u8]) -> u32 {
    let mut cpath = [0u8; 4096];
    if path.is_empty() || path.len() >= cpath.len() {
        return 0;
    }
    cpath[..path.len()].copy_from_slice(path);
    // SAFETY: plain stat of a NUL-terminated path into a local.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    if unsafe { libc::stat(cpath.as_ptr().cast(), &mut st) } != 0 {
        return 0;
    }
    let (dev, ino) = (st.st_dev, st.st_ino);
    if let Some((_, id)) = lookup(dev, ino) {
        return id;
    }
    let fs_magic = fs_type_cached(dev, || {
        // SAFETY: plain statfs of a NUL-terminated path into a local.
        let mut sfs: libc::statfs = unsafe { core::mem::zeroed() };
        if unsafe { libc::statfs(cpath.as_ptr().cast(), &mut sfs) } != 0 {
            return 0;
        }
        sfs.f_type as u32
    });
    describe(w, (dev, ino), FdClass::Dir, fs_magic, path, -1, None)
}

/// Writes a new object's record and remembers it (in bucket `at`, where it
/// replaces an object of the same inode): its id, 0 if it cannot be written.
fn describe(
    w: &mut Writer<'_>,
    (dev, ino): (u64, u64),
    class: FdClass,
    fs_magic: u32,
    path: &[u8],
    fd: c_int,
    at: Option<usize>,
) -> u32 {
    let id = w.next_object();
    let obj = Object {
        class: class as u8,
        obj: id,
        ts: clock::mono_ns(),
        dev,
        ino,
        fs_magic,
        path: w.string(path),
        fd,
    };
    if !w.meta(Object::LEN, &mut |b| obj.encode(b)) {
        return 0;
    }
    remember(dev, ino, path_hash(path), id, at);
    id
}

/// Forgets the path of a closed fd.
#[inline]
pub fn forget_path(fd: c_int) {
    if fd >= 0 && (fd as usize) < STASH_FDS {
        STASH[fd as usize][0].store(0, Ordering::Relaxed);
    }
}

/// The remembered path of `fd` into `out` (NUL-terminated), if it still names
/// the file (dev, ino): the stash can be stale when an fd was closed or
/// replaced by calls the shim does not see.
fn stashed_path(fd: c_int, dev: u64, ino: u64, out: &mut [u8]) -> usize {
    // Room for the NUL.
    let room = out.len().saturating_sub(1);
    let len = stashed(fd, &mut out[..room]);
    if len == 0 {
        return 0;
    }
    out[len] = 0;
    // SAFETY: plain stat of a NUL-terminated path into a local.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    let ok = unsafe { libc::stat(out.as_ptr().cast(), &mut st) } == 0
        && st.st_dev == dev
        && st.st_ino == ino;
    if ok { len } else { 0 }
}

static KEY_INO: [AtomicU64; TABLE] = [const { AtomicU64::new(0) }; TABLE];
static KEY_DEV: [AtomicU64; TABLE] = [const { AtomicU64::new(0) }; TABLE];
/// `path_hash` of the path each object was described with.
static KEY_PATH: [AtomicU64; TABLE] = [const { AtomicU64::new(0) }; TABLE];
static IDS: [AtomicU32; TABLE] = [const { AtomicU32::new(0) }; TABLE];

/// Something was put in the tables since the last reset.
static FILLED: AtomicBool = AtomicBool::new(false);

/// Forgets every described object (a forked child starts a new file). The
/// tables are 112 KB, and a forked child shares their pages with its parent
/// until it writes them: each page written is a page fault in the child,
/// before it does anything else (issue 18, item 2). So nothing is written
/// unless something was put there, and then only the slots in use.
pub fn reset() {
    if !FILLED.swap(false, Ordering::Relaxed) {
        return;
    }
    for d in &FS_DEV {
        if d.load(Ordering::Relaxed) != FS_EMPTY {
            d.store(FS_EMPTY, Ordering::Relaxed);
        }
    }
    for table in [&KEY_DEV, &KEY_INO, &KEY_PATH] {
        for k in table {
            if k.load(Ordering::Relaxed) != 0 {
                k.store(0, Ordering::Relaxed);
            }
        }
    }
    for id in &IDS {
        if id.load(Ordering::Relaxed) != 0 {
            id.store(0, Ordering::Relaxed);
        }
    }
}

fn bucket(dev: u64, ino: u64) -> usize {
    let h = (dev ^ ino.rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 40) as usize % TABLE
}

/// The bucket and object id of (dev, ino), if described.
fn lookup(dev: u64, ino: u64) -> Option<(usize, u32)> {
    let b = bucket(dev, ino);
    for i in 0..PROBES {
        let k = (b + i) % TABLE;
        let id = IDS[k].load(Ordering::Acquire);
        if id == 0 {
            return None;
        }
        if id != WRITING
            && KEY_INO[k].load(Ordering::Relaxed) == ino
            && KEY_DEV[k].load(Ordering::Relaxed) == dev
        {
            return Some((k, id));
        }
    }
    None
}

/// Remembers object `id` for (dev, ino), described with a path of hash
/// `path`: in bucket `at` when it replaces the object there.
fn remember(dev: u64, ino: u64, path: u64, id: u32, at: Option<usize>) {
    FILLED.store(true, Ordering::Relaxed);
    let b = bucket(dev, ino);
    let fill = |k: usize| {
        KEY_INO[k].store(ino, Ordering::Relaxed);
        KEY_DEV[k].store(dev, Ordering::Relaxed);
        KEY_PATH[k].store(path, Ordering::Relaxed);
        IDS[k].store(id, Ordering::Release);
    };
    if at.is_none() {
        for i in 0..PROBES {
            let k = (b + i) % TABLE;
            // Claim an empty bucket, fill in the key, then publish the id.
            if IDS[k]
                .compare_exchange(0, WRITING, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                fill(k);
                return;
            }
        }
    }
    // Full around this bucket: replace the first entry. Objects of closed
    // files are rarely met again, and a forgotten one is only described twice.
    let k = at.unwrap_or(b % TABLE);
    let cur = IDS[k].load(Ordering::Relaxed);
    if cur != WRITING
        && IDS[k]
            .compare_exchange(cur, WRITING, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    {
        fill(k);
    }
}

/// A path's fingerprint for the table (FNV-1a).
fn path_hash(path: &[u8]) -> u64 {
    path.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The path of `fd`'s file (dev, ino) into `out`: the one it was opened
/// with if still right, else the kernel's.
fn current_path(fd: c_int, dev: u64, ino: u64, out: &mut [u8]) -> usize {
    match stashed_path(fd, dev, ino, out) {
        0 => fd_path(fd, out),
        n => n,
    }
}

/// Returns the object id for `fd`, describing it in the trace on first sight.
/// 0 if the fd is not open.
pub fn object_for(w: &mut Writer<'_>, fd: c_int) -> u32 {
    // SAFETY: plain fstat into a local.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return 0;
    }
    let (dev, ino) = (st.st_dev, st.st_ino);
    let known = lookup(dev, ino);
    let created = take_created(fd);
    let mut path = [0u8; 4096];
    let mut n = None;
    if let Some((k, id)) = known {
        if !created {
            return id;
        }
        // Opened with O_CREAT: the same file again (a checkpoint rewritten
        // in place), or a new one on a deleted file's inode.
        let len = current_path(fd, dev, ino, &mut path);
        if KEY_PATH[k].load(Ordering::Relaxed) == path_hash(&path[..len]) {
            return id;
        }
        n = Some(len);
    }
    let n = n.unwrap_or_else(|| current_path(fd, dev, ino, &mut path));
    let class = classify(fd, st.st_mode);
    let fs_magic = match class {
        FdClass::File | FdClass::Dir => fs_type_cached(dev, || fs_type(fd)),
        _ => 0,
    };
    let at = known.map(|k| k.0);
    describe(w, (dev, ino), class, fs_magic, &path[..n], fd, at)
}

fn classify(fd: c_int, mode: libc::mode_t) -> FdClass {
    match mode & libc::S_IFMT {
        libc::S_IFREG => FdClass::File,
        libc::S_IFDIR => FdClass::Dir,
        libc::S_IFIFO => FdClass::Pipe,
        libc::S_IFCHR => FdClass::CharDevice,
        libc::S_IFBLK => FdClass::BlockDevice,
        libc::S_IFSOCK => match (sockopt(fd, libc::SO_DOMAIN), sockopt(fd, libc::SO_TYPE)) {
            (Some(libc::AF_UNIX), _) => FdClass::UnixSocket,
            (Some(libc::AF_INET | libc::AF_INET6), Some(libc::SOCK_STREAM)) => FdClass::TcpSocket,
            _ => FdClass::OtherSocket,
        },
        _ => FdClass::Other,
    }
}

fn sockopt(fd: c_int, opt: c_int) -> Option<c_int> {
    let mut v: c_int = 0;
    let mut len = size_of::<c_int>() as libc::socklen_t;
    // SAFETY: out-parameters sized for an int.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            (&mut v as *mut c_int).cast(),
            &mut len,
        )
    };
    (r == 0).then_some(v)
}

/// Filesystem type per device, so each device costs one fstatfs.
const FS_CACHE: usize = 16;
/// A slot's device: `FS_EMPTY`, `FS_CLAIMED` while a writer fills it, or a device.
static FS_DEV: [AtomicU64; FS_CACHE] = [const { AtomicU64::new(FS_EMPTY) }; FS_CACHE];
static FS_MAGIC: [AtomicU32; FS_CACHE] = [const { AtomicU32::new(0) }; FS_CACHE];
const FS_EMPTY: u64 = u64::MAX;
const FS_CLAIMED: u64 = u64::MAX - 1;

fn fs_type_cached(dev: u64, fs_type: impl FnOnce() -> u32) -> u32 {
    let k = (dev as usize).wrapping_mul(0x9E37_79B9) % FS_CACHE;
    let seen = FS_DEV[k].load(Ordering::Acquire);
    if seen == dev {
        let magic = FS_MAGIC[k].load(Ordering::Relaxed);
        // Still this device after reading the magic: no writer took the slot
        // in between (a seqlock read).
        fence(Ordering::Acquire);
        if FS_DEV[k].load(Ordering::Relaxed) == dev {
            return magic;
        }
    }
    let magic = fs_type();
    FILLED.store(true, Ordering::Relaxed);
    // One writer at a time per slot: it claims the slot, then fills it.
    if magic != 0
        && seen != FS_CLAIMED
        && FS_DEV[k]
            .compare_exchange(seen, FS_CLAIMED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    {
        fence(Ordering::Release);
        FS_MAGIC[k].store(magic, Ordering::Relaxed);
        FS_DEV[k].store(dev, Ordering::Release);
    }
    magic
}

fn fs_type(fd: c_int) -> u32 {
    // SAFETY: plain fstatfs into a local.
    let mut sfs: libc::statfs = unsafe { core::mem::zeroed() };
    if unsafe { libc::fstatfs(fd, &mut sfs) } != 0 {
        return 0;
    }
    sfs.f_type as u32
}

/// The fd's path from /proc/self/fd (for pipes and sockets: "pipe:[ino]").
pub fn fd_path(fd: c_int, out: &mut [u8]) -> usize {
    let mut link = [0u8; 32];
    let prefix = b"/proc/self/fd/";
    link[..prefix.len()].copy_from_slice(prefix);
    let mut digits = [0u8; 12];
    let mut v = fd as u32;
    let mut nd = 0;
    loop {
        digits[nd] = b'0' + (v % 10) as u8;
        nd += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for i in 0..nd {
        link[prefix.len() + i] = digits[nd - 1 - i];
    }
    // SAFETY: link is NUL-terminated (zero-filled), out is a writable buffer.
    let n = unsafe { libc::readlink(link.as_ptr().cast(), out.as_mut_ptr().cast(), out.len()) };
    if n < 0 { 0 } else { n as usize }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables are process-wide: tests that reset them run one at a time.
    static TABLES: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn id(found: Option<(usize, u32)>) -> u32 {
        found.map_or(0, |f| f.1)
    }

    #[test]
    fn table_remembers_and_resets() {
        let _g = TABLES.lock().unwrap_or_else(|e| e.into_inner());
        assert_eq!(lookup(1, 2), None);
        remember(1, 2, 0, 7, None);
        remember(1, 3, 0, 8, None);
        assert_eq!(id(lookup(1, 2)), 7);
        assert_eq!(id(lookup(1, 3)), 8);
        assert_eq!(lookup(2, 2), None);
        // A new object for the inode takes its bucket.
        let at = lookup(1, 2).map(|f| f.0);
        remember(1, 2, 0, 9, at);
        assert_eq!(id(lookup(1, 2)), 9);
        assert_eq!(id(lookup(1, 3)), 8);
        reset();
        assert_eq!(lookup(1, 2), None);
    }

    #[test]
    fn a_full_table_keeps_remembering() {
        let _g = TABLES.lock().unwrap_or_else(|e| e.into_inner());
        for ino in 1..(TABLE as u64 * 3) {
            remember(9, ino, 0, ino as u32, None);
            assert_eq!(id(lookup(9, ino)), ino as u32, "the newest object is found");
        }
        reset();
        // Only slots in use are written, and every one of them is cleared.
        let zero = |t: &[AtomicU64]| t.iter().all(|k| k.load(Ordering::Relaxed) == 0);
        assert!(zero(&KEY_DEV) && zero(&KEY_INO) && zero(&KEY_PATH));
        assert!(IDS.iter().all(|i| i.load(Ordering::Relaxed) == 0));
        assert!(FS_DEV.iter().all(|d| d.load(Ordering::Relaxed) == FS_EMPTY));
    }

    #[test]
    fn an_o_creat_open_is_marked_once() {
        use std::os::fd::AsRawFd;
        let f = tempfile::tempfile().unwrap();
        let fd = f.as_raw_fd();
        remember_path(fd, c"/x/created.bin".as_ptr(), true);
        assert!(take_created(fd));
        assert!(!take_created(fd), "checked once");
        remember_path(fd, c"relative.bin".as_ptr(), true);
        assert!(take_created(fd), "a relative path is marked too");
        remember_path(fd, c"/x/read.bin".as_ptr(), false);
        assert!(!take_created(fd));
        forget_path(fd);
    }

    #[test]
    fn opened_fds_are_known_until_closed() {
        use std::os::fd::AsRawFd;
        let f = tempfile::tempfile().unwrap();
        let fd = f.as_raw_fd();
        forget_path(fd);
        assert!(!opened(fd), "not from a hooked open");
        remember_path(fd, c"relative.bin".as_ptr(), false);
        assert!(opened(fd), "whatever the path");
        assert!(!take_created(fd));
        let mut out = [0u8; 64];
        assert_eq!(stashed(fd, &mut out), 0, "a relative path is not kept");
        // Whole words and a tail, unchecked against the file.
        for path in [
            c"/data/x",
            c"/data/train/00017.jpg",
            c"/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p",
        ] {
            remember_path(fd, path.as_ptr(), false);
            let n = stashed(fd, &mut out);
            assert_eq!(&out[..n], path.to_bytes());
        }
        assert_eq!(stashed(fd, &mut [0u8; 8]), 0, "too long for the buffer");
        forget_path(fd);
        assert!(!opened(fd));
        assert_eq!(stashed(fd, &mut out), 0);
        assert!(!opened(-1) && !opened(STASH_FDS as c_int));
    }

    #[test]
    fn remembered_paths_are_checked_against_the_file() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.bin");
        let b = dir.path().join("b.bin");
        std::fs::write(&a, b"a").unwrap();
        std::fs::write(&b, b"b").unwrap();
        let f = std::fs::File::open(&a).unwrap();
        let fd = f.as_raw_fd();
        let mut st: libc::stat = unsafe { core::mem::zeroed() };
        unsafe { libc::fstat(fd, &mut st) };
        let ca = std::ffi::CString::new(a.to_str().unwrap()).unwrap();
        remember_path(fd, ca.as_ptr(), false);
        let mut out = [0u8; 4096];
        let n = stashed_path(fd, st.st_dev, st.st_ino, &mut out);
        assert_eq!(&out[..n], a.to_str().unwrap().as_bytes());
        // A stale entry (the fd now names another file) is refused.
        let cb = std::ffi::CString::new(b.to_str().unwrap()).unwrap();
        remember_path(fd, cb.as_ptr(), false);
        assert_eq!(stashed_path(fd, st.st_dev, st.st_ino, &mut out), 0);
        // Relative and forgotten paths give nothing.
        remember_path(fd, c"relative/path".as_ptr(), false);
        assert_eq!(stashed_path(fd, st.st_dev, st.st_ino, &mut out), 0);
        remember_path(fd, ca.as_ptr(), false);
        forget_path(fd);
        assert_eq!(stashed_path(fd, st.st_dev, st.st_ino, &mut out), 0);
    }

    /// The filesystem type is kept per device: a device's slot answers for
    /// it alone, and a device with the same slot takes it over.
    #[test]
    fn filesystem_types_are_kept_per_device() {
        use std::os::fd::AsRawFd;
        let _g = TABLES.lock().unwrap_or_else(|e| e.into_inner());
        reset();
        let proc_fd = std::fs::File::open("/proc/self/stat").unwrap();
        let dir = std::env::temp_dir();
        let other = std::fs::File::open(&dir).unwrap();
        let (p, o) = (fs_type(proc_fd.as_raw_fd()), fs_type(other.as_raw_fd()));
        assert!(
            p != 0 && p != o,
            "/proc and {} on one filesystem type",
            dir.display()
        );
        let slot = |d: u64| (d as usize).wrapping_mul(0x9E37_79B9) % FS_CACHE;
        let d1 = 1u64;
        let d2 = (2..).find(|&d| slot(d) == slot(d1)).unwrap();
        let (pf, of) = (proc_fd.as_raw_fd(), other.as_raw_fd());
        assert_eq!(fs_type_cached(d1, || fs_type(pf)), p);
        // A hit: the device's type, whatever fd asks.
        assert_eq!(fs_type_cached(d1, || fs_type(of)), p);
        // Another device in that slot is described from its own fd, and stays.
        assert_eq!(fs_type_cached(d2, || fs_type(of)), o);
        assert_eq!(fs_type_cached(d2, || fs_type(pf)), o);
        reset();
    }

    #[test]
    fn classifies_common_fds() {
        let f = std::fs::File::open("/proc/self/stat").unwrap();
        use std::os::fd::AsRawFd;
        let mut st: libc::stat = unsafe { core::mem::zeroed() };
        unsafe { libc::fstat(f.as_raw_fd(), &mut st) };
        assert_eq!(classify(f.as_raw_fd(), st.st_mode), FdClass::File);
        let mut fds = [0; 2];
        unsafe { libc::pipe(fds.as_mut_ptr()) };
        unsafe { libc::fstat(fds[0], &mut st) };
        assert_eq!(classify(fds[0], st.st_mode), FdClass::Pipe);
        let mut buf = [0u8; 64];
        let n = fd_path(fds[0], &mut buf);
        assert!(
            buf[..n].starts_with(b"pipe:["),
            "{:?}",
            std::str::from_utf8(&buf[..n])
        );
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        unsafe { libc::fstat(a.as_raw_fd(), &mut st) };
        assert_eq!(classify(a.as_raw_fd(), st.st_mode), FdClass::UnixSocket);
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }
}
