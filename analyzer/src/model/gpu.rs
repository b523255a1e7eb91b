//! GPU side: devices, streams and the work that ran on them.

use super::{Ns, StrId};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GpuOpKind {
    Kernel,
    Memcpy,
    Memset,
}

/// Direction of a copy (CUPTI's CUpti_ActivityMemcpyKind codes, kept as is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CopyKind(pub u8);

impl CopyKind {
    pub const UNKNOWN: CopyKind = CopyKind(0);
    pub const HTOD: CopyKind = CopyKind(1);
    pub const DTOH: CopyKind = CopyKind(2);
    pub const DTOD: CopyKind = CopyKind(8);
    pub const HTOH: CopyKind = CopyKind(9);
    pub const PTOP: CopyKind = CopyKind(10);

    pub fn name(self) -> &'static str {
        match self.0 {
            1 => "HtoD",
            2 => "DtoH",
            3 => "HtoA",
            4 => "AtoH",
            5 => "AtoA",
            6 => "AtoD",
            7 => "DtoA",
            8 => "DtoD",
            9 => "HtoH",
            10 => "PtoP",
            _ => "unknown",
        }
    }
}

/// Kind of memory (CUPTI's CUpti_ActivityMemoryKind codes, kept as is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MemKind(pub u8);

impl MemKind {
    pub const UNKNOWN: MemKind = MemKind(0);
    pub const PAGEABLE: MemKind = MemKind(1);
    pub const PINNED: MemKind = MemKind(2);
    pub const DEVICE: MemKind = MemKind(3);
    pub const ARRAY: MemKind = MemKind(4);
    pub const MANAGED: MemKind = MemKind(5);

    pub fn name(self) -> &'static str {
        match self.0 {
            1 => "pageable",
            2 => "pinned",
            3 => "device",
            4 => "array",
            5 => "managed",
            6 => "device-static",
            7 => "managed-static",
            _ => "unknown",
        }
    }
}

/// Numeric class of a kernel, from its name.
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum Precision {
    /// Not classified yet, or not a kernel.
    #[default]
    Unknown,
    /// FP32 GEMM/conv on SIMT cores (sgemm, no tensor cores).
    Fp32,
    Tf32,
    Fp16,
    Bf16,
    Fp8,
    Int8,
    /// Elementwise, reductions, norms, copies: everything that is not GEMM/conv.
    NonGemm,
    /// Collective communication (NCCL/RCCL).
    Comm,
}

impl Precision {
    pub const ALL: [Precision; 8] = [
        Precision::Fp32,
        Precision::Tf32,
        Precision::Fp16,
        Precision::Bf16,
        Precision::Fp8,
        Precision::Int8,
        Precision::NonGemm,
        Precision::Comm,
    ];

    /// The class with code `c` (`p as u8`); `Unknown` for codes of none.
    #[inline]
    pub fn from_code(c: u8) -> Precision {
        match c {
            1 => Precision::Fp32,
            2 => Precision::Tf32,
            3 => Precision::Fp16,
            4 => Precision::Bf16,
            5 => Precision::Fp8,
            6 => Precision::Int8,
            7 => Precision::NonGemm,
            8 => Precision::Comm,
            _ => Precision::Unknown,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Precision::Unknown => "unknown",
            Precision::Fp32 => "fp32",
            Precision::Tf32 => "tf32",
            Precision::Fp16 => "fp16",
            Precision::Bf16 => "bf16",
            Precision::Fp8 => "fp8",
            Precision::Int8 => "int8",
            Precision::NonGemm => "non_gemm",
            Precision::Comm => "comm",
        }
    }
}

/// One piece of GPU work on a stream. There are tens of millions of these, so
/// an op is 32 bytes: its kind, precision and copy kinds share one word with
/// a kernel's launch configuration or a copy's byte count.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct GpuOp {
    pub start: Ns,
    pub end: Ns,
    /// Bits 62-63 the kind, 58-61 the precision, 54-57 the copy kind, 50-53
    /// and 46-49 the source and destination memory kinds; bits 0-45 a
    /// kernel's index into `Gpu::launch_configs` (u32::MAX if unknown), or the
    /// bytes a copy or memset moved.
    info: u64,
    /// Correlation id linking the op to its launching API call (0 = none).
    pub corr: u32,
    /// Kernel name, or a description for copies and memsets.
    pub name: StrId,
}

const KIND_SHIFT: u32 = 62;
const PRECISION_SHIFT: u32 = 58;
const COPY_SHIFT: u32 = 54;
const SRC_SHIFT: u32 = 50;
const DST_SHIFT: u32 = 46;
const NIBBLE: u64 = 0xf;
/// The payload: a launch index, or bytes (64 TiB at most).
const PAYLOAD: u64 = (1 << DST_SHIFT) - 1;

impl GpuOp {
    /// An op of `kind` with nothing else known: no bytes, launch config,
    /// copy kinds or precision (readers fill in what they have).
    pub fn new(kind: GpuOpKind, start: Ns, end: Ns, corr: u32, name: StrId) -> GpuOp {
        let code = match kind {
            GpuOpKind::Kernel => 0,
            GpuOpKind::Memcpy => 1,
            GpuOpKind::Memset => 2,
        };
        let payload = if kind == GpuOpKind::Kernel {
            u32::MAX as u64
        } else {
            0
        };
        GpuOp {
            start,
            end,
            info: (code << KIND_SHIFT) | payload,
            corr,
            name,
        }
    }

    #[inline]
    pub fn kind(&self) -> GpuOpKind {
        match self.info >> KIND_SHIFT {
            0 => GpuOpKind::Kernel,
            1 => GpuOpKind::Memcpy,
            _ => GpuOpKind::Memset,
        }
    }

    #[inline]
    fn nibble(&self, shift: u32) -> u8 {
        ((self.info >> shift) & NIBBLE) as u8
    }

    #[inline]
    fn set_nibble(&mut self, shift: u32, v: u8) {
        self.info = (self.info & !(NIBBLE << shift)) | ((v as u64 & NIBBLE) << shift);
    }

    /// The numeric class a reader gave the op (`Unknown` if none).
    #[inline]
    pub fn precision(&self) -> Precision {
        Precision::from_code(self.nibble(PRECISION_SHIFT))
    }

    pub fn set_precision(&mut self, p: Precision) {
        self.set_nibble(PRECISION_SHIFT, p as u8);
    }

    /// A copy's direction (`UNKNOWN` for kernels and memsets).
    #[inline]
    pub fn copy(&self) -> CopyKind {
        CopyKind(self.nibble(COPY_SHIFT))
    }

    /// The memory a copy reads from.
    #[inline]
    pub fn src(&self) -> MemKind {
        MemKind(self.nibble(SRC_SHIFT))
    }

    /// The memory a copy or memset writes to.
    #[inline]
    pub fn dst(&self) -> MemKind {
        MemKind(self.nibble(DST_SHIFT))
    }

    /// Sets a copy's direction and memory kinds. Codes CUPTI does not define
    /// (16 and over) are kept as unknown, whose names they would have had.
    pub fn with_copy(mut self, copy: CopyKind, src: MemKind, dst: MemKind) -> GpuOp {
        let known = |c: u8| if u64::from(c) > NIBBLE { 0 } else { c };
        self.set_nibble(COPY_SHIFT, known(copy.0));
        self.set_nibble(SRC_SHIFT, known(src.0));
        self.set_nibble(DST_SHIFT, known(dst.0));
        self
    }

    /// Bytes copied or set; 0 for kernels.
    #[inline]
    pub fn bytes(&self) -> u64 {
        if self.kind() == GpuOpKind::Kernel {
            0
        } else {
            self.info & PAYLOAD
        }
    }

    /// A kernel's index into `Gpu::launch_configs`; u32::MAX if unknown, and
    /// for copies and memsets.
    #[inline]
    pub fn launch(&self) -> u32 {
        if self.kind() == GpuOpKind::Kernel {
            self.info as u32
        } else {
            u32::MAX
        }
    }

    /// Sets the bytes of a copy or memset (kernels have none); more than
    /// 64 TiB is kept as 64 TiB.
    pub fn with_bytes(mut self, bytes: u64) -> GpuOp {
        if self.kind() != GpuOpKind::Kernel {
            self.info = (self.info & !PAYLOAD) | bytes.min(PAYLOAD);
        }
        self
    }

    /// Sets a kernel's launch configuration index (others have none).
    #[inline]
    pub fn set_launch(&mut self, launch: u32) {
        if self.kind() == GpuOpKind::Kernel {
            self.info = (self.info & !PAYLOAD) | launch as u64;
        }
    }

    pub fn dur(&self) -> Ns {
        self.end - self.start
    }
}

impl std::fmt::Debug for GpuOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuOp")
            .field("start", &self.start)
            .field("end", &self.end)
            .field("kind", &self.kind())
            .field("corr", &self.corr)
            .field("name", &self.name)
            .field("launch", &self.launch())
            .field("bytes", &self.bytes())
            .field("copy", &self.copy())
            .field("src", &self.src())
            .field("dst", &self.dst())
            .field("precision", &self.precision())
            .finish()
    }
}

/// Grid and block of a kernel launch, with its resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem: u32,
    pub registers: u32,
}

#[derive(Debug, Clone, Default)]
pub struct Stream {
    pub id: u64,
    /// Sorted by start.
    pub ops: Vec<GpuOp>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncKind {
    Event,
    StreamWaitEvent,
    Stream,
    Context,
    Unknown,
}

/// The host waited for the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncEvent {
    pub start: Ns,
    pub end: Ns,
    pub corr: u32,
    pub stream: u64,
    pub kind: SyncKind,
}

/// A device allocation (`alloc`) or free.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemEvent {
    pub ts: Ns,
    pub bytes: u64,
    pub address: u64,
    pub corr: u32,
    pub alloc: bool,
    pub kind: MemKind,
}

/// A failed device allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oom {
    pub ts: Ns,
    pub pid: u32,
    pub tid: u32,
    pub requested: u64,
    pub free: u64,
    pub total: u64,
    pub api: String,
}

#[derive(Debug, Clone, Default)]
pub struct Gpu {
    /// Device index.
    pub id: u32,
    pub name: String,
    pub memory_bytes: u64,
    pub sm_count: u32,
    /// Compute capability (major, minor); (0, 0) when unknown.
    pub cc: (u32, u32),
    /// AMD gfx target (`gcnArchName`, e.g. "gfx942:sramecc+:xnack-"); empty when not given.
    pub arch_name: String,
    /// Runs HIP (ROCm): the trace names HIP calls. An AMD GPU whatever its
    /// name says: some ROCm traces leave the names empty.
    pub hip: bool,
    pub streams: Vec<Stream>,
    pub launch_configs: Vec<LaunchConfig>,
    /// Sorted by start.
    pub syncs: Vec<SyncEvent>,
    /// Sorted by ts.
    pub memory: Vec<MemEvent>,
    pub dropped_records: u64,
    /// Collective kernels' message sizes in elements, by (stream id, start),
    /// where the trace gives them (PyTorch 2.x Kineto traces do). Ordered, so
    /// that two reads of one trace compare equal.
    pub comm_elems: std::collections::BTreeMap<(u64, Ns), u64>,
}

impl Gpu {
    pub fn op_count(&self) -> usize {
        self.streams.iter().map(|s| s.ops.len()).sum()
    }

    pub fn stream_mut(&mut self, id: u64) -> &mut Stream {
        match self.streams.iter().position(|s| s.id == id) {
            Some(i) => &mut self.streams[i],
            None => {
                self.streams.push(Stream { id, ops: vec![] });
                self.streams.last_mut().expect("just pushed")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each field packed into an op's info word reads back as it was set,
    /// whatever the others hold, and the op stays 32 bytes.
    #[test]
    fn packed_fields_read_back() {
        assert_eq!(std::mem::size_of::<GpuOp>(), 32);
        for kind in [GpuOpKind::Kernel, GpuOpKind::Memcpy, GpuOpKind::Memset] {
            for p in Precision::ALL.into_iter().chain([Precision::Unknown]) {
                let mut op = GpuOp::new(kind, 5, 9, 3, 4)
                    .with_copy(CopyKind::PTOP, MemKind(7), MemKind::MANAGED)
                    .with_bytes(u64::MAX);
                op.set_precision(p);
                op.set_launch(0xdead_beef);
                assert_eq!(op.kind(), kind);
                assert_eq!(op.precision(), p);
                assert_eq!(op.copy(), CopyKind::PTOP);
                assert_eq!((op.src(), op.dst()), (MemKind(7), MemKind::MANAGED));
                assert_eq!((op.start, op.end, op.corr, op.name), (5, 9, 3, 4));
                if kind == GpuOpKind::Kernel {
                    assert_eq!((op.launch(), op.bytes()), (0xdead_beef, 0));
                } else {
                    assert_eq!((op.launch(), op.bytes()), (u32::MAX, (1 << 46) - 1));
                }
                let cleared = op.with_copy(CopyKind::UNKNOWN, MemKind(200), MemKind(16));
                assert_eq!(cleared.kind(), kind);
                assert_eq!(cleared.precision(), p);
                assert_eq!(
                    (cleared.copy(), cleared.src()),
                    (CopyKind::UNKNOWN, MemKind(0))
                );
                assert_eq!(cleared.dst(), MemKind::UNKNOWN);
                assert_eq!(cleared.launch(), op.launch());
            }
        }
        for c in 0..=u8::MAX {
            assert_eq!(Precision::from_code(c) as u8, if c <= 8 { c } else { 0 });
        }
    }

    /// A kernel's launch configuration and a copy's bytes share a field: each
    /// kind reads and sets only its own.
    #[test]
    fn launch_and_bytes_share_a_field() {
        let mut k = GpuOp::new(GpuOpKind::Kernel, 0, 10, 1, 2).with_bytes(99);
        assert_eq!((k.launch(), k.bytes()), (u32::MAX, 0));
        k.set_launch(7);
        assert_eq!((k.launch(), k.bytes()), (7, 0));
        let mut c = GpuOp::new(GpuOpKind::Memcpy, 0, 10, 1, 2).with_bytes(1 << 40);
        c.set_launch(7);
        assert_eq!((c.launch(), c.bytes()), (u32::MAX, 1 << 40));
        let m = GpuOp::new(GpuOpKind::Memset, 0, 10, 1, 2);
        assert_eq!((m.launch(), m.bytes()), (u32::MAX, 0));
    }
}
