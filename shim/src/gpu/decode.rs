//! One CUPTI activity record into one trace record, reading each field at
//! the offset the library's layout version gives (`cupti_sys::Layouts`);
//! records are never cast to structs.

use core::ffi::c_char;

use cupti_sys::consts::*;
use cupti_sys::read::Record as Raw;
use cupti_sys::{Layouts, MarkerLayout};
use stallscope_format::records::{
    Api, Device, Kernel, Marker, Memcpy, Memory, Memset, Overhead, Sync, api_domain, marker_flags,
    memory_op, overhead_kind,
};

/// A decoded record; names are still CUPTI's C strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoded {
    Kernel(Kernel, *const c_char),
    Memcpy(Memcpy),
    Memset(Memset),
    /// The device is filled in from the context later.
    Sync(Sync),
    Api(Api),
    Memory(Memory),
    Overhead(Overhead),
    /// With the name and domain strings.
    Marker(Marker, *const c_char, *const c_char),
    Device(Device, *const c_char),
    /// Timestamps unknown: CUPTI's incomplete records after a forced flush.
    Incomplete,
    /// A kind this consumer does not enable.
    Other(u32),
}

/// The size of a record of `kind` in this library's layouts.
pub fn record_size(l: &Layouts, kind: u32) -> Option<usize> {
    Some(match kind {
        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL | CUPTI_ACTIVITY_KIND_KERNEL => l.kernel.size,
        CUPTI_ACTIVITY_KIND_MEMCPY => l.memcpy.size,
        CUPTI_ACTIVITY_KIND_MEMSET => l.memset.size,
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION => l.sync.size,
        CUPTI_ACTIVITY_KIND_RUNTIME | CUPTI_ACTIVITY_KIND_DRIVER => l.api.size,
        CUPTI_ACTIVITY_KIND_MEMORY2 => l.memory.size,
        CUPTI_ACTIVITY_KIND_OVERHEAD => l.overhead.size,
        CUPTI_ACTIVITY_KIND_MARKER => l.marker.size,
        CUPTI_ACTIVITY_KIND_DEVICE => l.device.size,
        _ => return None,
    })
}

fn narrow(v: i32) -> u32 {
    v.max(0) as u32
}

/// Decodes one record; `t` maps CUPTI timestamps to CLOCK_MONOTONIC. None if
/// the record is shorter than its layout says.
pub fn decode(l: &Layouts, r: Raw<'_>, t: &dyn Fn(u64) -> u64) -> Option<Decoded> {
    let kind = r.kind()?;
    Some(match kind {
        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL | CUPTI_ACTIVITY_KIND_KERNEL => {
            let k = &l.kernel;
            let (start, end) = (r.u64(k.start)?, r.u64(k.end)?);
            if start == 0 || end == 0 {
                return Some(Decoded::Incomplete);
            }
            let shared = i64::from(r.i32(k.static_shared_memory)?.max(0))
                + i64::from(r.i32(k.dynamic_shared_memory)?.max(0));
            Decoded::Kernel(
                Kernel {
                    reserved: 0,
                    device: r.u32(k.device_id)?,
                    start: t(start),
                    end: t(end),
                    correlation: r.u32(k.correlation_id)?,
                    stream: r.u32(k.stream_id)?,
                    context: r.u32(k.context_id)?,
                    name: 0,
                    grid_x: narrow(r.i32(k.grid_x)?),
                    grid_y: narrow(r.i32(k.grid_y)?),
                    grid_z: narrow(r.i32(k.grid_z)?),
                    block_x: narrow(r.i32(k.block_x)?),
                    block_y: narrow(r.i32(k.block_y)?),
                    block_z: narrow(r.i32(k.block_z)?),
                    shared_mem: shared.min(u32::MAX.into()) as u32,
                    registers: u32::from(r.u16(k.registers_per_thread)?),
                },
                r.ptr(k.name)?,
            )
        }
        CUPTI_ACTIVITY_KIND_MEMCPY => {
            let m = &l.memcpy;
            let (start, end) = (r.u64(m.start)?, r.u64(m.end)?);
            if start == 0 || end == 0 {
                return Some(Decoded::Incomplete);
            }
            Decoded::Memcpy(Memcpy {
                copy_kind: r.u8(m.copy_kind)?,
                device: r.u32(m.device_id)?,
                start: t(start),
                end: t(end),
                correlation: r.u32(m.correlation_id)?,
                stream: r.u32(m.stream_id)?,
                context: r.u32(m.context_id)?,
                src_kind: r.u8(m.src_kind)?,
                dst_kind: r.u8(m.dst_kind)?,
                flags: r.u8(m.flags)?,
                bytes: r.u64(m.bytes)?,
            })
        }
        CUPTI_ACTIVITY_KIND_MEMSET => {
            let m = &l.memset;
            let (start, end) = (r.u64(m.start)?, r.u64(m.end)?);
            if start == 0 || end == 0 {
                return Some(Decoded::Incomplete);
            }
            Decoded::Memset(Memset {
                mem_kind: r.u16(m.memory_kind)?.min(u8::MAX.into()) as u8,
                device: r.u32(m.device_id)?,
                start: t(start),
                end: t(end),
                correlation: r.u32(m.correlation_id)?,
                stream: r.u32(m.stream_id)?,
                context: r.u32(m.context_id)?,
                value: r.u32(m.value)?,
                bytes: r.u64(m.bytes)?,
            })
        }
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION => {
            let s = &l.sync;
            let (start, end) = (r.u64(s.start)?, r.u64(s.end)?);
            if start == 0 || end == 0 {
                return Some(Decoded::Incomplete);
            }
            Decoded::Sync(Sync {
                sync_type: r.u32(s.sync_type)?.min(u8::MAX.into()) as u8,
                context: r.u32(s.context_id)?,
                start: t(start),
                end: t(end),
                correlation: r.u32(s.correlation_id)?,
                stream: r.u32(s.stream_id)?,
                event: r.u32(s.cuda_event_id)?,
                device: u32::MAX,
            })
        }
        CUPTI_ACTIVITY_KIND_RUNTIME | CUPTI_ACTIVITY_KIND_DRIVER => {
            let a = &l.api;
            Decoded::Api(Api {
                // The trace's own codes: CUPTI's domains are numbered the other way.
                domain: if kind == CUPTI_ACTIVITY_KIND_RUNTIME {
                    api_domain::RUNTIME
                } else {
                    api_domain::DRIVER
                },
                tid: r.u32(a.thread_id)?,
                start: t(r.u64(a.start)?),
                end: t(r.u64(a.end)?),
                correlation: r.u32(a.correlation_id)?,
                cbid: r.u32(a.cbid)?,
                result: r.u32(a.return_value)? as i32,
            })
        }
        CUPTI_ACTIVITY_KIND_MEMORY2 => {
            let m = &l.memory;
            let op = match r.u32(m.operation_type)? {
                CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION => memory_op::ALLOC,
                CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE => memory_op::FREE,
                _ => 0,
            };
            Decoded::Memory(Memory {
                op,
                device: r.u32(m.device_id)?,
                ts: t(r.u64(m.timestamp)?),
                address: r.u64(m.address)?,
                bytes: r.u64(m.bytes)?,
                correlation: r.u32(m.correlation_id)?,
                mem_kind: r.u32(m.memory_kind)?.min(u8::MAX.into()) as u8,
                is_async: u8::from(r.u32(m.is_async)? != 0),
                stream: r.u32(m.stream_id)?,
            })
        }
        CUPTI_ACTIVITY_KIND_OVERHEAD => {
            let o = &l.overhead;
            let object_kind = r.u32(o.object_kind)?;
            Decoded::Overhead(Overhead {
                overhead_kind: overhead_kind::from_cupti(r.u32(o.overhead_kind)?),
                object_id: object_id(&r, o.object_id, object_kind)?,
                start: t(r.u64(o.start)?),
                end: t(r.u64(o.end)?),
                object_kind: object_kind.min(u8::MAX.into()) as u8,
            })
        }
        CUPTI_ACTIVITY_KIND_MARKER => {
            let m: &MarkerLayout = &l.marker;
            let f = r.u32(m.flags)?;
            let mut flags = 0;
            for (cupti, ours) in [
                (
                    CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS,
                    marker_flags::INSTANT,
                ),
                (CUPTI_ACTIVITY_FLAG_MARKER_START, marker_flags::START),
                (CUPTI_ACTIVITY_FLAG_MARKER_END, marker_flags::END),
            ] {
                if f & cupti != 0 {
                    flags |= ours;
                }
            }
            let object_kind = r.u32(m.object_kind)?;
            let tid = if object_kind == CUPTI_ACTIVITY_OBJECT_THREAD {
                object_id(&r, m.object_id, object_kind)?
            } else {
                0
            };
            Decoded::Marker(
                Marker {
                    flags,
                    tid,
                    ts: t(r.u64(m.timestamp)?),
                    id: r.u32(m.id)?,
                    name: 0,
                    domain: 0,
                },
                r.ptr(m.name)?,
                r.ptr(m.domain)?,
            )
        }
        CUPTI_ACTIVITY_KIND_DEVICE => {
            let d = &l.device;
            Decoded::Device(
                Device {
                    reserved: 0,
                    device: r.u32(d.id)?,
                    global_mem: r.u64(d.global_memory_size)?,
                    name: 0,
                    sm_count: r.u32(d.num_multiprocessors)?,
                    cc_major: r.u32(d.compute_capability_major)?,
                    cc_minor: r.u32(d.compute_capability_minor)?,
                    mem_bandwidth_kbps: r.u64(d.global_memory_bandwidth)?,
                },
                r.ptr(d.name)?,
            )
        }
        other => Decoded::Other(other),
    })
}

/// The id inside a `CUpti_ActivityObjectKindId` union: `{processId,
/// threadId}` for processes and threads, `{deviceId, contextId, streamId}`
/// otherwise.
fn object_id(r: &Raw<'_>, at: usize, kind: u32) -> Option<u32> {
    let word = match kind {
        CUPTI_ACTIVITY_OBJECT_THREAD | CUPTI_ACTIVITY_OBJECT_CONTEXT => 1,
        CUPTI_ACTIVITY_OBJECT_STREAM => 2,
        _ => 0,
    };
    r.u32(at + 4 * word)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zeroed record of `size` bytes with fields written at offsets.
    struct Fake(Vec<u8>);
    impl Fake {
        fn new(size: usize, kind: u32) -> Self {
            let mut f = Fake(vec![0; size]);
            f.put(0, kind);
            f
        }
        fn put<T: Copy>(&mut self, at: usize, v: T) -> &mut Self {
            let n = size_of::<T>();
            // SAFETY: plain bytes of a Copy value.
            let bytes = unsafe { core::slice::from_raw_parts((&raw const v).cast::<u8>(), n) };
            self.0[at..at + n].copy_from_slice(bytes);
            self
        }
        fn raw(&self) -> Raw<'_> {
            Raw::new(&self.0)
        }
    }

    const SHIFT: u64 = 1_000;
    fn t(x: u64) -> u64 {
        x - SHIFT
    }

    #[test]
    fn kernels_of_every_version() {
        static NAME: &[u8] = b"gemm_kernel\0";
        for api in [18, 28, 130_001, 130_101, 130_301, 130_500] {
            let l = cupti_sys::layouts(api).unwrap();
            let k = &l.kernel;
            let mut f = Fake::new(k.size, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
            f.put(k.start, 5_000u64)
                .put(k.end, 9_000u64)
                .put(k.device_id, 2u32)
                .put(k.context_id, 3u32)
                .put(k.stream_id, 13u32)
                .put(k.correlation_id, 77u32)
                .put(k.grid_x, 8i32)
                .put(k.grid_y, 4i32)
                .put(k.grid_z, 1i32)
                .put(k.block_x, 128i32)
                .put(k.block_y, 1i32)
                .put(k.block_z, 1i32)
                .put(k.static_shared_memory, 1024i32)
                .put(k.dynamic_shared_memory, 512i32)
                .put(k.registers_per_thread, 40u16)
                .put(k.name, NAME.as_ptr() as u64);
            let Some(Decoded::Kernel(out, name)) = decode(&l, f.raw(), &t) else {
                panic!("api {api}");
            };
            assert_eq!(name, NAME.as_ptr().cast());
            assert_eq!(
                out,
                Kernel {
                    reserved: 0,
                    device: 2,
                    start: 4_000,
                    end: 8_000,
                    correlation: 77,
                    stream: 13,
                    context: 3,
                    name: 0,
                    grid_x: 8,
                    grid_y: 4,
                    grid_z: 1,
                    block_x: 128,
                    block_y: 1,
                    block_z: 1,
                    shared_mem: 1536,
                    registers: 40,
                },
                "api {api}"
            );
            // A record cut short is refused, not read past its end.
            assert_eq!(decode(&l, Raw::new(&f.0[..k.name + 4]), &t), None);
        }
    }

    #[test]
    fn copies_syncs_and_api_calls() {
        for api in [22, 28, 130_401] {
            let l = cupti_sys::layouts(api).unwrap();
            let m = &l.memcpy;
            let mut f = Fake::new(m.size, CUPTI_ACTIVITY_KIND_MEMCPY);
            f.put(m.copy_kind, 1u8)
                .put(m.src_kind, 2u8)
                .put(m.dst_kind, 3u8)
                .put(m.flags, 1u8)
                .put(m.bytes, 1u64 << 20)
                .put(m.start, 2_000u64)
                .put(m.end, 3_000u64)
                .put(m.stream_id, 14u32)
                .put(m.correlation_id, 5u32);
            let Some(Decoded::Memcpy(c)) = decode(&l, f.raw(), &t) else {
                panic!()
            };
            assert_eq!(
                (c.copy_kind, c.src_kind, c.dst_kind, c.flags, c.bytes),
                (1, 2, 3, 1, 1 << 20)
            );
            assert_eq!(
                (c.start, c.end, c.stream, c.correlation),
                (1_000, 2_000, 14, 5)
            );

            let s = &l.sync;
            let mut f = Fake::new(s.size, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
            f.put(
                s.sync_type,
                CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
            )
            .put(s.start, 2_000u64)
            .put(s.end, 2_500u64)
            .put(s.context_id, 1u32)
            .put(s.stream_id, 13u32)
            .put(s.correlation_id, 9u32);
            let Some(Decoded::Sync(y)) = decode(&l, f.raw(), &t) else {
                panic!()
            };
            assert_eq!(
                (y.sync_type, y.context, y.stream, y.correlation),
                (3, 1, 13, 9)
            );

            let a = &l.api;
            let mut f = Fake::new(a.size, CUPTI_ACTIVITY_KIND_RUNTIME);
            f.put(a.cbid, 211u32)
                .put(a.start, 1_500u64)
                .put(a.end, 1_600u64)
                .put(a.thread_id, 4242u32)
                .put(a.correlation_id, 9u32)
                .put(a.return_value, 2u32);
            let Some(Decoded::Api(x)) = decode(&l, f.raw(), &t) else {
                panic!()
            };
            assert_eq!(
                (x.domain, x.cbid, x.tid, x.start, x.correlation, x.result),
                (api_domain::RUNTIME, 211, 4242, 500, 9, 2)
            );
            f.put(0, CUPTI_ACTIVITY_KIND_DRIVER);
            let Some(Decoded::Api(x)) = decode(&l, f.raw(), &t) else {
                panic!()
            };
            assert_eq!(x.domain, api_domain::DRIVER);
        }
    }

    #[test]
    fn incomplete_and_unknown_records() {
        let l = cupti_sys::layouts(28).unwrap();
        let f = Fake::new(l.kernel.size, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        assert_eq!(decode(&l, f.raw(), &t), Some(Decoded::Incomplete));
        let f = Fake::new(64, 9999);
        assert_eq!(decode(&l, f.raw(), &t), Some(Decoded::Other(9999)));
        assert_eq!(record_size(&l, 9999), None);
        assert_eq!(record_size(&l, CUPTI_ACTIVITY_KIND_RUNTIME), Some(40));
    }

    #[test]
    fn memory_overhead_marker_device() {
        let l = cupti_sys::layouts(130_500).unwrap();
        let m = &l.memory;
        let mut f = Fake::new(m.size, CUPTI_ACTIVITY_KIND_MEMORY2);
        f.put(
            m.operation_type,
            CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE,
        )
        .put(m.memory_kind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE)
        .put(m.bytes, 4096u64)
        .put(m.address, 0xdead_0000u64)
        .put(m.timestamp, 7_000u64)
        .put(m.is_async, 1u32);
        let Some(Decoded::Memory(x)) = decode(&l, f.raw(), &t) else {
            panic!()
        };
        assert_eq!(
            (x.op, x.mem_kind, x.bytes, x.address, x.ts, x.is_async),
            (memory_op::FREE, 3, 4096, 0xdead_0000, 6_000, 1)
        );

        let o = &l.overhead;
        let mut f = Fake::new(o.size, CUPTI_ACTIVITY_KIND_OVERHEAD);
        f.put(o.overhead_kind, CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH)
            .put(o.object_kind, CUPTI_ACTIVITY_OBJECT_THREAD)
            .put(o.object_id, 11u32)
            .put(o.object_id + 4, 4242u32)
            .put(o.start, 2_000u64)
            .put(o.end, 3_000u64);
        let Some(Decoded::Overhead(x)) = decode(&l, f.raw(), &t) else {
            panic!()
        };
        assert_eq!(
            (x.overhead_kind, x.object_id, x.object_kind, x.start),
            (overhead_kind::CUPTI_BUFFER_FLUSH, 4242, 2, 1_000)
        );

        let mk = &l.marker;
        let mut f = Fake::new(mk.size, CUPTI_ACTIVITY_KIND_MARKER);
        f.put(mk.flags, CUPTI_ACTIVITY_FLAG_MARKER_START)
            .put(mk.timestamp, 5_000u64)
            .put(mk.id, 3u32)
            .put(mk.object_kind, CUPTI_ACTIVITY_OBJECT_THREAD)
            .put(mk.object_id + 4, 4242u32);
        let Some(Decoded::Marker(x, name, _)) = decode(&l, f.raw(), &t) else {
            panic!()
        };
        assert_eq!(
            (x.flags, x.tid, x.ts, x.id),
            (marker_flags::START, 4242, 4_000, 3)
        );
        assert!(name.is_null());

        let d = &l.device;
        let mut f = Fake::new(d.size, CUPTI_ACTIVITY_KIND_DEVICE);
        f.put(d.id, 1u32)
            .put(d.global_memory_size, 80u64 << 30)
            .put(d.num_multiprocessors, 132u32)
            .put(d.compute_capability_major, 9u32)
            .put(d.compute_capability_minor, 0u32)
            .put(d.global_memory_bandwidth, 4_800_000_000u64);
        let Some(Decoded::Device(x, _)) = decode(&l, f.raw(), &t) else {
            panic!()
        };
        assert_eq!(
            (
                x.device,
                x.global_mem,
                x.sm_count,
                x.cc_major,
                x.mem_bandwidth_kbps
            ),
            (1, 80 << 30, 132, 9, 4_800_000_000)
        );
    }
}
