//! Builds small traces in memory with the producer primitives.

#![allow(dead_code)]

use stallscope_format::layout::{ChunkKind, Geometry, HeaderInit, encode_header};
use stallscope_format::records::{self, Span};
use stallscope_format::writer::{ChunkWriter, Claim, MetaStream, Region};

/// An 8-byte aligned buffer standing in for the shared mapping.
pub struct Mem {
    words: Vec<u64>,
    pub geo: Geometry,
}

impl Mem {
    pub fn new(capacity: u64, chunk_size: u32, slots: u32) -> Mem {
        let geo = Geometry::new(capacity, chunk_size, slots).unwrap();
        let len = geo.chunk_offset(geo.chunk_count) as usize;
        Mem {
            words: vec![0; len / 8],
            geo,
        }
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: plain reinterpretation of the word buffer.
        unsafe {
            std::slice::from_raw_parts(self.words.as_ptr() as *const u8, self.words.len() * 8)
        }
    }

    pub fn region(&mut self, init: &HeaderInit, flight: bool) -> Region {
        let base = self.words.as_mut_ptr() as *mut u8;
        // SAFETY: the buffer covers the whole geometry.
        let buf = unsafe { std::slice::from_raw_parts_mut(base, self.words.len() * 8) };
        encode_header(buf, init, &self.geo);
        unsafe { Region::new(base, self.geo, flight) }
    }
}

pub fn sample_init() -> HeaderInit {
    HeaderInit {
        capacity: 0,
        pid: 4242,
        ppid: 1,
        flags: 0,
        start_mono_ns: 1_000_000,
        start_real_ns: 1_700_000_000_000_000_000,
        start_ticks: 0,
        ticks_per_sec: 0,
        min_span_ns: 20_000,
        sample_hz: 100,
        producer: "stallscope-test".into(),
        hostname: "testhost".into(),
        cmdline: b"python\0train.py\0--epochs\x003".to_vec(),
        ..Default::default()
    }
}

pub fn always(_: u64, _: u64) -> bool {
    true
}

pub fn thread_chunk(region: &Region, tid: u32) -> ChunkWriter {
    match region.claim_chunk(ChunkKind::Thread, tid, &mut always) {
        Claim::Chunk(c) => c,
        other => panic!("no chunk: {other:?}"),
    }
}

pub fn write_span(w: &mut ChunkWriter, s: Span) -> bool {
    unsafe { w.write(Span::LEN, |b| s.encode(b)) }
}

pub fn write_string(meta: &MetaStream, region: &Region, id: u32, text: &str) -> bool {
    let len = records::string_record_len(text.as_bytes());
    meta.write(
        region,
        len,
        &mut |b| records::encode_string(b, id, text.as_bytes()),
        &mut always,
    )
}
