//! The Perfetto writer without Python: golden bytes, determinism, progress,
//! and odd model contents.

mod perfetto_support;

use std::cell::RefCell;
use std::fs;
use std::path::Path;

use stallscope_analyzer::model::*;
use stallscope_analyzer::output::perfetto::write_perfetto;

use perfetto_support::*;

/// The small timeline's bytes are pinned. Bless with STALLSCOPE_BLESS=1
/// (and check the text dump golden from perfetto_decode.rs with it).
#[test]
fn small_trace_matches_golden_bytes() {
    let (tl, diag) = small();
    let (got, _) = write(&tl, Some(&diag));
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/perfetto/small.pftrace");
    if std::env::var_os("STALLSCOPE_BLESS").is_some() {
        fs::write(&golden, &got).unwrap();
        return;
    }
    let want = fs::read(&golden).unwrap_or_default();
    if got != want {
        let at = got
            .iter()
            .zip(&want)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(want.len()));
        let out = std::env::temp_dir().join("stallscope-small.pftrace");
        fs::write(&out, &got).unwrap();
        panic!(
            "{} differs at byte {at} ({} vs {} bytes); new output in {}; \
             rerun with STALLSCOPE_BLESS=1 if intended",
            golden.display(),
            got.len(),
            want.len(),
            out.display()
        );
    }
}

#[test]
fn output_is_deterministic() {
    let (tl, diag) = native();
    let (a, sa) = write(&tl, Some(&diag));
    let (b, sb) = write(&tl, Some(&diag));
    assert!(a == b && sa == sb);
    let (tl, diag) = kineto_like();
    assert!(write(&tl, Some(&diag)).0 == write(&tl, Some(&diag)).0);
}

#[test]
fn progress_counts_up_to_its_total() {
    let (tl, diag) = native();
    let calls = RefCell::new(vec![]);
    let progress = |done: u64, total: u64| calls.borrow_mut().push((done, total));
    write_perfetto(&tl, Some(&diag), std::io::sink(), &progress).unwrap();
    let calls = calls.into_inner();
    let total = calls[0].1;
    // Spans, ops, gaps, steps, samples, memory events and an OOM at least.
    assert!(total > 19 + 8 + 3 + 2 + 5 + 4 + 4 + 5, "{calls:?}");
    assert_eq!(calls.first(), Some(&(0, total)));
    assert_eq!(calls.last(), Some(&(total, total)));
    assert!(
        calls
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[1].1 == total)
    );
}

/// A large timeline reports progress along the way, not only at the end.
#[test]
fn progress_is_periodic_on_large_timelines() {
    let mut tl = Timeline::new(Source::Native, "big");
    let k = tl.strings.intern("k");
    let ops = (0..200_000)
        .map(|i| op(GpuOpKind::Kernel, i * 10, i * 10 + 5, k, 0))
        .collect();
    tl.gpus = vec![Gpu {
        streams: vec![Stream { id: 1, ops }],
        ..Gpu::default()
    }];
    let calls = RefCell::new(0);
    write_perfetto(&tl, None, std::io::sink(), &|_, _| *calls.borrow_mut() += 1).unwrap();
    assert!(calls.into_inner() >= 4);
}

/// Nothing in an odd timeline may panic: no processes, unknown string ids,
/// negative and extreme times, spans out of order, an op that ends before it
/// starts, launch indices out of range, a free of an unknown allocation.
#[test]
fn odd_timelines_write_without_panicking() {
    let tl = Timeline::new(Source::Kineto, "empty");
    let (bytes, stats) = write(&tl, None);
    assert_eq!((stats.packets, stats.slices), (1, 0));
    assert_eq!(bytes.len() as u64, stats.bytes);

    let mut tl = Timeline::new(Source::Kineto, "odd");
    tl.realtime_offset_ns = Some(i64::MIN);
    tl.processes = vec![Process {
        pid: u32::MAX,
        threads: vec![Thread {
            tid: u32::MAX,
            name: 77_777,
            spans: vec![
                span(i64::MAX - 10, 100, SpanKind::CudaRuntime, 5, u64::MAX),
                span(
                    -5_000,
                    -7,
                    SpanKind::Host(stallscope_format::HostOp::Read),
                    42,
                    1,
                ),
                span(
                    -5_000,
                    0,
                    SpanKind::Host(stallscope_format::HostOp::SemWait),
                    0,
                    0,
                ),
            ],
            samples: vec![
                Sample {
                    ts: 50,
                    cpu_ns: 10,
                    ..Sample::default()
                },
                Sample {
                    ts: 50,
                    cpu_ns: 5,
                    majflt: 3,
                    ..Sample::default()
                },
                Sample {
                    ts: 10,
                    cpu_ns: 0,
                    ..Sample::default()
                },
            ],
            ..Thread::default()
        }],
        ..Process::default()
    }];
    let mut bad = op(GpuOpKind::Memcpy, 100, 50, 9_999, u32::MAX);
    bad.set_launch(3);
    tl.gpus = vec![Gpu {
        id: u32::MAX,
        streams: vec![Stream {
            id: u64::MAX,
            ops: vec![bad, op(GpuOpKind::Memset, -1, 0, 0, 0)],
        }],
        memory: vec![MemEvent {
            ts: 0,
            bytes: 0,
            address: 1,
            corr: 0,
            alloc: false,
            kind: MemKind::UNKNOWN,
        }],
        ..Gpu::default()
    }];
    tl.ooms = vec![Oom {
        ts: 0,
        pid: 1,
        tid: 1,
        requested: 1,
        free: 0,
        total: 0,
        api: String::new(),
    }];
    let (bytes, stats) = write(&tl, None);
    assert_eq!(bytes.len() as u64, stats.bytes);
    assert_eq!((stats.spans, stats.gpu_ops), (3, 2));
    // The OOM names a process the timeline lacks: no track, no event.
    assert_eq!(stats.instants, 0);
}

/// Issue 14: 100k kernels that share one timestamp on one stream, each in
/// its own lane. Not timed: with the per-event lane scan this took minutes
/// (quadratic), now about a second in a debug build.
#[test]
fn many_kernels_with_one_timestamp_write_in_n_log_n() {
    let mut tl = Timeline::new(Source::Native, "equal-ts");
    let name = tl.strings.intern("gemm");
    tl.gpus = vec![Gpu {
        id: 0,
        streams: vec![Stream {
            id: 7,
            ops: (0..100_000)
                .map(|_| op(GpuOpKind::Kernel, 1_000, 2_000, name, 0))
                .collect(),
        }],
        ..Gpu::default()
    }];
    tl.finalize();
    let (bytes, stats) = write(&tl, None);
    assert_eq!(bytes.len() as u64, stats.bytes);
    assert_eq!((stats.kernels, stats.lanes), (100_000, 99_999));
}
