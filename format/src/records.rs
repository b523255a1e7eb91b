//! Every record kind: its bytes, encoder and decoder.
//!
//! A record starts with a 4-byte header: `len: u16` (total bytes, a multiple of 8),
//! `kind: u8`, `aux: u8` (a small kind-specific field). Records are 8-byte aligned.
//! A reader skips kinds it does not know, and accepts records longer than it
//! expects (newer producers may append fields), so the format can grow.
//!
//! Times are CLOCK_MONOTONIC nanoseconds. Strings are interned: a [`Record::String`]
//! defines an id that other records refer to; id 0 means "none".

use crate::bytes::{align8, get, put};
use crate::error::{FormatError, FormatErrorKind};

/// Bytes of the common record header.
pub const RECORD_HEADER: usize = 4;
/// Longest encodable record.
pub const MAX_RECORD: usize = 65528;
/// Bytes before the text of a string record.
pub const STRING_HEADER: usize = 16;
/// Longest string a record can carry; longer strings are cut.
pub const MAX_STRING: usize = MAX_RECORD - STRING_HEADER;
/// Kind code of string records.
pub const STRING_KIND: u8 = 2;

macro_rules! fixed_records {
    ($(
        $(#[$meta:meta])*
        $name:ident = $kind:literal, len $len:literal, aux $aux:ident {
            $( $(#[$fmeta:meta])* $off:literal $field:ident : $ty:ty ),* $(,)?
        }
    )*) => {
        $(
            $(#[$meta])*
            #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
            pub struct $name {
                pub $aux: u8,
                $( $(#[$fmeta])* pub $field: $ty, )*
            }

            impl $name {
                pub const KIND: u8 = $kind;
                pub const LEN: usize = $len;
                /// (offset, size) of every body field, for layout tests.
                pub const FIELDS: &'static [(usize, usize)] = &[$(($off, size_of::<$ty>())),*];

                /// Writes the whole record into `out[..Self::LEN]`.
                #[inline(always)]
                pub fn encode(&self, out: &mut [u8]) {
                    put(out, 0, $len as u16);
                    put(out, 2, $kind as u8);
                    put(out, 3, self.$aux);
                    $( put(out, $off, self.$field); )*
                }

                /// Reads a record whose length was already checked against `LEN`.
                #[inline]
                pub fn decode(rec: &[u8]) -> Self {
                    // One length check here lets the compiler drop the
                    // per-field ones: every offset is below LEN.
                    let rec: &[u8; $len] = rec[..$len].try_into().expect("sliced to LEN");
                    Self { $aux: get(rec, 3), $( $field: get(rec, $off), )* }
                }
            }
        )*

        /// One decoded record.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Record<'a> {
            $( $name($name), )*
            /// An interned string definition.
            String { id: u32, text: &'a [u8] },
            /// A kind this reader does not know; skipped by analyses.
            Unknown { kind: u8, bytes: &'a [u8] },
        }

        impl<'a> Record<'a> {
            /// Decodes the record at the start of `rec` (exactly one record's bytes).
            /// `offset` is used for errors only.
            pub fn decode(rec: &'a [u8], offset: u64) -> Result<Record<'a>, FormatError> {
                let kind = rec[2];
                let len = rec.len();
                match kind {
                    $( $kind => {
                        check_len(kind, len, $len, offset)?;
                        Ok(Record::$name($name::decode(rec)))
                    } )*
                    STRING_KIND => decode_string(rec, offset),
                    _ => Ok(Record::Unknown { kind, bytes: rec }),
                }
            }

            /// The kind name used by `stallscope dump`.
            pub fn kind_name(&self) -> &'static str {
                match self {
                    $( Record::$name(_) => stringify!($name), )*
                    Record::String { .. } => "String",
                    Record::Unknown { .. } => "Unknown",
                }
            }
        }

        #[cfg(test)]
        pub(crate) const ALL_LAYOUTS: &[(&str, u8, usize, &[(usize, usize)])] =
            &[$((stringify!($name), $kind, $len, $name::FIELDS)),*];
    };
}

fn check_len(kind: u8, len: usize, min: usize, offset: u64) -> Result<(), FormatError> {
    if len < min {
        return Err(FormatError::at(
            offset,
            FormatErrorKind::ShortRecord {
                kind,
                len: len as u64,
                min: min as u64,
            },
        ));
    }
    Ok(())
}

fn decode_string(rec: &[u8], offset: u64) -> Result<Record<'_>, FormatError> {
    check_len(STRING_KIND, rec.len(), STRING_HEADER, offset)?;
    let id: u32 = get(rec, 4);
    let n: u32 = get(rec, 8);
    if id == 0 {
        return Err(FormatError::at(
            offset,
            FormatErrorKind::BadString("id 0 is reserved"),
        ));
    }
    let text = rec
        .get(STRING_HEADER..STRING_HEADER.saturating_add(n as usize))
        .ok_or_else(|| {
            FormatError::at(
                offset,
                FormatErrorKind::BadString("text runs past the record"),
            )
        })?;
    Ok(Record::String { id, text })
}

/// Encoded length of a string record carrying `text` (after cutting to MAX_STRING).
pub fn string_record_len(text: &[u8]) -> usize {
    align8(STRING_HEADER + text.len().min(MAX_STRING))
}

/// Writes a string record into `out[..string_record_len(text)]`.
pub fn encode_string(out: &mut [u8], id: u32, text: &[u8]) {
    let text = &text[..text.len().min(MAX_STRING)];
    let len = string_record_len(text);
    out[..len].fill(0);
    put(out, 0, len as u16);
    put(out, 2, STRING_KIND);
    put(out, 4, id);
    put(out, 8, text.len() as u32);
    out[STRING_HEADER..STRING_HEADER + text.len()].copy_from_slice(text);
}

/// Note codes (the `code` field of [`Note`]).
pub mod note {
    /// GPU capture could not start; the text says why.
    pub const GPU_UNAVAILABLE: u32 = 1;
    /// GPU capture ran for part of the process only (another CUPTI client, fork...).
    pub const GPU_PARTIAL: u32 = 2;
    /// Recording stopped: the file could not grow.
    pub const DISK_FULL: u32 = 3;
    /// Recording stopped for another reason.
    pub const STOPPED: u32 = 4;
    /// The size cap was reached.
    pub const CAP_REACHED: u32 = 5;
    /// Anything else worth telling the user.
    pub const INFO: u32 = 6;
}

/// GPU capture states (the `status` field of [`GpuStatus`]).
pub mod gpu_status {
    pub const ACTIVE: u8 = 1;
    pub const UNAVAILABLE: u8 = 2;
    pub const PARTIAL: u8 = 3;
    pub const DISABLED: u8 = 4;
}

/// Marker flags (the `flags` field of [`Marker`]).
pub mod marker_flags {
    pub const INSTANT: u8 = 1;
    pub const START: u8 = 2;
    pub const END: u8 = 4;
}

/// Overhead kinds (the `overhead_kind` field of [`Overhead`]). CUPTI's
/// `CUpti_ActivityOverheadKind` values past 1 are multiples of `1 << 16`;
/// they are stored as `(value >> 16) + 1`, so 0 and 1 keep their meaning.
pub mod overhead_kind {
    pub const UNKNOWN: u8 = 0;
    pub const DRIVER_COMPILER: u8 = 1;
    pub const CUPTI_BUFFER_FLUSH: u8 = 2;
    pub const CUPTI_INSTRUMENTATION: u8 = 3;
    pub const CUPTI_RESOURCE: u8 = 4;
    pub const RUNTIME_TRIGGERED_MODULE_LOADING: u8 = 5;
    pub const LAZY_FUNCTION_LOADING: u8 = 6;
    pub const COMMAND_BUFFER_FULL: u8 = 7;
    pub const ACTIVITY_BUFFER_REQUEST: u8 = 8;
    pub const UVM_ACTIVITY_INIT: u8 = 9;

    /// The stored code of a CUPTI overhead kind.
    pub fn from_cupti(kind: u32) -> u8 {
        if kind < 1 << 16 {
            kind.min(u8::MAX as u32) as u8
        } else {
            ((kind >> 16) + 1).min(u8::MAX as u32) as u8
        }
    }
}

/// API domains (the `domain` field of [`Api`] and [`Oom`]).
pub mod api_domain {
    pub const RUNTIME: u8 = 1;
    pub const DRIVER: u8 = 2;
}

/// Memory operations (the `op` field of [`Memory`]).
pub mod memory_op {
    pub const ALLOC: u8 = 1;
    pub const FREE: u8 = 2;
}

/// Process end reasons (the `reason` field of [`ProcessEnd`]).
pub mod end_reason {
    /// exit(), return from main, or a library destructor at unload.
    pub const EXIT: u8 = 1;
    /// exec() replaced the image; a new file follows for the same pid.
    pub const EXEC: u8 = 2;
}

fixed_records! {
    /// A hooked host call that lasted at least the span threshold. The thread is
    /// the chunk's owner. `obj` is the fd object id ([`Object`]) or 0; `bytes` is
    /// the data moved (for waits on semaphores or condition variables: the address).
    Span = 1, len 32, aux op {
        4 obj: u32,
        8 ts: u64,
        16 dur: u64,
        24 bytes: u64,
    }

    /// A run of hooked calls on files, each shorter than the span threshold
    /// but together at least that long: `calls` calls of kind `op` on `obj`,
    /// each starting soon after the last one's end (20 µs), from
    /// `ts` for `dur` (the run's extent, gaps included). `busy` is the time
    /// inside the calls (and the opens and closes between them); `bytes`
    /// the data they moved. Analyses read it as one span: many small reads
    /// cost the loop as much as one long read.
    ///
    /// `files` is how many files the run read, one after another (open,
    /// read, close, next); `obj` is then their folder (a `Dir` object).
    /// Recordings made before the field hold 0 there: one file.
    Burst = 9, len 48, aux op {
        4 obj: u32,
        8 ts: u64,
        16 dur: u64,
        24 bytes: u64,
        32 calls: u32,
        36 files: u32,
        40 busy: u64,
    }

    /// Classification of an fd, defined once per distinct (dev, ino) and referred
    /// to by spans. For pipes the inode is the pipe's, shared by both ends.
    Object = 3, len 48, aux class {
        4 obj: u32,
        8 ts: u64,
        16 dev: u64,
        24 ino: u64,
        32 fs_magic: u32,
        /// String id of the path (files) or a description (`pipe:[123]`).
        36 path: u32,
        40 fd: i32,
    }

    /// A thread's name (from /proc), recorded when first seen and on change.
    ThreadName = 4, len 24, aux reserved {
        4 tid: u32,
        8 ts: u64,
        16 name: u32,
    }

    /// One sampler observation of a thread. Counters are cumulative since the
    /// thread started; `state` is the /proc state letter (R, S, D, ...).
    Sample = 5, len 40, aux state {
        4 tid: u32,
        8 ts: u64,
        16 cpu_ns: u64,
        24 run_delay_ns: u64,
        32 majflt: u32,
        36 minflt: u32,
    }

    /// A (CLOCK_MONOTONIC, CLOCK_REALTIME, ticks) triple, taken together.
    Clock = 6, len 32, aux reserved {
        8 mono_ns: u64,
        16 real_ns: u64,
        24 ticks: u64,
    }

    /// The process image ended cleanly (see `end_reason`).
    ProcessEnd = 7, len 16, aux reason {
        8 ts: u64,
    }

    /// Something the user should know about the recording (see `note`).
    Note = 8, len 24, aux level {
        4 code: u32,
        8 ts: u64,
        16 text: u32,
    }

    /// A kernel execution (CUPTI CONCURRENT_KERNEL).
    Kernel = 16, len 72, aux reserved {
        4 device: u32,
        8 start: u64,
        16 end: u64,
        24 correlation: u32,
        28 stream: u32,
        32 context: u32,
        36 name: u32,
        40 grid_x: u32,
        44 grid_y: u32,
        48 grid_z: u32,
        52 block_x: u32,
        56 block_y: u32,
        60 block_z: u32,
        64 shared_mem: u32,
        68 registers: u32,
    }

    /// A memory copy. `copy_kind`, `src_kind` and `dst_kind` keep CUPTI's codes
    /// (CUpti_ActivityMemcpyKind: 1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP, ...;
    /// CUpti_ActivityMemoryKind: 1 pageable, 2 pinned, 3 device, 4 array, 5 managed).
    Memcpy = 17, len 48, aux copy_kind {
        4 device: u32,
        8 start: u64,
        16 end: u64,
        24 correlation: u32,
        28 stream: u32,
        32 context: u32,
        36 src_kind: u8,
        37 dst_kind: u8,
        38 flags: u8,
        40 bytes: u64,
    }

    /// A memset.
    Memset = 18, len 48, aux mem_kind {
        4 device: u32,
        8 start: u64,
        16 end: u64,
        24 correlation: u32,
        28 stream: u32,
        32 context: u32,
        36 value: u32,
        40 bytes: u64,
    }

    /// The host waited for the GPU (CUPTI SYNCHRONIZATION; CUPTI sync type codes).
    Sync = 19, len 40, aux sync_type {
        4 context: u32,
        8 start: u64,
        16 end: u64,
        24 correlation: u32,
        28 stream: u32,
        32 event: u32,
        36 device: u32,
    }

    /// A CUDA runtime or driver API call (see `api_domain`); `cbid` is CUPTI's
    /// callback id for the function.
    Api = 20, len 40, aux domain {
        4 tid: u32,
        8 start: u64,
        16 end: u64,
        24 correlation: u32,
        28 cbid: u32,
        32 result: i32,
    }

    /// A device allocation or free (CUPTI MEMORY2; see `memory_op`).
    Memory = 21, len 48, aux op {
        4 device: u32,
        8 ts: u64,
        16 address: u64,
        24 bytes: u64,
        32 correlation: u32,
        36 mem_kind: u8,
        37 is_async: u8,
        40 stream: u32,
    }

    /// Time CUPTI or the driver spent on itself (CUPTI OVERHEAD; see
    /// `overhead_kind`). `object_kind` keeps CUPTI's CUpti_ActivityObjectKind;
    /// `object_id` is the thread id, device id, context id or stream id it names.
    Overhead = 22, len 32, aux overhead_kind {
        4 object_id: u32,
        8 start: u64,
        16 end: u64,
        24 object_kind: u8,
    }

    /// An NVTX range edge or instant (see `marker_flags`); start and end share `id`.
    Marker = 23, len 32, aux flags {
        4 tid: u32,
        8 ts: u64,
        16 id: u32,
        20 name: u32,
        24 domain: u32,
    }

    /// Properties of one GPU.
    Device = 24, len 40, aux reserved {
        4 device: u32,
        8 global_mem: u64,
        16 name: u32,
        20 sm_count: u32,
        24 cc_major: u32,
        28 cc_minor: u32,
        32 mem_bandwidth_kbps: u64,
    }

    /// A failed device allocation, with the memory state right after it.
    Oom = 25, len 48, aux domain {
        4 tid: u32,
        8 ts: u64,
        16 requested: u64,
        24 free: u64,
        32 total: u64,
        40 cbid: u32,
        44 result: i32,
    }

    /// GPU records CUPTI dropped (buffers full or rejected).
    GpuDropped = 26, len 24, aux reserved {
        4 device: u32,
        8 ts: u64,
        16 count: u64,
    }

    /// The state of GPU capture (see `gpu_status`); `reason` is a string id.
    GpuStatus = 27, len 24, aux status {
        4 cupti_version: u32,
        8 ts: u64,
        16 reason: u32,
    }

    /// Names an API function: (`domain`, `cbid`) as used by [`Api`] records.
    ApiName = 28, len 16, aux domain {
        4 cbid: u32,
        8 name: u32,
    }
}

impl Burst {
    /// How many files the run read: recordings made before `files` hold 0
    /// there, for one file.
    pub fn file_count(&self) -> u32 {
        self.files.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_aligned_and_disjoint() {
        for (name, kind, len, fields) in ALL_LAYOUTS {
            assert_eq!(len % 8, 0, "{name} length");
            assert!(*kind != STRING_KIND && *kind != 0, "{name} kind");
            let mut used = vec![false; *len];
            used[..RECORD_HEADER].fill(true);
            for &(off, size) in *fields {
                assert_eq!(off % size, 0, "{name}: field at {off} misaligned");
                for b in &mut used[off..off + size] {
                    assert!(!*b, "{name}: field at {off} overlaps");
                    *b = true;
                }
            }
        }
        let mut kinds: Vec<u8> = ALL_LAYOUTS.iter().map(|l| l.1).collect();
        kinds.sort();
        kinds.dedup();
        assert_eq!(kinds.len(), ALL_LAYOUTS.len(), "duplicate kind codes");
    }

    #[test]
    fn host_event_fits_32_bytes() {
        assert_eq!(Span::LEN, 32);
    }

    #[test]
    fn burst_round_trip() {
        let b = Burst {
            op: 4,
            obj: 9,
            ts: 1_000_000,
            dur: 900_000,
            bytes: 600 * 4096,
            calls: 600,
            files: 600,
            busy: 810_000,
        };
        let mut buf = [0u8; Burst::LEN];
        b.encode(&mut buf);
        assert_eq!(Record::decode(&buf, 0).unwrap(), Record::Burst(b));
        assert_eq!(b.file_count(), 600);
        // Written before `files`: the high half of a 64-bit call count, 0.
        assert_eq!(Burst { files: 0, ..b }.file_count(), 1);
    }

    #[test]
    fn span_round_trip() {
        let s = Span {
            op: 3,
            obj: 7,
            ts: 1_234_567_890_123,
            dur: 42_000,
            bytes: 65536,
        };
        let mut buf = [0u8; Span::LEN];
        s.encode(&mut buf);
        assert_eq!(Record::decode(&buf, 0).unwrap(), Record::Span(s));
    }

    #[test]
    fn string_round_trip_and_cut() {
        let mut buf = vec![0u8; 128];
        encode_string(&mut buf, 9, b"/data/shard-0001.arrow");
        let len = string_record_len(b"/data/shard-0001.arrow");
        assert_eq!(len % 8, 0);
        match Record::decode(&buf[..len], 0).unwrap() {
            Record::String { id, text } => {
                assert_eq!(id, 9);
                assert_eq!(text, b"/data/shard-0001.arrow");
            }
            other => panic!("{other:?}"),
        }
        let long = vec![b'k'; MAX_STRING + 100];
        assert_eq!(string_record_len(&long), MAX_RECORD);
    }

    #[test]
    fn short_and_unknown_records() {
        let mut buf = [0u8; 16];
        put(&mut buf, 0, 16u16);
        put(&mut buf, 2, Span::KIND);
        assert!(matches!(
            Record::decode(&buf, 64).unwrap_err().kind,
            FormatErrorKind::ShortRecord {
                kind: 1,
                len: 16,
                min: 32
            }
        ));
        put(&mut buf, 2, 200u8);
        assert!(matches!(
            Record::decode(&buf, 0).unwrap(),
            Record::Unknown { kind: 200, .. }
        ));
    }

    #[test]
    fn longer_records_from_newer_producers_decode() {
        let mut buf = [0u8; 48];
        Span {
            op: 2,
            obj: 1,
            ts: 5,
            dur: 6,
            bytes: 7,
        }
        .encode(&mut buf);
        put(&mut buf, 0, 48u16);
        assert!(matches!(Record::decode(&buf, 0).unwrap(), Record::Span(s) if s.bytes == 7));
    }
}
