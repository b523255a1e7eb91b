//! Codes stored in records: host operations, fd classes and filesystem types.

/// A family of hooked host calls. The code is stored in span records and indexes
/// the per-thread counters, so existing codes never change meaning.
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HostOp {
    Open = 0,
    Close = 1,
    Read = 2,
    Pread = 3,
    Readv = 4,
    Preadv = 5,
    Write = 6,
    Pwrite = 7,
    Fsync = 8,
    Fdatasync = 9,
    Mmap = 10,
    Poll = 11,
    Select = 12,
    EpollWait = 13,
    Recv = 14,
    SemWait = 15,
    CondWait = 16,
    Sleep = 17,
}

impl HostOp {
    /// Every op, in code order.
    pub const ALL: [HostOp; 18] = [
        HostOp::Open,
        HostOp::Close,
        HostOp::Read,
        HostOp::Pread,
        HostOp::Readv,
        HostOp::Preadv,
        HostOp::Write,
        HostOp::Pwrite,
        HostOp::Fsync,
        HostOp::Fdatasync,
        HostOp::Mmap,
        HostOp::Poll,
        HostOp::Select,
        HostOp::EpollWait,
        HostOp::Recv,
        HostOp::SemWait,
        HostOp::CondWait,
        HostOp::Sleep,
    ];

    pub fn from_code(code: u8) -> Option<HostOp> {
        Self::ALL.get(code as usize).copied()
    }

    pub fn name(self) -> &'static str {
        match self {
            HostOp::Open => "open",
            HostOp::Close => "close",
            HostOp::Read => "read",
            HostOp::Pread => "pread",
            HostOp::Readv => "readv",
            HostOp::Preadv => "preadv",
            HostOp::Write => "write",
            HostOp::Pwrite => "pwrite",
            HostOp::Fsync => "fsync",
            HostOp::Fdatasync => "fdatasync",
            HostOp::Mmap => "mmap",
            HostOp::Poll => "poll",
            HostOp::Select => "select",
            HostOp::EpollWait => "epoll_wait",
            HostOp::Recv => "recv",
            HostOp::SemWait => "sem_wait",
            HostOp::CondWait => "cond_wait",
            HostOp::Sleep => "sleep",
        }
    }

    /// Calls that move data to or from an fd.
    #[inline]
    pub fn is_read(self) -> bool {
        matches!(
            self,
            HostOp::Read | HostOp::Pread | HostOp::Readv | HostOp::Preadv | HostOp::Recv
        )
    }

    #[inline]
    pub fn is_write(self) -> bool {
        matches!(self, HostOp::Write | HostOp::Pwrite)
    }

    /// Calls whose whole purpose is to wait for something else.
    pub fn is_wait(self) -> bool {
        matches!(
            self,
            HostOp::Poll
                | HostOp::Select
                | HostOp::EpollWait
                | HostOp::SemWait
                | HostOp::CondWait
                | HostOp::Sleep
        )
    }
}

/// What an fd refers to, as classified by `fstat` and `getsockopt(SO_DOMAIN)`.
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FdClass {
    Other = 0,
    File = 1,
    Dir = 2,
    /// Pipes and FIFOs; the inode identifies the pipe across processes.
    Pipe = 3,
    UnixSocket = 4,
    TcpSocket = 5,
    OtherSocket = 6,
    CharDevice = 7,
    BlockDevice = 8,
}

impl FdClass {
    pub fn from_code(code: u8) -> FdClass {
        match code {
            1 => FdClass::File,
            2 => FdClass::Dir,
            3 => FdClass::Pipe,
            4 => FdClass::UnixSocket,
            5 => FdClass::TcpSocket,
            6 => FdClass::OtherSocket,
            7 => FdClass::CharDevice,
            8 => FdClass::BlockDevice,
            _ => FdClass::Other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FdClass::Other => "other",
            FdClass::File => "file",
            FdClass::Dir => "dir",
            FdClass::Pipe => "pipe",
            FdClass::UnixSocket => "unix-socket",
            FdClass::TcpSocket => "tcp-socket",
            FdClass::OtherSocket => "socket",
            FdClass::CharDevice => "char-device",
            FdClass::BlockDevice => "block-device",
        }
    }

    pub fn is_socket(self) -> bool {
        matches!(
            self,
            FdClass::UnixSocket | FdClass::TcpSocket | FdClass::OtherSocket
        )
    }
}

/// The filesystem type name for a `statfs.f_type` magic (see `man 2 statfs`).
/// ext2, ext3 and ext4 share one magic; it is reported as ext4.
pub fn fs_name(magic: u32) -> &'static str {
    match magic {
        0xEF53 => "ext4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x6969 => "nfs",
        0x6573_5546 => "fuse",
        0x0BD0_0BD0 => "lustre",
        0x794C_7630 => "overlay",
        0x0102_1994 => "tmpfs",
        0x2FC1_2FC1 => "zfs",
        0xFE53_4D42 => "smb2",
        0xFF53_4D42 => "cifs",
        0x517B => "smb",
        0x4750_4653 => "gpfs",
        0x1970_0426 => "beegfs",
        0x00C3_6400 => "ceph",
        0x5346_4846 => "wekafs",
        0x6A65_6A65 => "virtiofs",
        0x0102_1997 => "9p",
        0x2011_BAB0 => "exfat",
        0x4D44 => "vfat",
        0x5346_544E => "ntfs",
        0x7371_7368 => "squashfs",
        0x9FA0 => "proc",
        0x6265_6572 => "sysfs",
        0x1373 => "devfs",
        0x0000_9fa2 => "usbdevfs",
        0x5049_5045 => "pipefs",
        0x534F_434B => "sockfs",
        0x0958_458F => "hugetlbfs",
        0x6264_6374 => "bdev",
        0x6364_6574 => "ramfs",
        0 => "unknown",
        _ => "other",
    }
}

/// Network or distributed filesystems: reads there depend on a remote server.
pub fn fs_is_remote(magic: u32) -> bool {
    matches!(
        fs_name(magic),
        "nfs"
            | "fuse"
            | "lustre"
            | "smb2"
            | "cifs"
            | "smb"
            | "gpfs"
            | "beegfs"
            | "ceph"
            | "wekafs"
            | "9p"
            | "virtiofs"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_codes_round_trip() {
        for (i, op) in HostOp::ALL.iter().enumerate() {
            assert_eq!(*op as usize, i);
            assert_eq!(HostOp::from_code(i as u8), Some(*op));
        }
        assert_eq!(HostOp::from_code(HostOp::ALL.len() as u8), None);
    }

    #[test]
    fn fd_class_round_trip() {
        for code in 0..=8u8 {
            assert_eq!(FdClass::from_code(code) as u8, code);
        }
        assert_eq!(FdClass::from_code(200), FdClass::Other);
    }

    #[test]
    fn fs_names() {
        assert_eq!(fs_name(0xEF53), "ext4");
        assert_eq!(fs_name(0x6969), "nfs");
        assert_eq!(fs_name(0x0102_1994), "tmpfs");
        assert!(fs_is_remote(0x6969));
        assert!(!fs_is_remote(0xEF53));
        assert_eq!(fs_name(0x1234_5678), "other");
    }
}
