//! The validating reader. It trusts nothing in the file: every length and offset
//! is checked against the bytes present, and problems come back as errors that
//! name the byte offset (and the file, when reading from one).

use std::path::{Path, PathBuf};

use memmap2::Mmap;

use crate::bytes::get;
use crate::error::{FormatError, FormatErrorKind};
use crate::layout::{
    CHUNK_HEADER_SIZE, CHUNK_MAGIC, ChunkKind, HEADER_SIZE, OpCounter, THREAD_SLOT_SIZE, chk,
    decode_slot, get_str, hdr,
};
use crate::ops::HostOp;
use crate::records::{RECORD_HEADER, Record};
use crate::{FORMAT_VERSION, MAGIC};

/// The decoded file header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub format_version: u32,
    pub header_size: u32,
    pub chunk_size: u32,
    pub thread_slots: u32,
    pub thread_table_offset: u64,
    pub chunks_offset: u64,
    pub capacity: u64,
    pub pid: u32,
    pub ppid: u32,
    pub flags: u32,
    pub chunk_count: u32,
    pub start_mono_ns: u64,
    pub start_real_ns: u64,
    pub start_ticks: u64,
    /// 0 when ticks are nanoseconds.
    pub ticks_per_sec: u64,
    pub min_span_ns: u64,
    pub chunks_claimed: u32,
    pub slots_claimed: u32,
    pub state: u32,
    pub sample_hz: u32,
    pub dropped: u64,
    pub overwritten: u64,
    /// 0 unless the process exited cleanly.
    pub end_mono_ns: u64,
    pub producer: String,
    pub hostname: String,
    pub argv: Vec<String>,
    pub cmdline_truncated: bool,
}

impl Header {
    /// Converts a tick count from the thread counters to nanoseconds.
    pub fn ticks_to_ns(&self, ticks: u64) -> u64 {
        if self.ticks_per_sec == 0 {
            ticks
        } else {
            (ticks as u128 * 1_000_000_000 / self.ticks_per_sec as u128) as u64
        }
    }

    /// The command line as one shell-like string.
    pub fn command_line(&self) -> String {
        self.argv.join(" ")
    }
}

/// The counters of one thread slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadCounters {
    pub tid: u32,
    pub dropped: u64,
    pub ops: [OpCounter; HostOp::ALL.len()],
}

/// A trace file opened with a read-only mapping.
pub struct TraceFile {
    path: PathBuf,
    map: Mmap,
}

impl TraceFile {
    pub fn open(path: impl AsRef<Path>) -> Result<TraceFile, FormatError> {
        let path = path.as_ref().to_path_buf();
        let io = |e: std::io::Error| {
            FormatError::at(0, FormatErrorKind::Io(e.to_string())).in_file(&path)
        };
        let file = std::fs::File::open(&path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len < HEADER_SIZE as u64 {
            // Junk says so, whatever its length.
            let mut magic = [0u8; 8];
            if std::io::Read::read_exact(&mut &file, &mut magic).is_ok() && magic != MAGIC {
                return Err(FormatError::at(0, FormatErrorKind::BadMagic).in_file(&path));
            }
            return Err(FormatError::at(
                0,
                FormatErrorKind::Truncated {
                    needed: HEADER_SIZE as u64,
                    have: len,
                },
            )
            .in_file(&path));
        }
        // SAFETY: the mapping is read-only; a producer still appending to the file
        // only adds bytes the validating reader checks before use.
        let map = unsafe { Mmap::map(&file) }.map_err(io)?;
        Ok(TraceFile { path, map })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Parses the header; errors name this file.
    pub fn view(&self) -> Result<TraceView<'_>, FormatError> {
        TraceView::parse(&self.map).map_err(|e| e.in_file(&self.path))
    }

    /// Hints that the file will be read front to back once.
    pub fn advise_sequential(&self) {
        let _ = self.map.advise(memmap2::Advice::Sequential);
    }

    /// Drops already-read pages from this process's memory; they stay in the
    /// page cache and are read again on the next access.
    pub fn release(&self, offset: u64, len: u64) {
        let page = 4096u64;
        let start = offset.div_ceil(page).saturating_mul(page);
        let end = (offset.saturating_add(len).min(self.map.len() as u64) / page) * page;
        if end > start {
            // SAFETY: the mapping is read-only and file-backed, so DONTNEED only
            // discards pages that are re-read from the file on next access.
            let _ = unsafe {
                self.map.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    start as usize,
                    (end - start) as usize,
                )
            };
        }
    }
}

/// A parsed view of a trace held in memory.
#[derive(Debug, Clone)]
pub struct TraceView<'a> {
    bytes: &'a [u8],
    pub header: Header,
}

fn bad(field: &'static str, value: u64, off: usize) -> FormatError {
    FormatError::at(off as u64, FormatErrorKind::BadHeader { field, value })
}

impl<'a> TraceView<'a> {
    pub fn parse(bytes: &'a [u8]) -> Result<TraceView<'a>, FormatError> {
        let have = bytes.len() as u64;
        if bytes.len() < HEADER_SIZE {
            if bytes.len() >= 8 && bytes[..8] != MAGIC {
                return Err(FormatError::at(0, FormatErrorKind::BadMagic));
            }
            return Err(FormatError::at(
                0,
                FormatErrorKind::Truncated {
                    needed: HEADER_SIZE as u64,
                    have,
                },
            ));
        }
        if bytes[..8] != MAGIC {
            return Err(FormatError::at(0, FormatErrorKind::BadMagic));
        }
        let version: u32 = get(bytes, hdr::FORMAT_VERSION);
        if version == 0 {
            return Err(bad("format_version", 0, hdr::FORMAT_VERSION));
        }
        if version > FORMAT_VERSION {
            return Err(FormatError::at(
                hdr::FORMAT_VERSION as u64,
                FormatErrorKind::NewerVersion {
                    found: version,
                    supported: FORMAT_VERSION,
                },
            ));
        }
        let header_size: u32 = get(bytes, hdr::HEADER_SIZE);
        if (header_size as usize) < HEADER_SIZE || header_size as u64 > have {
            return Err(bad("header_size", header_size as u64, hdr::HEADER_SIZE));
        }
        let chunk_size: u32 = get(bytes, hdr::CHUNK_SIZE);
        if !chunk_size.is_power_of_two() || !(4096..=(64 << 20)).contains(&chunk_size) {
            return Err(bad("chunk_size", chunk_size as u64, hdr::CHUNK_SIZE));
        }
        let thread_slots: u32 = get(bytes, hdr::THREAD_SLOTS);
        if thread_slots > (1 << 20) {
            return Err(bad("thread_slots", thread_slots as u64, hdr::THREAD_SLOTS));
        }
        let thread_table_offset: u64 = get(bytes, hdr::THREAD_TABLE_OFFSET);
        if thread_table_offset < header_size as u64 {
            return Err(bad(
                "thread_table_offset",
                thread_table_offset,
                hdr::THREAD_TABLE_OFFSET,
            ));
        }
        // Every size below is checked: a field near u64::MAX must come back as
        // an error, not wrap around (or panic in a debug build).
        let table_end = (thread_slots as u64)
            .checked_mul(THREAD_SLOT_SIZE as u64)
            .and_then(|n| thread_table_offset.checked_add(n))
            .ok_or_else(|| {
                bad(
                    "thread_table_offset",
                    thread_table_offset,
                    hdr::THREAD_TABLE_OFFSET,
                )
            })?;
        let chunks_offset: u64 = get(bytes, hdr::CHUNKS_OFFSET);
        if chunks_offset < table_end || !chunks_offset.is_multiple_of(crate::layout::PAGE) {
            return Err(bad("chunks_offset", chunks_offset, hdr::CHUNKS_OFFSET));
        }
        if have < chunks_offset {
            return Err(FormatError::at(
                have,
                FormatErrorKind::Truncated {
                    needed: chunks_offset,
                    have,
                },
            ));
        }
        let cmd_len =
            (get::<u32>(bytes, hdr::CMDLINE_LEN) as usize).min(HEADER_SIZE - hdr::CMDLINE);
        let cmd = &bytes[hdr::CMDLINE..hdr::CMDLINE + cmd_len];
        let argv = cmd
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let header = Header {
            format_version: version,
            header_size,
            chunk_size,
            thread_slots,
            thread_table_offset,
            chunks_offset,
            capacity: get(bytes, hdr::CAPACITY),
            pid: get(bytes, hdr::PID),
            ppid: get(bytes, hdr::PPID),
            flags: get(bytes, hdr::FLAGS),
            chunk_count: get(bytes, hdr::CHUNK_COUNT),
            start_mono_ns: get(bytes, hdr::START_MONO_NS),
            start_real_ns: get(bytes, hdr::START_REAL_NS),
            start_ticks: get(bytes, hdr::START_TICKS),
            ticks_per_sec: get(bytes, hdr::TICKS_PER_SEC),
            min_span_ns: get(bytes, hdr::MIN_SPAN_NS),
            chunks_claimed: get(bytes, hdr::NEXT_CHUNK),
            slots_claimed: get(bytes, hdr::NEXT_SLOT),
            state: get(bytes, hdr::STATE),
            sample_hz: get(bytes, hdr::SAMPLE_HZ),
            dropped: get(bytes, hdr::DROPPED),
            overwritten: get(bytes, hdr::OVERWRITTEN),
            end_mono_ns: get(bytes, hdr::END_MONO_NS),
            producer: get_str(bytes, hdr::PRODUCER, hdr::PRODUCER_LEN),
            hostname: get_str(bytes, hdr::HOSTNAME, hdr::HOSTNAME_LEN),
            argv,
            cmdline_truncated: get::<u32>(bytes, hdr::CMDLINE_TRUNCATED) != 0,
        };
        Ok(TraceView { bytes, header })
    }

    /// Counters of every claimed thread slot.
    pub fn threads(&self) -> Vec<ThreadCounters> {
        let h = &self.header;
        let n = h.slots_claimed.min(h.thread_slots);
        (0..n)
            .filter_map(|i| {
                // `parse` checked that the whole table lies inside the bytes;
                // `get` keeps this safe even for a view built some other way.
                let off = (i as u64)
                    .checked_mul(THREAD_SLOT_SIZE as u64)
                    .and_then(|d| h.thread_table_offset.checked_add(d))?;
                let off = usize::try_from(off).ok()?;
                let slot = self.bytes.get(off..off.checked_add(THREAD_SLOT_SIZE)?)?;
                let (tid, dropped, ops) = decode_slot(slot);
                (tid != 0).then_some(ThreadCounters { tid, dropped, ops })
            })
            .collect()
    }

    /// Number of chunk positions present in the bytes (the last may be partial).
    pub fn chunk_positions(&self) -> u32 {
        let h = &self.header;
        let present = (self.bytes.len() as u64)
            .saturating_sub(h.chunks_offset)
            .div_ceil((h.chunk_size as u64).max(1));
        present.min(h.chunk_count as u64) as u32
    }

    /// The chunk at position `index`: None if it was never used.
    pub fn chunk(&self, index: u32) -> Result<Option<Chunk<'a>>, FormatError> {
        let h = &self.header;
        let off = (index as u64)
            .checked_mul(h.chunk_size as u64)
            .and_then(|d| h.chunks_offset.checked_add(d))
            .ok_or_else(|| bad("chunk index", index as u64, hdr::CHUNK_COUNT))?;
        let have = self.bytes.len() as u64;
        let avail = have.saturating_sub(off).min(h.chunk_size as u64) as usize;
        // `avail > 0` means `off < have`, so `off` fits a usize.
        let start = off as usize;
        if avail < CHUNK_HEADER_SIZE {
            // A chunk header cut off by truncation: only an error if it began.
            if avail >= 4 && get::<u32>(self.bytes, start) == CHUNK_MAGIC {
                return Err(FormatError::at(
                    off,
                    FormatErrorKind::Truncated {
                        needed: off.saturating_add(CHUNK_HEADER_SIZE as u64),
                        have,
                    },
                ));
            }
            return Ok(None);
        }
        let c = &self.bytes[start..start + avail];
        if get::<u32>(c, chk::MAGIC) != CHUNK_MAGIC {
            return Ok(None);
        }
        let kind = ChunkKind::from_code(get(c, chk::KIND)).ok_or_else(|| {
            bad(
                "chunk kind",
                get::<u8>(c, chk::KIND) as u64,
                start + chk::KIND,
            )
        })?;
        let committed = get::<u32>(c, chk::COMMITTED) as u64;
        let capacity = (h.chunk_size as u64).saturating_sub(CHUNK_HEADER_SIZE as u64);
        if committed > capacity || !committed.is_multiple_of(8) {
            return Err(FormatError::at(
                off + chk::COMMITTED as u64,
                FormatErrorKind::BadCommitted {
                    committed,
                    capacity,
                },
            ));
        }
        if CHUNK_HEADER_SIZE as u64 + committed > avail as u64 {
            return Err(FormatError::at(
                off,
                FormatErrorKind::Truncated {
                    needed: off.saturating_add(CHUNK_HEADER_SIZE as u64 + committed),
                    have,
                },
            ));
        }
        Ok(Some(Chunk {
            index,
            offset: off,
            kind,
            tid: get(c, chk::TID),
            seq: get(c, chk::SEQ),
            state: get(c, chk::STATE),
            record_count: get(c, chk::RECORDS),
            payload: &c[CHUNK_HEADER_SIZE..CHUNK_HEADER_SIZE + committed as usize],
        }))
    }

    /// Every used chunk, in file order; errors are yielded in place of a chunk.
    pub fn chunks(&self) -> impl Iterator<Item = Result<Chunk<'a>, FormatError>> + '_ {
        (0..self.chunk_positions()).filter_map(move |i| self.chunk(i).transpose())
    }
}

/// One used chunk and its committed records.
#[derive(Debug, Clone, Copy)]
pub struct Chunk<'a> {
    pub index: u32,
    /// File offset of the chunk header.
    pub offset: u64,
    pub kind: ChunkKind,
    /// Owning thread (0 for meta chunks).
    pub tid: u32,
    /// Claim order; used to order a thread's chunks.
    pub seq: u64,
    pub state: u32,
    pub record_count: u32,
    pub payload: &'a [u8],
}

impl<'a> Chunk<'a> {
    pub fn records(&self) -> RecordIter<'a> {
        RecordIter {
            payload: self.payload,
            pos: 0,
            base: self.offset + CHUNK_HEADER_SIZE as u64,
            failed: false,
        }
    }
}

/// Iterates the records of a chunk, yielding (file offset, record). Stops after
/// the first error.
pub struct RecordIter<'a> {
    payload: &'a [u8],
    pos: usize,
    base: u64,
    failed: bool,
}

impl<'a> Iterator for RecordIter<'a> {
    type Item = Result<(u64, Record<'a>), FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.payload.len() {
            return None;
        }
        let off = self.base + self.pos as u64;
        let rest = &self.payload[self.pos..];
        let len = if rest.len() >= RECORD_HEADER {
            get::<u16>(rest, 0) as usize
        } else {
            0
        };
        if len < 8 || len % 8 != 0 || len > rest.len() {
            self.failed = true;
            return Some(Err(FormatError::at(
                off,
                FormatErrorKind::BadRecordLength { len: len as u64 },
            )));
        }
        self.pos += len;
        match Record::decode(&rest[..len], off) {
            Ok(r) => Some(Ok((off, r))),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}
