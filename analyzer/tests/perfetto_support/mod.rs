//! Hand-built timelines and diagnoses for the Perfetto writer's tests, and the
//! expectations (from the model alone) that check_trace.py compares against.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use stallscope_analyzer::analysis::{
    Cause, DeviceDiagnosis, Diagnosis, IdleGap, Step, StepSource, Steps,
};
use stallscope_analyzer::model::*;
use stallscope_format::{FdClass, HostOp};

pub const MS: i64 = 1_000_000;
pub const US: i64 = 1_000;
const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

pub fn span(ts: Ns, dur: Ns, kind: SpanKind, id: u32, arg: u64) -> HostSpan {
    HostSpan {
        ts,
        dur,
        arg,
        id,
        kind,
    }
}

pub fn op(kind: GpuOpKind, start: Ns, end: Ns, name: StrId, corr: u32) -> GpuOp {
    GpuOp::new(kind, start, end, corr, name)
}

fn sample(ts: Ns, cpu_ns: u64, majflt: u32) -> Sample {
    Sample {
        ts,
        cpu_ns,
        majflt,
        state: b'R',
        ..Sample::default()
    }
}

fn object(id: u32, class: FdClass, fs_magic: u32, path: StrId, fd: i32) -> IoObject {
    IoObject {
        id,
        class,
        fs_magic,
        dev: 0,
        ino: id as u64,
        path,
        fd,
    }
}

fn mem(ts: Ns, bytes: u64, address: u64, alloc: bool) -> MemEvent {
    MemEvent {
        ts,
        bytes,
        address,
        corr: 0,
        alloc,
        kind: MemKind::DEVICE,
    }
}

/// A native recording: a trainer (2 threads) and one DataLoader worker (2
/// threads), one GPU with two streams, two steps.
pub fn native() -> (Timeline, Diagnosis) {
    let mut tl = Timeline::new(Source::Native, "run1");
    tl.realtime_offset_ns = Some(1_700_000_000_000_000_000);
    let s = &mut tl.strings;
    let step0 = s.intern("ProfilerStep#0");
    let step1 = s.intern("ProfilerStep#1");
    let forward = s.intern("forward");
    let launch = s.intern("cudaLaunchKernel");
    let cu_launch = s.intern("cuLaunchKernel");
    let memcpy = s.intern("cudaMemcpyAsync");
    let sync = s.intern("cudaStreamSynchronize");
    let sgemm = s.intern("ampere_sgemm_128x64_nn");
    let bf16 = s.intern("sm90_xmma_gemm_bf16bf16_bf16f32");
    let elementwise = s.intern("void at::native::vectorized_elementwise_kernel<4>");
    let data_path = s.intern("/mnt/data/train-00001.arrow");
    let python = s.intern("python");
    let autograd = s.intern("pt_autograd_0");
    let worker = s.intern("pt_data_worker");
    let feeder = s.intern("feeder");

    let rt = SpanKind::CudaRuntime;
    let trainer_main = Thread {
        tid: 100,
        name: python,
        spans: vec![
            span(MS, 20 * MS, SpanKind::Annotation, step0, 0),
            span(MS + 100 * US, 9 * MS, SpanKind::Annotation, forward, 0),
            span(MS + 200 * US, 10 * US, rt, launch, 1),
            span(MS + 202 * US, 6 * US, SpanKind::CudaDriver, cu_launch, 1),
            span(MS + 300 * US, 20 * US, rt, memcpy, 2),
            span(
                10 * MS + 500 * US,
                3500 * US,
                SpanKind::Host(HostOp::Poll),
                2,
                0,
            ),
            span(15 * MS, 3 * MS, rt, sync, 3),
            span(18 * MS + 100 * US, 10 * US, rt, launch, 4),
            span(19 * MS, 500 * US, SpanKind::Host(HostOp::Read), 1, MIB),
            span(21 * MS, 20 * MS, SpanKind::Annotation, step1, 0),
            span(21 * MS + 100 * US, 10 * US, rt, launch, 7),
            span(22 * MS, 0, SpanKind::Host(HostOp::Read), 1, 0),
            span(
                30 * MS,
                2 * MS,
                SpanKind::Host(HostOp::SemWait),
                0,
                0xdead_beef,
            ),
        ],
        samples: (0..5)
            .map(|i| sample(i * 10 * MS, (i as u64) * 6 * MS as u64, 0))
            .collect(),
        ..Thread::default()
    };
    let trainer_autograd = Thread {
        tid: 101,
        name: autograd,
        spans: vec![span(5 * MS, 10 * US, rt, launch, 5)],
        ..Thread::default()
    };
    let trainer = Process {
        pid: 100,
        ppid: 1,
        cmdline: "python train.py --epochs 1".into(),
        hostname: "gpu-node-1".into(),
        start: 0,
        end: 45 * MS,
        exited_cleanly: true,
        threads: vec![trainer_main, trainer_autograd],
        objects: vec![
            object(1, FdClass::File, 0x6969, data_path, 7),
            object(2, FdClass::Pipe, 0, 0, 9),
        ],
        gpu_capture: GpuCapture::Active,
        span_threshold_ns: 20_000,
        sample_hz: 100,
        ..Process::default()
    };
    let worker_main = Thread {
        tid: 200,
        name: worker,
        spans: vec![
            span(2 * MS, 4 * MS, SpanKind::Host(HostOp::Read), 1, 8 * MIB),
            // A run of 64 short preads.
            span(7 * MS, 3 * MS, SpanKind::Host(HostOp::Pread), 1, 4 * MIB),
            span(
                10 * MS + 400 * US,
                50 * US,
                SpanKind::Host(HostOp::Write),
                2,
                4096,
            ),
        ],
        runs: vec![RunSpan {
            ts: 7 * MS,
            dur: 3 * MS,
            op: HostOp::Pread,
            obj: 1,
            calls: 64,
            files: 1,
            busy_ns: 2_800_000,
        }],
        samples: vec![
            sample(0, 0, 0),
            sample(10 * MS, 9 * MS as u64, 12),
            sample(20 * MS, 19 * MS as u64, 12),
            sample(30 * MS, 20 * MS as u64, 40),
        ],
        ..Thread::default()
    };
    let worker_feeder = Thread {
        tid: 201,
        name: feeder,
        spans: vec![
            span(3 * MS, MS, SpanKind::Host(HostOp::CondWait), 0, 0x1000),
            span(12 * MS, 2 * MS, SpanKind::Host(HostOp::Recv), 3, 65536),
        ],
        ..Thread::default()
    };
    let worker = Process {
        pid: 200,
        ppid: 100,
        cmdline: "python train.py --epochs 1 (DataLoader worker 0)".into(),
        start: MS,
        end: 40 * MS,
        threads: vec![worker_main, worker_feeder],
        objects: vec![
            object(1, FdClass::File, 0x6969, data_path, 5),
            object(2, FdClass::Pipe, 0, 0, 6),
            object(3, FdClass::UnixSocket, 0, 0, 8),
        ],
        ..Process::default()
    };
    tl.processes = vec![trainer, worker];

    let k = GpuOpKind::Kernel;
    let mut kernel_fp32 = op(k, 2 * MS, 6 * MS, sgemm, 1);
    kernel_fp32.set_launch(0);
    kernel_fp32.set_precision(Precision::Fp32);
    let mut copy = op(GpuOpKind::Memcpy, 6 * MS + 100 * US, 7 * MS, 0, 2);
    copy = copy
        .with_bytes(64 * MIB)
        .with_copy(CopyKind::HTOD, MemKind::PAGEABLE, MemKind::DEVICE);
    let mut kernel_bf16 = op(k, 18 * MS + 200 * US, 20 * MS, bf16, 4);
    kernel_bf16.set_launch(1);
    kernel_bf16.set_precision(Precision::Bf16);
    let mut memset = op(
        GpuOpKind::Memset,
        20 * MS + 100 * US,
        20 * MS + 150 * US,
        0,
        0,
    );
    memset = memset
        .with_bytes(MIB)
        .with_copy(CopyKind::UNKNOWN, MemKind::UNKNOWN, MemKind::DEVICE);
    let mut side = op(k, 5 * MS, 9 * MS, elementwise, 5);
    side.set_precision(Precision::NonGemm);
    let mut tiny = op(k, 22 * MS, 22 * MS, elementwise, 7);
    tiny.set_precision(Precision::NonGemm);
    let orphan = op(k, 23 * MS, 25 * MS, elementwise, 99);
    let mut dtoh = op(GpuOpKind::Memcpy, 25 * MS, 26 * MS, 0, 0);
    dtoh = dtoh
        .with_bytes(4096)
        .with_copy(CopyKind::DTOH, MemKind::DEVICE, MemKind::PINNED);
    tl.gpus = vec![Gpu {
        id: 0,
        name: "NVIDIA H100 80GB HBM3".into(),
        memory_bytes: 80 * GIB,
        sm_count: 132,
        cc: (9, 0),
        streams: vec![
            Stream {
                id: 7,
                ops: vec![kernel_fp32, copy, kernel_bf16, memset, tiny, orphan],
            },
            Stream {
                id: 13,
                ops: vec![side, dtoh],
            },
        ],
        launch_configs: vec![
            LaunchConfig {
                grid: [128, 4, 1],
                block: [256, 1, 1],
                shared_mem: 49152,
                registers: 128,
            },
            LaunchConfig {
                grid: [66, 1, 1],
                block: [384, 1, 1],
                shared_mem: 0,
                registers: 0,
            },
        ],
        memory: vec![
            mem(MS, GIB, 0xA000, true),
            mem(2 * MS, 256 * MIB, 0xB000, true),
            mem(2 * MS, 16 * MIB, 0xC000, true),
            mem(10 * MS, 0, 0xA000, false),
            mem(12 * MS, 512 * MIB, 0xD000, true),
        ],
        ..Gpu::default()
    }];
    tl.ooms = vec![Oom {
        ts: 12 * MS + 10,
        pid: 100,
        tid: 100,
        requested: 4 * GIB,
        free: GIB,
        total: 80 * GIB,
        api: "cudaMalloc".into(),
    }];
    tl.finalize();

    let gap = |start, end, cause, sub, pid, tid| IdleGap {
        start,
        end,
        cause,
        sub,
        pid,
        tid,
    };
    let gaps = vec![
        gap(9 * MS, 18 * MS + 200 * US, Cause::Data, "cpu", 100, 100),
        gap(20 * MS + 150 * US, 22 * MS, Cause::Sync, "", 100, 100),
        gap(22 * MS, 23 * MS, Cause::Io, "", 100, 100),
    ];
    let diag = Diagnosis {
        window: (MS, 41 * MS),
        steps: Steps {
            label: String::new(),
            source: StepSource::ProfilerStep,
            dropped: vec![],
            periodic: None,
            steps: vec![
                Step {
                    index: 0,
                    start: MS,
                    end: 21 * MS,
                    launch: MS,
                    outlier: false,
                },
                Step {
                    index: 1,
                    start: 21 * MS,
                    end: 41 * MS,
                    launch: 21 * MS,
                    outlier: true,
                },
            ],
            mean_ns: 20 * MS,
            median_ns: 20 * MS,
            p90_ns: 20 * MS,
        },
        devices: vec![DeviceDiagnosis {
            gpu: 0,
            window: (2 * MS, 26 * MS),
            busy_ns: 24 * MS - 12 * MS,
            idle_ns: 12 * MS,
            gaps,
            idle_by_cause: [0; 8],
            busy_by_precision: vec![],
            low_bit_gemm_ns: 0,
        }],
        ..Default::default()
    };
    (tl, diag)
}

/// An imported PyTorch-profiler trace: no samples or memory, CPU ops that
/// overlap without nesting, lists left unsorted, odd ids, and a diagnosed
/// device the timeline does not have.
pub fn kineto_like() -> (Timeline, Diagnosis) {
    let mut tl = Timeline::new(Source::Kineto, "trace.json");
    let s = &mut tl.strings;
    let mm = s.intern("aten::mm");
    let add = s.intern("aten::add");
    let py = s.intern("nn.Module: Linear");
    let step = s.intern("ProfilerStep#3");
    let launch = s.intern("cudaLaunchKernel");
    let gemm = s.intern("sm80_xmma_gemm_f32f32_tf32f32");
    let thread = Thread {
        tid: 4321,
        name: 0,
        // Deliberately unsorted; mm and add overlap without nesting.
        spans: vec![
            span(200, 200, SpanKind::CpuOp, add, 0),
            span(0, 1000, SpanKind::Annotation, step, 0),
            span(100, 200, SpanKind::CpuOp, mm, 0),
            span(120, 50, SpanKind::PyFunction, py, 0),
            span(130, 10, SpanKind::CudaRuntime, launch, 11),
            span(150, 5, SpanKind::CudaRuntime, launch, 12),
            span(500, -5, SpanKind::Other, 999_999, 0),
            span(600, 0, SpanKind::CpuOp, 0, 0),
        ],
        ..Thread::default()
    };
    tl.processes = vec![Process {
        pid: 1234,
        cmdline: String::new(),
        threads: vec![thread],
        ..Process::default()
    }];
    let mut g1 = op(GpuOpKind::Kernel, 300, 500, gemm, 11);
    g1.set_precision(Precision::Tf32);
    g1.set_launch(77); // no such launch config
    let g2 = op(GpuOpKind::Kernel, 400, 450, gemm, 12); // overlaps g1 on one stream
    let g3 = op(GpuOpKind::Kernel, 100, 90, 123_456, 12); // ends before it starts
    tl.gpus = vec![Gpu {
        id: 3,
        name: String::new(),
        streams: vec![Stream {
            id: 7,
            ops: vec![g2, g1, g3],
        }],
        ..Gpu::default()
    }];
    let diag = Diagnosis {
        window: (0, 1000),
        steps: Steps {
            label: String::new(),
            source: StepSource::None,
            dropped: vec![],
            periodic: None,
            steps: vec![Step {
                index: 0,
                start: 0,
                end: 1000,
                launch: 0,
                outlier: false,
            }],
            mean_ns: 1000,
            median_ns: 1000,
            p90_ns: 1000,
        },
        devices: vec![
            DeviceDiagnosis {
                gpu: 3,
                window: (100, 500),
                busy_ns: 200,
                idle_ns: 200,
                gaps: vec![
                    IdleGap {
                        start: 450,
                        end: 460,
                        cause: Cause::Launch,
                        sub: "",
                        pid: 0,
                        tid: 0,
                    },
                    IdleGap {
                        start: 90,
                        end: 300,
                        cause: Cause::Cpu,
                        sub: "",
                        pid: 1234,
                        tid: 4321,
                    },
                ],
                idle_by_cause: [0; 8],
                busy_by_precision: vec![],
                low_bit_gemm_ns: 0,
            },
            DeviceDiagnosis {
                gpu: 9,
                window: (0, 0),
                busy_ns: 0,
                idle_ns: 5,
                gaps: vec![IdleGap {
                    start: 10,
                    end: 15,
                    cause: Cause::Other,
                    sub: "dependency",
                    pid: 0,
                    tid: 0,
                }],
                idle_by_cause: [0; 8],
                busy_by_precision: vec![],
                low_bit_gemm_ns: 0,
            },
        ],
        ..Default::default()
    };
    (tl, diag)
}

/// A tiny native timeline for the golden files: one process, one thread,
/// one stream, one launch with its kernel, one idle gap, one step.
pub fn small() -> (Timeline, Diagnosis) {
    let mut tl = Timeline::new(Source::Native, "small");
    tl.realtime_offset_ns = Some(1_000_000_000);
    let launch = tl.strings.intern("cudaLaunchKernel");
    let kernel = tl.strings.intern("sgemm");
    let main = tl.strings.intern("main");
    let path = tl.strings.intern("/data/a.bin");
    tl.processes = vec![Process {
        pid: 10,
        cmdline: "python small.py".into(),
        threads: vec![Thread {
            tid: 10,
            name: main,
            spans: vec![
                span(1000, 500, SpanKind::Host(HostOp::Read), 1, 4096),
                span(2000, 100, SpanKind::CudaRuntime, launch, 1),
            ],
            samples: vec![sample(0, 0, 0), sample(4000, 2000, 1)],
            ..Thread::default()
        }],
        objects: vec![object(1, FdClass::File, 0xEF53, path, 3)],
        ..Process::default()
    }];
    let mut k = op(GpuOpKind::Kernel, 2500, 3500, kernel, 1);
    k.set_launch(0);
    k.set_precision(Precision::Fp32);
    tl.gpus = vec![Gpu {
        id: 0,
        name: "Test GPU".into(),
        streams: vec![Stream {
            id: 7,
            ops: vec![k],
        }],
        launch_configs: vec![LaunchConfig {
            grid: [1, 2, 3],
            block: [32, 1, 1],
            shared_mem: 0,
            registers: 0,
        }],
        memory: vec![mem(500, MIB, 1, true), mem(3600, 0, 1, false)],
        ..Gpu::default()
    }];
    tl.finalize();
    let diag = Diagnosis {
        window: (2500, 3500),
        steps: Steps {
            label: String::new(),
            source: StepSource::Detected,
            dropped: vec![],
            periodic: None,
            steps: vec![Step {
                index: 0,
                start: 900,
                end: 3600,
                launch: 900,
                outlier: false,
            }],
            mean_ns: 2700,
            median_ns: 2700,
            p90_ns: 2700,
        },
        devices: vec![DeviceDiagnosis {
            gpu: 0,
            window: (2500, 3500),
            busy_ns: 1000,
            idle_ns: 0,
            gaps: vec![IdleGap {
                start: 1000,
                end: 2500,
                cause: Cause::Io,
                sub: "",
                pid: 10,
                tid: 10,
            }],
            idle_by_cause: [0; 8],
            busy_by_precision: vec![],
            low_bit_gemm_ns: 0,
        }],
        ..Default::default()
    };
    (tl, diag)
}

fn category(kind: SpanKind) -> &'static str {
    match kind {
        SpanKind::Host(op) if op.is_wait() || op == HostOp::Recv => "wait",
        SpanKind::Host(_) => "io",
        SpanKind::CudaRuntime | SpanKind::CudaDriver => "cuda_api",
        SpanKind::CpuOp => "cpu_op",
        SpanKind::PyFunction => "python",
        SpanKind::Annotation => "annotation",
        SpanKind::Other => "other",
    }
}

/// Slice counts and total durations per category, flows and instants, from
/// the model alone.
pub fn expected(tl: &Timeline, diag: Option<&Diagnosis>) -> Value {
    let mut cats = serde_json::Map::new();
    let mut add = |cat: &str, dur: i64| {
        let e = cats
            .entry(cat.to_string())
            .or_insert_with(|| json!({"count": 0, "dur_ns": 0}));
        e["count"] = json!(e["count"].as_i64().unwrap() + 1);
        e["dur_ns"] = json!(e["dur_ns"].as_i64().unwrap() + dur.max(0));
    };
    for p in &tl.processes {
        for t in &p.threads {
            for s in &t.spans {
                add(category(s.kind), s.dur);
            }
        }
    }
    for g in &tl.gpus {
        for s in &g.streams {
            for o in &s.ops {
                let cat = match o.kind() {
                    GpuOpKind::Kernel => "kernel",
                    GpuOpKind::Memcpy => "memcpy",
                    GpuOpKind::Memset => "memset",
                };
                add(cat, o.end - o.start);
            }
        }
    }
    if let Some(d) = diag {
        for dev in &d.devices {
            for g in &dev.gaps {
                add("idle", g.end - g.start);
            }
        }
        if d.steps.source != StepSource::None {
            for s in &d.steps.steps {
                add("step", s.end - s.start);
            }
        }
    }
    let corr = CorrIndex::build(tl);
    let flows = tl
        .gpus
        .iter()
        .flat_map(|g| &g.streams)
        .flat_map(|s| &s.ops)
        .filter(|o| o.corr != 0 && corr.get(o.corr).is_some())
        .count();
    json!({"categories": cats, "flows": flows, "instants": tl.ooms.len()})
}

pub fn checker() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/perfetto/check_trace.py")
}

/// Runs check_trace.py; returns (success, stdout + stderr). Panics with the
/// fix when python3 or the perfetto package is missing: never a silent pass.
pub fn run_checker(trace: &Path, expected: Option<&Path>, extra: &[&str]) -> (bool, String) {
    let mut cmd = Command::new("python3");
    cmd.arg(checker()).arg(trace);
    if let Some(e) = expected {
        cmd.arg(e);
    }
    cmd.args(extra);
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run python3 ({e}); install Python 3, then: pip install perfetto protobuf")
    });
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.code() == Some(3) {
        panic!(
            "check_trace.py is missing a dependency; run: pip install perfetto protobuf\n{text}"
        );
    }
    (out.status.success(), text)
}

pub fn write(
    tl: &Timeline,
    diag: Option<&Diagnosis>,
) -> (
    Vec<u8>,
    stallscope_analyzer::output::perfetto::PerfettoStats,
) {
    let mut buf = vec![];
    let stats =
        stallscope_analyzer::output::perfetto::write_perfetto(tl, diag, &mut buf, &|_, _| {})
            .expect("writing to a Vec cannot fail");
    (buf, stats)
}
