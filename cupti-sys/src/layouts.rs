//! The layout registry: which activity-record struct a CUPTI library emits
//! for each kind, picked at run time from `cuptiGetVersion()`.
//!
//! # Sources
//!
//! For every release, the record version comes from the doc comment on each
//! `CUPTI_ACTIVITY_KIND_*` enumerator in that wheel's `cupti_activity.h`
//! ("The corresponding activity record structure is ..."), and the API number
//! from `CUPTI_API_VERSION` in its `cupti_version.h` (and, where the library
//! loads without a driver, from calling `cuptiGetVersion` on its
//! `libcupti.so`). Wheels read: nvidia-cuda-cupti-cu12 12.0.90, 12.0.146,
//! 12.1.62, 12.1.105, 12.2.60, 12.2.131, 12.2.142, 12.3.52, 12.3.101, 12.4.99,
//! 12.4.127, 12.5.39, 12.5.82, 12.6.37, 12.6.68, 12.6.80, 12.8.57, 12.8.90,
//! 12.9.19, 12.9.79; nvidia-cuda-cupti 13.0.48, 13.0.85, 13.1.75, 13.1.115,
//! 13.2.23, 13.2.75, 13.2.86, 13.3.35, 13.3.75, 13.4.58, 13.4.92, 13.5.25.
//!
//! | API version | CUDA | kernel | memcpy | memset | sync | memory2 | overhead | device | marker data |
//! |---|---|---|---|---|---|---|---|---|---|
//! | 18 | 12.0, 12.1 | 9 | 5 | 4 | 1 | 3 | 1 | 4 | 1 |
//! | 19 | 12.0 (named in `cupti_version.h`, never seen in a wheel) | 9 | 5 | 4 | 1 | 3 | 1 | 4 | 1 |
//! | 20 | 12.2 | 9 | 5 | 4 | 1 | 3 | 1 | 5 | 1 |
//! | 21 | 12.3 | 9 | 5 | 4 | 1 | 3 | 2 | 5 | 1 |
//! | 22 | 12.4 | 9 | 5 | 4 | 1 | 3 | 3 | 5 | 1 |
//! | 23 | 12.5 | 9 | 5 | 4 | 1 | 3 | 3 | 5 | 1 |
//! | 24 | 12.6 | 9 | 5 | 4 | 1 | 4 | 3 | 5 | 1 |
//! | 26 | 12.8 | 9 | 6 | 4 | 2 | 4 | 3 | 5 | 1 |
//! | 27, 28 | 12.9, 12.9 update 1 | 9 | 6 | 4 | 2 | 4 | 3 | 5 | 1 |
//! | 1300zz | 13.0 | 10 | 6 | 4 | 2 | 4 | 3 | 5 | 2 |
//! | 1301zz | 13.1 | 11 | 6 | 4 | 2 | 4 | 3 | 5 | 2 |
//! | 1302zz | 13.2 | 11 | 6 | 4 | 2 | 4 | 3 | 6 | 2 |
//! | 1303zz | 13.3 | 12 | 6 | 4 | 2 | 4 | 3 | 6 | 2 |
//! | 1304zz | 13.4 | 13 | 7 | 5 | 2 | 4 | 3 | 6 | 2 |
//! | 1305zz | 13.5 | 13 | 7 | 5 | 2 | 4 | 3 | 6 | 2 |
//!
//! MARKER is `CUpti_ActivityMarker2` and RUNTIME/DRIVER are `CUpti_ActivityAPI`
//! in every release above.
//!
//! Notes:
//! - CUDA 11.8's CUPTI also reports 18 (it emits Kernel8, 200 bytes, whose
//!   fields up to `maxActiveClusters` sit where Kernel9's do). A consumer that
//!   loads only `libcupti.so.12`/`.13` never meets it.
//! - 25 is not named in any header (there was no public 12.7) and is refused.
//! - From 13.0 the number is `xxyyzz` (major, minor, CUPTI update). Record
//!   versions changed only between minor releases in every wheel above (13.0.48
//!   and 13.0.85 agree, as do 13.2.23/.75/.86), so any `zz` of a known 13.yy is
//!   accepted; an unknown 13.yy is refused.
//! - Every record struct named here has the same size and field offsets in
//!   each wheel that defines it (compared field by field with libclang across
//!   all wheels above), so the 12.9 headers (`v12`) serve all 12.x and the 13.5
//!   headers (`v13`) all 13.x. The only change is 13.x naming a former padding
//!   byte of Memcpy6/Memset4 `isDeviceLaunched`.

use core::mem::{offset_of, size_of};

use crate::{v12, v13};

/// Which numbered struct a library emits for each activity kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordVersions {
    /// `CUpti_ActivityKernelN` for CONCURRENT_KERNEL.
    pub kernel: u8,
    /// `CUpti_ActivityMemcpyN` for MEMCPY.
    pub memcpy: u8,
    /// `CUpti_ActivityMemsetN` for MEMSET.
    pub memset: u8,
    /// `CUpti_ActivitySynchronization` (1) or `Synchronization2` (2).
    pub sync: u8,
    /// `CUpti_ActivityMemoryN` for MEMORY2.
    pub memory: u8,
    /// `CUpti_ActivityOverhead` (1), `Overhead2`, `Overhead3`.
    pub overhead: u8,
    /// `CUpti_ActivityDeviceN` for DEVICE.
    pub device: u8,
    /// `CUpti_ActivityMarkerData` (1) or `MarkerData2` (2) for MARKER_DATA.
    pub marker_data: u8,
}

/// Everything a consumer needs to read the records of one CUPTI library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layouts {
    /// The number `cuptiGetVersion` returned.
    pub api_version: u32,
    /// The CUDA release that ships it, for messages ("12.9 update 1").
    pub cuda_release: &'static str,
    pub versions: RecordVersions,
    pub kernel: KernelLayout,
    pub memcpy: MemcpyLayout,
    pub memset: MemsetLayout,
    pub sync: SyncLayout,
    pub memory: MemoryLayout,
    pub overhead: OverheadLayout,
    pub marker: MarkerLayout,
    pub marker_data: MarkerDataLayout,
    pub device: DeviceLayout,
    /// RUNTIME and DRIVER records.
    pub api: ApiLayout,
}

/// Record versions and release name for a CUPTI API version, or `None`.
pub fn record_versions(api_version: u32) -> Option<(&'static str, RecordVersions)> {
    // [kernel, memcpy, memset, sync, memory, overhead, device, marker_data]
    const fn rv(v: [u8; 8]) -> RecordVersions {
        let [
            kernel,
            memcpy,
            memset,
            sync,
            memory,
            overhead,
            device,
            marker_data,
        ] = v;
        RecordVersions {
            kernel,
            memcpy,
            memset,
            sync,
            memory,
            overhead,
            device,
            marker_data,
        }
    }
    Some(match api_version {
        18 => ("12.0/12.1", rv([9, 5, 4, 1, 3, 1, 4, 1])),
        19 => ("12.0", rv([9, 5, 4, 1, 3, 1, 4, 1])),
        20 => ("12.2", rv([9, 5, 4, 1, 3, 1, 5, 1])),
        21 => ("12.3", rv([9, 5, 4, 1, 3, 2, 5, 1])),
        22 => ("12.4", rv([9, 5, 4, 1, 3, 3, 5, 1])),
        23 => ("12.5", rv([9, 5, 4, 1, 3, 3, 5, 1])),
        24 => ("12.6", rv([9, 5, 4, 1, 4, 3, 5, 1])),
        26 => ("12.8", rv([9, 6, 4, 2, 4, 3, 5, 1])),
        27 => ("12.9", rv([9, 6, 4, 2, 4, 3, 5, 1])),
        28 => ("12.9 update 1", rv([9, 6, 4, 2, 4, 3, 5, 1])),
        130_000..=130_099 => ("13.0", rv([10, 6, 4, 2, 4, 3, 5, 2])),
        130_100..=130_199 => ("13.1", rv([11, 6, 4, 2, 4, 3, 5, 2])),
        130_200..=130_299 => ("13.2", rv([11, 6, 4, 2, 4, 3, 6, 2])),
        130_300..=130_399 => ("13.3", rv([12, 6, 4, 2, 4, 3, 6, 2])),
        130_400..=130_499 => ("13.4", rv([13, 7, 5, 2, 4, 3, 6, 2])),
        130_500..=130_599 => ("13.5", rv([13, 7, 5, 2, 4, 3, 6, 2])),
        _ => return None,
    })
}

/// The record layouts of the CUPTI library whose `cuptiGetVersion` returned
/// `api_version`, or `None` when that version is not known to this registry
/// (the consumer must then turn GPU capture off).
pub fn layouts(api_version: u32) -> Option<Layouts> {
    let (cuda_release, v) = record_versions(api_version)?;
    Some(Layouts {
        api_version,
        cuda_release,
        versions: v,
        kernel: KernelLayout::of_version(v.kernel)?,
        memcpy: MemcpyLayout::of_version(v.memcpy)?,
        memset: MemsetLayout::of_version(v.memset)?,
        sync: SyncLayout::of_version(v.sync)?,
        memory: MemoryLayout::of_version(v.memory)?,
        overhead: OverheadLayout::of_version(v.overhead)?,
        marker: MarkerLayout::MARKER2,
        marker_data: MarkerDataLayout::of_version(v.marker_data)?,
        device: DeviceLayout::of_version(v.device)?,
        api: ApiLayout::API,
    })
}

/// Whether [`layouts`] knows `api_version`; an unknown version is refused,
/// never guessed.
pub const fn is_known(api_version: u32) -> bool {
    matches!(api_version, 18..=24 | 26..=28 | 130_000..=130_599)
}

/// Offsets into a CONCURRENT_KERNEL record (`CUpti_ActivityKernelN`).
/// Field types: u64 timestamps; u32 ids; i32 grid/block/shared sizes;
/// u16 `registers_per_thread`; `name` is a `const char *`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelLayout {
    pub version: u8,
    pub size: usize,
    pub kind: usize,
    pub registers_per_thread: usize,
    pub start: usize,
    pub end: usize,
    pub completed: usize,
    pub device_id: usize,
    pub context_id: usize,
    pub stream_id: usize,
    pub grid_x: usize,
    pub grid_y: usize,
    pub grid_z: usize,
    pub block_x: usize,
    pub block_y: usize,
    pub block_z: usize,
    pub static_shared_memory: usize,
    pub dynamic_shared_memory: usize,
    /// u32
    pub local_memory_total: usize,
    pub correlation_id: usize,
    /// i64
    pub grid_id: usize,
    pub name: usize,
    pub queued: usize,
    pub submitted: usize,
    /// u8
    pub launch_type: usize,
    /// u64
    pub graph_node_id: usize,
    /// u32
    pub graph_id: usize,
}

macro_rules! kernel {
    ($v:literal, $T:ty) => {
        KernelLayout {
            version: $v,
            size: size_of::<$T>(),
            kind: offset_of!($T, kind),
            registers_per_thread: offset_of!($T, registersPerThread),
            start: offset_of!($T, start),
            end: offset_of!($T, end),
            completed: offset_of!($T, completed),
            device_id: offset_of!($T, deviceId),
            context_id: offset_of!($T, contextId),
            stream_id: offset_of!($T, streamId),
            grid_x: offset_of!($T, gridX),
            grid_y: offset_of!($T, gridY),
            grid_z: offset_of!($T, gridZ),
            block_x: offset_of!($T, blockX),
            block_y: offset_of!($T, blockY),
            block_z: offset_of!($T, blockZ),
            static_shared_memory: offset_of!($T, staticSharedMemory),
            dynamic_shared_memory: offset_of!($T, dynamicSharedMemory),
            local_memory_total: offset_of!($T, localMemoryTotal),
            correlation_id: offset_of!($T, correlationId),
            grid_id: offset_of!($T, gridId),
            name: offset_of!($T, name),
            queued: offset_of!($T, queued),
            submitted: offset_of!($T, submitted),
            launch_type: offset_of!($T, launchType),
            graph_node_id: offset_of!($T, graphNodeId),
            graph_id: offset_of!($T, graphId),
        }
    };
}

impl KernelLayout {
    /// The layout of `CUpti_ActivityKernel<version>` (9 to 13).
    pub const fn of_version(version: u8) -> Option<Self> {
        Some(match version {
            9 => kernel!(9, v12::CUpti_ActivityKernel9),
            10 => kernel!(10, v13::CUpti_ActivityKernel10),
            11 => kernel!(11, v13::CUpti_ActivityKernel11),
            12 => kernel!(12, v13::CUpti_ActivityKernel12),
            13 => kernel!(13, v13::CUpti_ActivityKernel13),
            _ => return None,
        })
    }
}

/// Offsets into a MEMCPY record (`CUpti_ActivityMemcpyN`).
/// `copy_kind`, `src_kind`, `dst_kind`, `flags` are u8; `bytes` u64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemcpyLayout {
    pub version: u8,
    pub size: usize,
    pub kind: usize,
    pub copy_kind: usize,
    pub src_kind: usize,
    pub dst_kind: usize,
    pub flags: usize,
    pub bytes: usize,
    pub start: usize,
    pub end: usize,
    pub device_id: usize,
    pub context_id: usize,
    pub stream_id: usize,
    pub correlation_id: usize,
    pub runtime_correlation_id: usize,
    pub graph_node_id: usize,
    pub graph_id: usize,
    /// u64, Memcpy6 and later.
    pub copy_count: Option<usize>,
}

macro_rules! memcpy {
    ($v:literal, $T:ty, $copy_count:expr) => {
        MemcpyLayout {
            version: $v,
            size: size_of::<$T>(),
            kind: offset_of!($T, kind),
            copy_kind: offset_of!($T, copyKind),
            src_kind: offset_of!($T, srcKind),
            dst_kind: offset_of!($T, dstKind),
            flags: offset_of!($T, flags),
            bytes: offset_of!($T, bytes),
            start: offset_of!($T, start),
            end: offset_of!($T, end),
            device_id: offset_of!($T, deviceId),
            context_id: offset_of!($T, contextId),
            stream_id: offset_of!($T, streamId),
            correlation_id: offset_of!($T, correlationId),
            runtime_correlation_id: offset_of!($T, runtimeCorrelationId),
            graph_node_id: offset_of!($T, graphNodeId),
            graph_id: offset_of!($T, graphId),
            copy_count: $copy_count,
        }
    };
}

impl MemcpyLayout {
    /// The layout of `CUpti_ActivityMemcpy<version>` (5 to 7).
    pub const fn of_version(version: u8) -> Option<Self> {
        Some(match version {
            5 => memcpy!(5, v12::CUpti_ActivityMemcpy5, None),
            6 => memcpy!(
                6,
                v12::CUpti_ActivityMemcpy6,
                Some(offset_of!(v12::CUpti_ActivityMemcpy6, copyCount))
            ),
            7 => memcpy!(
                7,
                v13::CUpti_ActivityMemcpy7,
                Some(offset_of!(v13::CUpti_ActivityMemcpy7, copyCount))
            ),
            _ => return None,
        })
    }
}

/// Offsets into a MEMSET record (`CUpti_ActivityMemsetN`).
/// `value` u32, `bytes` u64, `flags` and `memory_kind` u16.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemsetLayout {
    pub version: u8,
    pub size: usize,
    pub kind: usize,
    pub value: usize,
    pub bytes: usize,
    pub start: usize,
    pub end: usize,
    pub device_id: usize,
    pub context_id: usize,
    pub stream_id: usize,
    pub correlation_id: usize,
    pub flags: usize,
    pub memory_kind: usize,
}

macro_rules! memset {
    ($v:literal, $T:ty) => {
        MemsetLayout {
            version: $v,
            size: size_of::<$T>(),
            kind: offset_of!($T, kind),
            value: offset_of!($T, value),
            bytes: offset_of!($T, bytes),
            start: offset_of!($T, start),
            end: offset_of!($T, end),
            device_id: offset_of!($T, deviceId),
            context_id: offset_of!($T, contextId),
            stream_id: offset_of!($T, streamId),
            correlation_id: offset_of!($T, correlationId),
            flags: offset_of!($T, flags),
            memory_kind: offset_of!($T, memoryKind),
        }
    };
}

impl MemsetLayout {
    /// The layout of `CUpti_ActivityMemset<version>` (4 or 5).
    pub const fn of_version(version: u8) -> Option<Self> {
        Some(match version {
            4 => memset!(4, v12::CUpti_ActivityMemset4),
            5 => memset!(5, v13::CUpti_ActivityMemset5),
            _ => return None,
        })
    }
}

/// Offsets into a SYNCHRONIZATION record. `sync_type` is a u32
/// `CUpti_ActivitySynchronizationType`; `stream_id` is `CUPTI_SYNCHRONIZATION_INVALID_VALUE`
/// (u32::MAX) for a context sync.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncLayout {
    pub version: u8,
    pub size: usize,
    pub kind: usize,
    pub sync_type: usize,
    pub start: usize,
    pub end: usize,
    pub correlation_id: usize,
    pub context_id: usize,
    pub stream_id: usize,
    pub cuda_event_id: usize,
    /// u32 CUresult of the sync call, Synchronization2 only.
    pub return_value: Option<usize>,
}

macro_rules! sync {
    ($v:literal, $T:ty, $ret:expr) => {
        SyncLayout {
            version: $v,
            size: size_of::<$T>(),
            kind: offset_of!($T, kind),
            sync_type: offset_of!($T, type_),
            start: offset_of!($T, start),
            end: offset_of!($T, end),
            correlation_id: offset_of!($T, correlationId),
            context_id: offset_of!($T, contextId),
            stream_id: offset_of!($T, streamId),
            cuda_event_id: offset_of!($T, cudaEventId),
            return_value: $ret,
        }
    };
}

impl SyncLayout {
    /// The layout of `CUpti_ActivitySynchronization` (1) or `...2` (2).
    pub const fn of_version(version: u8) -> Option<Self> {
        Some(match version {
            1 => sync!(1, v12::CUpti_ActivitySynchronization, None),
            2 => sync!(
                2,
                v12::CUpti_ActivitySynchronization2,
                Some(offset_of!(v12::CUpti_ActivitySynchronization2, returnValue))
            ),
            _ => return None,
        })
    }
}

/// Offsets into a MEMORY2 record (`CUpti_ActivityMemory3`/`4`).
/// `operation_type` and `memory_kind` are u32 enums; `address`, `bytes`,
/// `timestamp`, `pc` u64; `name` a `const char *` (may be null).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryLayout {
    pub version: u8,
    pub size: usize,
    pub kind: usize,
    pub operation_type: usize,
    pub memory_kind: usize,
    pub correlation_id: usize,
    pub address: usize,
    pub bytes: usize,
    pub timestamp: usize,
    pub pc: usize,
    pub process_id: usize,
    pub device_id: usize,
    pub context_id: usize,
    pub stream_id: usize,
    pub name: usize,
    /// u32
    pub is_async: usize,
}

macro_rules! memory {
    ($v:literal, $T:ty) => {
        MemoryLayout {
            version: $v,
            size: size_of::<$T>(),
            kind: offset_of!($T, kind),
            operation_type: offset_of!($T, memoryOperationType),
            memory_kind: offset_of!($T, memoryKind),
            correlation_id: offset_of!($T, correlationId),
            address: offset_of!($T, address),
            bytes: offset_of!($T, bytes),
            timestamp: offset_of!($T, timestamp),
            pc: offset_of!($T, PC),
            process_id: offset_of!($T, processId),
            device_id: offset_of!($T, deviceId),
            context_id: offset_of!($T, contextId),
            stream_id: offset_of!($T, streamId),
            name: offset_of!($T, name),
            is_async: offset_of!($T, isAsync),
        }
    };
}

impl MemoryLayout {
    /// The layout of `CUpti_ActivityMemory<version>` (3 or 4).
    pub const fn of_version(version: u8) -> Option<Self> {
        Some(match version {
            3 => memory!(3, v12::CUpti_ActivityMemory3),
            4 => memory!(4, v12::CUpti_ActivityMemory4),
            _ => return None,
        })
    }
}

/// Offsets into an OVERHEAD record. `overhead_kind`, `object_kind` u32 enums;
/// `object_id` is the 12-byte `CUpti_ActivityObjectKindId` union (for a
/// thread object: u32 processId, then u32 threadId).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverheadLayout {
    pub version: u8,
    pub size: usize,
    pub kind: usize,
    pub overhead_kind: usize,
    pub object_kind: usize,
    pub object_id: usize,
    pub start: usize,
    pub end: usize,
    /// u32, Overhead2 and later.
    pub correlation_id: Option<usize>,
}

macro_rules! overhead {
    ($v:literal, $T:ty, $corr:expr) => {
        OverheadLayout {
            version: $v,
            size: size_of::<$T>(),
            kind: offset_of!($T, kind),
            overhead_kind: offset_of!($T, overheadKind),
            object_kind: offset_of!($T, objectKind),
            object_id: offset_of!($T, objectId),
            start: offset_of!($T, start),
            end: offset_of!($T, end),
            correlation_id: $corr,
        }
    };
}

impl OverheadLayout {
    /// The layout of `CUpti_ActivityOverhead` (1), `...2` or `...3`.
    pub const fn of_version(version: u8) -> Option<Self> {
        Some(match version {
            1 => overhead!(1, v12::CUpti_ActivityOverhead, None),
            2 => overhead!(
                2,
                v12::CUpti_ActivityOverhead2,
                Some(offset_of!(v12::CUpti_ActivityOverhead2, correlationId))
            ),
            3 => overhead!(
                3,
                v12::CUpti_ActivityOverhead3,
                Some(offset_of!(v12::CUpti_ActivityOverhead3, correlationId))
            ),
            _ => return None,
        })
    }
}

/// Offsets into a MARKER record (`CUpti_ActivityMarker2`). `flags` is the u32
/// `CUpti_ActivityFlag` (MARKER_START/END/INSTANTANEOUS); `name` and `domain`
/// are `const char *` (name is set on the start record only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarkerLayout {
    pub version: u8,
    pub size: usize,
    pub kind: usize,
    pub flags: usize,
    pub timestamp: usize,
    pub id: usize,
    pub object_kind: usize,
    pub object_id: usize,
    pub name: usize,
    pub domain: usize,
}

impl MarkerLayout {
    pub const MARKER2: Self = {
        type T = v12::CUpti_ActivityMarker2;
        MarkerLayout {
            version: 2,
            size: size_of::<T>(),
            kind: offset_of!(T, kind),
            flags: offset_of!(T, flags),
            timestamp: offset_of!(T, timestamp),
            id: offset_of!(T, id),
            object_kind: offset_of!(T, objectKind),
            object_id: offset_of!(T, objectId),
            name: offset_of!(T, name),
            domain: offset_of!(T, domain),
        }
    };
}

/// Offsets into a MARKER_DATA record (`CUpti_ActivityMarkerData`/`2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarkerDataLayout {
    pub version: u8,
    pub size: usize,
    pub kind: usize,
    pub flags: usize,
    pub id: usize,
    pub payload_kind: usize,
    pub payload: usize,
    pub color: usize,
    pub category: usize,
}

macro_rules! marker_data {
    ($v:literal, $T:ty) => {
        MarkerDataLayout {
            version: $v,
            size: size_of::<$T>(),
            kind: offset_of!($T, kind),
            flags: offset_of!($T, flags),
            id: offset_of!($T, id),
            payload_kind: offset_of!($T, payloadKind),
            payload: offset_of!($T, payload),
            color: offset_of!($T, color),
            category: offset_of!($T, category),
        }
    };
}

impl MarkerDataLayout {
    /// The layout of `CUpti_ActivityMarkerData` (1) or `...2` (2).
    pub const fn of_version(version: u8) -> Option<Self> {
        Some(match version {
            1 => marker_data!(1, v12::CUpti_ActivityMarkerData),
            2 => marker_data!(2, v13::CUpti_ActivityMarkerData2),
            _ => return None,
        })
    }
}

/// Offsets into a DEVICE record (`CUpti_ActivityDeviceN`). Memory sizes and
/// bandwidth u64, the rest u32; `uuid` is 16 bytes; `name` a `const char *`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLayout {
    pub version: u8,
    pub size: usize,
    pub kind: usize,
    pub flags: usize,
    pub global_memory_bandwidth: usize,
    pub global_memory_size: usize,
    pub l2_cache_size: usize,
    pub num_threads_per_warp: usize,
    pub core_clock_rate: usize,
    pub num_memcpy_engines: usize,
    pub num_multiprocessors: usize,
    pub compute_capability_major: usize,
    pub compute_capability_minor: usize,
    pub id: usize,
    pub uuid: usize,
    pub name: usize,
}

macro_rules! device {
    ($v:literal, $T:ty) => {
        DeviceLayout {
            version: $v,
            size: size_of::<$T>(),
            kind: offset_of!($T, kind),
            flags: offset_of!($T, flags),
            global_memory_bandwidth: offset_of!($T, globalMemoryBandwidth),
            global_memory_size: offset_of!($T, globalMemorySize),
            l2_cache_size: offset_of!($T, l2CacheSize),
            num_threads_per_warp: offset_of!($T, numThreadsPerWarp),
            core_clock_rate: offset_of!($T, coreClockRate),
            num_memcpy_engines: offset_of!($T, numMemcpyEngines),
            num_multiprocessors: offset_of!($T, numMultiprocessors),
            compute_capability_major: offset_of!($T, computeCapabilityMajor),
            compute_capability_minor: offset_of!($T, computeCapabilityMinor),
            id: offset_of!($T, id),
            uuid: offset_of!($T, uuid),
            name: offset_of!($T, name),
        }
    };
}

impl DeviceLayout {
    /// The layout of `CUpti_ActivityDevice<version>` (4 to 6).
    pub const fn of_version(version: u8) -> Option<Self> {
        Some(match version {
            4 => device!(4, v12::CUpti_ActivityDevice4),
            5 => device!(5, v12::CUpti_ActivityDevice5),
            6 => device!(6, v13::CUpti_ActivityDevice6),
            _ => return None,
        })
    }
}

/// Offsets into a RUNTIME or DRIVER record (`CUpti_ActivityAPI`); all u32
/// except the u64 timestamps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApiLayout {
    pub size: usize,
    pub kind: usize,
    pub cbid: usize,
    pub start: usize,
    pub end: usize,
    pub process_id: usize,
    pub thread_id: usize,
    pub correlation_id: usize,
    pub return_value: usize,
}

impl ApiLayout {
    pub const API: Self = {
        type T = v12::CUpti_ActivityAPI;
        ApiLayout {
            size: size_of::<T>(),
            kind: offset_of!(T, kind),
            cbid: offset_of!(T, cbid),
            start: offset_of!(T, start),
            end: offset_of!(T, end),
            process_id: offset_of!(T, processId),
            thread_id: offset_of!(T, threadId),
            correlation_id: offset_of!(T, correlationId),
            return_value: offset_of!(T, returnValue),
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every API number found in a wheel, plus 19 (named in the header).
    const KNOWN: &[u32] = &[
        18, 19, 20, 21, 22, 23, 24, 26, 27, 28, 130_000, 130_001, 130_100, 130_101, 130_200,
        130_201, 130_202, 130_300, 130_301, 130_400, 130_401, 130_500,
    ];

    #[test]
    fn every_known_version_resolves() {
        for &v in KNOWN {
            let l = layouts(v).unwrap_or_else(|| panic!("{v} refused"));
            assert_eq!(l.api_version, v);
            assert!(is_known(v), "{v}");
        }
    }

    #[test]
    fn unknown_versions_are_refused() {
        for v in [
            0,
            1,
            17,
            25,
            29,
            100,
            999,
            129_999,
            130_600,
            140_000,
            u32::MAX,
        ] {
            assert_eq!(layouts(v), None, "{v}");
            assert!(!is_known(v), "{v}");
        }
    }

    #[test]
    fn is_known_matches_the_table() {
        for v in 0..=200_000 {
            assert_eq!(is_known(v), record_versions(v).is_some(), "{v}");
        }
    }

    /// Sizes measured with libclang on each release's own headers.
    #[test]
    fn record_sizes_per_release() {
        // (api, kernel, memcpy, memset, sync, memory, overhead, device, marker data)
        let expect: &[(u32, [usize; 8])] = &[
            (18, [208, 88, 88, 40, 120, 40, 176, 32]),
            (20, [208, 88, 88, 40, 120, 40, 184, 32]),
            (21, [208, 88, 88, 40, 120, 48, 184, 32]),
            (22, [208, 88, 88, 40, 120, 56, 184, 32]),
            (24, [208, 88, 88, 40, 128, 56, 184, 32]),
            (26, [208, 96, 88, 56, 128, 56, 184, 32]),
            (28, [208, 96, 88, 56, 128, 56, 184, 32]),
            (130_001, [216, 96, 88, 56, 128, 56, 184, 40]),
            (130_101, [224, 96, 88, 56, 128, 56, 184, 40]),
            (130_202, [224, 96, 88, 56, 128, 56, 192, 40]),
            (130_301, [232, 96, 88, 56, 128, 56, 192, 40]),
            (130_401, [248, 112, 104, 56, 128, 56, 192, 40]),
            (130_500, [248, 112, 104, 56, 128, 56, 192, 40]),
        ];
        for (api, sizes) in expect {
            let l = layouts(*api).unwrap();
            let got = [
                l.kernel.size,
                l.memcpy.size,
                l.memset.size,
                l.sync.size,
                l.memory.size,
                l.overhead.size,
                l.device.size,
                l.marker_data.size,
            ];
            assert_eq!(&got, sizes, "api {api}");
            assert_eq!(l.api.size, 40);
            assert_eq!(l.marker.size, 56);
        }
    }

    #[test]
    fn record_versions_of_releases() {
        let v = |api| record_versions(api).unwrap().1;
        assert_eq!((v(18).kernel, v(18).memcpy, v(18).device), (9, 5, 4));
        assert_eq!((v(24).memory, v(26).memcpy, v(26).sync), (4, 6, 2));
        assert_eq!(v(130_001).kernel, 10);
        assert_eq!(v(130_101).kernel, 11);
        assert_eq!(v(130_202).device, 6);
        assert_eq!(v(130_301).kernel, 12);
        let v134 = v(130_401);
        assert_eq!((v134.kernel, v134.memcpy, v134.memset), (13, 7, 5));
        assert_eq!(record_versions(28).unwrap().0, "12.9 update 1");
    }

    /// Offsets measured with libclang; identical in every kernel version.
    #[test]
    fn kernel_offsets() {
        for v in 9..=13 {
            let k = KernelLayout::of_version(v).unwrap();
            assert_eq!(k.version, v);
            let got = [
                k.kind,
                k.registers_per_thread,
                k.start,
                k.end,
                k.completed,
                k.device_id,
                k.context_id,
                k.stream_id,
                k.grid_x,
                k.grid_y,
                k.grid_z,
                k.block_x,
                k.block_y,
                k.block_z,
                k.static_shared_memory,
                k.dynamic_shared_memory,
                k.local_memory_total,
                k.correlation_id,
                k.grid_id,
                k.name,
                k.queued,
                k.submitted,
                k.launch_type,
                k.graph_node_id,
                k.graph_id,
            ];
            let want = [
                0, 6, 16, 24, 32, 40, 44, 48, 52, 56, 60, 64, 68, 72, 76, 80, 88, 92, 96, 104, 120,
                128, 136, 144, 156,
            ];
            assert_eq!(got, want, "Kernel{v}");
        }
        assert_eq!(KernelLayout::of_version(8), None);
        assert_eq!(KernelLayout::of_version(14), None);
    }

    #[test]
    fn memcpy_offsets() {
        for v in 5..=7 {
            let m = MemcpyLayout::of_version(v).unwrap();
            let got = [
                m.kind,
                m.copy_kind,
                m.src_kind,
                m.dst_kind,
                m.flags,
                m.bytes,
                m.start,
                m.end,
                m.device_id,
                m.context_id,
                m.stream_id,
                m.correlation_id,
                m.runtime_correlation_id,
                m.graph_node_id,
                m.graph_id,
            ];
            assert_eq!(
                got,
                [0, 4, 5, 6, 7, 8, 16, 24, 32, 36, 40, 44, 48, 64, 72],
                "Memcpy{v}"
            );
            assert_eq!(m.copy_count, (v >= 6).then_some(88), "Memcpy{v}");
        }
        assert_eq!(MemcpyLayout::of_version(4), None);
    }

    #[test]
    fn memset_sync_memory_offsets() {
        for v in 4..=5 {
            let m = MemsetLayout::of_version(v).unwrap();
            let got = [
                m.kind,
                m.value,
                m.bytes,
                m.start,
                m.end,
                m.device_id,
                m.context_id,
                m.stream_id,
                m.correlation_id,
                m.flags,
                m.memory_kind,
            ];
            assert_eq!(got, [0, 4, 8, 16, 24, 32, 36, 40, 44, 48, 50], "Memset{v}");
        }
        for v in 1..=2 {
            let s = SyncLayout::of_version(v).unwrap();
            let got = [
                s.kind,
                s.sync_type,
                s.start,
                s.end,
                s.correlation_id,
                s.context_id,
                s.stream_id,
                s.cuda_event_id,
            ];
            assert_eq!(got, [0, 4, 8, 16, 24, 28, 32, 36], "Synchronization{v}");
            assert_eq!(s.return_value, (v == 2).then_some(48));
        }
        for v in 3..=4 {
            let m = MemoryLayout::of_version(v).unwrap();
            let got = [
                m.kind,
                m.operation_type,
                m.memory_kind,
                m.correlation_id,
                m.address,
                m.bytes,
                m.timestamp,
                m.pc,
                m.process_id,
                m.device_id,
                m.context_id,
                m.stream_id,
                m.name,
                m.is_async,
            ];
            assert_eq!(
                got,
                [0, 4, 8, 12, 16, 24, 32, 40, 48, 52, 56, 60, 64, 72],
                "Memory{v}"
            );
        }
    }

    #[test]
    fn overhead_marker_device_api_offsets() {
        for v in 1..=3 {
            let o = OverheadLayout::of_version(v).unwrap();
            assert_eq!(
                [
                    o.kind,
                    o.overhead_kind,
                    o.object_kind,
                    o.object_id,
                    o.start,
                    o.end
                ],
                [0, 4, 8, 12, 24, 32],
                "Overhead{v}"
            );
            assert_eq!(o.correlation_id, (v >= 2).then_some(40));
        }
        let m = MarkerLayout::MARKER2;
        assert_eq!(
            [
                m.kind,
                m.flags,
                m.timestamp,
                m.id,
                m.object_kind,
                m.object_id,
                m.name,
                m.domain
            ],
            [0, 4, 8, 16, 20, 24, 40, 48]
        );
        for v in 1..=2 {
            let d = MarkerDataLayout::of_version(v).unwrap();
            assert_eq!(
                [
                    d.kind,
                    d.flags,
                    d.id,
                    d.payload_kind,
                    d.payload,
                    d.color,
                    d.category
                ],
                [0, 4, 8, 12, 16, 24, 28]
            );
        }
        for v in 4..=6 {
            let d = DeviceLayout::of_version(v).unwrap();
            let got = [
                d.flags,
                d.global_memory_bandwidth,
                d.global_memory_size,
                d.l2_cache_size,
                d.num_threads_per_warp,
                d.core_clock_rate,
                d.num_memcpy_engines,
                d.num_multiprocessors,
                d.compute_capability_major,
                d.compute_capability_minor,
                d.id,
                d.uuid,
                d.name,
            ];
            assert_eq!(
                got,
                [4, 8, 16, 28, 32, 36, 40, 44, 104, 108, 112, 120, 136],
                "Device{v}"
            );
        }
        let a = ApiLayout::API;
        assert_eq!(
            [
                a.kind,
                a.cbid,
                a.start,
                a.end,
                a.process_id,
                a.thread_id,
                a.correlation_id,
                a.return_value
            ],
            [0, 4, 8, 16, 24, 28, 32, 36]
        );
    }

    /// The same struct name must mean the same layout in both header sets,
    /// since the registry takes each struct from one of them.
    #[test]
    fn shared_structs_agree_between_v12_and_v13() {
        macro_rules! same {
            ($($T:ident),*) => {$(
                assert_eq!(size_of::<v12::$T>(), size_of::<v13::$T>(), stringify!($T));
            )*};
        }
        same!(
            CUpti_ActivityKernel9,
            CUpti_ActivityMemcpy5,
            CUpti_ActivityMemcpy6,
            CUpti_ActivityMemset4,
            CUpti_ActivitySynchronization,
            CUpti_ActivitySynchronization2,
            CUpti_ActivityMemory3,
            CUpti_ActivityMemory4,
            CUpti_ActivityOverhead,
            CUpti_ActivityOverhead2,
            CUpti_ActivityOverhead3,
            CUpti_ActivityMarker2,
            CUpti_ActivityMarkerData,
            CUpti_ActivityDevice4,
            CUpti_ActivityDevice5,
            CUpti_ActivityAPI,
            CUpti_CallbackData,
            CUpti_ResourceData
        );
        assert_eq!(
            offset_of!(v12::CUpti_ActivityKernel9, maxActiveClusters),
            offset_of!(v13::CUpti_ActivityKernel9, maxActiveClusters)
        );
        assert_eq!(
            offset_of!(v12::CUpti_ActivityMemcpy6, copyCount),
            offset_of!(v13::CUpti_ActivityMemcpy6, copyCount)
        );
        assert_eq!(
            offset_of!(v12::CUpti_ActivityDevice5, numaId),
            offset_of!(v13::CUpti_ActivityDevice5, numaId)
        );
    }

    /// Newer versions only append: what an older version has stays put.
    #[test]
    fn leading_fields_agree_across_versions() {
        let all: Vec<Layouts> = [18, 21, 22, 24, 26, 28, 130_001, 130_101, 130_202, 130_500]
            .into_iter()
            .map(|v| layouts(v).unwrap())
            .collect();
        let base = all[0];
        for l in &all {
            assert!(l.kernel.size >= base.kernel.size);
            let (a, b) = (l.kernel, base.kernel);
            assert_eq!(
                (a.start, a.end, a.correlation_id, a.name, a.stream_id),
                (b.start, b.end, b.correlation_id, b.name, b.stream_id)
            );
            let (a, b) = (l.memcpy, base.memcpy);
            assert_eq!(
                (
                    a.copy_kind,
                    a.src_kind,
                    a.dst_kind,
                    a.bytes,
                    a.start,
                    a.correlation_id
                ),
                (
                    b.copy_kind,
                    b.src_kind,
                    b.dst_kind,
                    b.bytes,
                    b.start,
                    b.correlation_id
                )
            );
            assert_eq!(l.memset.correlation_id, base.memset.correlation_id);
            assert_eq!(l.sync.correlation_id, base.sync.correlation_id);
            assert_eq!(l.memory.bytes, base.memory.bytes);
            assert_eq!(l.overhead.start, base.overhead.start);
            assert_eq!(l.device.name, base.device.name);
            assert_eq!(l.api, base.api);
            assert_eq!(l.marker, base.marker);
        }
    }
}
