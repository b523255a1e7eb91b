//! The reader never panics: random bytes, corrupted fields and truncations of
//! valid traces all come back as values or errors.

mod common;

use common::*;
use proptest::prelude::*;
use stallscope_format::records::Span;
use stallscope_format::writer::MetaStream;
use stallscope_format::{Record, TraceView};

/// Reads everything; returns the spans read before the first error.
fn read_all(bytes: &[u8]) -> Result<Vec<Span>, String> {
    let view = TraceView::parse(bytes).map_err(|e| e.to_string())?;
    let _ = view.threads();
    let mut spans = vec![];
    for c in view.chunks() {
        let c = c.map_err(|e| e.to_string())?;
        for r in c.records() {
            match r.map_err(|e| e.to_string())?.1 {
                Record::Span(s) => spans.push(s),
                Record::String { .. } | Record::Unknown { .. } => {}
                other => {
                    let _ = other.kind_name();
                }
            }
        }
    }
    Ok(spans)
}

fn valid_trace(n: usize) -> (Vec<u8>, Vec<Span>) {
    let mut mem = Mem::new(64 * 1024, 4096, 4);
    let region = mem.region(&sample_init(), false);
    let meta = MetaStream::new();
    write_string(&meta, &region, 1, "/tmp/x");
    let mut w = thread_chunk(&region, 9);
    let mut written = vec![];
    for i in 0..n as u64 {
        let s = Span {
            op: 2,
            obj: 1,
            ts: i * 10,
            dur: 30_000,
            bytes: i,
        };
        if !write_span(&mut w, s) {
            unsafe { w.seal() };
            w = thread_chunk(&region, 9);
            write_span(&mut w, s);
        }
        written.push(s);
    }
    (mem.bytes().to_vec(), written)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..40_000)) {
        let _ = read_all(&bytes);
    }

    #[test]
    fn random_header_with_magic_never_panics(mut bytes in proptest::collection::vec(any::<u8>(), 16384..40_000)) {
        bytes[..8].copy_from_slice(b"STLSCOPE");
        bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
        let _ = read_all(&bytes);
    }

    #[test]
    fn truncation_keeps_a_prefix(n in 1usize..400, cut in 0.0f64..1.0) {
        let (bytes, written) = valid_trace(n);
        let at = (bytes.len() as f64 * cut) as usize;
        if let Ok(spans) = read_all(&bytes[..at]) {
            prop_assert!(spans.len() <= written.len());
            prop_assert_eq!(&spans[..], &written[..spans.len()]);
        }
    }

    #[test]
    fn corrupted_bytes_never_panic(n in 1usize..200, flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..20)) {
        let (mut bytes, _) = valid_trace(n);
        let len = bytes.len();
        for (pos, v) in flips {
            bytes[pos % len] = v;
        }
        let _ = read_all(&bytes);
    }
}

#[test]
fn full_trace_reads_back_exactly() {
    let (bytes, written) = valid_trace(300);
    assert_eq!(read_all(&bytes).unwrap(), written);
}

#[test]
fn errors_name_the_offset() {
    let (mut bytes, _) = valid_trace(3);
    let view = TraceView::parse(&bytes).unwrap();
    let first = view
        .chunks()
        .find_map(|c| {
            let c = c.unwrap();
            (c.tid == 9).then_some(c.offset)
        })
        .unwrap();
    let rec = first as usize + 64;
    bytes[rec..rec + 2].copy_from_slice(&3u16.to_le_bytes());
    let err = read_all(&bytes).unwrap_err();
    assert!(err.contains(&format!("offset {rec}")), "{err}");
    assert!(err.contains("record length 3"), "{err}");

    let mut newer = bytes.clone();
    newer[8..12].copy_from_slice(&9u32.to_le_bytes());
    let err = read_all(&newer).unwrap_err();
    assert!(err.contains("version 9 is newer"), "{err}");
}
