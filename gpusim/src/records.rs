//! Activity records: what happened (on the simulation clock), and its bytes in
//! the exact struct a given CUPTI version emits.
//!
//! The bytes come from the bindgen structs of `cupti-sys`, not from the
//! registry's offsets, so that a consumer reading by offset is checked against
//! an independent source.

use std::ffi::{CStr, c_char};
use std::mem::size_of;

use cupti_sys::consts::*;
use cupti_sys::{RecordVersions, v12, v13};

/// One activity record, with simulation-clock times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rec {
    /// RUNTIME (or DRIVER) API call.
    Api {
        kind: u32,
        cbid: u32,
        start: u64,
        end: u64,
        pid: u32,
        tid: u32,
        corr: u32,
        ret: u32,
    },
    /// `kind` is CONCURRENT_KERNEL or KERNEL.
    Kernel {
        kind: u32,
        name: &'static CStr,
        start: u64,
        end: u64,
        stream_id: u32,
        corr: u32,
        grid_id: i64,
    },
    Memcpy {
        copy_kind: u8,
        src_kind: u8,
        dst_kind: u8,
        is_async: bool,
        bytes: u64,
        start: u64,
        end: u64,
        stream_id: u32,
        corr: u32,
    },
    Memset {
        value: u32,
        bytes: u64,
        is_async: bool,
        start: u64,
        end: u64,
        stream_id: u32,
        corr: u32,
    },
    Sync {
        sync_type: u32,
        start: u64,
        end: u64,
        stream_id: u32,
        corr: u32,
    },
    /// MEMORY2: an allocation or a release.
    Memory {
        operation: u32,
        memory_kind: u32,
        corr: u32,
        address: u64,
        bytes: u64,
        at: u64,
        pid: u32,
        stream_id: u32,
    },
    /// MARKER: an NVTX range start (with its name) or end.
    Marker {
        flags: u32,
        at: u64,
        id: u32,
        pid: u32,
        tid: u32,
        name: Option<&'static CStr>,
    },
    Device {
        name: &'static CStr,
        memory_bytes: u64,
    },
    Overhead {
        overhead_kind: u32,
        start: u64,
        end: u64,
        pid: u32,
        tid: u32,
    },
}

/// The simulated device's fixed properties (an H100/H200-class part).
pub const SM_COUNT: u32 = 132;
pub const COMPUTE_CAPABILITY: (u32, u32) = (9, 0);
pub const DEVICE_ID: u32 = 0;
pub const CONTEXT_ID: u32 = 1;

impl Rec {
    /// The activity kind the record is filed under.
    pub fn kind(&self) -> u32 {
        match self {
            Rec::Api { kind, .. } | Rec::Kernel { kind, .. } => *kind,
            Rec::Memcpy { .. } => CUPTI_ACTIVITY_KIND_MEMCPY,
            Rec::Memset { .. } => CUPTI_ACTIVITY_KIND_MEMSET,
            Rec::Sync { .. } => CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
            Rec::Memory { .. } => CUPTI_ACTIVITY_KIND_MEMORY2,
            Rec::Marker { .. } => CUPTI_ACTIVITY_KIND_MARKER,
            Rec::Device { .. } => CUPTI_ACTIVITY_KIND_DEVICE,
            Rec::Overhead { .. } => CUPTI_ACTIVITY_KIND_OVERHEAD,
        }
    }
}

/// A record's bytes: `size_of::<T>()` of a zeroed `T` with `fill` applied.
///
/// # Safety
/// `T` must be a plain C struct for which all-zero bytes are a valid value and
/// whose alignment is at most 8 (true of every CUPTI record struct).
unsafe fn encode<T>(fill: impl FnOnce(&mut T)) -> Vec<u8> {
    let size = size_of::<T>();
    assert!(align_of::<T>() <= 8);
    let mut words = vec![0u64; size.div_ceil(8)];
    // SAFETY: the buffer is 8-aligned, zeroed and at least `size` bytes, and
    // zeroed bytes are a valid `T` (caller's contract). Assigning fields
    // through the reference leaves padding bytes zero.
    let rec = unsafe { &mut *words.as_mut_ptr().cast::<T>() };
    fill(rec);
    let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    bytes.truncate(size);
    bytes
}

fn ptr(s: Option<&'static CStr>) -> *const c_char {
    s.map_or(std::ptr::null(), CStr::as_ptr)
}

macro_rules! kernel {
    ($T:ty, $kind:expr, $name:expr, $start:expr, $end:expr, $stream:expr, $corr:expr, $grid:expr) => {
        // SAFETY: a CUPTI record struct.
        unsafe {
            encode::<$T>(|r| {
                r.kind = $kind;
                r.registersPerThread = 32;
                r.start = $start;
                r.end = $end;
                r.completed = $end;
                r.deviceId = DEVICE_ID;
                r.contextId = CONTEXT_ID;
                r.streamId = $stream;
                r.gridX = 1;
                r.gridY = 1;
                r.gridZ = 1;
                r.blockX = 128;
                r.blockY = 1;
                r.blockZ = 1;
                r.correlationId = $corr;
                r.gridId = $grid;
                r.name = $name.as_ptr();
            })
        }
    };
}

macro_rules! memcpy {
    ($T:ty, $ck:expr, $sk:expr, $dk:expr, $flags:expr, $bytes:expr, $start:expr, $end:expr, $stream:expr, $corr:expr) => {
        // SAFETY: a CUPTI record struct.
        unsafe {
            encode::<$T>(|r| {
                r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
                r.copyKind = $ck;
                r.srcKind = $sk;
                r.dstKind = $dk;
                r.flags = $flags;
                r.bytes = $bytes;
                r.start = $start;
                r.end = $end;
                r.deviceId = DEVICE_ID;
                r.contextId = CONTEXT_ID;
                r.streamId = $stream;
                r.correlationId = $corr;
                r.runtimeCorrelationId = $corr;
            })
        }
    };
}

macro_rules! memset {
    ($T:ty, $value:expr, $bytes:expr, $flags:expr, $start:expr, $end:expr, $stream:expr, $corr:expr) => {
        // SAFETY: a CUPTI record struct.
        unsafe {
            encode::<$T>(|r| {
                r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
                r.value = $value;
                r.bytes = $bytes;
                r.start = $start;
                r.end = $end;
                r.deviceId = DEVICE_ID;
                r.contextId = CONTEXT_ID;
                r.streamId = $stream;
                r.correlationId = $corr;
                r.flags = $flags;
                r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE as u16;
            })
        }
    };
}

macro_rules! sync {
    ($T:ty, $ty:expr, $start:expr, $end:expr, $stream:expr, $corr:expr) => {
        // SAFETY: a CUPTI record struct.
        unsafe {
            encode::<$T>(|r| {
                r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
                r.type_ = $ty;
                r.start = $start;
                r.end = $end;
                r.correlationId = $corr;
                r.contextId = CONTEXT_ID;
                r.streamId = $stream;
                r.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
            })
        }
    };
}

macro_rules! memory {
    ($T:ty, $op:expr, $mk:expr, $corr:expr, $addr:expr, $bytes:expr, $at:expr, $pid:expr, $stream:expr) => {
        // SAFETY: a CUPTI record struct.
        unsafe {
            encode::<$T>(|r| {
                r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
                r.memoryOperationType = $op;
                r.memoryKind = $mk;
                r.correlationId = $corr;
                r.address = $addr;
                r.bytes = $bytes;
                r.timestamp = $at;
                r.processId = $pid;
                r.deviceId = DEVICE_ID;
                r.contextId = CONTEXT_ID;
                r.streamId = $stream;
            })
        }
    };
}

macro_rules! device {
    ($T:ty, $name:expr, $mem:expr) => {
        // SAFETY: a CUPTI record struct.
        unsafe {
            encode::<$T>(|r| {
                r.kind = CUPTI_ACTIVITY_KIND_DEVICE;
                r.flags = cupti_sys::v12::CUPTI_ACTIVITY_FLAG_DEVICE_CONCURRENT_KERNELS;
                r.globalMemoryBandwidth = 4_800_000_000; // KB/s
                r.globalMemorySize = $mem;
                r.constantMemorySize = 65_536;
                r.l2CacheSize = 50 << 20;
                r.numThreadsPerWarp = 32;
                r.coreClockRate = 1_980_000; // kHz
                r.numMemcpyEngines = 3;
                r.numMultiprocessors = SM_COUNT;
                r.maxIPC = 4;
                r.maxWarpsPerMultiprocessor = 64;
                r.maxBlocksPerMultiprocessor = 32;
                r.maxSharedMemoryPerMultiprocessor = 233_472;
                r.maxRegistersPerMultiprocessor = 65_536;
                r.maxRegistersPerBlock = 65_536;
                r.maxSharedMemoryPerBlock = 49_152;
                r.maxThreadsPerBlock = 1024;
                r.maxBlockDimX = 1024;
                r.maxBlockDimY = 1024;
                r.maxBlockDimZ = 64;
                r.maxGridDimX = i32::MAX as u32;
                r.maxGridDimY = 65_535;
                r.maxGridDimZ = 65_535;
                r.computeCapabilityMajor = COMPUTE_CAPABILITY.0;
                r.computeCapabilityMinor = COMPUTE_CAPABILITY.1;
                r.id = DEVICE_ID;
                r.uuid.bytes = b"gpusim-device-00".map(|b| b as c_char);
                r.name = $name.as_ptr();
                r.isCudaVisible = 1;
            })
        }
    };
}

macro_rules! overhead {
    ($T:ty, $ok:expr, $start:expr, $end:expr, $pid:expr, $tid:expr) => {
        // SAFETY: a CUPTI record struct.
        unsafe {
            encode::<$T>(|r| {
                r.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
                r.overheadKind = $ok;
                r.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
                r.objectId.pt.processId = $pid;
                r.objectId.pt.threadId = $tid;
                r.start = $start;
                r.end = $end;
            })
        }
    };
}

/// The record's bytes in the layout of `v`, with times mapped by `stamp`.
/// `None` when `v` names a struct version gpusim does not build.
pub fn encode_record(rec: &Rec, v: &RecordVersions, stamp: impl Fn(u64) -> u64) -> Option<Vec<u8>> {
    Some(match *rec {
        Rec::Api {
            kind,
            cbid,
            start,
            end,
            pid,
            tid,
            corr,
            ret,
        } => {
            // SAFETY: a CUPTI record struct.
            unsafe {
                encode::<v12::CUpti_ActivityAPI>(|r| {
                    r.kind = kind;
                    r.cbid = cbid;
                    r.start = stamp(start);
                    r.end = stamp(end);
                    r.processId = pid;
                    r.threadId = tid;
                    r.correlationId = corr;
                    r.returnValue = ret;
                })
            }
        }
        Rec::Kernel {
            kind,
            name,
            start,
            end,
            stream_id,
            corr,
            grid_id,
        } => {
            let (s, e) = (stamp(start), stamp(end));
            match v.kernel {
                9 => kernel!(
                    v12::CUpti_ActivityKernel9,
                    kind,
                    name,
                    s,
                    e,
                    stream_id,
                    corr,
                    grid_id
                ),
                10 => kernel!(
                    v13::CUpti_ActivityKernel10,
                    kind,
                    name,
                    s,
                    e,
                    stream_id,
                    corr,
                    grid_id
                ),
                11 => kernel!(
                    v13::CUpti_ActivityKernel11,
                    kind,
                    name,
                    s,
                    e,
                    stream_id,
                    corr,
                    grid_id
                ),
                12 => kernel!(
                    v13::CUpti_ActivityKernel12,
                    kind,
                    name,
                    s,
                    e,
                    stream_id,
                    corr,
                    grid_id
                ),
                13 => kernel!(
                    v13::CUpti_ActivityKernel13,
                    kind,
                    name,
                    s,
                    e,
                    stream_id,
                    corr,
                    grid_id
                ),
                _ => return None,
            }
        }
        Rec::Memcpy {
            copy_kind,
            src_kind,
            dst_kind,
            is_async,
            bytes,
            start,
            end,
            stream_id,
            corr,
        } => {
            let flags = if is_async {
                CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC as u8
            } else {
                0
            };
            let (s, e) = (stamp(start), stamp(end));
            let (ck, sk, dk) = (copy_kind, src_kind, dst_kind);
            match v.memcpy {
                5 => memcpy!(
                    v12::CUpti_ActivityMemcpy5,
                    ck,
                    sk,
                    dk,
                    flags,
                    bytes,
                    s,
                    e,
                    stream_id,
                    corr
                ),
                6 => memcpy!(
                    v12::CUpti_ActivityMemcpy6,
                    ck,
                    sk,
                    dk,
                    flags,
                    bytes,
                    s,
                    e,
                    stream_id,
                    corr
                ),
                7 => memcpy!(
                    v13::CUpti_ActivityMemcpy7,
                    ck,
                    sk,
                    dk,
                    flags,
                    bytes,
                    s,
                    e,
                    stream_id,
                    corr
                ),
                _ => return None,
            }
        }
        Rec::Memset {
            value,
            bytes,
            is_async,
            start,
            end,
            stream_id,
            corr,
        } => {
            let flags = if is_async {
                CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC as u16
            } else {
                0
            };
            let (s, e) = (stamp(start), stamp(end));
            match v.memset {
                4 => memset!(
                    v12::CUpti_ActivityMemset4,
                    value,
                    bytes,
                    flags,
                    s,
                    e,
                    stream_id,
                    corr
                ),
                5 => memset!(
                    v13::CUpti_ActivityMemset5,
                    value,
                    bytes,
                    flags,
                    s,
                    e,
                    stream_id,
                    corr
                ),
                _ => return None,
            }
        }
        Rec::Sync {
            sync_type,
            start,
            end,
            stream_id,
            corr,
        } => {
            let (s, e) = (stamp(start), stamp(end));
            match v.sync {
                1 => sync!(
                    v12::CUpti_ActivitySynchronization,
                    sync_type,
                    s,
                    e,
                    stream_id,
                    corr
                ),
                2 => sync!(
                    v12::CUpti_ActivitySynchronization2,
                    sync_type,
                    s,
                    e,
                    stream_id,
                    corr
                ),
                _ => return None,
            }
        }
        Rec::Memory {
            operation,
            memory_kind,
            corr,
            address,
            bytes,
            at,
            pid,
            stream_id,
        } => {
            let t = stamp(at);
            let (op, mk) = (operation, memory_kind);
            match v.memory {
                3 => memory!(
                    v12::CUpti_ActivityMemory3,
                    op,
                    mk,
                    corr,
                    address,
                    bytes,
                    t,
                    pid,
                    stream_id
                ),
                4 => memory!(
                    v12::CUpti_ActivityMemory4,
                    op,
                    mk,
                    corr,
                    address,
                    bytes,
                    t,
                    pid,
                    stream_id
                ),
                _ => return None,
            }
        }
        Rec::Marker {
            flags,
            at,
            id,
            pid,
            tid,
            name,
        } => {
            // SAFETY: a CUPTI record struct.
            unsafe {
                encode::<v12::CUpti_ActivityMarker2>(|r| {
                    r.kind = CUPTI_ACTIVITY_KIND_MARKER;
                    r.flags = flags;
                    r.timestamp = stamp(at);
                    r.id = id;
                    r.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
                    r.objectId.pt.processId = pid;
                    r.objectId.pt.threadId = tid;
                    r.name = ptr(name);
                })
            }
        }
        Rec::Device { name, memory_bytes } => match v.device {
            4 => device!(v12::CUpti_ActivityDevice4, name, memory_bytes),
            5 => device!(v12::CUpti_ActivityDevice5, name, memory_bytes),
            6 => device!(v13::CUpti_ActivityDevice6, name, memory_bytes),
            _ => return None,
        },
        Rec::Overhead {
            overhead_kind,
            start,
            end,
            pid,
            tid,
        } => {
            let (s, e, ok) = (stamp(start), stamp(end), overhead_kind);
            match v.overhead {
                1 => overhead!(v12::CUpti_ActivityOverhead, ok, s, e, pid, tid),
                2 => overhead!(v12::CUpti_ActivityOverhead2, ok, s, e, pid, tid),
                3 => overhead!(v12::CUpti_ActivityOverhead3, ok, s, e, pid, tid),
                _ => return None,
            }
        }
    })
}

/// The size of a record of `kind` under `layouts`, as
/// `cuptiActivityGetNextRecord` needs it to step through a buffer.
pub fn record_size(kind: u32, l: &cupti_sys::Layouts) -> Option<usize> {
    Some(match kind {
        CUPTI_ACTIVITY_KIND_RUNTIME | CUPTI_ACTIVITY_KIND_DRIVER => l.api.size,
        CUPTI_ACTIVITY_KIND_KERNEL | CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL => l.kernel.size,
        CUPTI_ACTIVITY_KIND_MEMCPY => l.memcpy.size,
        CUPTI_ACTIVITY_KIND_MEMSET => l.memset.size,
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION => l.sync.size,
        CUPTI_ACTIVITY_KIND_MEMORY2 => l.memory.size,
        CUPTI_ACTIVITY_KIND_MARKER => l.marker.size,
        CUPTI_ACTIVITY_KIND_MARKER_DATA => l.marker_data.size,
        CUPTI_ACTIVITY_KIND_DEVICE => l.device.size,
        CUPTI_ACTIVITY_KIND_OVERHEAD => l.overhead.size,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cupti_sys::read::Record;

    /// Every API version a wheel reported, plus 19.
    const VERSIONS: &[u32] = &[
        18, 19, 20, 21, 22, 23, 24, 26, 27, 28, 130_000, 130_001, 130_100, 130_101, 130_200,
        130_201, 130_202, 130_300, 130_301, 130_400, 130_401, 130_500,
    ];

    fn stamp(t: u64) -> u64 {
        t + 1_000
    }

    fn layouts(v: u32) -> cupti_sys::Layouts {
        cupti_sys::layouts(v).unwrap()
    }

    fn bytes(rec: &Rec, l: &cupti_sys::Layouts) -> Vec<u8> {
        let b = encode_record(rec, &l.versions, stamp).unwrap();
        assert_eq!(Some(b.len()), record_size(rec.kind(), l), "{rec:?}");
        let r = Record::new(&b);
        assert_eq!(r.kind(), Some(rec.kind()));
        b
    }

    #[test]
    fn kernel_round_trip() {
        let name = c"gemm_kernel";
        for &v in VERSIONS {
            let l = layouts(v);
            let rec = Rec::Kernel {
                kind: CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                name,
                start: 10,
                end: 20,
                stream_id: 13,
                corr: 77,
                grid_id: 5,
            };
            let b = bytes(&rec, &l);
            let (r, k) = (Record::new(&b), l.kernel);
            assert_eq!(r.u64(k.start), Some(1_010), "{v}");
            assert_eq!(r.u64(k.end), Some(1_020));
            assert_eq!(r.u64(k.completed), Some(1_020));
            assert_eq!(r.u32(k.stream_id), Some(13));
            assert_eq!(r.u32(k.correlation_id), Some(77));
            assert_eq!(r.u32(k.device_id), Some(DEVICE_ID));
            assert_eq!(r.u32(k.context_id), Some(CONTEXT_ID));
            assert_eq!(r.i64(k.grid_id), Some(5));
            assert_eq!(r.ptr(k.name), Some(name.as_ptr()));
            assert_eq!(r.u16(k.registers_per_thread), Some(32));
            assert_eq!(
                [k.grid_x, k.grid_y, k.grid_z, k.block_x].map(|o| r.i32(o).unwrap()),
                [1, 1, 1, 128]
            );
        }
    }

    #[test]
    fn memcpy_memset_sync_round_trip() {
        for &v in VERSIONS {
            let l = layouts(v);
            let b = bytes(
                &Rec::Memcpy {
                    copy_kind: 1,
                    src_kind: 2,
                    dst_kind: 3,
                    is_async: true,
                    bytes: 4096,
                    start: 1,
                    end: 2,
                    stream_id: 14,
                    corr: 9,
                },
                &l,
            );
            let (r, m) = (Record::new(&b), l.memcpy);
            assert_eq!(
                [m.copy_kind, m.src_kind, m.dst_kind].map(|o| r.u8(o).unwrap()),
                [1, 2, 3],
                "{v}"
            );
            assert_eq!(r.u8(m.flags), Some(CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC as u8));
            assert_eq!(r.u64(m.bytes), Some(4096));
            assert_eq!((r.u64(m.start), r.u64(m.end)), (Some(1_001), Some(1_002)));
            assert_eq!(
                (r.u32(m.stream_id), r.u32(m.correlation_id)),
                (Some(14), Some(9))
            );
            assert_eq!(r.u32(m.runtime_correlation_id), Some(9));

            let b = bytes(
                &Rec::Memset {
                    value: 0xab,
                    bytes: 64,
                    is_async: false,
                    start: 3,
                    end: 4,
                    stream_id: 7,
                    corr: 10,
                },
                &l,
            );
            let (r, m) = (Record::new(&b), l.memset);
            assert_eq!(r.u32(m.value), Some(0xab), "{v}");
            assert_eq!(r.u64(m.bytes), Some(64));
            assert_eq!((r.u64(m.start), r.u64(m.end)), (Some(1_003), Some(1_004)));
            assert_eq!(
                (r.u32(m.stream_id), r.u32(m.correlation_id)),
                (Some(7), Some(10))
            );
            assert_eq!(
                r.u16(m.memory_kind),
                Some(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE as u16)
            );

            let b = bytes(
                &Rec::Sync {
                    sync_type: CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
                    start: 5,
                    end: 6,
                    stream_id: 13,
                    corr: 11,
                },
                &l,
            );
            let (r, s) = (Record::new(&b), l.sync);
            assert_eq!(
                r.u32(s.sync_type),
                Some(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE),
                "{v}"
            );
            assert_eq!((r.u64(s.start), r.u64(s.end)), (Some(1_005), Some(1_006)));
            assert_eq!(
                (r.u32(s.stream_id), r.u32(s.correlation_id)),
                (Some(13), Some(11))
            );
            assert_eq!(r.u32(s.context_id), Some(CONTEXT_ID));
            if let Some(off) = s.return_value {
                assert_eq!(r.u32(off), Some(0));
            }
        }
    }

    #[test]
    fn api_memory_marker_device_overhead_round_trip() {
        for &v in VERSIONS {
            let l = layouts(v);
            let b = bytes(
                &Rec::Api {
                    kind: CUPTI_ACTIVITY_KIND_RUNTIME,
                    cbid: 211,
                    start: 1,
                    end: 2,
                    pid: 3,
                    tid: 4,
                    corr: 5,
                    ret: 2,
                },
                &l,
            );
            let (r, a) = (Record::new(&b), l.api);
            assert_eq!(
                [
                    a.cbid,
                    a.process_id,
                    a.thread_id,
                    a.correlation_id,
                    a.return_value
                ]
                .map(|o| r.u32(o).unwrap()),
                [211, 3, 4, 5, 2]
            );
            assert_eq!((r.u64(a.start), r.u64(a.end)), (Some(1_001), Some(1_002)));

            let b = bytes(
                &Rec::Memory {
                    operation: CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                    memory_kind: CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                    corr: 6,
                    address: 0x7f00_0000_0000,
                    bytes: 1 << 20,
                    at: 7,
                    pid: 8,
                    stream_id: 9,
                },
                &l,
            );
            let (r, m) = (Record::new(&b), l.memory);
            assert_eq!(
                r.u32(m.operation_type),
                Some(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION),
                "{v}"
            );
            assert_eq!(
                r.u32(m.memory_kind),
                Some(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE)
            );
            assert_eq!(r.u32(m.correlation_id), Some(6));
            assert_eq!(r.u64(m.address), Some(0x7f00_0000_0000));
            assert_eq!(r.u64(m.bytes), Some(1 << 20));
            assert_eq!(r.u64(m.timestamp), Some(1_007));
            assert_eq!(
                (r.u32(m.process_id), r.u32(m.stream_id)),
                (Some(8), Some(9))
            );

            let b = bytes(
                &Rec::Marker {
                    flags: CUPTI_ACTIVITY_FLAG_MARKER_START,
                    at: 8,
                    id: 42,
                    pid: 1,
                    tid: 2,
                    name: Some(c"step"),
                },
                &l,
            );
            let (r, m) = (Record::new(&b), l.marker);
            assert_eq!(r.u32(m.flags), Some(CUPTI_ACTIVITY_FLAG_MARKER_START));
            assert_eq!(r.u64(m.timestamp), Some(1_008));
            assert_eq!(r.u32(m.id), Some(42));
            assert_eq!(r.u32(m.object_kind), Some(CUPTI_ACTIVITY_OBJECT_THREAD));
            assert_eq!(
                (r.u32(m.object_id), r.u32(m.object_id + 4)),
                (Some(1), Some(2))
            );
            assert_eq!(r.ptr(m.name), Some(c"step".as_ptr()));
            assert_eq!(r.ptr(m.domain), Some(std::ptr::null()));

            let b = bytes(
                &Rec::Device {
                    name: c"gpusim",
                    memory_bytes: 80 << 30,
                },
                &l,
            );
            let (r, d) = (Record::new(&b), l.device);
            assert_eq!(r.u64(d.global_memory_size), Some(80 << 30), "{v}");
            assert_eq!(r.u32(d.num_multiprocessors), Some(SM_COUNT));
            assert_eq!(
                (
                    r.u32(d.compute_capability_major),
                    r.u32(d.compute_capability_minor)
                ),
                (Some(9), Some(0))
            );
            assert_eq!(r.ptr(d.name), Some(c"gpusim".as_ptr()));
            assert_eq!(r.u32(d.id), Some(DEVICE_ID));

            let b = bytes(
                &Rec::Overhead {
                    overhead_kind: CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH,
                    start: 1,
                    end: 3,
                    pid: 5,
                    tid: 6,
                },
                &l,
            );
            let (r, o) = (Record::new(&b), l.overhead);
            assert_eq!(
                r.u32(o.overhead_kind),
                Some(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH)
            );
            assert_eq!((r.u64(o.start), r.u64(o.end)), (Some(1_001), Some(1_003)));
            assert_eq!(
                (r.u32(o.object_id), r.u32(o.object_id + 4)),
                (Some(5), Some(6))
            );
        }
    }

    #[test]
    fn unknown_struct_versions_are_not_encoded() {
        let mut v = layouts(28).versions;
        v.kernel = 8;
        let rec = Rec::Kernel {
            kind: CUPTI_ACTIVITY_KIND_KERNEL,
            name: c"k",
            start: 0,
            end: 0,
            stream_id: 0,
            corr: 0,
            grid_id: 0,
        };
        assert_eq!(encode_record(&rec, &v, stamp), None);
    }
}
