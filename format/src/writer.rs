//! Writer primitives for the producer (the shim).
//!
//! They operate on a trace file that the caller has mapped `MAP_SHARED`; the
//! caller also supplies the function that backs a byte range of the file with
//! real storage (fallocate), since touching an unbacked page of a shared mapping
//! raises SIGBUS. Nothing here allocates, locks (except the tiny meta-stream
//! spinlock) or makes system calls.

use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::cell::UnsafeCell;

use crate::layout::{
    CHUNK_HEADER_SIZE, CHUNK_MAGIC, ChunkKind, Geometry, HEADER_SIZE, chk, chunk_state, hdr, slot,
    state,
};

/// The producer's view of a mapped trace file.
#[derive(Debug, Clone, Copy)]
pub struct Region {
    base: *mut u8,
    geo: Geometry,
    flight: bool,
}

// The mapping is shared by all threads; all shared mutation goes through atomics.
unsafe impl Send for Region {}
unsafe impl Sync for Region {}

/// The result of asking for a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    Chunk(ChunkWriter),
    /// The size cap is reached (and the flight recorder is off or found nothing to reuse).
    Full,
    /// The file could not grow (disk full, RLIMIT_FSIZE, no fd to spare).
    /// The chunk stays unused (a reader skips it); whether this stops the
    /// recording, and which state bits say why, is the caller's decision.
    NoSpace,
}

impl Region {
    /// # Safety
    /// `base` must point to a writable mapping of at least
    /// `geo.chunk_offset(geo.chunk_count)` bytes whose header was written with
    /// [`crate::layout::encode_header`] and whose header and thread table are backed.
    pub unsafe fn new(base: *mut u8, geo: Geometry, flight: bool) -> Region {
        Region { base, geo, flight }
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    pub fn base(&self) -> *mut u8 {
        self.base
    }

    fn u32_at(&self, off: u64) -> &AtomicU32 {
        // SAFETY: offsets come from the layout constants and the geometry, are
        // 4-aligned and inside the mapping (see `new`).
        unsafe { &*(self.base.add(off as usize) as *const AtomicU32) }
    }

    fn u64_at(&self, off: u64) -> &AtomicU64 {
        // SAFETY: as in u32_at, with 8-byte alignment.
        unsafe { &*(self.base.add(off as usize) as *const AtomicU64) }
    }

    /// Sets runtime state bits in the header.
    pub fn set_state(&self, bits: u32) {
        self.u32_at(hdr::STATE as u64)
            .fetch_or(bits, Ordering::Release);
    }

    pub fn state(&self) -> u32 {
        self.u32_at(hdr::STATE as u64).load(Ordering::Acquire)
    }

    /// Publishes a refined tick rate.
    pub fn set_ticks_per_sec(&self, hz: u64) {
        self.u64_at(hdr::TICKS_PER_SEC as u64)
            .store(hz, Ordering::Release);
    }

    /// Records a clean end of the process image.
    pub fn set_end(&self, mono_ns: u64) {
        self.u64_at(hdr::END_MONO_NS as u64)
            .store(mono_ns, Ordering::Release);
    }

    /// Counts records no thread slot could count.
    pub fn add_dropped(&self, n: u64) {
        self.u64_at(hdr::DROPPED as u64)
            .fetch_add(n, Ordering::Relaxed);
    }

    /// Claims the next free thread slot for `tid`.
    pub fn claim_slot(&self, tid: u32) -> Option<ThreadSlot> {
        let idx = self
            .u32_at(hdr::NEXT_SLOT as u64)
            .fetch_add(1, Ordering::Relaxed);
        if idx >= self.geo.thread_slots {
            return None;
        }
        let off = self.geo.slot_offset(idx);
        self.u32_at(off + slot::TID as u64)
            .store(tid, Ordering::Release);
        // SAFETY: the slot lies in the backed thread table.
        Some(ThreadSlot(unsafe { self.base.add(off as usize) }))
    }

    /// Claims a chunk for `kind` owned by `tid`, backing fresh chunks with `grow`
    /// (called with the file offset and length to back; returns false on failure).
    pub fn claim_chunk(
        &self,
        kind: ChunkKind,
        tid: u32,
        grow: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Claim {
        let idx = self
            .u32_at(hdr::NEXT_CHUNK as u64)
            .fetch_add(1, Ordering::Relaxed);
        if idx < self.geo.chunk_count {
            let off = self.geo.chunk_offset(idx);
            if !grow(off, self.geo.chunk_size as u64) {
                // Give the index back unless someone claimed past it meanwhile:
                // a passing failure must not use up the file's chunks.
                let _ = self.u32_at(hdr::NEXT_CHUNK as u64).compare_exchange(
                    idx + 1,
                    idx,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
                return Claim::NoSpace;
            }
            return Claim::Chunk(self.start_chunk(off, kind, tid));
        }
        // Keep the counter from wrapping when many threads keep asking.
        self.u32_at(hdr::NEXT_CHUNK as u64)
            .store(self.geo.chunk_count, Ordering::Relaxed);
        if !self.flight || kind == ChunkKind::Meta {
            self.set_state(state::CAP_REACHED);
            return Claim::Full;
        }
        self.recycle(kind, tid)
    }

    /// Flight recorder: reuses the oldest sealed thread chunk.
    fn recycle(&self, kind: ChunkKind, tid: u32) -> Claim {
        let cursor = self.u64_at(hdr::RECYCLE_CURSOR as u64);
        for _ in 0..self.geo.chunk_count {
            let idx = (cursor.fetch_add(1, Ordering::Relaxed) % self.geo.chunk_count as u64) as u32;
            let off = self.geo.chunk_offset(idx);
            // SAFETY: chunk `idx` was claimed earlier, so it is backed.
            let kind_byte = unsafe { *self.base.add((off as usize) + chk::KIND) };
            if ChunkKind::from_code(kind_byte) != Some(ChunkKind::Thread) {
                continue;
            }
            let st = self.u32_at(off + chk::STATE as u64);
            if st
                .compare_exchange(
                    chunk_state::SEALED,
                    chunk_state::RECYCLING,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                )
                .is_ok()
            {
                let lost = self
                    .u32_at(off + chk::RECORDS as u64)
                    .load(Ordering::Relaxed);
                self.u64_at(hdr::OVERWRITTEN as u64)
                    .fetch_add(lost as u64, Ordering::Relaxed);
                return Claim::Chunk(self.start_chunk(off, kind, tid));
            }
        }
        self.set_state(state::CAP_REACHED);
        Claim::Full
    }

    fn start_chunk(&self, off: u64, kind: ChunkKind, tid: u32) -> ChunkWriter {
        let seq = self
            .u64_at(hdr::CHUNK_SEQ as u64)
            .fetch_add(1, Ordering::Relaxed);
        // Empty the chunk before its identity changes, so a reader never pairs
        // the new owner with old records.
        self.u32_at(off + chk::COMMITTED as u64)
            .store(0, Ordering::Release);
        self.u32_at(off + chk::RECORDS as u64)
            .store(0, Ordering::Relaxed);
        // SAFETY: the chunk is backed and exclusively ours until published.
        unsafe {
            let p = self.base.add(off as usize);
            *p.add(chk::KIND) = kind as u8;
            (p.add(chk::TID) as *mut u32).write_unaligned(tid.to_le());
            (p.add(chk::SEQ) as *mut u64).write_unaligned(seq.to_le());
        }
        self.u32_at(off + chk::STATE as u64)
            .store(chunk_state::ACTIVE, Ordering::Release);
        self.u32_at(off + chk::MAGIC as u64)
            .store(CHUNK_MAGIC, Ordering::Release);
        // SAFETY: inside the mapping.
        let ptr = unsafe { self.base.add(off as usize) };
        ChunkWriter {
            chunk: ptr,
            pos: 0,
            cap: self.geo.chunk_payload(),
            records: 0,
        }
    }
}

/// A claimed thread slot: per-op counters updated in place by one thread.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadSlot(*mut u8);

impl ThreadSlot {
    /// A slot that points nowhere; `is_null` tells.
    pub const NULL: ThreadSlot = ThreadSlot(core::ptr::null_mut());

    pub fn is_null(self) -> bool {
        self.0.is_null()
    }

    /// A slot over arbitrary memory (a scratch block for threads without a slot).
    ///
    /// # Safety
    /// `p` must point to THREAD_SLOT_SIZE writable, 8-aligned bytes that live forever.
    pub unsafe fn from_raw(p: *mut u8) -> ThreadSlot {
        ThreadSlot(p)
    }

    /// Adds to a counter. Only the owning thread writes its slot, so this is a
    /// plain load and store; readers may see a value one update old.
    ///
    /// # Safety
    /// The slot must not be NULL and `off` must be a counter offset.
    #[inline(always)]
    pub unsafe fn add(self, off: usize, v: u64) {
        // SAFETY: per the contract, 8-aligned and inside the backed table.
        let a = unsafe { &*(self.0.add(off) as *const AtomicU64) };
        a.store(a.load(Ordering::Relaxed).wrapping_add(v), Ordering::Relaxed);
    }

    /// Counts a record this thread had to drop.
    ///
    /// # Safety
    /// The slot must not be NULL.
    #[inline]
    pub unsafe fn add_dropped(self, n: u64) {
        unsafe { self.add(slot::DROPPED, n) }
    }
}

/// A cursor into one chunk, owned by one writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkWriter {
    chunk: *mut u8,
    pos: u32,
    cap: u32,
    records: u32,
}

impl ChunkWriter {
    /// A writer with no chunk; every write fails.
    pub const EMPTY: ChunkWriter = ChunkWriter {
        chunk: core::ptr::null_mut(),
        pos: 0,
        cap: 0,
        records: 0,
    };

    pub fn is_empty(&self) -> bool {
        self.chunk.is_null()
    }

    /// Writes one record of `len` bytes (a multiple of 8) with `fill`, then
    /// publishes it. Returns false, writing nothing, if the chunk lacks room.
    ///
    /// # Safety
    /// The chunk must be owned by the caller (or guarded by a lock for meta chunks).
    #[inline(always)]
    pub unsafe fn write(&mut self, len: usize, fill: impl FnOnce(&mut [u8])) -> bool {
        if self.chunk.is_null() || self.pos as usize + len > self.cap as usize {
            return false;
        }
        // SAFETY: [pos, pos+len) is inside this chunk's payload, which only this
        // writer touches and no reader trusts until the commit below.
        let dst = unsafe {
            core::slice::from_raw_parts_mut(
                self.chunk.add(CHUNK_HEADER_SIZE + self.pos as usize),
                len,
            )
        };
        fill(dst);
        self.pos += len as u32;
        self.records += 1;
        self.publish();
        true
    }

    #[inline(always)]
    fn publish(&self) {
        // SAFETY: header fields of our own chunk.
        unsafe {
            (*(self.chunk.add(chk::RECORDS) as *const AtomicU32))
                .store(self.records, Ordering::Relaxed);
            (*(self.chunk.add(chk::COMMITTED) as *const AtomicU32))
                .store(self.pos, Ordering::Release);
        }
    }

    /// Marks the chunk full so the flight recorder may reuse it.
    ///
    /// # Safety
    /// As for `write`; the writer must not be used afterwards.
    pub unsafe fn seal(&mut self) {
        if !self.chunk.is_null() {
            // SAFETY: header field of our own chunk.
            unsafe {
                (*(self.chunk.add(chk::STATE) as *const AtomicU32))
                    .store(chunk_state::SEALED, Ordering::Release);
            }
        }
        *self = ChunkWriter::EMPTY;
    }
}

/// The shared definitions stream (strings, objects): one chunk at a time,
/// written under a spinlock. Definitions are rare, so contention is too.
pub struct MetaStream {
    lock: AtomicBool,
    writer: UnsafeCell<ChunkWriter>,
}

// The writer is only touched with the lock held.
unsafe impl Sync for MetaStream {}

impl Default for MetaStream {
    fn default() -> Self {
        Self::new()
    }
}

impl MetaStream {
    pub const fn new() -> MetaStream {
        MetaStream {
            lock: AtomicBool::new(false),
            writer: UnsafeCell::new(ChunkWriter::EMPTY),
        }
    }

    /// Forgets the current chunk (after fork the child writes a new file).
    pub fn reset(&self) {
        self.lock.store(false, Ordering::Release);
        // SAFETY: called in a single-threaded child before any writer runs.
        unsafe { *self.writer.get() = ChunkWriter::EMPTY };
    }

    /// Writes one record into the meta stream, claiming chunks from `region` as
    /// needed. Returns false if no space was available.
    pub fn write(
        &self,
        region: &Region,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
        grow: &mut dyn FnMut(u64, u64) -> bool,
    ) -> bool {
        let mut spins = 0u32;
        while self
            .lock
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spins += 1;
            if spins < 64 {
                core::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        // SAFETY: we hold the lock.
        let w = unsafe { &mut *self.writer.get() };
        // SAFETY: the meta chunk is guarded by the lock.
        let mut ok = unsafe { w.write(len, &mut *fill) };
        if !ok
            && len <= region.geo.chunk_payload() as usize
            && let Claim::Chunk(c) = region.claim_chunk(ChunkKind::Meta, 0, grow)
        {
            // SAFETY: the old chunk is ours under the lock.
            unsafe { w.seal() };
            *w = c;
            ok = unsafe { w.write(len, &mut *fill) };
        }
        self.lock.store(false, Ordering::Release);
        ok
    }
}

/// Bytes of the file that must be backed before the region is used.
pub fn fixed_part_len(geo: &Geometry) -> u64 {
    geo.chunks_offset.max(HEADER_SIZE as u64)
}
