//! Perfetto writer benchmark: a synthetic training timeline of about N events,
//! written as a Perfetto trace and, for comparison, as Chrome trace-event JSON
//! (a minimal writer that lives here only).
//!
//!     cargo run --release -p stallscope-analyzer --example perfetto_bench -- \
//!         [--events 2000000] [--out FILE.pftrace]
//!
//! `--equal-ts N` writes N kernels on one stream that all start and end
//! together instead (each needs an overlap lane; issue 14 found this
//! quadratic: 40k took 10.4 s, 200k did not finish in 120 s).
//!
//! Reports bytes per event and write throughput (events/s, MB/s) for both.
//! With `--kineto TRACE.json[.gz]` it uses that PyTorch-profiler trace (read by
//! the Kineto reader, without a diagnosis) instead of the synthetic timeline.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::time::Instant;

use stallscope_analyzer::analysis::{
    Cause, DeviceDiagnosis, Diagnosis, IdleGap, Step, StepSource, Steps,
};
use stallscope_analyzer::model::*;
use stallscope_analyzer::output::perfetto::write_perfetto;
use stallscope_format::{FdClass, HostOp};

const US: i64 = 1_000;
const MS: i64 = 1_000_000;
/// Kernels per step: each is a launch span and a kernel, so ~2 events apiece.
const KERNELS_PER_STEP: i64 = 500;
const WORKERS: u32 = 4;

/// Counts bytes; writes nowhere.
struct Count(u64);

impl Write for Count {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0 += b.len() as u64;
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A tiny deterministic generator (xorshift), so runs compare.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

fn span(ts: Ns, dur: Ns, kind: SpanKind, id: u32, arg: u64) -> HostSpan {
    HostSpan {
        ts,
        dur,
        arg,
        id,
        kind,
    }
}

fn kernel(start: Ns, end: Ns, name: StrId, corr: u32, launch: u32, precision: Precision) -> GpuOp {
    let mut op = GpuOp::new(GpuOpKind::Kernel, start, end, corr, name);
    op.set_launch(launch);
    op.set_precision(precision);
    op
}

/// One trainer (launches, syncs, batch waits, reads, samples) feeding one GPU
/// with two streams, and `WORKERS` DataLoader processes reading files.
fn synthetic(events: i64) -> (Timeline, Diagnosis) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut tl = Timeline::new(Source::Native, "synthetic");
    let names: Vec<StrId> = (0..64)
        .map(|i| {
            tl.strings.intern(&format!(
                "void at::native::elementwise_kernel<128, 4, {i}>(int, at::native::Op{i})"
            ))
        })
        .collect();
    let launch = tl.strings.intern("cudaLaunchKernel");
    let memcpy = tl.strings.intern("cudaMemcpyAsync");
    let sync = tl.strings.intern("cudaStreamSynchronize");
    let forward = tl.strings.intern("forward");
    let path = tl.strings.intern("/mnt/data/train-00001.arrow");
    let steps_n = (events / (2 * KERNELS_PER_STEP + 12)).max(1);
    let step_ns = 120 * MS;

    let mut main = Thread {
        tid: 100,
        name: tl.strings.intern("python"),
        ..Thread::default()
    };
    let (mut s7, mut s13) = (vec![], vec![]);
    let mut gaps = vec![];
    let mut steps = vec![];
    let mut memory = vec![];
    let mut corr = 0u32;
    let mut last_gpu_end: Option<Ns> = None;
    for st in 0..steps_n {
        let t0 = st * step_ns;
        let label = tl.strings.intern(&format!("ProfilerStep#{st}"));
        main.spans
            .push(span(t0, step_ns - 10 * US, SpanKind::Annotation, label, 0));
        // Waiting for the batch, then an H2D copy of it.
        main.spans.push(span(
            t0 + 10 * US,
            15 * MS,
            SpanKind::Host(HostOp::Poll),
            2,
            0,
        ));
        corr += 1;
        main.spans.push(span(
            t0 + 15 * MS + 20 * US,
            30 * US,
            SpanKind::CudaRuntime,
            memcpy,
            corr as u64,
        ));
        let copy = GpuOp::new(
            GpuOpKind::Memcpy,
            t0 + 15 * MS + 40 * US,
            t0 + 17 * MS,
            corr,
            0,
        )
        .with_bytes(64 << 20)
        .with_copy(CopyKind::HTOD, MemKind::PAGEABLE, MemKind::DEVICE);
        s13.push(copy);
        main.spans.push(span(
            t0 + 16 * MS,
            90 * MS,
            SpanKind::Annotation,
            forward,
            0,
        ));
        let mut host = t0 + 16 * MS + 10 * US;
        let mut gpu = t0 + 17 * MS;
        // The GPU idles from the previous step's last kernel to this copy's end.
        if let Some(prev) = last_gpu_end.filter(|&e| e < gpu) {
            gaps.push(IdleGap {
                start: prev,
                end: gpu,
                cause: Cause::Data,
                sub: "cpu",
                pid: 100,
                tid: 100,
            });
        }
        for _ in 0..KERNELS_PER_STEP {
            corr += 1;
            main.spans.push(span(
                host,
                5 * US,
                SpanKind::CudaRuntime,
                launch,
                corr as u64,
            ));
            let start = gpu.max(host + 8 * US);
            let end = start + 20 * US + rng.below(150) as i64 * US;
            let name = names[rng.below(names.len() as u64) as usize];
            let precision = if rng.below(4) == 0 {
                Precision::Fp32
            } else {
                Precision::NonGemm
            };
            s7.push(kernel(
                start,
                end,
                name,
                corr,
                rng.below(8) as u32,
                precision,
            ));
            host += 150 * US;
            gpu = end;
        }
        last_gpu_end = Some(gpu);
        corr += 1;
        main.spans.push(span(
            t0 + 106 * MS,
            8 * MS,
            SpanKind::CudaRuntime,
            sync,
            corr as u64,
        ));
        main.spans.push(span(
            t0 + 115 * MS,
            2 * MS,
            SpanKind::Host(HostOp::Read),
            1,
            1 << 20,
        ));
        for k in 0..12 {
            main.samples.push(Sample {
                ts: t0 + k * 10 * MS,
                cpu_ns: ((st * 12 + k) * 7 * MS) as u64,
                state: b'R',
                ..Sample::default()
            });
        }
        memory.push(MemEvent {
            ts: t0 + 16 * MS,
            bytes: 512 << 20,
            address: st as u64,
            corr: 0,
            alloc: true,
            kind: MemKind::DEVICE,
        });
        memory.push(MemEvent {
            ts: t0 + 110 * MS,
            bytes: 0,
            address: st as u64,
            corr: 0,
            alloc: false,
            kind: MemKind::DEVICE,
        });
        steps.push(Step {
            index: st as u32,
            start: t0,
            end: t0 + step_ns,
            launch: t0,
            outlier: false,
        });
    }
    let objects = vec![
        IoObject {
            id: 1,
            class: FdClass::File,
            fs_magic: 0x6969,
            dev: 0,
            ino: 1,
            path,
            fd: 7,
        },
        IoObject {
            id: 2,
            class: FdClass::Pipe,
            fs_magic: 0,
            dev: 0,
            ino: 2,
            path: 0,
            fd: 9,
        },
    ];
    tl.processes.push(Process {
        pid: 100,
        cmdline: "python train.py".into(),
        threads: vec![main],
        objects: objects.clone(),
        ..Process::default()
    });
    for w in 0..WORKERS {
        let mut t = Thread {
            tid: 200 + w,
            ..Thread::default()
        };
        for st in 0..steps_n {
            let t0 = st * step_ns + w as i64 * MS;
            t.spans
                .push(span(t0, 20 * MS, SpanKind::Host(HostOp::Read), 1, 8 << 20));
            t.spans.push(span(
                t0 + 21 * MS,
                30 * US,
                SpanKind::Host(HostOp::Write),
                2,
                4096,
            ));
        }
        tl.processes.push(Process {
            pid: 200 + w,
            ppid: 100,
            cmdline: format!("python train.py (DataLoader worker {w})"),
            threads: vec![t],
            objects: objects.clone(),
            ..Process::default()
        });
    }
    tl.gpus.push(Gpu {
        id: 0,
        name: "NVIDIA H100 80GB HBM3".into(),
        streams: vec![Stream { id: 7, ops: s7 }, Stream { id: 13, ops: s13 }],
        launch_configs: (0..8)
            .map(|i| LaunchConfig {
                grid: [128 << i, 1, 1],
                block: [256, 1, 1],
                shared_mem: 0,
                registers: 32,
            })
            .collect(),
        memory,
        ..Gpu::default()
    });
    tl.finalize();
    let end = steps_n * step_ns;
    let diag = Diagnosis {
        window: (0, end),
        steps: Steps {
            label: String::new(),
            source: StepSource::ProfilerStep,
            steps,
            mean_ns: step_ns,
            median_ns: step_ns,
            p90_ns: step_ns,
            dropped: vec![],
            periodic: None,
        },
        startup: None,
        devices: vec![DeviceDiagnosis {
            gpu: 0,
            window: (0, end),
            busy_ns: 0,
            idle_ns: 0,
            gaps,
            idle_by_cause: [0; 8],
            busy_by_precision: vec![],
        }],
        findings: vec![],
        job: Default::default(),
        minor: vec![],
        options: vec![],
        combined: None,
        host: None,
    };
    (tl, diag)
}

/// `n` kernels on one stream, all over the same [1 ms, 2 ms].
fn equal_timestamps(n: u32) -> Timeline {
    let mut tl = Timeline::new(Source::Native, "equal-ts");
    let name = tl.strings.intern("void gemm_kernel<128>(float*)");
    tl.gpus.push(Gpu {
        id: 0,
        streams: vec![Stream {
            id: 7,
            ops: (0..n)
                .map(|i| kernel(MS, 2 * MS, name, i, u32::MAX, Precision::Fp32))
                .collect(),
        }],
        ..Gpu::default()
    });
    tl.finalize();
    tl
}

fn empty_diagnosis() -> Diagnosis {
    Diagnosis {
        window: (0, 0),
        steps: Steps::default(),
        startup: None,
        devices: vec![],
        findings: vec![],
        job: Default::default(),
        minor: vec![],
        options: vec![],
        combined: None,
        host: None,
    }
}

/// Model items that become trace events: spans, ops, gaps, steps, samples,
/// memory events.
fn model_events(tl: &Timeline, d: &Diagnosis) -> u64 {
    let samples: usize = tl
        .processes
        .iter()
        .flat_map(|p| &p.threads)
        .map(|t| t.samples.len())
        .sum();
    let memory: usize = tl.gpus.iter().map(|g| g.memory.len()).sum();
    let gaps: usize = d.devices.iter().map(|x| x.gaps.len()).sum();
    (tl.host_span_count() + tl.gpu_op_count() + samples + memory + gaps + d.steps.steps.len())
        as u64
}

/// A minimal Chrome trace-event JSON writer with the same content: complete
/// ("X") events with args, flow ("s"/"f") pairs, counters ("C"), names ("M").
fn chrome_json(tl: &Timeline, d: &Diagnosis, out: &mut dyn Write) -> io::Result<()> {
    let s = |id| json_str(tl.strings.get(id));
    let us = |ns: i64| format!("{}.{:03}", ns / 1000, ns % 1000);
    let mut w = io::BufWriter::with_capacity(1 << 20, out);
    let mut line = String::new();
    let mut first = true;
    let mut emit = |w: &mut io::BufWriter<&mut dyn Write>, line: &str| -> io::Result<()> {
        w.write_all(if first {
            b"{\"traceEvents\":[\n"
        } else {
            b",\n"
        })?;
        first = false;
        w.write_all(line.as_bytes())
    };
    let mut corr_to_op: HashMap<u32, ()> = HashMap::new();
    for g in &tl.gpus {
        for st in &g.streams {
            for o in &st.ops {
                corr_to_op.insert(o.corr, ());
            }
        }
    }
    for p in &tl.processes {
        line.clear();
        let _ = write!(
            line,
            r#"{{"ph":"M","name":"process_name","pid":{},"args":{{"name":{}}}}}"#,
            p.pid,
            json_str(&p.cmdline)
        );
        emit(&mut w, &line)?;
        for t in &p.threads {
            for sp in &t.spans {
                line.clear();
                let (name, cat) = match sp.kind {
                    SpanKind::Host(op) => (json_str(op.name()), "io"),
                    SpanKind::CudaRuntime => (s(sp.id), "cuda_runtime"),
                    _ => (s(sp.id), "user_annotation"),
                };
                let _ = write!(
                    line,
                    r#"{{"ph":"X","cat":"{cat}","name":{name},"pid":{},"tid":{},"ts":{},"dur":{}"#,
                    p.pid,
                    t.tid,
                    us(sp.ts),
                    us(sp.dur)
                );
                match sp.kind {
                    SpanKind::Host(_) => {
                        let path = p
                            .object(sp.id)
                            .map(|o| tl.strings.get(o.path))
                            .unwrap_or("");
                        let _ = write!(
                            line,
                            r#","args":{{"bytes":{},"path":{}}}}}"#,
                            sp.arg,
                            json_str(path)
                        );
                    }
                    SpanKind::CudaRuntime => {
                        let _ = write!(line, r#","args":{{"correlation":{}}}}}"#, sp.arg);
                    }
                    _ => line.push('}'),
                }
                emit(&mut w, &line)?;
                if sp.kind == SpanKind::CudaRuntime && corr_to_op.contains_key(&(sp.arg as u32)) {
                    line.clear();
                    let _ = write!(
                        line,
                        r#"{{"ph":"s","id":{},"pid":{},"tid":{},"ts":{},"cat":"ac2g","name":"ac2g"}}"#,
                        sp.arg,
                        p.pid,
                        t.tid,
                        us(sp.ts)
                    );
                    emit(&mut w, &line)?;
                }
            }
            for pair in t.samples.windows(2) {
                let dt = (pair[1].ts - pair[0].ts).max(1);
                let pct = 100.0 * (pair[1].cpu_ns - pair[0].cpu_ns) as f64 / dt as f64;
                line.clear();
                let _ = write!(
                    line,
                    r#"{{"ph":"C","name":"CPU %","pid":{},"tid":{},"ts":{},"args":{{"cpu":{pct}}}}}"#,
                    p.pid,
                    t.tid,
                    us(pair[0].ts)
                );
                emit(&mut w, &line)?;
            }
        }
    }
    for g in &tl.gpus {
        for st in &g.streams {
            for o in &st.ops {
                line.clear();
                let _ = write!(
                    line,
                    r#"{{"ph":"X","cat":"kernel","name":{},"pid":"GPU {}","tid":"stream {}","ts":{},"dur":{},"args":{{"correlation":{}"#,
                    s(o.name),
                    g.id,
                    st.id,
                    us(o.start),
                    us(o.end - o.start),
                    o.corr
                );
                if let Some(lc) = g.launch_configs.get(o.launch() as usize) {
                    let _ = write!(line, r#","grid":{:?},"block":{:?}"#, lc.grid, lc.block);
                }
                if o.kind() == GpuOpKind::Memcpy {
                    let _ = write!(
                        line,
                        r#","bytes":{},"src":"{}","dst":"{}""#,
                        o.bytes(),
                        o.src().name(),
                        o.dst().name()
                    );
                }
                let _ = write!(line, r#","precision":"{}"}}}}"#, o.precision().name());
                emit(&mut w, &line)?;
                line.clear();
                let _ = write!(
                    line,
                    r#"{{"ph":"f","bp":"e","id":{},"pid":"GPU {}","tid":"stream {}","ts":{},"cat":"ac2g","name":"ac2g"}}"#,
                    o.corr,
                    g.id,
                    st.id,
                    us(o.start)
                );
                emit(&mut w, &line)?;
            }
        }
        let mut live = 0i64;
        for m in &g.memory {
            live += if m.alloc {
                m.bytes as i64
            } else {
                -(512 << 20)
            };
            line.clear();
            let _ = write!(
                line,
                r#"{{"ph":"C","name":"allocated","pid":"GPU {}","ts":{},"args":{{"bytes":{live}}}}}"#,
                g.id,
                us(m.ts)
            );
            emit(&mut w, &line)?;
        }
    }
    for dev in &d.devices {
        for gap in &dev.gaps {
            line.clear();
            let _ = write!(
                line,
                r#"{{"ph":"X","cat":"idle","name":"{}","pid":"GPU {}","tid":"idle","ts":{},"dur":{},"args":{{"pid":{},"tid":{}}}}}"#,
                gap.label(),
                dev.gpu,
                us(gap.start),
                us(gap.end - gap.start),
                gap.pid,
                gap.tid
            );
            emit(&mut w, &line)?;
        }
    }
    for st in &d.steps.steps {
        line.clear();
        let _ = write!(
            line,
            r#"{{"ph":"X","cat":"step","name":"step {}","pid":"steps","tid":"steps","ts":{},"dur":{}}}"#,
            st.index,
            us(st.start),
            us(st.end - st.start)
        );
        emit(&mut w, &line)?;
    }
    w.write_all(b"\n]}\n")?;
    w.flush()
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// Peak resident memory so far (Linux), in MiB.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
    };
    let events: i64 = arg("--events")
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000);
    let t = Instant::now();
    let (tl, diag) = match arg("--kineto") {
        None if arg("--equal-ts").is_some() => {
            let n = arg("--equal-ts")
                .and_then(|v| v.parse().ok())
                .unwrap_or(200_000);
            (equal_timestamps(n), empty_diagnosis())
        }
        Some(path) => {
            let tl = stallscope_analyzer::read::kineto::read_file(path.as_ref())
                .map_err(io::Error::other)?;
            (tl, empty_diagnosis())
        }
        None => synthetic(events),
    };
    let n = model_events(&tl, &diag);
    println!(
        "{} timeline: {n} events ({} host spans, {} GPU ops), made in {:.2?}",
        tl.name,
        tl.host_span_count(),
        tl.gpu_op_count(),
        t.elapsed()
    );
    let rss_before = peak_rss_mib();

    let mut best = f64::MAX;
    let mut stats = None;
    for _ in 0..3 {
        let mut sink = Count(0);
        let t = Instant::now();
        let s = write_perfetto(&tl, Some(&diag), &mut sink, &|_, _| {})?;
        best = best.min(t.elapsed().as_secs_f64());
        stats = Some(s);
    }
    let s = stats.expect("ran at least once");
    let rss_after = peak_rss_mib();
    println!(
        "perfetto:    {:>12} bytes  {:>6.1} bytes/event  {:>6.2} s  {:>6.2} M events/s  {:>7.1} MB/s  \
         ({} packets, {} slices, {} flows, {} counter points, {} overlap lanes)",
        s.bytes,
        s.bytes as f64 / n as f64,
        best,
        n as f64 / best / 1e6,
        s.bytes as f64 / best / 1e6,
        s.packets,
        s.slices,
        s.flows,
        s.counters,
        s.lanes
    );

    let mut sink = Count(0);
    let t = Instant::now();
    chrome_json(&tl, &diag, &mut sink)?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "chrome json: {:>12} bytes  {:>6.1} bytes/event  {:>6.2} s  {:>6.2} M events/s  {:>7.1} MB/s",
        sink.0,
        sink.0 as f64 / n as f64,
        secs,
        n as f64 / secs / 1e6,
        sink.0 as f64 / secs / 1e6
    );
    println!(
        "chrome json / perfetto size: {:.1}x",
        sink.0 as f64 / s.bytes as f64
    );
    if let (Some(a), Some(b)) = (rss_before, rss_after) {
        println!("peak RSS: {a:.0} MiB with the timeline built, {b:.0} MiB after writing");
    }
    if let Some(path) = arg("--out") {
        let f = std::fs::File::create(path)?;
        write_perfetto(&tl, Some(&diag), f, &|_, _| {})?;
        println!("wrote {path}");
    }
    Ok(())
}
