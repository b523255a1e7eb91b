//! Decoding one trace file (one process image) into a timeline.

use std::path::Path;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use stallscope_format::layout::{ChunkKind, state};
use stallscope_format::reader::Chunk;
use stallscope_format::records::{gpu_status, marker_flags};
use stallscope_format::{FdClass, Record, TraceFile};

use super::NativeError;
use super::batch::{OwnedSpans, decode_batched};
use super::decode::{UNNAMED, dur, ns};
use super::partial::Partial;
use crate::model::{
    CopyKind, Gpu, GpuCapture, HostSpan, IoObject, MemKind, Ns, OpTotals, Process, Source,
    SpanKind, StrId, Stream, Strings, Thread, Timeline, sort_stable, span_order,
};

/// Producer string ids below this are looked up in a table, others hashed.
const DENSE_IDS: usize = 1 << 20;

/// Read-only lookups shared by the parallel decoders.
pub(super) struct Names {
    /// Producer string id -> our id, for small ids (the producer numbers its
    /// strings from 1).
    dense: Vec<StrId>,
    /// The same for ids too large for the table.
    sparse: FxHashMap<u32, StrId>,
    /// Indexed by `copy_slot(kind, src, dst)`.
    copy_names: Vec<StrId>,
    pub(super) memset_name: StrId,
    /// The names of CUDA API calls (the callbacks named in the file).
    pub(super) api: ApiNames,
}

impl Names {
    /// An empty table, with the copy and memset names interned in `strings`.
    pub(super) fn new(strings: &mut Strings) -> Names {
        let mut names = Names {
            dense: Vec::new(),
            sparse: FxHashMap::default(),
            copy_names: vec![0; copy_slot(10, 7, 7) + 1],
            memset_name: 0,
            api: ApiNames::new(),
        };
        for src in 0..=7u8 {
            for dst in 0..=7u8 {
                for kind in 0..=10u8 {
                    let label = format!(
                        "Memcpy {} ({} -> {})",
                        CopyKind(kind).name(),
                        MemKind(src).name(),
                        MemKind(dst).name()
                    );
                    names.copy_names[copy_slot(kind, src, dst)] = strings.intern(&label);
                }
            }
        }
        names.memset_name = strings.intern("Memset");
        names
    }

    #[inline]
    pub(super) fn get(&self, id: u32) -> StrId {
        match self.dense.get(id as usize) {
            Some(&s) => s,
            None if self.sparse.is_empty() => 0,
            None => self.sparse.get(&id).copied().unwrap_or(0),
        }
    }

    pub(super) fn insert(&mut self, id: u32, s: StrId) {
        if (id as usize) < DENSE_IDS {
            if self.dense.len() <= id as usize {
                self.dense.resize(id as usize + 1, 0);
            }
            self.dense[id as usize] = s;
        } else {
            self.sparse.insert(id, s);
        }
    }

    #[inline]
    pub(super) fn copy_name(&self, kind: u8, src: u8, dst: u8) -> StrId {
        if kind <= 10 && src <= 7 && dst <= 7 {
            self.copy_names[copy_slot(kind, src, dst)]
        } else {
            0
        }
    }
}

fn copy_slot(kind: u8, src: u8, dst: u8) -> usize {
    (kind as usize * 8 + src as usize) * 8 + dst as usize
}

/// CUDA API callback id -> name, per domain (1 runtime, 2 driver).
pub(super) struct ApiNames {
    dense: [Vec<StrId>; 2],
    sparse: FxHashMap<(u8, u32), StrId>,
}

impl ApiNames {
    const DENSE_CBIDS: u32 = 1 << 16;

    pub(super) fn new() -> ApiNames {
        ApiNames {
            dense: [Vec::new(), Vec::new()],
            sparse: FxHashMap::default(),
        }
    }

    pub(super) fn insert(&mut self, domain: u8, cbid: u32, name: StrId) {
        match domain {
            1 | 2 if cbid < Self::DENSE_CBIDS => {
                let v = &mut self.dense[domain as usize - 1];
                if v.len() <= cbid as usize {
                    v.resize(cbid as usize + 1, 0);
                }
                v[cbid as usize] = name;
            }
            _ => {
                self.sparse.insert((domain, cbid), name);
            }
        }
    }

    /// The name, or 0 when unknown.
    #[inline]
    pub(super) fn get(&self, domain: u8, cbid: u32) -> StrId {
        match domain {
            1 | 2 if cbid < Self::DENSE_CBIDS => self.dense[domain as usize - 1]
                .get(cbid as usize)
                .copied()
                .unwrap_or(0),
            _ => self.sparse.get(&(domain, cbid)).copied().unwrap_or(0),
        }
    }
}

/// Reads one process image.
pub fn read_file(path: &Path) -> Result<Timeline, NativeError> {
    read_file_with(path, decode_batched)
}

/// Decodes a file's thread chunks (the tests swap in a reference decoder).
type Decoder = fn(&[&Chunk], &Names, &TraceFile, u64, &Path) -> Partial;

/// `read_file`, decoding the thread chunks with `decode`.
fn read_file_with(path: &Path, decode: Decoder) -> Result<Timeline, NativeError> {
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
    let mut names = Names::new(&mut strings);
    let mut objects = Vec::new();
    // (domain, cbid, producer string id), in record order.
    let mut api_defs: Vec<(u8, u32, u32)> = Vec::new();
    for c in chunks.iter().filter(|c| c.kind == ChunkKind::Meta) {
        for r in c.records() {
            match r {
                Ok((_, Record::String { id, text })) => {
                    let s = strings.intern(&String::from_utf8_lossy(text));
                    names.insert(id, s);
                }
                Ok((_, Record::Object(o))) => objects.push(o),
                Ok((_, Record::ApiName(a))) => api_defs.push((a.domain, a.cbid, a.name)),
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
    // Later definitions of a callback id replace earlier ones.
    for &(domain, cbid, name) in &api_defs {
        let name = names.get(name);
        names.api.insert(domain, cbid, name);
    }

    let thread_chunks: Vec<&Chunk> = chunks
        .iter()
        .filter(|c| c.kind == ChunkKind::Thread)
        .collect();
    let chunk_size = h.chunk_size as u64;
    let part = decode(&thread_chunks, &names, &file, chunk_size, path);

    let mut process = Process {
        pid: h.pid,
        ppid: h.ppid,
        cmdline: h.command_line(),
        hostname: h.hostname.clone(),
        start: ns(h.start_mono_ns),
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
    let mut last = ns(h.start_mono_ns).max(part.last.unwrap_or(Ns::MIN));
    let mut threads: Vec<Thread> = Vec::with_capacity(part.threads.len());
    let mut owned: Vec<OwnedSpans> = Vec::with_capacity(part.threads.len());
    let mut index: FxHashMap<u32, usize> = FxHashMap::default();
    let mut fallback: FxHashMap<(u8, u32), StrId> = FxHashMap::default();
    for (tid, mut acc) in part.threads {
        if part.unnamed {
            let mut name = |s: &mut HostSpan| name_unnamed(s, &mut fallback, &mut strings);
            acc.spans.iter_mut().for_each(&mut name);
            acc.owned.for_each_in_file_order(&mut name);
        }
        if let Some(s) = acc.samples.last() {
            last = last.max(s.ts);
        }
        index.insert(tid, threads.len());
        owned.push(acc.owned);
        threads.push(Thread {
            tid,
            name: acc.name.map_or(0, |n| n.1),
            spans: acc.spans,
            samples: acc.samples,
            runs: {
                let mut runs = acc.runs;
                runs.sort_by_key(|r| r.ts);
                runs
            },
            ..Default::default()
        });
    }
    let mut thread = |threads: &mut Vec<Thread>, tid: u32| -> usize {
        *index.entry(tid).or_insert_with(|| {
            threads.push(Thread {
                tid,
                ..Default::default()
            });
            threads.len() - 1
        })
    };
    // NVTX ranges, per thread (in `threads` order).
    let mut ranges: Vec<Vec<HostSpan>> = Vec::new();
    pair_markers(&part.markers, &names, &mut |tid, span| {
        let i = thread(&mut threads, tid);
        if ranges.len() <= i {
            ranges.resize_with(i + 1, Vec::new);
        }
        ranges[i].push(span);
    });
    ranges.resize_with(threads.len(), Vec::new);
    owned.resize_with(threads.len(), OwnedSpans::default);
    threads
        .par_iter_mut()
        .zip(owned)
        .zip(ranges)
        .for_each(|((t, owned), ranges)| {
            // In the timeline's order: `finalize_spans_sorted` trusts it.
            if owned.lists.is_empty() {
                t.spans.extend(ranges);
                sort_stable(&mut t.spans, span_order);
            } else {
                t.spans = owned.assemble(ranges);
            }
        });
    for t in view.threads() {
        let i = thread(&mut threads, t.tid);
        let th = &mut threads[i];
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
    process.threads = threads;
    process.end = if h.end_mono_ns != 0 {
        ns(h.end_mono_ns)
    } else {
        last.max(ns(part.end.unwrap_or(0)))
    };
    process.gpu_capture = capture_state(&part.statuses, &names);
    if h.overwritten > 0 {
        tl.warn(format!(
            "pid {}: the flight recorder overwrote {} older records; the trace starts late",
            h.pid, h.overwritten
        ));
    }
    if let Some(w) = loss_warning(h.pid, h.state, process.dropped_records) {
        tl.warn(w);
    }
    for n in &part.notes {
        let text = strings.get(names.get(n.text)).to_string();
        if !text.is_empty() {
            tl.info(format!("pid {}: {text}", h.pid));
        }
    }
    if let Some(&(mono, real)) = part.clocks.first() {
        tl.realtime_offset_ns = Some((real as i64).wrapping_sub(mono as i64));
    }
    for (id, g) in part.gpus {
        tl.gpus.push(Gpu {
            id,
            name: strings.get(g.name).to_string(),
            memory_bytes: g.memory_bytes,
            sm_count: g.sm_count,
            cc: g.cc,
            arch_name: String::new(),
            // The shim traces CUDA only.
            hip: false,
            streams: g
                .streams
                .into_iter()
                .map(|(sid, ops)| Stream {
                    id: sid as u64,
                    ops,
                })
                .collect(),
            launch_configs: g.launch_configs,
            syncs: g.syncs,
            memory: g.memory,
            dropped_records: g.dropped,
            // CUPTI does not say how much a collective moves.
            comm_elems: Default::default(),
        });
    }
    tl.ooms = part.ooms;
    tl.processes.push(process);
    tl.strings = strings;
    Ok(tl)
}

/// Why a process's recording lost records, from its header's state bits: a
/// full disk or the file size limit is not the size cap (issue 14, item 12).
fn loss_warning(pid: u32, bits: u32, dropped: u64) -> Option<String> {
    let lost = if dropped > 0 {
        format!("; {dropped} records were dropped")
    } else {
        String::new()
    };
    if bits & state::DISK_FULL != 0 {
        Some(format!(
            "pid {pid}: the disk was full, so recording stopped early{lost} (free space, or record to another disk)"
        ))
    } else if bits & state::FILE_LIMIT != 0 {
        Some(format!(
            "pid {pid}: the file size limit (ulimit -f) stopped recording early{lost}"
        ))
    } else if dropped == 0 {
        None
    } else if bits & state::CAP_REACHED != 0 {
        Some(format!(
            "pid {pid}: {dropped} records were dropped at the size cap (raise --max-mb)"
        ))
    } else {
        Some(format!(
            "pid {pid}: {dropped} records were dropped while the trace file could not grow (see the notes)"
        ))
    }
}

/// Names a CUDA API call's span that `decode::named_api_span` left tagged
/// (its callback id has no name in the file): "cudaRuntime#N" or
/// "cuDriver#N", interned in the order the spans lie in the file.
fn name_unnamed(
    s: &mut HostSpan,
    fallback: &mut FxHashMap<(u8, u32), StrId>,
    strings: &mut Strings,
) {
    if !matches!(s.kind, SpanKind::CudaRuntime | SpanKind::CudaDriver) || s.arg & UNNAMED == 0 {
        return;
    }
    s.arg &= !UNNAMED;
    let d = if s.kind == SpanKind::CudaRuntime {
        1
    } else {
        2
    };
    s.id = *fallback.entry((d, s.id)).or_insert_with(|| {
        strings.intern(&format!(
            "{}#{}",
            if d == 1 { "cudaRuntime" } else { "cuDriver" },
            s.id
        ))
    });
}

/// NVTX start/end markers become annotation spans on the thread that opened them.
pub(super) fn pair_markers(
    markers: &[stallscope_format::records::Marker],
    names: &Names,
    push: &mut dyn FnMut(u32, HostSpan),
) {
    let mut sorted: Vec<_> = markers.to_vec();
    sorted.sort_by_key(|m| m.ts);
    let mut open: FxHashMap<u32, (u32, u64, StrId)> = FxHashMap::default();
    let span = |ts: u64, end: u64, name: StrId| HostSpan {
        ts: ns(ts),
        dur: dur(ts, end.saturating_sub(ts)),
        arg: 0,
        id: name,
        kind: SpanKind::Annotation,
    };
    for m in sorted {
        let name = names.get(m.name);
        if m.flags & marker_flags::START != 0 {
            open.insert(m.id, (m.tid, m.ts, name));
        } else if m.flags & marker_flags::END != 0 {
            if let Some((tid, ts, name)) = open.remove(&m.id) {
                push(tid, span(ts, m.ts, name));
            }
        } else {
            push(m.tid, span(m.ts, m.ts, name));
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

#[cfg(test)]
mod tests {
    use super::super::decode::simple::decode_partials;
    use super::*;
    use proptest::prelude::*;
    use stallscope_format::HostOp;
    use stallscope_format::layout::{Geometry, HeaderInit, encode_header};
    use stallscope_format::records::{self, Api, Burst, Kernel, Marker, Memcpy, Sample, Span};
    use stallscope_format::writer::{ChunkWriter, Claim, MetaStream, Region};

    /// Writes one record into its slot.
    type Fill = Box<dyn Fn(&mut [u8])>;

    /// One event of a generated recording.
    #[derive(Debug, Clone)]
    enum Ev {
        Span {
            ts: u64,
            dur: u64,
        },
        /// Recorded by one thread for a call of `caller` (as CUPTI's
        /// buffers are), so a thread's spans come from several owners.
        Api {
            ts: u64,
            corr: u32,
            caller: usize,
        },
        Sample {
            ts: u64,
        },
        Kernel {
            device: u32,
            stream: u32,
            grid: u32,
            ts: u64,
        },
        Memcpy {
            device: u32,
            stream: u32,
            ts: u64,
        },
        Marker {
            start: bool,
            id: u32,
            ts: u64,
        },
    }

    fn ev() -> impl Strategy<Value = Ev> {
        let ts = 0u64..1_000_000;
        prop_oneof![
            (ts.clone(), 0u64..5_000).prop_map(|(ts, dur)| Ev::Span { ts, dur }),
            (ts.clone(), 1u32..1000, 0usize..3).prop_map(|(ts, corr, caller)| Ev::Api {
                ts,
                corr,
                caller
            }),
            ts.clone().prop_map(|ts| Ev::Sample { ts }),
            (0u32..2, 0u32..3, 1u32..6, ts.clone()).prop_map(|(device, stream, grid, ts)| {
                Ev::Kernel {
                    device,
                    stream,
                    grid,
                    ts,
                }
            }),
            (0u32..2, 0u32..3, ts.clone()).prop_map(|(device, stream, ts)| Ev::Memcpy {
                device,
                stream,
                ts
            }),
            (any::<bool>(), 0u32..20, ts).prop_map(|(start, id, ts)| Ev::Marker { start, id, ts }),
        ]
    }

    /// Writes `events` (each with the index of the thread that records it)
    /// into a trace file of 4 KiB chunks, so a few thousand events fill more
    /// chunks than one decoding batch holds.
    fn write_recording(path: &Path, events: &[(usize, Ev)]) {
        let capacity = 4 << 20;
        let geo = Geometry::new(capacity, 4096, 8).expect("geometry");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .expect("create");
        file.set_len(geo.chunk_offset(geo.chunk_count))
            .expect("size");
        // SAFETY: a file of our own, mapped once.
        let mut map = unsafe { memmap2::MmapMut::map_mut(&file) }.expect("map");
        let init = HeaderInit {
            capacity,
            pid: 7,
            ppid: 1,
            start_mono_ns: 1,
            ..Default::default()
        };
        encode_header(&mut map, &init, &geo);
        // SAFETY: the mapping outlives the region.
        let region = unsafe { Region::new(map.as_mut_ptr(), geo, false) };
        let meta = MetaStream::new();
        for (id, text) in [
            (1, "kernel_a"),
            (2, "ProfilerStep#1"),
            (3, "cudaLaunchKernel"),
        ] {
            let len = records::string_record_len(text.as_bytes());
            assert!(meta.write(
                &region,
                len,
                &mut |b| records::encode_string(b, id, text.as_bytes()),
                &mut |_, _| true
            ));
        }
        let claim = |tid: u32| match region.claim_chunk(ChunkKind::Thread, tid, &mut |_, _| true) {
            Claim::Chunk(c) => c,
            other => panic!("capacity: {other:?}"),
        };
        let tids = [100u32, 101, 102];
        let mut writers: Vec<ChunkWriter> = tids.iter().map(|&t| claim(t)).collect();
        for (w, e) in events {
            let tid = tids[*w];
            let (len, fill): (usize, Fill) = match e.clone() {
                // Some spans are runs of short reads.
                Ev::Span { ts, dur } if dur % 5 == 0 => {
                    let r = Burst {
                        op: HostOp::Pread as u8,
                        obj: 0,
                        ts,
                        dur,
                        bytes: 8 * 4096,
                        calls: 8,
                        files: (dur % 2) as u32 * 8,
                        busy: dur / 2,
                    };
                    (Burst::LEN, Box::new(move |b| r.encode(b)))
                }
                Ev::Span { ts, dur } => {
                    let r = Span {
                        op: HostOp::Read as u8,
                        obj: 0,
                        ts,
                        dur,
                        bytes: 4096,
                    };
                    (Span::LEN, Box::new(move |b| r.encode(b)))
                }
                Ev::Api { ts, corr, caller } => {
                    let r = Api {
                        domain: 1,
                        tid: tids[caller],
                        start: ts,
                        end: ts + 3_000,
                        correlation: corr,
                        cbid: 211,
                        result: 0,
                    };
                    (Api::LEN, Box::new(move |b| r.encode(b)))
                }
                Ev::Sample { ts } => {
                    let r = Sample {
                        state: b'R',
                        tid,
                        ts,
                        ..Default::default()
                    };
                    (Sample::LEN, Box::new(move |b| r.encode(b)))
                }
                Ev::Kernel {
                    device,
                    stream,
                    grid,
                    ts,
                } => {
                    let r = Kernel {
                        device,
                        start: ts,
                        end: ts + 2_000,
                        correlation: grid,
                        stream,
                        name: 1,
                        grid_x: grid,
                        block_x: 128,
                        ..Default::default()
                    };
                    (Kernel::LEN, Box::new(move |b| r.encode(b)))
                }
                Ev::Memcpy { device, stream, ts } => {
                    let r = Memcpy {
                        copy_kind: 1,
                        device,
                        start: ts,
                        end: ts + 500,
                        stream,
                        src_kind: 1,
                        dst_kind: 3,
                        bytes: 1 << 20,
                        ..Default::default()
                    };
                    (Memcpy::LEN, Box::new(move |b| r.encode(b)))
                }
                Ev::Marker { start, id, ts } => {
                    let r = Marker {
                        flags: if start {
                            marker_flags::START
                        } else {
                            marker_flags::END
                        },
                        tid,
                        ts,
                        id,
                        name: 2,
                        domain: 0,
                    };
                    (Marker::LEN, Box::new(move |b| r.encode(b)))
                }
            };
            let wr = &mut writers[*w];
            // SAFETY: each writer is used by this thread only.
            if !unsafe { wr.write(len, &*fill) } {
                unsafe { wr.seal() };
                *wr = claim(tid);
                assert!(unsafe { wr.write(len, &*fill) });
            }
        }
        for w in &mut writers {
            // SAFETY: as above.
            unsafe { w.seal() };
        }
        map.flush().expect("flush");
    }

    /// Everything a reader produces, for comparing two readings.
    fn everything(mut t: Timeline) -> String {
        t.finalize();
        let strings: Vec<String> = t.strings.iter().map(|(_, s)| s.to_string()).collect();
        format!(
            "{strings:?}\n{:?}\n{:?}\n{:?}\n{:?}",
            t.processes, t.gpus, t.ooms, t.notes
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// On recordings of many chunks from several threads, with launch
        /// configurations first seen in different batches, API calls recorded
        /// by other threads, events in or out of time order (with `coarse`,
        /// on a few times and lengths, so that equal spans come from several
        /// owners, and only the file order decides theirs), and bytes
        /// flipped, the batched decoder reads what the simple one reads.
        #[test]
        fn batched_decoding_matches_the_simple_decoder(
            mut events in proptest::collection::vec((0usize..3, ev()), 4000..7000),
            flips in proptest::collection::vec((any::<u32>(), any::<u8>()), 0..4),
            in_order in any::<bool>(),
            coarse in any::<bool>(),
        ) {
            if in_order {
                // Each thread records in time order (as the shim does), so a
                // thread's spans from several owners are merged, not sorted.
                for (i, (_, e)) in events.iter_mut().enumerate() {
                    let t = i as u64 * 1_000;
                    match e {
                        Ev::Span { ts, .. }
                        | Ev::Api { ts, .. }
                        | Ev::Sample { ts }
                        | Ev::Kernel { ts, .. }
                        | Ev::Memcpy { ts, .. }
                        | Ev::Marker { ts, .. } => *ts = t,
                    }
                }
            } else if coarse {
                for (_, e) in events.iter_mut() {
                    match e {
                        Ev::Span { ts, dur } => {
                            *ts %= 64;
                            *dur %= 3;
                        }
                        Ev::Api { ts, .. }
                        | Ev::Sample { ts }
                        | Ev::Kernel { ts, .. }
                        | Ev::Memcpy { ts, .. }
                        | Ev::Marker { ts, .. } => *ts %= 64,
                    }
                }
            }
            let dir = tempfile::tempdir().expect("tempdir");
            let path = dir.path().join("7.sst");
            write_recording(&path, &events);
            if !flips.is_empty() {
                let mut bytes = std::fs::read(&path).expect("read");
                let start = 64 << 10;
                for (at, x) in &flips {
                    let i = start + *at as usize % (bytes.len() - start);
                    bytes[i] ^= x | 1;
                }
                std::fs::write(&path, bytes).expect("write");
            }
            let chunks = TraceFile::open(&path)
                .expect("open")
                .view()
                .expect("view")
                .chunks()
                .count();
            prop_assert!(chunks > 32, "only {chunks} chunks");
            let a = read_file_with(&path, decode_batched).expect("batched");
            if flips.is_empty() {
                let bursts = events
                    .iter()
                    .filter(|(_, e)| matches!(e, Ev::Span { dur, .. } if dur % 5 == 0))
                    .count();
                let runs: usize = a.processes.iter().flat_map(|p| &p.threads).map(|t| t.runs.len()).sum();
                prop_assert_eq!(runs, bursts);
            }
            if in_order && flips.is_empty() {
                // The owners' spans were merged in time order.
                for t in a.processes.iter().flat_map(|p| &p.threads) {
                    let keys: Vec<_> = t
                        .spans
                        .iter()
                        .filter(|s| s.kind != SpanKind::Annotation)
                        .map(|s| (s.ts, std::cmp::Reverse(s.dur)))
                        .collect();
                    prop_assert!(keys.is_sorted(), "thread {}: spans out of order", t.tid);
                }
            }
            let b = read_file_with(&path, decode_partials).expect("simple");
            prop_assert_eq!(everything(a), everything(b));
        }
    }

    /// The batched decoder and the simple one agree.
    #[test]
    fn both_decoders_agree_on_the_sample_recordings() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces");
        let mut n = 0;
        for dir in std::fs::read_dir(&root).expect("traces/") {
            for f in super::super::trace_files(&dir.expect("entry").path()).expect("files") {
                let mut a = read_file_with(&f, decode_batched).expect("batched");
                let mut b = read_file_with(&f, decode_partials).expect("simple");
                a.finalize();
                b.finalize();
                let strings = |t: &Timeline| {
                    t.strings
                        .iter()
                        .map(|(_, s)| s.to_string())
                        .collect::<Vec<_>>()
                };
                assert_eq!(strings(&a), strings(&b));
                let rest = |t: &Timeline| {
                    format!(
                        "{:?}",
                        (
                            &t.processes,
                            &t.gpus,
                            &t.ooms,
                            &t.notes,
                            t.realtime_offset_ns
                        )
                    )
                };
                assert_eq!(rest(&a), rest(&b), "{}", f.display());
                n += 1;
            }
        }
        assert!(n >= 3);
    }

    #[test]
    fn a_full_disk_is_not_called_the_size_cap() {
        let full = loss_warning(7, state::DISK_FULL | state::STOPPED, 3).unwrap();
        assert!(
            full.contains("disk was full") && !full.contains("max-mb"),
            "{full}"
        );
        let limit = loss_warning(7, state::FILE_LIMIT | state::STOPPED, 0).unwrap();
        assert!(limit.contains("ulimit -f"), "{limit}");
        let cap = loss_warning(7, state::CAP_REACHED, 5).unwrap();
        assert!(cap.contains("raise --max-mb"), "{cap}");
        assert!(!loss_warning(7, 0, 5).unwrap().contains("max-mb"));
        assert_eq!(loss_warning(7, 0, 0), None);
    }
}
