//! Record decoding shared by the native reader's two decoders: walking a
//! chunk's records (the frequent kinds without the generic enum), and turning
//! records into model events. `batch` is the reader's decoder; the simple one
//! here, into per-task partials, is kept as the tests' reference for it.

use stallscope_format::reader::Chunk;
use stallscope_format::records::{Api, Burst, Kernel, Sample as SampleRec, Span, memory_op};
use stallscope_format::{FormatError, HostOp, Record};

use super::file::{ApiNames, Names};
use super::partial::Partial;
use crate::model::RunSpan;
use crate::model::{
    CopyKind, GpuOp, GpuOpKind, HostSpan, LaunchConfig, MemEvent, MemKind, Ns, Oom, Sample,
    SpanKind, SyncEvent, SyncKind,
};

/// One record; the frequent kinds are decoded without the generic enum.
pub(super) enum Rec<'a> {
    Span(Span),
    Api(Api),
    Sample(SampleRec),
    Kernel(Kernel),
    Other(Record<'a>),
}

/// The records of a chunk in order. Records are validated exactly as the
/// format's `RecordIter` does (anything unusual goes through it); the first
/// invalid record ends the chunk with its error, in `error`.
pub(super) struct Walk<'a> {
    c: Chunk<'a>,
    pos: usize,
    pub(super) error: Option<FormatError>,
}

/// How far ahead of the record being decoded its chunk is fetched into the
/// cache (the chunk is read once, from memory the page cache filled).
const PREFETCH: usize = 2048;

impl<'a> Walk<'a> {
    pub(super) fn new(c: &Chunk<'a>) -> Walk<'a> {
        Walk {
            c: *c,
            pos: 0,
            error: None,
        }
    }

    #[inline(always)]
    pub(super) fn next(&mut self) -> Option<Rec<'a>> {
        let payload = self.c.payload;
        if self.pos >= payload.len() || self.error.is_some() {
            return None;
        }
        let rest = &payload[self.pos..];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is only a hint; it never faults, even past the
        // mapping's end.
        unsafe {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            _mm_prefetch::<_MM_HINT_T0>(rest.as_ptr().wrapping_add(PREFETCH).cast());
        }
        let len = if rest.len() >= 4 {
            u16::from_le_bytes([rest[0], rest[1]]) as usize
        } else {
            0
        };
        if len >= 8 && len % 8 == 0 && len <= rest.len() {
            let rec = &rest[..len];
            let fast = match rec[2] {
                Span::KIND if len >= Span::LEN => Some(Rec::Span(Span::decode(rec))),
                Api::KIND if len >= Api::LEN => Some(Rec::Api(Api::decode(rec))),
                SampleRec::KIND if len >= SampleRec::LEN => {
                    Some(Rec::Sample(SampleRec::decode(rec)))
                }
                Kernel::KIND if len >= Kernel::LEN => Some(Rec::Kernel(Kernel::decode(rec))),
                _ => None,
            };
            if fast.is_some() {
                self.pos += len;
                return fast;
            }
        }
        self.slow(rest, len)
    }

    /// The format's own iterator, started at this record.
    #[cold]
    fn slow(&mut self, rest: &'a [u8], len: usize) -> Option<Rec<'a>> {
        let here = Chunk {
            offset: self.c.offset + self.pos as u64,
            payload: rest,
            ..self.c
        };
        match here.records().next() {
            Some(Ok((_, r))) => {
                self.pos += len;
                Some(Rec::Other(r))
            }
            Some(Err(e)) => {
                self.error = Some(e);
                None
            }
            None => None,
        }
    }
}

/// The latest time the reader keeps: 2^60 ns (36 years of CLOCK_MONOTONIC).
/// A corrupt time past it is clamped, so that `ts + dur`, and the difference
/// of two times, never overflow in the model or the analyses.
pub(super) const MAX_NS: u64 = 1 << 60;

/// A time from the file, clamped to [0, MAX_NS].
#[inline]
pub(super) fn ns(t: u64) -> Ns {
    t.min(MAX_NS) as Ns
}

/// A duration from `ts`, cut so that the end stays within MAX_NS.
#[inline]
pub(super) fn dur(ts: u64, d: u64) -> Ns {
    d.min(MAX_NS - ts.min(MAX_NS)) as Ns
}

pub(super) fn config_of(k: &Kernel) -> LaunchConfig {
    LaunchConfig {
        grid: [k.grid_x, k.grid_y, k.grid_z],
        block: [k.block_x, k.block_y, k.block_z],
        shared_mem: k.shared_mem,
        registers: k.registers,
    }
}

/// A hooked call's span; `None` for an op code this reader does not know.
pub(super) fn host_span(s: &Span) -> Option<HostSpan> {
    Some(HostSpan {
        ts: ns(s.ts),
        dur: dur(s.ts, s.dur),
        arg: s.bytes,
        id: s.obj,
        kind: SpanKind::Host(HostOp::from_code(s.op)?),
    })
}

/// A run of short calls as one span over its extent, also noted in the
/// thread's `runs`; nothing for an op code this reader does not know.
pub(super) fn burst_span(b: &Burst, runs: &mut Vec<RunSpan>) -> Option<HostSpan> {
    let op = HostOp::from_code(b.op)?;
    let span = HostSpan {
        ts: ns(b.ts),
        dur: dur(b.ts, b.dur),
        arg: b.bytes,
        id: b.obj,
        kind: SpanKind::Host(op),
    };
    runs.push(RunSpan {
        ts: span.ts,
        dur: span.dur,
        op,
        obj: b.obj,
        calls: b.calls as u64,
        files: b.file_count(),
        busy_ns: b.busy,
    });
    Some(span)
}

pub(super) fn api_span(a: &Api) -> HostSpan {
    HostSpan {
        ts: ns(a.start),
        dur: dur(a.start, a.end.saturating_sub(a.start)),
        arg: a.correlation as u64,
        // The callback id, until the file's API names are known.
        id: a.cbid,
        kind: if a.domain == 2 {
            SpanKind::CudaDriver
        } else {
            SpanKind::CudaRuntime
        },
    }
}

/// Set in `arg` (above the 32-bit correlation id) of a CUDA API call's span
/// whose callback id has no name in the file: its `id` is still the callback
/// id, named by `file::name_unnamed` once the decoding is done (a fallback name
/// must be interned, and the decoders share the string table read-only).
pub(super) const UNNAMED: u64 = 1 << 63;

/// `api_span`, named from the file's API names (or tagged `UNNAMED`).
#[inline]
pub(super) fn named_api_span(a: &Api, api: &ApiNames) -> HostSpan {
    let mut span = api_span(a);
    match api.get(if a.domain == 2 { 2 } else { 1 }, a.cbid) {
        0 => span.arg |= UNNAMED,
        name => span.id = name,
    }
    span
}

pub(super) fn sample(s: &SampleRec) -> Sample {
    Sample {
        ts: ns(s.ts),
        cpu_ns: s.cpu_ns,
        run_delay_ns: s.run_delay_ns,
        majflt: s.majflt,
        minflt: s.minflt,
        state: s.state,
    }
}

pub(super) fn kernel_op(k: &Kernel, launch: u32, names: &Names) -> GpuOp {
    let (start, end) = (ns(k.start), ns(k.end.max(k.start)));
    let mut op = GpuOp::new(
        GpuOpKind::Kernel,
        start,
        end,
        k.correlation,
        names.get(k.name),
    );
    op.set_launch(launch);
    op
}

pub(super) fn memcpy_op(m: &stallscope_format::records::Memcpy, names: &Names) -> GpuOp {
    let (start, end) = (ns(m.start), ns(m.end.max(m.start)));
    let name = names.copy_name(m.copy_kind, m.src_kind, m.dst_kind);
    GpuOp::new(GpuOpKind::Memcpy, start, end, m.correlation, name)
        .with_bytes(m.bytes)
        .with_copy(
            CopyKind(m.copy_kind),
            MemKind(m.src_kind),
            MemKind(m.dst_kind),
        )
}

pub(super) fn memset_op(m: &stallscope_format::records::Memset, names: &Names) -> GpuOp {
    let (start, end) = (ns(m.start), ns(m.end.max(m.start)));
    let kind = MemKind(m.mem_kind);
    GpuOp::new(
        GpuOpKind::Memset,
        start,
        end,
        m.correlation,
        names.memset_name,
    )
    .with_bytes(m.bytes)
    .with_copy(CopyKind::UNKNOWN, kind, kind)
}

/// Records that feed the small lists (and thread names, devices, drops).
pub(super) fn other(r: Record, names: &Names, p: &mut Partial) {
    match r {
        Record::ThreadName(t) => {
            let acc = p.thread(t.tid);
            if acc.name.is_none_or(|n| n.0 <= t.ts) {
                acc.name = Some((t.ts, names.get(t.name)));
            }
        }
        Record::Clock(c) => p.clocks.push((c.mono_ns, c.real_ns)),
        Record::ProcessEnd(e) => p.end = p.end.max(Some(e.ts)),
        Record::Note(n) => p.notes.push(n),
        Record::Sync(s) => {
            let device = if s.device == u32::MAX { 0 } else { s.device };
            p.gpu(device).syncs.push(SyncEvent {
                start: ns(s.start),
                end: ns(s.end.max(s.start)),
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
        Record::Memory(m) => p.gpu(m.device).memory.push(MemEvent {
            ts: ns(m.ts),
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
            ts: ns(o.ts),
            pid: 0,
            tid: o.tid,
            requested: o.requested,
            free: o.free,
            total: o.total,
            api: format!("cbid {}", o.cbid),
        }),
        Record::GpuDropped(d) => p.gpu(d.device).dropped += d.count,
        Record::GpuStatus(s) => p.statuses.push(s),
        // Routed by the callers, or nothing to keep.
        Record::Span(_)
        | Record::Burst(_)
        | Record::Api(_)
        | Record::Sample(_)
        | Record::Kernel(_)
        | Record::Memcpy(_)
        | Record::Memset(_)
        | Record::String { .. }
        | Record::Object(_)
        | Record::ApiName(_)
        | Record::Overhead(_)
        | Record::Unknown { .. } => {}
    }
}

/// The simple decoder, the tests' reference for the batched one.
#[cfg(test)]
pub(super) mod simple {
    use std::path::Path;

    use rayon::prelude::*;
    use stallscope_format::TraceFile;
    use stallscope_format::reader::Chunk;

    use super::*;

    /// Chunks decoded by one task at least.
    const MIN_CHUNKS_PER_TASK: usize = 16;

    /// The simple way: decodes chunks into per-task partials and joins them.
    pub(in crate::read::native) fn decode_partials(
        chunks: &[&Chunk],
        names: &Names,
        file: &TraceFile,
        chunk_size: u64,
        path: &Path,
    ) -> Partial {
        let parts: Vec<Partial> = chunks
            .par_iter()
            .with_min_len(MIN_CHUNKS_PER_TASK)
            .fold(Partial::default, |mut p, c| {
                decode_chunk(c, names, &mut p, path);
                file.release(c.offset, chunk_size);
                p
            })
            .collect();
        Partial::concat(parts)
    }

    fn decode_chunk(c: &Chunk, names: &Names, p: &mut Partial, path: &Path) {
        let mut last = p.last;
        let mut w = Walk::new(c);
        while let Some(r) = w.next() {
            match r {
                Rec::Span(s) => {
                    let Some(span) = host_span(&s) else {
                        continue;
                    };
                    last = last.max(Some(span.end()));
                    p.thread(c.tid).spans.push(span);
                }
                Rec::Other(Record::Burst(b)) => {
                    let t = p.thread(c.tid);
                    if let Some(span) = burst_span(&b, &mut t.runs) {
                        last = last.max(Some(span.end()));
                        t.spans.push(span);
                    }
                }
                Rec::Api(a) => {
                    let span = named_api_span(&a, &names.api);
                    p.unnamed |= span.arg & UNNAMED != 0;
                    last = last.max(Some(span.end()));
                    p.thread(a.tid).spans.push(span);
                }
                Rec::Sample(s) => p.thread(s.tid).samples.push(sample(&s)),
                Rec::Kernel(k) => {
                    let g = p.gpu(k.device);
                    let launch = g.config(config_of(&k));
                    let s = g.stream(k.stream);
                    g.streams[s].1.push(kernel_op(&k, launch, names));
                }
                Rec::Other(Record::Memcpy(m)) => {
                    let g = p.gpu(m.device);
                    let s = g.stream(m.stream);
                    g.streams[s].1.push(memcpy_op(&m, names));
                }
                Rec::Other(Record::Memset(m)) => {
                    let g = p.gpu(m.device);
                    let s = g.stream(m.stream);
                    g.streams[s].1.push(memset_op(&m, names));
                }
                Rec::Other(r) => other(r, names, p),
            }
        }
        if let Some(e) = w.error {
            p.errors.push(format!(
                "skipped the rest of a damaged chunk: {}",
                e.in_file(path)
            ));
        }
        p.last = last;
    }
}
