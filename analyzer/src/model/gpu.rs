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
/// a kernel's launch configuration and a copy's byte count share a field (40
/// bytes, not 48).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuOp {
    pub start: Ns,
    pub end: Ns,
    /// Kernels: index into `Gpu::launch_configs`, or u32::MAX. Copies and
    /// memsets: the bytes copied or set.
    extra: u64,
    /// Correlation id linking the op to its launching API call (0 = none).
    pub corr: u32,
    /// Kernel name, or a description for copies and memsets.
    pub name: StrId,
    pub kind: GpuOpKind,
    pub copy: CopyKind,
    pub src: MemKind,
    pub dst: MemKind,
    pub precision: Precision,
}

impl GpuOp {
    /// An op of `kind` with nothing else known: no bytes, launch config,
    /// copy kinds or precision (readers fill in what they have).
    pub fn new(kind: GpuOpKind, start: Ns, end: Ns, corr: u32, name: StrId) -> GpuOp {
        GpuOp {
            start,
            end,
            extra: if kind == GpuOpKind::Kernel {
                u32::MAX as u64
            } else {
                0
            },
            corr,
            name,
            kind,
            copy: CopyKind::UNKNOWN,
            src: MemKind::UNKNOWN,
            dst: MemKind::UNKNOWN,
            precision: Precision::Unknown,
        }
    }

    /// Bytes copied or set; 0 for kernels.
    #[inline]
    pub fn bytes(&self) -> u64 {
        if self.kind == GpuOpKind::Kernel {
            0
        } else {
            self.extra
        }
    }

    /// A kernel's index into `Gpu::launch_configs`; u32::MAX if unknown, and
    /// for copies and memsets.
    #[inline]
    pub fn launch(&self) -> u32 {
        if self.kind == GpuOpKind::Kernel {
            self.extra as u32
        } else {
            u32::MAX
        }
    }

    /// Sets the bytes of a copy or memset (kernels have none).
    pub fn with_bytes(mut self, bytes: u64) -> GpuOp {
        if self.kind != GpuOpKind::Kernel {
            self.extra = bytes;
        }
        self
    }

    /// Sets a kernel's launch configuration index (others have none).
    #[inline]
    pub fn set_launch(&mut self, launch: u32) {
        if self.kind == GpuOpKind::Kernel {
            self.extra = launch as u64;
        }
    }

    pub fn dur(&self) -> Ns {
        self.end - self.start
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
    pub streams: Vec<Stream>,
    pub launch_configs: Vec<LaunchConfig>,
    /// Sorted by start.
    pub syncs: Vec<SyncEvent>,
    /// Sorted by ts.
    pub memory: Vec<MemEvent>,
    pub dropped_records: u64,
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

    /// A kernel's launch configuration and a copy's bytes share a field: each
    /// kind reads and sets only its own, and the op stays 40 bytes.
    #[test]
    fn launch_and_bytes_share_a_field() {
        assert_eq!(std::mem::size_of::<GpuOp>(), 40);
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
