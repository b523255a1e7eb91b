//! Writer -> reader round trips, flight-recorder reuse, and golden bytes.

mod common;

use common::*;
use stallscope_format::layout::{self, counter_offset, state};
use stallscope_format::records::{Burst, Clock, Object, Span};
use stallscope_format::writer::{Claim, MetaStream};
use stallscope_format::{HostOp, Record, TraceView};

fn spans_of(view: &TraceView) -> Vec<(u32, Span)> {
    let mut chunks: Vec<_> = view.chunks().map(|c| c.unwrap()).collect();
    chunks.sort_by_key(|c| c.seq);
    let mut out = vec![];
    for c in chunks {
        for r in c.records() {
            if let (_, Record::Span(s)) = r.unwrap() {
                out.push((c.tid, s));
            }
        }
    }
    out
}

#[test]
fn header_round_trip() {
    let mut mem = Mem::new(1 << 20, 4096, 8);
    mem.region(&sample_init(), false);
    let view = TraceView::parse(mem.bytes()).unwrap();
    let h = &view.header;
    assert_eq!(h.pid, 4242);
    assert_eq!(h.ppid, 1);
    assert_eq!(h.hostname, "testhost");
    assert_eq!(h.producer, "stallscope-test");
    assert_eq!(h.argv, ["python", "train.py", "--epochs", "3"]);
    assert_eq!(h.min_span_ns, 20_000);
    assert_eq!(h.chunk_size, 4096);
    assert_eq!(view.chunks().count(), 0);
}

#[test]
fn spans_counters_and_strings_round_trip() {
    let mut mem = Mem::new(1 << 20, 4096, 8);
    let region = mem.region(&sample_init(), false);
    let meta = MetaStream::new();
    assert!(write_string(&meta, &region, 1, "/data/a.bin"));
    let obj = Object {
        class: 1,
        obj: 1,
        ts: 5,
        dev: 2049,
        ino: 77,
        fs_magic: 0xEF53,
        path: 1,
        fd: 3,
    };
    assert!(meta.write(&region, Object::LEN, &mut |b| obj.encode(b), &mut always));

    let slot = region.claim_slot(100).unwrap();
    let mut w = thread_chunk(&region, 100);
    for i in 0..10u64 {
        let s = Span {
            op: HostOp::Read as u8,
            obj: 1,
            ts: 1000 + i,
            dur: 25_000,
            bytes: 65536,
        };
        assert!(write_span(&mut w, s));
        unsafe {
            slot.add(counter_offset(HostOp::Read, 0), 1);
            slot.add(counter_offset(HostOp::Read, 1), 65536);
        }
    }
    let view = TraceView::parse(mem.bytes()).unwrap();
    let spans = spans_of(&view);
    assert_eq!(spans.len(), 10);
    assert!(spans.iter().all(|(tid, s)| *tid == 100 && s.bytes == 65536));
    let threads = view.threads();
    assert_eq!(threads.len(), 1);
    assert_eq!(threads[0].tid, 100);
    assert_eq!(threads[0].ops[HostOp::Read as usize].calls, 10);
    assert_eq!(threads[0].ops[HostOp::Read as usize].bytes, 655_360);

    let mut strings = vec![];
    let mut objects = vec![];
    for c in view.chunks() {
        for r in c.unwrap().records() {
            match r.unwrap().1 {
                Record::String { id, text } => strings.push((id, text.to_vec())),
                Record::Object(o) => objects.push(o),
                _ => {}
            }
        }
    }
    assert_eq!(strings, vec![(1, b"/data/a.bin".to_vec())]);
    assert_eq!(objects, vec![obj]);
}

#[test]
fn cap_is_enforced_and_reported() {
    let mut mem = Mem::new(64 * 1024, 4096, 4);
    let region = mem.region(&sample_init(), false);
    let n = region.geometry().chunk_count;
    for _ in 0..n {
        assert!(matches!(
            region.claim_chunk(layout::ChunkKind::Thread, 1, &mut always),
            Claim::Chunk(_)
        ));
    }
    assert_eq!(
        region.claim_chunk(layout::ChunkKind::Thread, 1, &mut always),
        Claim::Full
    );
    assert_ne!(region.state() & state::CAP_REACHED, 0);
}

#[test]
fn refused_growth_reports_no_space() {
    let mut mem = Mem::new(64 * 1024, 4096, 4);
    let region = mem.region(&sample_init(), false);
    let got = region.claim_chunk(layout::ChunkKind::Thread, 1, &mut |_, _| false);
    assert_eq!(got, Claim::NoSpace);
    // Why it could not grow (full disk, or a passing fd shortage) is the
    // producer's to say; the next chunk can still be claimed.
    assert_eq!(region.state(), 0);
    // Failed claims give their chunk back: every chunk can still be claimed.
    for _ in 0..100 {
        region.claim_chunk(layout::ChunkKind::Thread, 1, &mut |_, _| false);
    }
    for _ in 0..region.geometry().chunk_count {
        assert!(matches!(
            region.claim_chunk(layout::ChunkKind::Thread, 1, &mut always),
            Claim::Chunk(_)
        ));
    }
}

#[test]
fn flight_recorder_keeps_the_newest() {
    let mut mem = Mem::new(64 * 1024, 4096, 4);
    let region = mem.region(&sample_init(), true);
    let per_chunk = (4096 - 64) / Span::LEN;
    let total = per_chunk * 40;
    let mut w = thread_chunk(&region, 7);
    for i in 0..total as u64 {
        let s = Span {
            op: 2,
            obj: 0,
            ts: i,
            dur: 1,
            bytes: 0,
        };
        if !write_span(&mut w, s) {
            unsafe { w.seal() };
            w = thread_chunk(&region, 7);
            assert!(write_span(&mut w, s));
        }
    }
    let view = TraceView::parse(mem.bytes()).unwrap();
    let spans = spans_of(&view);
    let ts: Vec<u64> = spans.iter().map(|(_, s)| s.ts).collect();
    // The newest record survives, the kept ones are contiguous and in order.
    assert_eq!(*ts.last().unwrap(), total as u64 - 1);
    assert!(ts.windows(2).all(|p| p[1] == p[0] + 1));
    assert!(ts.len() >= per_chunk * (region.geometry().chunk_count as usize - 1));
    assert_eq!(view.header.overwritten as usize + ts.len(), total);
}

#[test]
fn meta_stream_is_never_recycled() {
    let mut mem = Mem::new(64 * 1024, 4096, 4);
    let region = mem.region(&sample_init(), true);
    let meta = MetaStream::new();
    assert!(write_string(&meta, &region, 1, "kept"));
    let mut w = thread_chunk(&region, 7);
    for i in 0..5000u64 {
        let s = Span {
            op: 2,
            obj: 0,
            ts: i,
            dur: 1,
            bytes: 0,
        };
        if !write_span(&mut w, s) {
            unsafe { w.seal() };
            w = thread_chunk(&region, 7);
            write_span(&mut w, s);
        }
    }
    let view = TraceView::parse(mem.bytes()).unwrap();
    let found = view
        .chunks()
        .flat_map(|c| c.unwrap().records().collect::<Vec<_>>())
        .any(|r| matches!(r.unwrap().1, Record::String { id: 1, text } if text == b"kept"));
    assert!(found);
}

/// A trace built the same way every time, compared with the checked-in bytes.
fn golden_trace() -> Vec<u8> {
    let mut mem = Mem::new(28 * 1024, 4096, 4);
    let region = mem.region(&sample_init(), false);
    let meta = MetaStream::new();
    write_string(&meta, &region, 1, "/data/train.bin");
    let obj = Object {
        class: 1,
        obj: 1,
        ts: 2_000_000,
        dev: 2049,
        ino: 1234,
        fs_magic: 0xEF53,
        path: 1,
        fd: 5,
    };
    meta.write(&region, Object::LEN, &mut |b| obj.encode(b), &mut always);
    let slot = region.claim_slot(4243).unwrap();
    unsafe {
        slot.add(counter_offset(HostOp::Read, 0), 3);
        slot.add(counter_offset(HostOp::Read, 1), 3 * 65536);
        slot.add(counter_offset(HostOp::Read, 2), 120_000);
    }
    let mut w = thread_chunk(&region, 4243);
    let clock = Clock {
        reserved: 0,
        mono_ns: 1_000_000,
        real_ns: 1_700_000_000_000_000_000,
        ticks: 0,
    };
    unsafe { w.write(Clock::LEN, |b| clock.encode(b)) };
    write_span(
        &mut w,
        Span {
            op: HostOp::Read as u8,
            obj: 1,
            ts: 2_100_000,
            dur: 40_000,
            bytes: 65536,
        },
    );
    let burst = Burst {
        op: HostOp::Pread as u8,
        obj: 1,
        ts: 2_200_000,
        dur: 90_000,
        bytes: 20 * 4096,
        calls: 20,
        files: 1,
        busy: 80_000,
    };
    unsafe { w.write(Burst::LEN, |b| burst.encode(b)) };
    region.set_end(3_000_000);
    region.set_state(state::CLEAN_EXIT);
    mem.bytes().to_vec()
}

#[test]
fn golden_bytes() {
    let bytes = golden_trace();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/minimal.sst");
    if std::env::var_os("STALLSCOPE_BLESS").is_some() {
        std::fs::write(path, &bytes).unwrap();
    }
    let golden = std::fs::read(path).expect("golden file missing: run with STALLSCOPE_BLESS=1");
    assert_eq!(bytes.len(), golden.len(), "golden length differs");
    if let Some(i) = (0..bytes.len()).find(|&i| bytes[i] != golden[i]) {
        panic!(
            "byte {i} (0x{i:x}) differs from the golden file: {} != {}",
            bytes[i], golden[i]
        );
    }
    // And the golden file reads back to what was written.
    let view = TraceView::parse(&golden).unwrap();
    assert_eq!(view.header.end_mono_ns, 3_000_000);
    assert_eq!(spans_of(&view).len(), 1);
    let bursts: Vec<Burst> = view
        .chunks()
        .flat_map(|c| {
            let c = c.unwrap();
            c.records().map(|r| r.unwrap().1).collect::<Vec<_>>()
        })
        .filter_map(|r| match r {
            Record::Burst(b) => Some(b),
            _ => None,
        })
        .collect();
    assert_eq!(bursts.len(), 1);
    assert_eq!((bursts[0].calls, bursts[0].busy), (20, 80_000));
}
