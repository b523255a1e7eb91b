//! Decodes written traces with Perfetto's official schema (check_trace.py) and
//! compares them with the timeline model. Needs `pip install perfetto protobuf`;
//! without it these tests fail and say so.

mod perfetto_support;

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use stallscope_analyzer::analysis::Diagnosis;
use stallscope_analyzer::model::Timeline;
use stallscope_analyzer::output::perfetto::PerfettoStats;

use perfetto_support::*;

/// Writes the trace and its expectations (model counts merged with `extra`)
/// into `dir`, runs the checker and fails with its report if it objects.
fn check(
    dir: &Path,
    name: &str,
    tl: &Timeline,
    diag: Option<&Diagnosis>,
    extra: Value,
) -> (PathBuf, PathBuf, PerfettoStats) {
    let (bytes, stats) = write(tl, diag);
    assert_eq!(stats.bytes, bytes.len() as u64);
    let trace = dir.join(format!("{name}.pftrace"));
    fs::write(&trace, &bytes).unwrap();
    let mut exp = expected(tl, diag);
    for (k, v) in extra.as_object().unwrap() {
        exp[k] = v.clone();
    }
    let exp_path = dir.join(format!("{name}.json"));
    fs::write(&exp_path, serde_json::to_string_pretty(&exp).unwrap()).unwrap();
    // The bonus TraceProcessor load downloads its binary, so it is opt-in.
    let tp: &[&str] = if std::env::var_os("STALLSCOPE_PERFETTO_TP").is_some() {
        &["--trace-processor"]
    } else {
        &[]
    };
    let (ok, out) = run_checker(&trace, Some(&exp_path), tp);
    assert!(ok, "check_trace.py rejected {name}:\n{out}");
    (trace, exp_path, stats)
}

#[test]
fn native_trace_decodes_and_matches_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let (tl, diag) = native();
    let extra = json!({
        "tracks": ["GPU 0: NVIDIA H100 80GB HBM3", "idle: cause", "stream 7", "stream 13",
                   "steps", "busy %", "allocated", "file reads MB/s", "python 100 CPU %",
                   "pt_data_worker 200 CPU %", "pt_data_worker 200 major faults/s"],
        "processes": {"100": "python train.py --epochs 1",
                      "200": "python train.py --epochs 1 (DataLoader worker 0)"},
        "threads": {"100": "python", "101": "pt_autograd_0", "200": "pt_data_worker",
                    "201": "feeder"},
        "names": ["ProfilerStep#0", "forward", "cudaLaunchKernel", "cuLaunchKernel", "poll",
                  "read", "pread", "write", "sem_wait", "cond_wait", "recv",
                  "ampere_sgemm_128x64_nn", "Memcpy HtoD", "Memcpy DtoH", "Memset",
                  "data/cpu", "sync", "io", "step 0", "step 1", "OOM"],
        "args": {"read": ["bytes", "path", "filesystem", "fd", "fd class"],
                 "pread": ["bytes", "path", "calls", "time in calls (ns)"],
                 "sem_wait": ["address"],
                 "cudaLaunchKernel": ["correlation"],
                 "ampere_sgemm_128x64_nn": ["grid", "block", "shared mem", "registers",
                                            "precision", "correlation"],
                 "Memcpy HtoD": ["bytes", "kind", "src", "dst", "GB/s"],
                 "Memset": ["bytes", "dst"],
                 "data/cpu": ["pid", "tid", "thread"],
                 "step 1": ["outlier"],
                 "OOM": ["requested", "free", "total", "api"]},
        "counters": ["busy %", "allocated", "file reads MB/s", "python 100 CPU %",
                     "pt_data_worker 200 major faults/s"],
        "counter_range": {"busy %": [0.0, 100.0], "python 100 CPU %": [0.0, 60.0000001]},
        // 1 GiB, then 256 + 16 MiB at one instant: frees resolve by address.
        "counter_max": {"allocated": 1358954496},
        "lanes": 0,
    });
    let (_, _, stats) = check(dir.path(), "native", &tl, Some(&diag), extra);
    // Literal counts, so the model-derived expectations cannot drift together
    // with the writer.
    assert_eq!(
        (stats.spans, stats.gpu_ops, stats.kernels, stats.flows),
        (19, 8, 5, 5)
    );
    assert_eq!(
        (stats.idle_gaps, stats.steps, stats.instants, stats.lanes),
        (3, 2, 1, 0)
    );
}

#[test]
fn kineto_like_trace_with_overlaps_and_unsorted_lists_decodes() {
    let dir = tempfile::tempdir().unwrap();
    let (tl, diag) = kineto_like();
    let extra = json!({
        "tracks": ["GPU 3", "GPU 9", "stream 7", "stream 7 (overlap 1)",
                   "thread 4321 (overlap 1)", "idle: cause"],
        "names": ["aten::mm", "aten::add", "other", "kernel", "cpu op", "cudaLaunchKernel",
                  "launch", "cpu", "other/dependency"],
        "lanes": 2,
    });
    let (_, _, stats) = check(dir.path(), "kineto", &tl, Some(&diag), extra);
    // One launch, two kernels: two flows from one call.
    assert_eq!(
        (stats.flows, stats.kernels, stats.lanes, stats.steps),
        (3, 3, 2, 0)
    );
}

#[test]
fn empty_and_diagnosis_only_timelines_decode() {
    let dir = tempfile::tempdir().unwrap();
    let tl = Timeline::new(stallscope_analyzer::model::Source::Native, "empty");
    check(dir.path(), "empty", &tl, None, json!({"lanes": 0}));
    let (_, diag) = kineto_like();
    check(
        dir.path(),
        "diag-only",
        &tl,
        Some(&diag),
        json!({"tracks": ["GPU 3", "GPU 9"]}),
    );
}

/// The checker must be able to fail: wrong counts, a truncated file, a missing
/// first packet and a missing END are all caught.
#[test]
fn checker_rejects_wrong_counts_and_broken_traces() {
    let dir = tempfile::tempdir().unwrap();
    let (tl, diag) = native();
    let (trace, exp_path, _) = check(dir.path(), "native", &tl, Some(&diag), json!({}));

    let mut exp: Value = serde_json::from_slice(&fs::read(&exp_path).unwrap()).unwrap();
    exp["categories"]["kernel"]["count"] = json!(6);
    let wrong = dir.path().join("wrong.json");
    fs::write(&wrong, exp.to_string()).unwrap();
    let (ok, out) = run_checker(&trace, Some(&wrong), &[]);
    assert!(!ok && out.contains("category kernel"), "{out}");

    let bytes = fs::read(&trace).unwrap();
    let packets = split_packets(&bytes);
    let variants = [
        ("truncated", bytes[..bytes.len() * 2 / 3].to_vec(), ""),
        (
            "headless",
            packets[1..].concat(),
            "SEQ_INCREMENTAL_STATE_CLEARED",
        ),
        (
            "no-last-end",
            packets[..packets.len() - 1].concat(),
            "never ends",
        ),
    ];
    for (name, data, why) in variants {
        let path = dir.path().join(format!("{name}.pftrace"));
        fs::write(&path, data).unwrap();
        let (ok, out) = run_checker(&path, None, &[]);
        assert!(
            !ok && out.contains(why),
            "{name} passed the checker:\n{out}"
        );
    }
}

/// Splits a trace into its framed `Trace.packet` records (tag 0x0A, varint length).
fn split_packets(mut b: &[u8]) -> Vec<&[u8]> {
    let mut out = vec![];
    while !b.is_empty() {
        assert_eq!(b[0], 0x0A);
        let (mut len, mut shift, mut i) = (0usize, 0, 1);
        loop {
            len |= ((b[i] & 0x7F) as usize) << shift;
            shift += 7;
            i += 1;
            if b[i - 1] & 0x80 == 0 {
                break;
            }
        }
        out.push(&b[..i + len]);
        b = &b[i + len..];
    }
    out
}

/// A readable listing of the small golden trace, decoded by the official
/// schema. Bless with STALLSCOPE_BLESS=1.
#[test]
fn small_trace_dump_matches_golden() {
    let dir = tempfile::tempdir().unwrap();
    let (tl, diag) = small();
    let (trace, _, _) = check(dir.path(), "small", &tl, Some(&diag), json!({}));
    let dump = dir.path().join("small.txt");
    let (ok, out) = run_checker(&trace, None, &["--dump", dump.to_str().unwrap()]);
    assert!(ok, "{out}");
    let got = fs::read_to_string(&dump).unwrap();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/perfetto/small.txt");
    if std::env::var_os("STALLSCOPE_BLESS").is_some() {
        fs::write(&golden, &got).unwrap();
        return;
    }
    let want = fs::read_to_string(&golden).unwrap_or_default();
    assert!(
        got == want,
        "{} differs from this dump (rerun with STALLSCOPE_BLESS=1 if intended):\n{got}",
        golden.display()
    );
}

/// Issue 14: kernels that share one timestamp on one stream each get an
/// overlap lane, and every lane's BEGINs and ENDs pair up (the writer was
/// quadratic here; its speed is measured by `perfetto_bench --equal-ts`).
#[test]
fn kernels_with_equal_timestamps_each_get_a_lane() {
    use stallscope_analyzer::model::{Gpu, GpuOpKind, Source, Stream};
    let dir = tempfile::tempdir().unwrap();
    let mut tl = Timeline::new(Source::Native, "equal-ts");
    let name = tl.strings.intern("gemm");
    // 1500 together, then 500 zero-length ones at one later instant.
    let ops = (0..1500)
        .map(|_| op(GpuOpKind::Kernel, 1_000, 2_000, name, 0))
        .chain((0..500).map(|_| op(GpuOpKind::Kernel, 5_000, 5_000, name, 0)))
        .collect();
    tl.gpus.push(Gpu {
        id: 0,
        streams: vec![Stream { id: 7, ops }],
        ..Gpu::default()
    });
    tl.finalize();
    let extra = json!({"tracks": ["stream 7", "stream 7 (overlap 1)", "stream 7 (overlap 1499)"],
                       "lanes": 1499});
    let (_, _, stats) = check(dir.path(), "equal-ts", &tl, None, extra);
    assert_eq!((stats.kernels, stats.lanes), (2000, 1499));
}
