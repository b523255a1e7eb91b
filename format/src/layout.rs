//! Fixed structures: the file header, the thread table and chunk headers.
//!
//! All offsets are bytes from the start of the structure. Fields the producer
//! updates while it runs are 4- or 8-byte aligned so they can be accessed as
//! atomics through the shared mapping.

use crate::bytes::{get, put};
use crate::ops::HostOp;
use crate::{FORMAT_VERSION, MAGIC};

/// Size of the header region. The command line fills what the fixed fields leave.
pub const HEADER_SIZE: usize = 16 * 1024;
/// Chunks start on a page boundary.
pub const PAGE: u64 = 4096;
/// Default chunk size.
pub const DEFAULT_CHUNK_SIZE: u32 = 64 * 1024;
/// Default number of thread slots.
pub const DEFAULT_THREAD_SLOTS: u32 = 1024;
/// Bytes per thread slot.
pub const THREAD_SLOT_SIZE: usize = 1024;
/// Room for this many op counters per thread (only `HostOp::ALL.len()` are used).
pub const MAX_OPS: usize = 32;
/// Bytes per op counter: calls, bytes, ticks.
pub const OP_COUNTER_SIZE: usize = 24;
/// Bytes of every chunk header; records start right after it.
pub const CHUNK_HEADER_SIZE: usize = 64;
/// Chunk magic ("CHNK"); a chunk without it was never used.
pub const CHUNK_MAGIC: u32 = u32::from_le_bytes(*b"CHNK");

/// Header field offsets.
pub mod hdr {
    pub const MAGIC: usize = 0;
    pub const FORMAT_VERSION: usize = 8;
    pub const HEADER_SIZE: usize = 12;
    pub const CHUNK_SIZE: usize = 16;
    pub const THREAD_SLOTS: usize = 20;
    pub const THREAD_TABLE_OFFSET: usize = 24;
    pub const CHUNKS_OFFSET: usize = 32;
    pub const CAPACITY: usize = 40;
    pub const PID: usize = 48;
    pub const PPID: usize = 52;
    pub const FLAGS: usize = 56;
    pub const CHUNK_COUNT: usize = 60;
    pub const START_MONO_NS: usize = 64;
    pub const START_REAL_NS: usize = 72;
    pub const START_TICKS: usize = 80;
    /// Tick rate of the per-thread time counters (atomic, refined while running);
    /// 0 means ticks are nanoseconds.
    pub const TICKS_PER_SEC: usize = 88;
    pub const MIN_SPAN_NS: usize = 96;
    /// Chunks claimed so far (atomic; may run past CHUNK_COUNT when full).
    pub const NEXT_CHUNK: usize = 104;
    /// Thread slots claimed so far (atomic; may run past THREAD_SLOTS).
    pub const NEXT_SLOT: usize = 108;
    /// Runtime state bits, see `state`.
    pub const STATE: usize = 112;
    pub const SAMPLE_HZ: usize = 116;
    /// Records dropped that no thread slot could count (atomic).
    pub const DROPPED: usize = 120;
    /// Records overwritten by the flight recorder (atomic).
    pub const OVERWRITTEN: usize = 128;
    /// CLOCK_MONOTONIC at a clean exit, else 0 (atomic).
    pub const END_MONO_NS: usize = 136;
    /// Sequence counter for chunk claims (atomic).
    pub const CHUNK_SEQ: usize = 144;
    /// Cursor of the flight recorder's reuse scan (atomic).
    pub const RECYCLE_CURSOR: usize = 152;
    pub const PRODUCER: usize = 160;
    pub const PRODUCER_LEN: usize = 32;
    pub const HOSTNAME: usize = 192;
    pub const HOSTNAME_LEN: usize = 256;
    pub const CMDLINE_LEN: usize = 448;
    pub const CMDLINE_TRUNCATED: usize = 452;
    pub const CMDLINE: usize = 512;
}

/// Header flag bits (fixed at start).
pub mod flags {
    /// Flight-recorder mode: the newest chunks overwrite the oldest.
    pub const FLIGHT_RECORDER: u32 = 1;
    /// Durations were measured with the CPU timestamp counter.
    pub const TSC_TICKS: u32 = 2;
}

/// Header state bits (set while running).
pub mod state {
    /// Recording stopped early (see the note records for why).
    pub const STOPPED: u32 = 1;
    /// The process exited through exit() or returned from main.
    pub const CLEAN_EXIT: u32 = 2;
    /// The size cap was reached; later records were counted as dropped.
    pub const CAP_REACHED: u32 = 4;
    /// The disk was full (ENOSPC, or the disk quota): recording stopped.
    pub const DISK_FULL: u32 = 8;
    /// The file size limit (RLIMIT_FSIZE, `ulimit -f`) stopped recording.
    /// Readers that predate this bit ignore it (state bits are advisory).
    pub const FILE_LIMIT: u32 = 16;
}

/// Chunk header field offsets.
pub mod chk {
    pub const MAGIC: usize = 0;
    pub const KIND: usize = 4;
    pub const TID: usize = 8;
    /// Committed payload bytes (atomic, release-stored after each record).
    pub const COMMITTED: usize = 12;
    pub const SEQ: usize = 16;
    /// Committed record count (atomic).
    pub const RECORDS: usize = 24;
    /// Chunk state (atomic), see `ChunkState`.
    pub const STATE: usize = 28;
}

/// What a chunk carries.
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkKind {
    /// Events of one thread, written only by that thread.
    Thread = 1,
    /// Definitions (strings, fd objects) shared by all threads; never recycled.
    Meta = 2,
}

impl ChunkKind {
    pub fn from_code(code: u8) -> Option<ChunkKind> {
        match code {
            1 => Some(ChunkKind::Thread),
            2 => Some(ChunkKind::Meta),
            _ => None,
        }
    }
}

/// Chunk lifecycle, used by the flight recorder to pick chunks to reuse.
pub mod chunk_state {
    pub const ACTIVE: u32 = 1;
    pub const SEALED: u32 = 2;
    /// Being rewritten by the flight recorder.
    pub const RECYCLING: u32 = 3;
}

/// Thread slot field offsets.
pub mod slot {
    pub const TID: usize = 0;
    pub const DROPPED: usize = 8;
    pub const COUNTERS: usize = 64;
}

/// Offset of counter field `field` (0 calls, 1 bytes, 2 ticks) for `op` in a slot.
pub const fn counter_offset(op: HostOp, field: usize) -> usize {
    slot::COUNTERS + op as usize * OP_COUNTER_SIZE + field * 8
}

/// What the producer puts in a new header.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeaderInit {
    pub chunk_size: u32,
    pub thread_slots: u32,
    pub capacity: u64,
    pub pid: u32,
    pub ppid: u32,
    pub flags: u32,
    pub start_mono_ns: u64,
    pub start_real_ns: u64,
    pub start_ticks: u64,
    pub ticks_per_sec: u64,
    pub min_span_ns: u64,
    pub sample_hz: u32,
    pub producer: String,
    pub hostname: String,
    /// argv joined by NUL bytes.
    pub cmdline: Vec<u8>,
}

/// Where the parts of a file start, derived from sizes alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub chunk_size: u32,
    pub thread_slots: u32,
    pub thread_table_offset: u64,
    pub chunks_offset: u64,
    pub chunk_count: u32,
}

impl Geometry {
    /// Lays out a file of at most `capacity` bytes. Returns None if not even one
    /// chunk fits.
    pub fn new(capacity: u64, chunk_size: u32, thread_slots: u32) -> Option<Geometry> {
        if chunk_size < 4096 || !chunk_size.is_power_of_two() || thread_slots == 0 {
            return None;
        }
        let thread_table_offset = HEADER_SIZE as u64;
        let table_end = thread_table_offset + thread_slots as u64 * THREAD_SLOT_SIZE as u64;
        let chunks_offset = table_end.div_ceil(PAGE) * PAGE;
        let chunk_count = capacity.checked_sub(chunks_offset)? / chunk_size as u64;
        if chunk_count == 0 {
            return None;
        }
        Some(Geometry {
            chunk_size,
            thread_slots,
            thread_table_offset,
            chunks_offset,
            chunk_count: chunk_count.min(u32::MAX as u64) as u32,
        })
    }

    pub fn chunk_offset(&self, index: u32) -> u64 {
        self.chunks_offset + index as u64 * self.chunk_size as u64
    }

    pub fn slot_offset(&self, index: u32) -> u64 {
        self.thread_table_offset + index as u64 * THREAD_SLOT_SIZE as u64
    }

    /// Payload bytes per chunk.
    pub fn chunk_payload(&self) -> u32 {
        self.chunk_size - CHUNK_HEADER_SIZE as u32
    }
}

/// Writes a complete header into `buf` (at least HEADER_SIZE bytes).
pub fn encode_header(buf: &mut [u8], init: &HeaderInit, geo: &Geometry) {
    buf[..HEADER_SIZE].fill(0);
    buf[hdr::MAGIC..hdr::MAGIC + 8].copy_from_slice(&MAGIC);
    put(buf, hdr::FORMAT_VERSION, FORMAT_VERSION);
    put(buf, hdr::HEADER_SIZE, HEADER_SIZE as u32);
    put(buf, hdr::CHUNK_SIZE, geo.chunk_size);
    put(buf, hdr::THREAD_SLOTS, geo.thread_slots);
    put(buf, hdr::THREAD_TABLE_OFFSET, geo.thread_table_offset);
    put(buf, hdr::CHUNKS_OFFSET, geo.chunks_offset);
    put(buf, hdr::CAPACITY, init.capacity);
    put(buf, hdr::PID, init.pid);
    put(buf, hdr::PPID, init.ppid);
    put(buf, hdr::FLAGS, init.flags);
    put(buf, hdr::CHUNK_COUNT, geo.chunk_count);
    put(buf, hdr::START_MONO_NS, init.start_mono_ns);
    put(buf, hdr::START_REAL_NS, init.start_real_ns);
    put(buf, hdr::START_TICKS, init.start_ticks);
    put(buf, hdr::TICKS_PER_SEC, init.ticks_per_sec);
    put(buf, hdr::MIN_SPAN_NS, init.min_span_ns);
    put(buf, hdr::SAMPLE_HZ, init.sample_hz);
    put_str(
        buf,
        hdr::PRODUCER,
        hdr::PRODUCER_LEN,
        init.producer.as_bytes(),
    );
    put_str(
        buf,
        hdr::HOSTNAME,
        hdr::HOSTNAME_LEN,
        init.hostname.as_bytes(),
    );
    encode_cmdline(buf, &init.cmdline);
}

/// Writes the command line (argv joined by NUL bytes) into a header,
/// cutting it to fit. A producer may fill it in after the rest of the
/// header, as long as no reader sees the header before.
pub fn encode_cmdline(buf: &mut [u8], cmdline: &[u8]) {
    let room = HEADER_SIZE - hdr::CMDLINE;
    let n = cmdline.len().min(room);
    buf[hdr::CMDLINE..hdr::CMDLINE + n].copy_from_slice(&cmdline[..n]);
    buf[hdr::CMDLINE + n..HEADER_SIZE].fill(0);
    put(buf, hdr::CMDLINE_LEN, n as u32);
    put(buf, hdr::CMDLINE_TRUNCATED, u32::from(n < cmdline.len()));
}

/// Copies `s` into a NUL-padded field, cutting it short if needed.
fn put_str(buf: &mut [u8], off: usize, cap: usize, s: &[u8]) {
    let n = s.len().min(cap - 1);
    buf[off..off + n].copy_from_slice(&s[..n]);
}

/// Reads a NUL-padded string field.
pub fn get_str(buf: &[u8], off: usize, cap: usize) -> String {
    let field = &buf[off..off + cap];
    let end = field.iter().position(|&b| b == 0).unwrap_or(cap);
    String::from_utf8_lossy(&field[..end]).into_owned()
}

/// The counters of one op in one thread slot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpCounter {
    pub calls: u64,
    pub bytes: u64,
    pub ticks: u64,
}

/// Decodes one thread slot.
pub fn decode_slot(buf: &[u8]) -> (u32, u64, [OpCounter; HostOp::ALL.len()]) {
    let mut counters = [OpCounter::default(); HostOp::ALL.len()];
    for op in HostOp::ALL {
        counters[op as usize] = OpCounter {
            calls: get(buf, counter_offset(op, 0)),
            bytes: get(buf, counter_offset(op, 1)),
            ticks: get(buf, counter_offset(op, 2)),
        };
    }
    (get(buf, slot::TID), get(buf, slot::DROPPED), counters)
}

const _: () = assert!(slot::COUNTERS + MAX_OPS * OP_COUNTER_SIZE <= THREAD_SLOT_SIZE);
const _: () = assert!(HostOp::ALL.len() <= MAX_OPS);
const _: () = assert!(hdr::CMDLINE < HEADER_SIZE);
const _: () = assert!(hdr::HOSTNAME + hdr::HOSTNAME_LEN <= hdr::CMDLINE_LEN);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_aligns_chunks() {
        let g = Geometry::new(256 << 20, DEFAULT_CHUNK_SIZE, DEFAULT_THREAD_SLOTS).unwrap();
        assert_eq!(g.thread_table_offset, HEADER_SIZE as u64);
        assert_eq!(g.chunks_offset % PAGE, 0);
        assert!(g.chunks_offset >= g.thread_table_offset + 1024 * 1024);
        assert!(g.chunk_offset(g.chunk_count - 1) + g.chunk_size as u64 <= 256 << 20);
    }

    #[test]
    fn geometry_rejects_impossible() {
        assert!(Geometry::new(1 << 20, DEFAULT_CHUNK_SIZE, DEFAULT_THREAD_SLOTS).is_none());
        assert!(Geometry::new(1 << 30, 3000, 16).is_none());
        assert!(Geometry::new(1 << 30, 65536, 0).is_none());
    }

    #[test]
    fn header_strings_are_cut_to_fit() {
        let init = HeaderInit {
            hostname: "h".repeat(1000),
            cmdline: vec![b'x'; 20_000],
            ..Default::default()
        };
        let geo = Geometry::new(64 << 20, DEFAULT_CHUNK_SIZE, 16).unwrap();
        let mut buf = vec![0u8; HEADER_SIZE];
        encode_header(&mut buf, &init, &geo);
        assert_eq!(get_str(&buf, hdr::HOSTNAME, hdr::HOSTNAME_LEN).len(), 255);
        assert_eq!(get::<u32>(&buf, hdr::CMDLINE_TRUNCATED), 1);
        assert_eq!(
            get::<u32>(&buf, hdr::CMDLINE_LEN) as usize,
            HEADER_SIZE - hdr::CMDLINE
        );
    }

    #[test]
    fn atomic_fields_are_aligned() {
        for off in [
            hdr::TICKS_PER_SEC,
            hdr::DROPPED,
            hdr::OVERWRITTEN,
            hdr::END_MONO_NS,
            hdr::CHUNK_SEQ,
            hdr::RECYCLE_CURSOR,
        ] {
            assert_eq!(off % 8, 0);
        }
        for off in [
            hdr::NEXT_CHUNK,
            hdr::NEXT_SLOT,
            hdr::STATE,
            chk::COMMITTED,
            chk::RECORDS,
            chk::STATE,
        ] {
            assert_eq!(off % 4, 0);
        }
        assert_eq!(chk::SEQ % 8, 0);
        assert_eq!(counter_offset(HostOp::Sleep, 2) % 8, 0);
    }
}
