//! The Kineto reader on small synthetic traces (tests/data/kineto): the
//! current format, the 2021 format, ROCm, gzip, the Chrome array format, and
//! a file full of quirks that must be tolerated.

use std::path::{Path, PathBuf};

use stallscope_analyzer::model::{
    CopyKind, CorrIndex, GpuOp, GpuOpKind, MemKind, Precision, Source, SpanKind, SyncKind, Timeline,
};
use stallscope_analyzer::read::kineto::{self, KinetoError, ReadOptions};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/kineto")
        .join(name)
}

fn read(name: &str) -> Timeline {
    kineto::read_file(&data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn spans_of(tl: &Timeline, kind: SpanKind) -> Vec<(String, i64, i64, u64)> {
    tl.processes
        .iter()
        .flat_map(|p| &p.threads)
        .flat_map(|t| &t.spans)
        .filter(|s| s.kind == kind)
        .map(|s| (tl.strings.get(s.id).to_owned(), s.ts, s.dur, s.arg))
        .collect()
}

fn ops(tl: &Timeline) -> Vec<(u32, u64, GpuOp)> {
    tl.gpus
        .iter()
        .flat_map(|g| {
            g.streams
                .iter()
                .flat_map(move |s| s.ops.iter().map(move |o| (g.id, s.id, *o)))
        })
        .collect()
}

fn op_named<'a>(
    tl: &'a Timeline,
    all: &'a [(u32, u64, GpuOp)],
    prefix: &str,
) -> &'a (u32, u64, GpuOp) {
    all.iter()
        .find(|(_, _, o)| tl.strings.get(o.name).starts_with(prefix))
        .unwrap_or_else(|| panic!("no op named {prefix}"))
}

#[test]
fn current_format() {
    let tl = read("new_format.json");
    assert_eq!(tl.source, Source::Kineto);
    assert_eq!(tl.name, "new_format.json");
    assert_eq!(tl.realtime_offset_ns, Some(1_695_000_000_000_000_000));

    assert_eq!(
        tl.processes.len(),
        1,
        "GPU pids and the Trace span are not processes"
    );
    let p = &tl.processes[0];
    assert_eq!(
        (p.pid, p.rank, p.cmdline.as_str()),
        (4242, Some(2), "python3.11")
    );
    let tids: Vec<u32> = p.threads.iter().map(|t| t.tid).collect();
    assert_eq!(tids, [4242, 4243]);
    assert_eq!(
        tl.strings.get(p.threads[0].name),
        "thread 4242 (python3.11)"
    );

    let steps = spans_of(&tl, SpanKind::Annotation);
    let names: Vec<&str> = steps.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(names, ["ProfilerStep#7", "ProfilerStep#8"]);
    assert_eq!(spans_of(&tl, SpanKind::PyFunction).len(), 1);
    let mm = &spans_of(&tl, SpanKind::CpuOp)[0];
    // µs with nanosecond digits, read without float rounding.
    assert_eq!(
        (mm.0.as_str(), mm.1, mm.2),
        ("aten::mm", 1_695_835_535_000_010_123, 20_456)
    );
    let rt = spans_of(&tl, SpanKind::CudaRuntime);
    assert_eq!(rt.len(), 6);
    assert_eq!(rt[0].3, 101, "runtime arg is the correlation id");
    let drv = spans_of(&tl, SpanKind::CudaDriver);
    assert_eq!((drv[0].0.as_str(), drv[0].3), ("cuLaunchKernel", 103));
    let corr = CorrIndex::build(&tl);
    let at = corr.get(103).expect("driver call indexed");
    assert_eq!(
        tl.processes[at.process as usize].threads[at.thread as usize].tid,
        4243
    );

    assert_eq!(tl.gpus.len(), 1);
    let g = &tl.gpus[0];
    assert_eq!(g.name, "NVIDIA H100 80GB HBM3");
    assert_eq!(
        (g.memory_bytes, g.sm_count, g.cc),
        (85_029_158_912, 132, (9, 0))
    );
    let streams: Vec<(u64, usize)> = g.streams.iter().map(|s| (s.id, s.ops.len())).collect();
    assert_eq!(streams, [(7, 4), (20, 2)]);

    let all = ops(&tl);
    let (_, _, k) = op_named(&tl, &all, "ampere_sgemm");
    assert_eq!(
        (k.start, k.end, k.corr),
        (1_695_835_535_000_020_500, 1_695_835_535_000_120_750, 101)
    );
    assert_eq!(
        (k.kind(), k.precision()),
        (GpuOpKind::Kernel, Precision::Unknown)
    );
    let lc = g.launch_configs[k.launch() as usize];
    assert_eq!(
        (lc.grid, lc.block, lc.shared_mem, lc.registers),
        ([64, 2, 1], [256, 1, 1], 32768, 128)
    );
    assert_eq!(
        g.launch_configs.len(),
        3,
        "identical launch configs are shared"
    );

    let (_, _, m) = op_named(&tl, &all, "Memcpy");
    assert_eq!(
        (m.kind(), m.copy(), m.src(), m.dst(), m.bytes()),
        (
            GpuOpKind::Memcpy,
            CopyKind::HTOD,
            MemKind::PAGEABLE,
            MemKind::DEVICE,
            4_194_304
        )
    );
    let (_, s, ms) = op_named(&tl, &all, "Memset");
    assert_eq!(
        (*s, ms.kind(), ms.dst(), ms.bytes()),
        (20, GpuOpKind::Memset, MemKind::DEVICE, 1024)
    );
    let (_, _, z) = op_named(&tl, &all, "triton_poi");
    assert_eq!(z.start, z.end, "zero-length kernels are kept");
    let (_, _, n) = op_named(&tl, &all, "ncclDevKernel");
    assert_eq!(n.precision(), Precision::Comm);

    assert_eq!(g.syncs.len(), 1);
    assert_eq!(
        (g.syncs[0].kind, g.syncs[0].stream, g.syncs[0].corr),
        (SyncKind::Stream, 7, 106)
    );
    assert_eq!(g.memory.len(), 1);
    assert!(g.memory[0].alloc && g.memory[0].bytes == 16384);
    assert!(
        tl.notes
            .iter()
            .any(|n| n.text.contains("1 GPU-side annotations"))
    );
}

#[test]
fn gzip_reads_the_same() {
    let a = read("new_format.json");
    let b = read("new_format.json.gz");
    assert_eq!(a.host_span_count(), b.host_span_count());
    assert_eq!(ops(&a).len(), ops(&b).len());
    for ((_, _, x), (_, _, y)) in ops(&a).iter().zip(&ops(&b)) {
        assert_eq!(
            (x.start, x.end, x.corr, a.strings.get(x.name)),
            (y.start, y.end, y.corr, b.strings.get(y.name))
        );
    }
    let bytes = std::fs::read(data("new_format.json.gz")).unwrap();
    let c = kineto::read_bytes("in-memory.json.gz", bytes).unwrap();
    assert_eq!(c.gpu_op_count(), a.gpu_op_count());
}

#[test]
fn format_of_2021() {
    let tl = read("old_format_2021.json");
    let p = &tl.processes[0];
    assert_eq!(
        (p.pid, p.rank, p.threads[0].tid),
        (11788, None, 11788),
        "string tids become numbers"
    );
    let steps = spans_of(&tl, SpanKind::Annotation);
    assert_eq!(
        steps.len(),
        2,
        "ProfilerStep#N of category Operator are step annotations"
    );
    assert_eq!(spans_of(&tl, SpanKind::CpuOp).len(), 1);
    let rt: Vec<u64> = spans_of(&tl, SpanKind::CudaRuntime)
        .iter()
        .map(|s| s.3)
        .collect();
    assert_eq!(
        rt,
        [311, 312, 52, 320],
        "`external id` stands in for a missing correlation"
    );
    let all = ops(&tl);
    assert_eq!(all.len(), 4);
    assert!(
        all.iter().all(|(g, s, _)| (*g, *s) == (0, 7)),
        "stream from args, not `stream 7`"
    );
    let (_, _, m) = op_named(&tl, &all, "Memcpy");
    assert_eq!(
        (m.copy(), m.src(), m.dst(), m.bytes(), m.corr),
        (
            CopyKind::DTOH,
            MemKind::DEVICE,
            MemKind::PAGEABLE,
            602_112,
            312
        )
    );
    let (_, _, s) = op_named(&tl, &all, "Memset");
    assert_eq!(s.corr, 52);
    assert_eq!(
        tl.realtime_offset_ns,
        Some(0),
        "Unix-time µs without baseTimeNanoseconds"
    );
}

#[test]
fn rocm() {
    let tl = read("rocm.json");
    let rt: Vec<String> = spans_of(&tl, SpanKind::CudaRuntime)
        .into_iter()
        .map(|s| s.0)
        .collect();
    assert_eq!(
        rt,
        [
            "hipMemcpyWithStream",
            "hipExtModuleLaunchKernel",
            "hipLaunchKernel"
        ]
    );
    assert_eq!(tl.gpus.len(), 1);
    let g = &tl.gpus[0];
    assert_eq!(
        (g.id, g.name.as_str(), g.cc, g.sm_count),
        (2, "AMD Instinct MI300X", (9, 4), 304)
    );
    let all = ops(&tl);
    let (_, _, m) = op_named(&tl, &all, "Memcpy");
    assert_eq!(
        (m.copy(), m.src(), m.dst()),
        (CopyKind::HTOD, MemKind::UNKNOWN, MemKind::DEVICE)
    );
    let (_, stream, n) = op_named(&tl, &all, "ncclDevKernel_Generic");
    assert_eq!((*stream, n.precision()), (1, Precision::Comm));
    assert_eq!(spans_of(&tl, SpanKind::Annotation).len(), 2);
}

#[test]
fn chrome_array_format() {
    let tl = read("array_format.json");
    assert_eq!((tl.host_span_count(), tl.gpu_op_count()), (1, 1));
}

#[test]
fn quirks_are_tolerated() {
    let tl = read("quirks.json");
    assert_eq!(
        tl.processes.iter().find(|p| p.pid == 10).map(|p| p.rank),
        Some(Some(5))
    );
    let p10 = tl.processes.iter().find(|p| p.pid == 10).unwrap();
    let count: usize = p10.threads.iter().map(|t| t.spans.len()).sum();
    assert_eq!(count, 11);
    let names: Vec<String> = p10
        .threads
        .iter()
        .flat_map(|t| &t.spans)
        .map(|s| tl.strings.get(s.id).to_owned())
        .collect();
    assert!(names.contains(&"escaped \"name\" é".to_owned()));
    assert!(!names.contains(&"no_ts".to_owned()) && !names.contains(&"ts_null".to_owned()));
    let spans: Vec<_> = p10.threads.iter().flat_map(|t| &t.spans).collect();
    let by = |n: &str| *spans.iter().find(|s| tl.strings.get(s.id) == n).unwrap();
    assert_eq!(by("no_dur").dur, 0);
    assert_eq!(by("neg_dur").dur, 0);
    assert_eq!(by("no_cat").kind, SpanKind::Other);
    assert_eq!(by("unknown").kind, SpanKind::Other);
    assert_eq!(by("cudaLaunchKernel").arg, 9, "numeric string pid/tid");
    let synthetic = tl
        .processes
        .iter()
        .find(|p| p.pid >= 0xF000_0000)
        .expect("string pid gets an id");
    assert_eq!(synthetic.threads[0].spans.len(), 1);

    let all = ops(&tl);
    let (dev, stream, z) = op_named(&tl, &all, "zero_len_kernel");
    assert_eq!(
        (*dev, *stream, z.start, z.end, z.corr),
        (1, 3, 200_000, 200_000, 9)
    );
    let (dev, stream, n) = op_named(&tl, &all, "no_args_kernel");
    assert_eq!(
        (*dev, *stream, n.corr, n.launch()),
        (1, 4, 0, u32::MAX),
        "device from pid, stream from tid"
    );
    let (_, stream, o) = op_named(&tl, &all, "odd_args");
    assert_eq!((*stream, o.corr, o.launch()), (5, 0, u32::MAX));
    let notes: Vec<&str> = tl.notes.iter().map(|n| n.text.as_str()).collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("2 complete events without `ts`")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("1 events with a negative `dur`")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("3 events of other phases")),
        "{notes:?}"
    );
}

/// The sniff reads a growing prefix: a key after a long header is found
/// (16 kB, 64 kB, 200 kB in), one past the first 256 kB is not, gzip or not.
#[test]
fn sniffing_finds_a_late_key_within_256_kb() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    for pad in [16_000, 64_000, 200_000, 300_000] {
        let text = format!(
            "{{\"schemaVersion\": 1, \"pad\": \"{}\", \"traceEvents\": []}}",
            "x".repeat(pad)
        );
        let plain = dir.path().join(format!("t{pad}.json"));
        std::fs::write(&plain, &text).unwrap();
        let gz = dir.path().join(format!("t{pad}.json.gz"));
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(text.as_bytes()).unwrap();
        std::fs::write(&gz, e.finish().unwrap()).unwrap();
        for p in [plain, gz] {
            assert_eq!(
                kineto::looks_like_kineto(&p),
                pad < 256_000,
                "{}",
                p.display()
            );
        }
    }
}

#[test]
fn sniffing_and_directories() {
    for f in [
        "new_format.json",
        "new_format.json.gz",
        "old_format_2021.json",
        "rocm.json",
        "array_format.json",
    ] {
        assert!(kineto::looks_like_kineto(&data(f)), "{f}");
    }
    assert!(!kineto::looks_like_kineto(&data("hta_reference.json")));
    assert!(!kineto::looks_like_kineto(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("Cargo.toml")
            .as_path()
    ));
    assert!(!kineto::looks_like_kineto(Path::new(
        "/nonexistent/trace.json"
    )));

    // A directory: non-trace JSON is skipped; traces come back sorted by rank.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(data("new_format.json"), dir.path().join("a_rank2.json")).unwrap();
    std::fs::copy(data("quirks.json"), dir.path().join("b_rank5.json")).unwrap();
    std::fs::copy(data("rocm.json"), dir.path().join("c_norank.json")).unwrap();
    std::fs::write(dir.path().join("config.json"), b"{\"lr\": 0.1}").unwrap();
    assert!(kineto::looks_like_kineto(dir.path()));
    let tls = kineto::read_paths(&[dir.path().to_owned()]).unwrap();
    let names: Vec<&str> = tls.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a_rank2.json", "b_rank5.json", "c_norank.json"]);

    let empty = tempfile::tempdir().unwrap();
    let err = kineto::read_paths(&[empty.path().to_owned()]).unwrap_err();
    assert!(matches!(err, KinetoError::NoTraces(_)), "{err}");
}

#[test]
fn single_threaded_option_reads_the_same() {
    let opts = ReadOptions { threads: 1 };
    let a = kineto::read_file_with(&data("new_format.json"), &opts).unwrap();
    assert_eq!(a.gpu_op_count(), read("new_format.json").gpu_op_count());
}

/// A trace with `devices` as deviceProperties, one kernel on `device`
/// launched by `launch` (a CUDA or HIP call).
fn one_kernel(devices: &str, device: u32, launch: &str) -> Timeline {
    let text = format!(
        r#"{{"deviceProperties": [{devices}], "traceEvents": [
  {{"ph": "X", "cat": "cuda_runtime", "name": "{launch}", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
    "args": {{"correlation": 7}}}},
  {{"ph": "X", "cat": "kernel", "name": "k", "pid": {device}, "tid": 3, "ts": 20, "dur": 50,
    "args": {{"device": {device}, "stream": 3, "correlation": 7}}}}
]}}"#
    );
    kineto::read_bytes("t.json", text.into_bytes()).unwrap()
}

fn device(id: u32, name: &str, major: u32, minor: u32) -> String {
    format!(
        r#"{{"id": {id}, "name": "{name}", "totalGlobalMem": 1, "computeMajor": {major}, "computeMinor": {minor}, "numSms": 304}}"#
    )
}

/// ROCm traces number their ops' devices by the node's agent (2, 9) and
/// deviceProperties by the process's visible devices (0), as TraceLens's
/// MI300X traces do; vLLM's leave the names empty. HIP's compute capability
/// 9.4 is then CDNA3, never Hopper.
#[test]
fn rocm_devices_numbered_apart_and_unnamed() {
    use stallscope_analyzer::analysis::arch::Arch;
    let mi300 = device(0, "AMD Instinct MI300X", 9, 4);
    let tl = one_kernel(&mi300, 2, "hipLaunchKernel");
    let g = &tl.gpus[0];
    assert_eq!(
        (g.id, g.name.as_str(), g.hip),
        (2, "AMD Instinct MI300X", true)
    );
    assert_eq!(Arch::of(g), Arch::Cdna3);

    // Several devices of one model: any of them.
    let eight: Vec<String> = (0..8).map(|i| device(i, "", 9, 4)).collect();
    let tl = one_kernel(&eight.join(","), 9, "hipLaunchKernel");
    assert_eq!(Arch::of(&tl.gpus[0]), Arch::Cdna3);

    // The same properties under CUDA calls are a Hopper.
    let tl = one_kernel(&device(0, "", 9, 0), 0, "cudaLaunchKernel");
    assert!(!tl.gpus[0].hip);
    assert_eq!(Arch::of(&tl.gpus[0]), Arch::Hopper);

    // Devices of different models, none with the ops' number: no guess.
    let mixed = [
        device(0, "NVIDIA H100", 9, 0),
        device(1, "NVIDIA A100", 8, 0),
    ]
    .join(",");
    let tl = one_kernel(&mixed, 5, "cudaLaunchKernel");
    assert_eq!(
        (tl.gpus[0].name.as_str(), Arch::of(&tl.gpus[0])),
        ("", Arch::Unknown)
    );
}
