//! Decoding thread chunks into per-thread and per-stream event lists.
//!
//! The lists are large (tens of millions of events), so they are written once,
//! in place: a first parallel pass counts the records of each chunk per
//! destination (a thread's spans or samples, a stream's ops), which fixes
//! where each chunk's records go; a second parallel pass decodes every chunk
//! straight into its slots of the final vectors. No event is copied after it
//! is decoded and no list grows by reallocation. If the two passes disagree
//! (a flight-recorder file rewritten while being read), the chunks are decoded
//! again the simple way, into per-task partials that are joined at the end.

use std::mem::MaybeUninit;
use std::path::Path;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use stallscope_format::TraceFile;
use stallscope_format::reader::Chunk;
use stallscope_format::records::{Api, Kernel, Sample as SampleRec, Span, memory_op};
use stallscope_format::{FormatError, HostOp, Record};

use super::file::Names;
use super::partial::Partial;
use crate::model::{
    CopyKind, GpuOp, GpuOpKind, HostSpan, LaunchConfig, MemEvent, MemKind, Ns, Oom, Sample,
    SpanKind, SyncEvent, SyncKind,
};

/// Chunks decoded by one task at least, on the fallback path.
const MIN_CHUNKS_PER_TASK: usize = 16;

/// One record; the frequent kinds are decoded without the generic enum.
enum Rec<'a> {
    Span(Span),
    Api(Api),
    Sample(SampleRec),
    Kernel(Kernel),
    Other(Record<'a>),
}

/// The records of a chunk in order. Records are validated exactly as the
/// format's `RecordIter` does (anything unusual goes through it); the first
/// invalid record ends the chunk with its error, in `error`.
struct Walk<'a> {
    c: Chunk<'a>,
    pos: usize,
    error: Option<FormatError>,
}

impl<'a> Walk<'a> {
    fn new(c: &Chunk<'a>) -> Walk<'a> {
        Walk {
            c: *c,
            pos: 0,
            error: None,
        }
    }

    #[inline(always)]
    fn next(&mut self) -> Option<Rec<'a>> {
        let payload = self.c.payload;
        if self.pos >= payload.len() || self.error.is_some() {
            return None;
        }
        let rest = &payload[self.pos..];
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

/// Where a record's event goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Dest {
    /// A thread's spans.
    Spans(u32),
    /// A thread's samples.
    Samples(u32),
    /// A (device, stream)'s ops.
    Ops(u32, u32),
}

#[inline(always)]
fn dest(r: &Rec, owner: u32) -> Option<Dest> {
    match r {
        Rec::Span(s) => HostOp::from_code(s.op).map(|_| Dest::Spans(owner)),
        Rec::Api(a) => Some(Dest::Spans(a.tid)),
        Rec::Sample(s) => Some(Dest::Samples(s.tid)),
        Rec::Kernel(k) => Some(Dest::Ops(k.device, k.stream)),
        Rec::Other(Record::Memcpy(m)) => Some(Dest::Ops(m.device, m.stream)),
        Rec::Other(Record::Memset(m)) => Some(Dest::Ops(m.device, m.stream)),
        Rec::Other(_) => None,
    }
}

fn config_of(k: &Kernel) -> LaunchConfig {
    LaunchConfig {
        grid: [k.grid_x, k.grid_y, k.grid_z],
        block: [k.block_x, k.block_y, k.block_z],
        shared_mem: k.shared_mem,
        registers: k.registers,
    }
}

/// A small map from destinations to slots, with a last-hit cache (a chunk
/// feeds a few destinations, mostly one at a time).
#[derive(Default)]
struct Slots {
    keys: Vec<Dest>,
    last: usize,
}

impl Slots {
    #[inline(always)]
    fn find(&mut self, d: Dest) -> Option<usize> {
        if self.keys.get(self.last) == Some(&d) {
            return Some(self.last);
        }
        let i = self.keys.iter().position(|k| *k == d)?;
        self.last = i;
        Some(i)
    }

    fn find_or_add(&mut self, d: Dest) -> usize {
        match self.find(d) {
            Some(i) => i,
            None => {
                self.keys.push(d);
                self.last = self.keys.len() - 1;
                self.last
            }
        }
    }
}

/// What the counting pass learns about one chunk.
#[derive(Default)]
struct Plan {
    dests: Slots,
    counts: Vec<u32>,
    /// Distinct (device, config) pairs, in order of first appearance.
    configs: Vec<(u32, LaunchConfig)>,
}

fn count_chunk(c: &Chunk) -> Plan {
    let mut p = Plan::default();
    let mut seen: FxHashMap<(u32, LaunchConfig), ()> = FxHashMap::default();
    let mut last_cfg: Option<(u32, LaunchConfig)> = None;
    // Errors are reported by the decoding pass, which stops at the same record.
    let mut w = Walk::new(c);
    while let Some(r) = w.next() {
        if let Some(d) = dest(&r, c.tid) {
            let i = p.dests.find_or_add(d);
            if i == p.counts.len() {
                p.counts.push(0);
            }
            p.counts[i] += 1;
        }
        if let Rec::Kernel(k) = &r {
            let key = (k.device, config_of(k));
            if last_cfg != Some(key) {
                last_cfg = Some(key);
                if seen.insert(key, ()).is_none() {
                    p.configs.push(key);
                }
            }
        }
    }
    p
}

/// Base address of each destination's vector, for the decoding tasks.
struct Bases(Vec<usize>);

/// A chunk's destinations: (global index, first slot, count).
type Layout = Vec<(usize, usize, u32)>;

/// The decoded lists: spans, samples or ops of each destination, and the launch
/// configurations of each device. None if the passes disagreed.
pub(super) fn decode_direct(
    chunks: &[&Chunk],
    names: &Names,
    file: &TraceFile,
    chunk_size: u64,
    path: &Path,
) -> Option<Partial> {
    let plans: Vec<Plan> = chunks
        .par_iter()
        .map(|c| {
            let p = count_chunk(c);
            file.release(c.offset, chunk_size);
            p
        })
        .collect();

    // Global destinations, slots per chunk, and launch configurations.
    let mut index: FxHashMap<Dest, usize> = FxHashMap::default();
    let mut dests: Vec<(Dest, usize)> = Vec::new();
    let mut layouts: Vec<Layout> = Vec::with_capacity(plans.len());
    let mut configs: FxHashMap<u32, (Vec<LaunchConfig>, FxHashMap<LaunchConfig, u32>)> =
        FxHashMap::default();
    for p in &plans {
        let mut layout = Layout::with_capacity(p.dests.keys.len());
        for (d, &n) in p.dests.keys.iter().zip(&p.counts) {
            let gi = *index.entry(*d).or_insert_with(|| {
                dests.push((*d, 0));
                dests.len() - 1
            });
            layout.push((gi, dests[gi].1, n));
            dests[gi].1 += n as usize;
        }
        layouts.push(layout);
        for (dev, c) in &p.configs {
            let (list, ids) = configs.entry(*dev).or_default();
            ids.entry(*c).or_insert_with(|| {
                list.push(*c);
                list.len() as u32 - 1
            });
        }
    }
    drop(plans);

    let mut spans: Vec<Vec<MaybeUninit<HostSpan>>> = Vec::new();
    let mut samples: Vec<Vec<MaybeUninit<Sample>>> = Vec::new();
    let mut ops: Vec<Vec<MaybeUninit<GpuOp>>> = Vec::new();
    // Per destination: (which list, index in it).
    let mut home: Vec<(u8, usize)> = Vec::with_capacity(dests.len());
    let mut bases = Vec::with_capacity(dests.len());
    for &(d, n) in &dests {
        match d {
            Dest::Spans(_) => {
                spans.push(Vec::with_capacity(n));
                bases.push(spans.last_mut().expect("pushed").as_mut_ptr() as usize);
                home.push((0, spans.len() - 1));
            }
            Dest::Samples(_) => {
                samples.push(Vec::with_capacity(n));
                bases.push(samples.last_mut().expect("pushed").as_mut_ptr() as usize);
                home.push((1, samples.len() - 1));
            }
            Dest::Ops(..) => {
                ops.push(Vec::with_capacity(n));
                bases.push(ops.last_mut().expect("pushed").as_mut_ptr() as usize);
                home.push((2, ops.len() - 1));
            }
        }
    }
    let bases = Bases(bases);
    let config_ids: FxHashMap<u32, &FxHashMap<LaunchConfig, u32>> =
        configs.iter().map(|(d, (_, ids))| (*d, ids)).collect();

    let decoded: Vec<(Partial, bool)> = chunks
        .par_iter()
        .zip(layouts.par_iter())
        .map(|(c, layout)| {
            let r = decode_into(c, layout, &dests, &bases, &config_ids, names, path);
            file.release(c.offset, chunk_size);
            r
        })
        .collect();
    if decoded.iter().any(|d| !d.1) {
        return None;
    }
    // Every slot was written exactly once (each chunk filled exactly the
    // slots counted for it, and the chunks' ranges tile each vector).
    let mut part = Partial::concat(decoded.into_iter().map(|d| d.0).collect());
    for (gi, &(d, n)) in dests.iter().enumerate() {
        let (list, i) = home[gi];
        match d {
            Dest::Spans(tid) => part.thread(tid).spans = assume_init(&mut spans[i], n),
            Dest::Samples(tid) => part.thread(tid).samples = assume_init(&mut samples[i], n),
            Dest::Ops(dev, stream) => {
                debug_assert_eq!(list, 2);
                let v = assume_init(&mut ops[i], n);
                let g = part.gpu(dev);
                let s = g.stream(stream);
                g.streams[s].1 = v;
            }
        }
    }
    for (dev, (list, _)) in configs {
        part.gpu(dev).set_configs(list);
    }
    Some(part)
}

/// Takes a fully written vector out of `v`.
fn assume_init<T: Copy>(v: &mut Vec<MaybeUninit<T>>, n: usize) -> Vec<T> {
    let mut v = std::mem::take(v);
    debug_assert!(v.capacity() >= n);
    // SAFETY: `decode_direct` checked that the first `n` slots were written;
    // MaybeUninit<T> has T's layout, so the allocation is a valid Vec<T>.
    unsafe {
        v.set_len(n);
        let mut v = std::mem::ManuallyDrop::new(v);
        Vec::from_raw_parts(v.as_mut_ptr() as *mut T, v.len(), v.capacity())
    }
}

/// Decodes one chunk into its slots; other records go to the returned partial.
/// False if the chunk did not produce exactly the counted records.
fn decode_into(
    c: &Chunk,
    layout: &Layout,
    dests: &[(Dest, usize)],
    bases: &Bases,
    config_ids: &FxHashMap<u32, &FxHashMap<LaunchConfig, u32>>,
    names: &Names,
    path: &Path,
) -> (Partial, bool) {
    let mut p = Partial::default();
    let mut slots = Slots {
        keys: layout.iter().map(|&(gi, _, _)| dests[gi].0).collect(),
        last: 0,
    };
    let mut written = vec![0u32; layout.len()];
    let mut ok = true;
    let mut last: Option<Ns> = None;
    let mut last_cfg: Option<(u32, LaunchConfig, u32)> = None;
    // Writes `v` into the next slot of destination `d`.
    macro_rules! put {
        ($d:expr, $ty:ty, $v:expr) => {{
            match slots.find($d) {
                Some(i) if written[i] < layout[i].2 => {
                    let (gi, first, _) = layout[i];
                    // SAFETY: slot `first + written[i]` of destination `gi`
                    // lies inside its vector's capacity (the counts sized
                    // it) and belongs to this chunk alone (the layouts give
                    // chunks disjoint ranges).
                    unsafe {
                        (bases.0[gi] as *mut $ty)
                            .add(first + written[i] as usize)
                            .write($v);
                    }
                    written[i] += 1;
                }
                _ => ok = false,
            }
        }};
    }
    let mut w = Walk::new(c);
    while let Some(r) = w.next() {
        match r {
            Rec::Span(s) => {
                let Some(span) = host_span(&s) else {
                    continue;
                };
                last = last.max(Some(span.end()));
                put!(Dest::Spans(c.tid), HostSpan, span);
            }
            Rec::Api(a) => {
                let span = api_span(&a);
                last = last.max(Some(span.end()));
                put!(Dest::Spans(a.tid), HostSpan, span);
            }
            Rec::Sample(s) => put!(Dest::Samples(s.tid), Sample, sample(&s)),
            Rec::Kernel(k) => {
                let cfg = config_of(&k);
                let launch = match last_cfg {
                    Some((dev, c, i)) if dev == k.device && c == cfg => i,
                    _ => {
                        let i = config_ids
                            .get(&k.device)
                            .and_then(|ids| ids.get(&cfg))
                            .copied();
                        match i {
                            Some(i) => {
                                last_cfg = Some((k.device, cfg, i));
                                i
                            }
                            None => {
                                ok = false;
                                u32::MAX
                            }
                        }
                    }
                };
                put!(
                    Dest::Ops(k.device, k.stream),
                    GpuOp,
                    kernel_op(&k, launch, names)
                );
            }
            Rec::Other(Record::Memcpy(m)) => {
                put!(Dest::Ops(m.device, m.stream), GpuOp, memcpy_op(&m, names));
            }
            Rec::Other(Record::Memset(m)) => {
                put!(Dest::Ops(m.device, m.stream), GpuOp, memset_op(&m, names));
            }
            Rec::Other(r) => other(r, names, &mut p),
        }
    }
    if let Some(e) = w.error {
        p.errors.push(format!(
            "skipped the rest of a damaged chunk: {}",
            e.in_file(path)
        ));
    }
    ok &= written.iter().zip(layout).all(|(w, l)| *w == l.2);
    p.last = last;
    (p, ok)
}

/// The fallback: decodes chunks into per-task partials and joins them.
pub(super) fn decode_partials(
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
            Rec::Api(a) => {
                let span = api_span(&a);
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

/// A hooked call's span; `None` for an op code this reader does not know.
fn host_span(s: &Span) -> Option<HostSpan> {
    Some(HostSpan {
        ts: s.ts as Ns,
        dur: s.dur as Ns,
        arg: s.bytes,
        id: s.obj,
        kind: SpanKind::Host(HostOp::from_code(s.op)?),
    })
}

fn api_span(a: &Api) -> HostSpan {
    HostSpan {
        ts: a.start as Ns,
        dur: a.end.saturating_sub(a.start) as Ns,
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

fn sample(s: &SampleRec) -> Sample {
    Sample {
        ts: s.ts as Ns,
        cpu_ns: s.cpu_ns,
        run_delay_ns: s.run_delay_ns,
        majflt: s.majflt,
        minflt: s.minflt,
        state: s.state,
    }
}

fn kernel_op(k: &Kernel, launch: u32, names: &Names) -> GpuOp {
    let (start, end) = (k.start as Ns, k.end.max(k.start) as Ns);
    GpuOp {
        launch,
        ..GpuOp::new(
            GpuOpKind::Kernel,
            start,
            end,
            k.correlation,
            names.get(k.name),
        )
    }
}

fn memcpy_op(m: &stallscope_format::records::Memcpy, names: &Names) -> GpuOp {
    let (start, end) = (m.start as Ns, m.end.max(m.start) as Ns);
    let name = names.copy_name(m.copy_kind, m.src_kind, m.dst_kind);
    GpuOp {
        bytes: m.bytes,
        copy: CopyKind(m.copy_kind),
        src: MemKind(m.src_kind),
        dst: MemKind(m.dst_kind),
        ..GpuOp::new(GpuOpKind::Memcpy, start, end, m.correlation, name)
    }
}

fn memset_op(m: &stallscope_format::records::Memset, names: &Names) -> GpuOp {
    let (start, end) = (m.start as Ns, m.end.max(m.start) as Ns);
    GpuOp {
        bytes: m.bytes,
        src: MemKind(m.mem_kind),
        dst: MemKind(m.mem_kind),
        ..GpuOp::new(
            GpuOpKind::Memset,
            start,
            end,
            m.correlation,
            names.memset_name,
        )
    }
}

/// Records that feed the small lists (and thread names, devices, drops).
fn other(r: Record, names: &Names, p: &mut Partial) {
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
        // Routed by the callers, or nothing to keep.
        Record::Span(_)
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
