//! Decoding one trace file (one process image) into a timeline.

use std::collections::HashMap;
use std::path::Path;

use rayon::prelude::*;
use stallscope_format::layout::ChunkKind;
use stallscope_format::reader::Chunk;
use stallscope_format::records::{gpu_status, marker_flags, memory_op};
use stallscope_format::{FdClass, HostOp, Record, TraceFile};

use super::NativeError;
use super::partial::Partial;
use crate::model::{
    CopyKind, Gpu, GpuCapture, GpuOp, GpuOpKind, HostSpan, IoObject, LaunchConfig, MemEvent,
    MemKind, Ns, Oom, OpTotals, Precision, Process, Sample, Source, SpanKind, StrId, Strings,
    SyncEvent, SyncKind, Thread, Timeline,
};

/// Chunks per parallel batch: big enough to amortize the merge.
const BATCH: usize = 32;

/// Read-only lookups shared by the parallel decoders.
struct Names {
    /// Producer string id -> our id.
    strings: HashMap<u32, StrId>,
    copy_names: HashMap<(u8, u8, u8), StrId>,
    memset_name: StrId,
}

impl Names {
    fn get(&self, id: u32) -> StrId {
        self.strings.get(&id).copied().unwrap_or(0)
    }
}

/// Reads one process image.
pub fn read_file(path: &Path) -> Result<Timeline, NativeError> {
    let file = TraceFile::open(path)?;
    file.advise_sequential();
    let view = file.view()?;
    let h = view.header.clone();
    let mut tl = Timeline::new(Source::Native, path.display().to_string());
    let mut chunks = Vec::new();
    for c in view.chunks() {
        match c {
            Ok(c) => chunks.push(c),
            Err(e) => tl.warn(format!("skipped a damaged chunk: {}", e.in_file(path))),
        }
    }

    // Definitions first: strings, fd objects and API names live in meta chunks.
    let mut strings = Strings::new();
    let mut names = Names {
        strings: HashMap::new(),
        copy_names: HashMap::new(),
        memset_name: 0,
    };
    let mut objects = Vec::new();
    let mut api_names: HashMap<(u8, u32), StrId> = HashMap::new();
    for c in chunks.iter().filter(|c| c.kind == ChunkKind::Meta) {
        for r in c.records() {
            match r {
                Ok((_, Record::String { id, text })) => {
                    names
                        .strings
                        .insert(id, strings.intern(&String::from_utf8_lossy(text)));
                }
                Ok((_, Record::Object(o))) => objects.push(o),
                Ok((_, Record::ApiName(a))) => {
                    api_names.insert((a.domain, a.cbid), a.name);
                }
                Ok(_) => {}
                Err(e) => {
                    tl.warn(format!(
                        "skipped the rest of a damaged chunk: {}",
                        e.in_file(path)
                    ));
                    break;
                }
            }
        }
    }
    for src in 0..=7u8 {
        for dst in 0..=7u8 {
            for kind in 0..=10u8 {
                let label = format!(
                    "Memcpy {} ({} -> {})",
                    CopyKind(kind).name(),
                    MemKind(src).name(),
                    MemKind(dst).name()
                );
                names
                    .copy_names
                    .insert((kind, src, dst), strings.intern(&label));
            }
        }
    }
    names.memset_name = strings.intern("Memset");
    let api_names: HashMap<(u8, u32), StrId> = api_names
        .into_iter()
        .map(|(k, v)| (k, names.get(v)))
        .collect();

    let thread_chunks: Vec<&Chunk> = chunks
        .iter()
        .filter(|c| c.kind == ChunkKind::Thread)
        .collect();
    let chunk_size = h.chunk_size as u64;
    let parts: Vec<Partial> = thread_chunks
        .par_chunks(BATCH)
        .map(|batch| {
            let mut p = Partial::default();
            for c in batch {
                decode_chunk(c, &names, &mut p, path);
                file.release(c.offset, chunk_size);
            }
            p
        })
        .collect();
    // One concatenation at the end: merging pairwise would copy every event
    // once per level of the merge tree.
    let part = Partial::concat(parts);

    let mut process = Process {
        pid: h.pid,
        ppid: h.ppid,
        cmdline: h.command_line(),
        hostname: h.hostname.clone(),
        start: h.start_mono_ns as Ns,
        end: 0,
        exited_cleanly: h.end_mono_ns != 0,
        span_threshold_ns: h.min_span_ns,
        sample_hz: h.sample_hz,
        dropped_records: h.dropped,
        ..Default::default()
    };
    process.objects = objects
        .iter()
        .map(|o| IoObject {
            id: o.obj,
            class: FdClass::from_code(o.class),
            fs_magic: o.fs_magic,
            dev: o.dev,
            ino: o.ino,
            path: names.get(o.path),
            fd: o.fd,
        })
        .collect();
    for e in &part.errors {
        tl.warn(e.clone());
    }
    let mut last = h.start_mono_ns as Ns;
    let mut threads: HashMap<u32, Thread> = HashMap::new();
    for (tid, mut acc) in part.threads {
        for s in &mut acc.spans {
            if matches!(s.kind, SpanKind::CudaRuntime | SpanKind::CudaDriver) {
                // `id` held the callback id until names could be interned.
                let domain = if s.kind == SpanKind::CudaRuntime {
                    1
                } else {
                    2
                };
                s.id = match api_names.get(&(domain, s.id)) {
                    Some(&n) if n != 0 => n,
                    _ => strings.intern(&format!(
                        "{}#{}",
                        if domain == 1 {
                            "cudaRuntime"
                        } else {
                            "cuDriver"
                        },
                        s.id
                    )),
                };
            }
            last = last.max(s.end());
        }
        if let Some(s) = acc.samples.last() {
            last = last.max(s.ts);
        }
        threads.insert(
            tid,
            Thread {
                tid,
                name: acc.name.map_or(0, |n| n.1),
                spans: acc.spans,
                samples: acc.samples,
                ..Default::default()
            },
        );
    }
    pair_markers(&part.markers, &names, &mut threads);
    for t in view.threads() {
        let th = threads.entry(t.tid).or_insert_with(|| Thread {
            tid: t.tid,
            ..Default::default()
        });
        th.dropped_records = t.dropped;
        process.dropped_records += t.dropped;
        th.totals = t
            .ops
            .iter()
            .map(|c| OpTotals {
                calls: c.calls,
                bytes: c.bytes,
                ns: h.ticks_to_ns(c.ticks),
            })
            .collect();
    }
    process.threads = threads.into_values().collect();
    process.end = if h.end_mono_ns != 0 {
        h.end_mono_ns as Ns
    } else {
        last.max(part.end.unwrap_or(0) as Ns)
    };
    process.gpu_capture = capture_state(&part.statuses, &names);
    if h.overwritten > 0 {
        tl.warn(format!(
            "pid {}: the flight recorder overwrote {} older records; the trace starts late",
            h.pid, h.overwritten
        ));
    }
    if process.dropped_records > 0 {
        tl.warn(format!(
            "pid {}: {} records were dropped at the size cap (raise --max-mb)",
            h.pid, process.dropped_records
        ));
    }
    for n in &part.notes {
        let text = strings.get(names.get(n.text)).to_string();
        if !text.is_empty() {
            tl.info(format!("pid {}: {text}", h.pid));
        }
    }
    if let Some(&(mono, real)) = part.clocks.first() {
        tl.realtime_offset_ns = Some(real as i64 - mono as i64);
    }
    for (id, g) in part.gpus {
        let mut gpu = Gpu {
            id,
            name: strings.get(g.name).to_string(),
            memory_bytes: g.memory_bytes,
            sm_count: g.sm_count,
            cc: g.cc,
            launch_configs: g.launch_configs,
            syncs: g.syncs,
            memory: g.memory,
            dropped_records: g.dropped,
            ..Default::default()
        };
        for (sid, ops) in g.streams {
            gpu.stream_mut(sid as u64).ops = ops;
        }
        tl.gpus.push(gpu);
    }
    tl.ooms = part.ooms;
    tl.processes.push(process);
    tl.strings = strings;
    Ok(tl)
}

fn decode_chunk(c: &Chunk, names: &Names, p: &mut Partial, path: &Path) {
    let tid = c.tid;
    for r in c.records() {
        let rec = match r {
            Ok((_, rec)) => rec,
            Err(e) => {
                p.errors.push(format!(
                    "skipped the rest of a damaged chunk: {}",
                    e.in_file(path)
                ));
                return;
            }
        };
        match rec {
            Record::Span(s) => {
                let Some(op) = HostOp::from_code(s.op) else {
                    continue;
                };
                p.thread(tid).spans.push(HostSpan {
                    ts: s.ts as Ns,
                    dur: s.dur as Ns,
                    arg: s.bytes,
                    id: s.obj,
                    kind: SpanKind::Host(op),
                });
            }
            Record::ThreadName(t) => {
                let acc = p.thread(t.tid);
                if acc.name.is_none_or(|n| n.0 <= t.ts) {
                    acc.name = Some((t.ts, names.get(t.name)));
                }
            }
            Record::Sample(s) => p.thread(s.tid).samples.push(Sample {
                ts: s.ts as Ns,
                cpu_ns: s.cpu_ns,
                run_delay_ns: s.run_delay_ns,
                majflt: s.majflt,
                minflt: s.minflt,
                state: s.state,
            }),
            Record::Clock(c) => p.clocks.push((c.mono_ns, c.real_ns)),
            Record::ProcessEnd(e) => p.end = p.end.max(Some(e.ts)),
            Record::Note(n) => p.notes.push(n),
            Record::Kernel(k) => {
                let g = p.gpu(k.device);
                g.launch_configs.push(LaunchConfig {
                    grid: [k.grid_x, k.grid_y, k.grid_z],
                    block: [k.block_x, k.block_y, k.block_z],
                    shared_mem: k.shared_mem,
                    registers: k.registers,
                });
                let launch = g.launch_configs.len() as u32 - 1;
                g.streams.entry(k.stream).or_default().push(GpuOp {
                    start: k.start as Ns,
                    end: k.end.max(k.start) as Ns,
                    bytes: 0,
                    corr: k.correlation,
                    name: names.get(k.name),
                    launch,
                    kind: GpuOpKind::Kernel,
                    copy: CopyKind::UNKNOWN,
                    src: MemKind::UNKNOWN,
                    dst: MemKind::UNKNOWN,
                    precision: Precision::Unknown,
                });
            }
            Record::Memcpy(m) => {
                let name = names
                    .copy_names
                    .get(&(m.copy_kind, m.src_kind, m.dst_kind))
                    .copied()
                    .unwrap_or(0);
                p.gpu(m.device)
                    .streams
                    .entry(m.stream)
                    .or_default()
                    .push(GpuOp {
                        start: m.start as Ns,
                        end: m.end.max(m.start) as Ns,
                        bytes: m.bytes,
                        corr: m.correlation,
                        name,
                        launch: u32::MAX,
                        kind: GpuOpKind::Memcpy,
                        copy: CopyKind(m.copy_kind),
                        src: MemKind(m.src_kind),
                        dst: MemKind(m.dst_kind),
                        precision: Precision::Unknown,
                    });
            }
            Record::Memset(m) => {
                p.gpu(m.device)
                    .streams
                    .entry(m.stream)
                    .or_default()
                    .push(GpuOp {
                        start: m.start as Ns,
                        end: m.end.max(m.start) as Ns,
                        bytes: m.bytes,
                        corr: m.correlation,
                        name: names.memset_name,
                        launch: u32::MAX,
                        kind: GpuOpKind::Memset,
                        copy: CopyKind::UNKNOWN,
                        src: MemKind(m.mem_kind),
                        dst: MemKind(m.mem_kind),
                        precision: Precision::Unknown,
                    });
            }
            Record::Sync(s) => {
                let device = if s.device == u32::MAX { 0 } else { s.device };
                p.gpu(device).syncs.push(SyncEvent {
                    start: s.start as Ns,
                    end: s.end.max(s.start) as Ns,
                    corr: s.correlation,
                    stream: s.stream as u64,
                    kind: match s.sync_type {
                        1 => SyncKind::Event,
                        2 => SyncKind::StreamWaitEvent,
                        3 => SyncKind::Stream,
                        4 => SyncKind::Context,
                        _ => SyncKind::Unknown,
                    },
                });
            }
            Record::Api(a) => {
                let kind = if a.domain == 2 {
                    SpanKind::CudaDriver
                } else {
                    SpanKind::CudaRuntime
                };
                p.thread(a.tid).spans.push(HostSpan {
                    ts: a.start as Ns,
                    dur: a.end.saturating_sub(a.start) as Ns,
                    arg: a.correlation as u64,
                    id: a.cbid,
                    kind,
                });
            }
            Record::Memory(m) => p.gpu(m.device).memory.push(MemEvent {
                ts: m.ts as Ns,
                bytes: m.bytes,
                address: m.address,
                corr: m.correlation,
                alloc: m.op == memory_op::ALLOC,
                kind: MemKind(m.mem_kind),
            }),
            Record::Marker(m) => p.markers.push(m),
            Record::Device(d) => {
                let g = p.gpu(d.device);
                g.name = names.get(d.name);
                g.memory_bytes = d.global_mem;
                g.sm_count = d.sm_count;
                g.cc = (d.cc_major, d.cc_minor);
            }
            Record::Oom(o) => p.ooms.push(Oom {
                ts: o.ts as Ns,
                pid: 0,
                tid: o.tid,
                requested: o.requested,
                free: o.free,
                total: o.total,
                api: format!("cbid {}", o.cbid),
            }),
            Record::GpuDropped(d) => p.gpu(d.device).dropped += d.count,
            Record::GpuStatus(s) => p.statuses.push(s),
            Record::String { .. }
            | Record::Object(_)
            | Record::ApiName(_)
            | Record::Overhead(_)
            | Record::Unknown { .. } => {}
        }
    }
}

/// NVTX start/end markers become annotation spans on the thread that opened them.
fn pair_markers(
    markers: &[stallscope_format::records::Marker],
    names: &Names,
    threads: &mut HashMap<u32, Thread>,
) {
    let mut sorted: Vec<_> = markers.to_vec();
    sorted.sort_by_key(|m| m.ts);
    let mut open: HashMap<u32, (u32, u64, StrId)> = HashMap::new();
    for m in sorted {
        let name = names.get(m.name);
        let mut push = |tid: u32, ts: u64, end: u64, name: StrId| {
            threads
                .entry(tid)
                .or_insert_with(|| Thread {
                    tid,
                    ..Default::default()
                })
                .spans
                .push(HostSpan {
                    ts: ts as Ns,
                    dur: end.saturating_sub(ts) as Ns,
                    arg: 0,
                    id: name,
                    kind: SpanKind::Annotation,
                });
        };
        if m.flags & marker_flags::START != 0 {
            open.insert(m.id, (m.tid, m.ts, name));
        } else if m.flags & marker_flags::END != 0 {
            if let Some((tid, ts, name)) = open.remove(&m.id) {
                push(tid, ts, m.ts, name);
            }
        } else {
            push(m.tid, m.ts, m.ts, name);
        }
    }
}

fn capture_state(statuses: &[stallscope_format::records::GpuStatus], names: &Names) -> GpuCapture {
    let _ = names;
    let mut sorted = statuses.to_vec();
    sorted.sort_by_key(|s| s.ts);
    let mut state = GpuCapture::NotAttempted;
    for s in sorted {
        state = match s.status {
            gpu_status::ACTIVE => GpuCapture::Active,
            gpu_status::UNAVAILABLE => GpuCapture::Unavailable(format!("reason #{}", s.reason)),
            gpu_status::PARTIAL => GpuCapture::Partial(format!("reason #{}", s.reason)),
            gpu_status::DISABLED => GpuCapture::Disabled,
            _ => state,
        };
    }
    state
}
