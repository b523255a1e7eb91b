//! Reading a recording while it is being written (`stallscope top`, the
//! metrics exporter).
//!
//! Records are published one by one: each chunk release-stores its committed
//! length after every record (see the format crate). So a reader that
//! remembers, per chunk, how many committed bytes it has decoded can read only
//! what was added since its last look. This reader keeps that cursor for each
//! chunk of each file, finds new files (new processes) in the directory on
//! every poll, and keeps only a sliding window of recent events in memory:
//! older ones are dropped once the caller has counted them (`prune`).
//!
//! A chunk the flight recorder reuses gets a new claim sequence number; its
//! cursor then starts again from zero.

use std::path::{Path, PathBuf};

use memmap2::Mmap;
use rustc_hash::{FxHashMap, FxHashSet};
use stallscope_format::layout::{ChunkKind, flags};
use stallscope_format::reader::{Chunk, TraceView};
use stallscope_format::{FdClass, HostOp, Record};

use super::corr;
use super::decode::{
    Rec, Walk, api_span, burst_span, config_of, host_span, kernel_op, memcpy_op, memset_op, other,
    sample,
};
use super::file::{ApiNames, Names, pair_markers};
use super::partial::Partial;
use crate::model::{
    Gpu, GpuCapture, HostSpan, IoObject, Ns, Process, Source, SpanKind, Stream, Strings, Thread,
    Timeline,
};

/// How far one chunk has been read.
#[derive(Debug, Clone, Copy, Default)]
struct Cursor {
    seq: u64,
    /// Payload bytes decoded.
    pos: u32,
    /// Sealed and read to the end: never looked at again (unless recycled).
    done: bool,
}

/// One process's trace file, read incrementally.
struct LiveFile {
    path: PathBuf,
    file: std::fs::File,
    map: Option<Mmap>,
    flight: bool,
    cursors: Vec<Cursor>,
    strings: Strings,
    names: Names,
    api: ApiNames,
    /// Sorted by id.
    objects: Vec<IoObject>,
    /// The window's events.
    acc: Partial,
    pid: u32,
    ppid: u32,
    cmdline: String,
    hostname: String,
    start: Ns,
    end_mono: u64,
    min_span_ns: u64,
    sample_hz: u32,
    /// Records dropped at the size cap or by a full disk (header + thread slots).
    dropped: u64,
    /// GPU records CUPTI dropped, summed as they are read.
    gpu_dropped: u64,
    overwritten: u64,
    gpu_active: bool,
    realtime_offset: Option<i64>,
}

/// What one poll read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PollStats {
    pub files: usize,
    pub new_files: usize,
    pub records: u64,
    pub bytes: u64,
}

/// Time spent in I/O calls on regular files, per filesystem and per file,
/// counted once as the spans are read (the window forgets them, this does not).
#[derive(Debug, Clone, Default)]
pub struct IoTotals {
    pub by_fs: FxHashMap<&'static str, Ns>,
    pub by_file: FxHashMap<String, Ns>,
}

/// Adds `wait` of span `span` to the I/O totals if it is a file's I/O.
fn count_file_io(
    objects: &[IoObject],
    strings: &Strings,
    io: &mut IoTotals,
    span: &HostSpan,
    wait: Ns,
) {
    if let SpanKind::Host(op) = span.kind
        && is_file_io(op)
        && let Ok(i) = objects.binary_search_by_key(&span.id, |o| o.id)
        && objects[i].is_storage()
    {
        let o = &objects[i];
        *io.by_fs
            .entry(stallscope_format::fs_name(o.fs_magic))
            .or_default() += wait;
        let path = o.label(strings);
        match io.by_file.get_mut(path.as_ref()) {
            Some(t) => *t += wait,
            None => {
                io.by_file.insert(path.into_owned(), wait);
            }
        }
    }
}

/// Reads a recording directory incrementally; see the module notes.
pub struct LiveReader {
    dir: PathBuf,
    files: Vec<LiveFile>,
    known: FxHashSet<PathBuf>,
    /// Latest event time seen in any file.
    latest: Ns,
    io: IoTotals,
    records: u64,
}

impl LiveReader {
    pub fn new(dir: impl Into<PathBuf>) -> LiveReader {
        LiveReader {
            dir: dir.into(),
            files: Vec::new(),
            known: FxHashSet::default(),
            latest: 0,
            io: IoTotals::default(),
            records: 0,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Reads what was committed since the last poll, in every file of the
    /// directory (new files included). A file whose header is not complete
    /// yet is tried again on the next poll.
    pub fn poll(&mut self) -> PollStats {
        let mut st = PollStats::default();
        if let Ok(paths) = super::trace_files(&self.dir) {
            for p in paths {
                if self.known.contains(&p) {
                    continue;
                }
                if let Some(f) = LiveFile::open(&p) {
                    self.known.insert(p);
                    self.files.push(f);
                    st.new_files += 1;
                }
            }
        }
        for f in &mut self.files {
            let (n, bytes) = f.poll(&mut self.io);
            st.records += n;
            st.bytes += bytes;
            if let Some(l) = f.acc.last {
                self.latest = self.latest.max(l);
            }
        }
        st.files = self.files.len();
        self.records += st.records;
        st
    }

    /// Latest event time seen (CLOCK_MONOTONIC ns).
    pub fn latest(&self) -> Ns {
        self.latest
    }

    /// Records read since the start.
    pub fn records(&self) -> u64 {
        self.records
    }

    pub fn io_totals(&self) -> &IoTotals {
        &self.io
    }

    /// Records lost so far: dropped at the size cap or a full disk, dropped
    /// by CUPTI, and overwritten by the flight recorder.
    pub fn lost_records(&self) -> u64 {
        self.files
            .iter()
            .map(|f| f.dropped + f.gpu_dropped + f.overwritten)
            .sum()
    }

    /// True when every process has exited (and there is at least one): it
    /// said so in its header, or (killed) it is gone from this machine.
    pub fn all_exited(&self) -> bool {
        !self.files.is_empty()
            && self
                .files
                .iter()
                .all(|f| f.end_mono != 0 || !pid_alive(f.pid))
    }

    /// The command line of the first process (the job).
    pub fn command(&self) -> Option<&str> {
        self.files
            .iter()
            .min_by_key(|f| (f.start, f.pid))
            .map(|f| f.cmdline.as_str())
    }

    /// Drops events that ended before `cutoff`, so memory stays bounded.
    /// Lists are in time order (nearly: a thread's spans come from a few
    /// chunk owners), so the old events are a prefix, found by bisection;
    /// it is cut once it is half the list, so each event is moved about
    /// once, and a poll costs what it read, not the window's size.
    pub fn prune(&mut self, cutoff: Ns) {
        for f in &mut self.files {
            let a = &mut f.acc;
            for (_, t) in &mut a.threads {
                drop_prefix(&mut t.spans, |s| s.end() < cutoff);
                drop_prefix(&mut t.samples, |s| s.ts < cutoff);
                drop_prefix(&mut t.runs, |r| r.ts + r.dur < cutoff);
            }
            for (_, g) in &mut a.gpus {
                for (_, ops) in &mut g.streams {
                    drop_prefix(ops, |o| o.end < cutoff);
                }
                drop_prefix(&mut g.syncs, |s| s.end < cutoff);
                drop_prefix(&mut g.memory, |m| m.ts < cutoff);
            }
            drop_prefix(&mut a.markers, |m| (m.ts as Ns) < cutoff);
            drop_prefix(&mut a.ooms, |o| o.ts < cutoff);
            a.notes.clear();
            a.errors.clear();
            a.clocks.truncate(1);
        }
    }

    /// The window's events as one timeline, ready for the analyses.
    pub fn timeline(&self) -> Timeline {
        self.timeline_since(Ns::MIN)
    }

    /// The events that end at `from` or later, as one timeline.
    pub fn timeline_since(&self, from: Ns) -> Timeline {
        let name = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.dir.display().to_string());
        let mut parts: Vec<Timeline> = self.files.iter().map(|f| f.timeline(from)).collect();
        let _ = corr::make_unique(&mut parts);
        let mut tl = Timeline::new(Source::Native, name);
        for p in parts {
            super::merge(&mut tl, p);
        }
        tl.finalize();
        tl
    }
}

impl LiveFile {
    fn open(path: &Path) -> Option<LiveFile> {
        let file = std::fs::File::open(path).ok()?;
        // SAFETY: read-only mapping; the validating reader checks every byte
        // it uses, and a producer appending only adds bytes.
        let map = unsafe { Mmap::map(&file) }.ok()?;
        let view = TraceView::parse(&map).ok()?;
        let h = view.header;
        let mut strings = Strings::new();
        let names = Names::new(&mut strings);
        Some(LiveFile {
            path: path.to_path_buf(),
            flight: h.flags & flags::FLIGHT_RECORDER != 0,
            cursors: Vec::new(),
            strings,
            names,
            api: ApiNames::new(),
            objects: Vec::new(),
            acc: Partial::default(),
            pid: h.pid,
            ppid: h.ppid,
            cmdline: h.command_line(),
            hostname: h.hostname.clone(),
            start: super::decode::ns(h.start_mono_ns),
            end_mono: h.end_mono_ns,
            min_span_ns: h.min_span_ns,
            sample_hz: h.sample_hz,
            dropped: 0,
            gpu_dropped: 0,
            overwritten: 0,
            gpu_active: false,
            realtime_offset: None,
            file,
            map: Some(map),
        })
    }

    /// Reads the records committed since the last poll: (records, bytes).
    fn poll(&mut self, io: &mut IoTotals) -> (u64, u64) {
        // The file grows as the producer claims chunks: map it again then.
        let len = self.file.metadata().map(|m| m.len()).unwrap_or(0);
        if self.map.as_ref().is_none_or(|m| (m.len() as u64) < len) {
            // SAFETY: as in `open`.
            if let Ok(m) = unsafe { Mmap::map(&self.file) } {
                self.map = Some(m);
            }
        }
        let Some(map) = self.map.take() else {
            return (0, 0);
        };
        let r = self.read_new(&map, io);
        self.map = Some(map);
        r
    }

    fn read_new(&mut self, map: &Mmap, io: &mut IoTotals) -> (u64, u64) {
        let Ok(view) = TraceView::parse(map) else {
            return (0, 0);
        };
        let h = &view.header;
        self.end_mono = h.end_mono_ns;
        self.overwritten = h.overwritten;
        self.dropped = h.dropped + view.threads().iter().map(|t| t.dropped).sum::<u64>();
        let n = view.chunk_positions() as usize;
        if self.cursors.len() < n {
            self.cursors.resize(n, Cursor::default());
        }
        // Thread chunks are looked at before meta chunks: a string or fd a
        // thread record names was committed before that record, so it is in
        // the meta chunks read after it.
        let mut thread_chunks: Vec<Chunk> = Vec::new();
        let mut meta_chunks: Vec<Chunk> = Vec::new();
        for i in 0..n {
            let cur = self.cursors[i];
            if cur.done && !self.flight {
                continue;
            }
            let Ok(Some(c)) = view.chunk(i as u32) else {
                continue;
            };
            let cur = &mut self.cursors[i];
            if c.seq != cur.seq || c.payload.len() < cur.pos as usize {
                *cur = Cursor {
                    seq: c.seq,
                    ..Cursor::default()
                };
            }
            if cur.done || c.payload.len() == cur.pos as usize {
                cur.done = c.state == stallscope_format::layout::chunk_state::SEALED;
                continue;
            }
            let rest = Chunk {
                offset: c.offset + cur.pos as u64,
                payload: &c.payload[cur.pos as usize..],
                ..c
            };
            cur.pos = c.payload.len() as u32;
            match c.kind {
                ChunkKind::Meta => meta_chunks.push(rest),
                ChunkKind::Thread => thread_chunks.push(rest),
            }
        }
        let mut records = 0u64;
        let mut bytes = 0u64;
        for c in &meta_chunks {
            bytes += c.payload.len() as u64;
            for r in c.records() {
                records += 1;
                match r {
                    Ok((_, Record::String { id, text })) => {
                        let s = self.strings.intern(&String::from_utf8_lossy(text));
                        self.names.insert(id, s);
                    }
                    Ok((_, Record::Object(o))) => {
                        let obj = IoObject {
                            id: o.obj,
                            class: FdClass::from_code(o.class),
                            fs_magic: o.fs_magic,
                            dev: o.dev,
                            ino: o.ino,
                            path: self.names.get(o.path),
                            fd: o.fd,
                        };
                        match self.objects.binary_search_by_key(&o.obj, |x| x.id) {
                            Ok(i) => self.objects[i] = obj,
                            Err(i) => self.objects.insert(i, obj),
                        }
                    }
                    Ok((_, Record::ApiName(a))) => {
                        self.api.insert(a.domain, a.cbid, self.names.get(a.name));
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
        }
        for c in &thread_chunks {
            bytes += c.payload.len() as u64;
            records += self.decode(c, io);
        }
        (records, bytes)
    }

    /// Decodes new thread records into the window; counts I/O time.
    fn decode(&mut self, c: &Chunk, io: &mut IoTotals) -> u64 {
        let p = &mut self.acc;
        let names = &self.names;
        let mut last = p.last;
        let mut n = 0u64;
        // Last-hit caches: a chunk feeds one or two threads, and kernels
        // share a few launch shapes.
        let mut thread = (u32::MAX, 0usize);
        let mut cfg: Option<(crate::model::LaunchConfig, u32, u32)> = None;
        let mut w = Walk::new(c);
        while let Some(r) = w.next() {
            n += 1;
            match r {
                Rec::Span(s) => {
                    let Some(span) = host_span(&s) else {
                        continue;
                    };
                    last = last.max(Some(span.end()));
                    count_file_io(&self.objects, &self.strings, io, &span, span.dur);
                    if thread.0 != c.tid {
                        thread = (c.tid, p.thread_index(c.tid));
                    }
                    p.threads[thread.1].1.spans.push(span);
                }
                Rec::Other(Record::Burst(b)) => {
                    if thread.0 != c.tid {
                        thread = (c.tid, p.thread_index(c.tid));
                    }
                    let t = &mut p.threads[thread.1].1;
                    let Some(span) = burst_span(&b, &mut t.runs) else {
                        continue;
                    };
                    last = last.max(Some(span.end()));
                    let busy = b.busy.min(Ns::MAX as u64) as Ns;
                    count_file_io(&self.objects, &self.strings, io, &span, busy);
                    t.spans.push(span);
                }
                Rec::Api(a) => {
                    let mut span = api_span(&a);
                    let domain = if span.kind == SpanKind::CudaRuntime {
                        1
                    } else {
                        2
                    };
                    span.id = match self.api.get(domain, span.id) {
                        0 => self.strings.intern(&format!(
                            "{}#{}",
                            if domain == 1 {
                                "cudaRuntime"
                            } else {
                                "cuDriver"
                            },
                            span.id
                        )),
                        name => name,
                    };
                    last = last.max(Some(span.end()));
                    if thread.0 != a.tid {
                        thread = (a.tid, p.thread_index(a.tid));
                    }
                    p.threads[thread.1].1.spans.push(span);
                }
                Rec::Sample(s) => {
                    last = last.max(Some(super::decode::ns(s.ts)));
                    p.thread(s.tid).samples.push(sample(&s));
                }
                Rec::Kernel(k) => {
                    let g = p.gpu(k.device);
                    let shape = config_of(&k);
                    let launch = match cfg {
                        Some((c, dev, id)) if c == shape && dev == k.device => id,
                        _ => {
                            let id = g.config(shape);
                            cfg = Some((shape, k.device, id));
                            id
                        }
                    };
                    let s = g.stream(k.stream);
                    g.streams[s].1.push(kernel_op(&k, launch, names));
                    self.gpu_active = true;
                }
                Rec::Other(Record::Memcpy(m)) => {
                    let g = p.gpu(m.device);
                    let s = g.stream(m.stream);
                    g.streams[s].1.push(memcpy_op(&m, names));
                    self.gpu_active = true;
                }
                Rec::Other(Record::Memset(m)) => {
                    let g = p.gpu(m.device);
                    let s = g.stream(m.stream);
                    g.streams[s].1.push(memset_op(&m, names));
                }
                Rec::Other(Record::GpuDropped(d)) => self.gpu_dropped += d.count,
                Rec::Other(Record::Clock(c)) => {
                    if self.realtime_offset.is_none() {
                        self.realtime_offset =
                            Some((c.real_ns as i64).wrapping_sub(c.mono_ns as i64));
                    }
                }
                Rec::Other(r) => other(r, names, p),
            }
        }
        p.last = last;
        n
    }

    /// The window's events of this process from `from` on, as the batch
    /// reader builds them.
    fn timeline(&self, from: Ns) -> Timeline {
        let a = &self.acc;
        let mut tl = Timeline::new(Source::Native, self.path.display().to_string());
        let mut threads: Vec<Thread> = a
            .threads
            .iter()
            .map(|(tid, t)| Thread {
                tid: *tid,
                name: t.name.map_or(0, |n| n.1),
                spans: since(&t.spans, |s| s.end() < from),
                samples: since(&t.samples, |s| s.ts < from),
                runs: since(&t.runs, |r| r.ts + r.dur < from),
                ..Default::default()
            })
            .collect();
        pair_markers(&a.markers, &self.names, &mut |tid, span| match threads
            .iter_mut()
            .find(|t| t.tid == tid)
        {
            Some(t) => t.spans.push(span),
            None => threads.push(Thread {
                tid,
                spans: vec![span],
                ..Default::default()
            }),
        });
        let end = if self.end_mono != 0 {
            super::decode::ns(self.end_mono)
        } else {
            a.last.unwrap_or(self.start).max(self.start)
        };
        tl.processes.push(Process {
            pid: self.pid,
            ppid: self.ppid,
            cmdline: self.cmdline.clone(),
            hostname: self.hostname.clone(),
            start: self.start,
            end,
            exited_cleanly: self.end_mono != 0,
            threads,
            objects: self.objects.clone(),
            gpu_capture: if self.gpu_active {
                GpuCapture::Active
            } else {
                GpuCapture::NotAttempted
            },
            dropped_records: self.dropped,
            span_threshold_ns: self.min_span_ns,
            sample_hz: self.sample_hz,
            ..Default::default()
        });
        for (id, g) in &a.gpus {
            tl.gpus.push(Gpu {
                id: *id,
                name: self.strings.get(g.name).to_string(),
                memory_bytes: g.memory_bytes,
                sm_count: g.sm_count,
                cc: g.cc,
                arch_name: String::new(),
                // The shim traces CUDA only.
                hip: false,
                streams: g
                    .streams
                    .iter()
                    .map(|(sid, ops)| Stream {
                        id: *sid as u64,
                        ops: since(ops, |o| o.end < from),
                    })
                    .collect(),
                launch_configs: g.launch_configs.clone(),
                syncs: since(&g.syncs, |s| s.end < from),
                memory: since(&g.memory, |m| m.ts < from),
                dropped_records: g.dropped,
                comm_elems: Default::default(),
            });
        }
        tl.ooms = a.ooms.clone();
        tl.realtime_offset_ns = self.realtime_offset;
        tl.strings = self.strings.clone();
        tl
    }
}

/// The events after the leading ones that `old` says are old.
fn since<T: Clone>(v: &[T], old: impl Fn(&T) -> bool) -> Vec<T> {
    v[v.partition_point(old)..].to_vec()
}

/// Removes the leading events that `old` says are old, once they are at
/// least half of `v` (see `LiveReader::prune`).
fn drop_prefix<T>(v: &mut Vec<T>, old: impl Fn(&T) -> bool) {
    let k = v.partition_point(old);
    if k > 0 && k * 2 >= v.len() {
        v.drain(..k);
    }
}

/// True while process `pid` exists (on this machine).
fn pid_alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid as i32, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Calls that move file data (their time is I/O wait when the fd is a file).
fn is_file_io(op: HostOp) -> bool {
    matches!(
        op,
        HostOp::Read
            | HostOp::Pread
            | HostOp::Readv
            | HostOp::Preadv
            | HostOp::Write
            | HostOp::Pwrite
            | HostOp::Fsync
            | HostOp::Fdatasync
            | HostOp::Open
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use stallscope_format::layout::{Geometry, HeaderInit, encode_header};
    use stallscope_format::records::Span;
    use stallscope_format::writer::{ChunkWriter, Claim, Region};

    /// A trace file being written, as the shim writes it.
    struct Producer {
        _map: memmap2::MmapMut,
        region: Region,
        chunk: ChunkWriter,
    }

    impl Producer {
        fn create(path: &Path, pid: u32) -> Producer {
            Producer::with(path, pid, 8 << 20, 64 * 1024, false)
        }

        fn with(path: &Path, pid: u32, capacity: u64, chunk: u32, flight: bool) -> Producer {
            let geo = Geometry::new(capacity, chunk, 16).expect("geometry");
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(path)
                .expect("create");
            file.set_len(geo.chunk_offset(geo.chunk_count))
                .expect("size");
            // SAFETY: a fresh file of that size, mapped once.
            let mut map = unsafe { memmap2::MmapMut::map_mut(&file).expect("map") };
            let init = HeaderInit {
                capacity,
                pid,
                ppid: 1,
                start_mono_ns: 1_000,
                flags: if flight { flags::FLIGHT_RECORDER } else { 0 },
                ..Default::default()
            };
            encode_header(&mut map, &init, &geo);
            // SAFETY: the mapping covers the geometry and holds the header.
            let region = unsafe { Region::new(map.as_mut_ptr(), geo, flight) };
            let Claim::Chunk(chunk) = region.claim_chunk(ChunkKind::Thread, pid, &mut |_, _| true)
            else {
                panic!("no chunk")
            };
            Producer {
                _map: map,
                region,
                chunk,
            }
        }

        /// Seals the chunk and claims another (the flight recorder reuses
        /// the oldest when the file is full).
        fn next_chunk(&mut self, pid: u32) {
            // SAFETY: this thread owns the chunk writer.
            unsafe { self.chunk.seal() };
            let Claim::Chunk(c) = self
                .region
                .claim_chunk(ChunkKind::Thread, pid, &mut |_, _| true)
            else {
                panic!("no chunk")
            };
            self.chunk = c;
        }

        fn spans(&mut self, from_ms: u64, n: u64) {
            for i in 0..n {
                let s = Span {
                    op: HostOp::Sleep as u8,
                    obj: 0,
                    ts: (from_ms + i) * 1_000_000,
                    dur: 500_000,
                    bytes: 0,
                };
                // SAFETY: this thread owns the chunk writer.
                assert!(unsafe { self.chunk.write(Span::LEN, |b: &mut [u8]| s.encode(b)) });
            }
        }
    }

    fn spans(tl: &Timeline) -> Vec<(u32, usize)> {
        tl.processes
            .iter()
            .map(|p| (p.pid, p.threads.iter().map(|t| t.spans.len()).sum()))
            .collect()
    }

    #[test]
    fn each_poll_reads_only_new_records_and_finds_new_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut a = Producer::create(&dir.path().join("1.sst"), 1);
        a.spans(10, 3);
        let mut r = LiveReader::new(dir.path());
        let st = r.poll();
        assert_eq!((st.new_files, st.records), (1, 3));
        a.spans(20, 2);
        let st = r.poll();
        assert_eq!((st.new_files, st.records), (0, 2));
        assert_eq!(r.poll().records, 0, "nothing new, nothing read");
        // A new process appears.
        let mut b = Producer::create(&dir.path().join("2.sst"), 2);
        b.spans(30, 1);
        a.spans(40, 1);
        let st = r.poll();
        assert_eq!((st.files, st.new_files, st.records), (2, 1, 2));
        assert_eq!(spans(&r.timeline()), vec![(1, 6), (2, 1)]);
        assert_eq!(r.latest(), 40_500_000);
        // The window forgets what ended before the cutoff.
        r.prune(25_000_000);
        assert_eq!(spans(&r.timeline()), vec![(1, 1), (2, 1)]);
        assert_eq!(r.records(), 7);
    }

    #[test]
    fn flight_recorder_chunks_reused_under_the_reader_are_read_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("1.sst");
        // Four 4 KiB chunks (126 spans each) after the header and 16 slots.
        let capacity = 32 * 1024 + 4 * 4096;
        let mut p = Producer::with(&path, 1, capacity, 4096, true);
        let mut r = LiveReader::new(dir.path());
        let per_chunk = ((4096 - 64) / Span::LEN) as u64;
        let mut read = 0;
        for round in 0..20 {
            p.spans(round * 1000, per_chunk);
            read += r.poll().records;
            p.next_chunk(1);
        }
        assert_eq!(read, 20 * per_chunk, "every record read once");
        assert!(std::fs::metadata(&path).expect("stat").len() <= capacity);
        assert!(r.lost_records() >= 15 * per_chunk, "{}", r.lost_records());
    }
}
