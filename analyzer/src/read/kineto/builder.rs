//! Turns Kineto events, one at a time, into the timeline model.

use rustc_hash::FxHashMap as HashMap;

use crate::model::{
    CopyKind, Gpu, GpuCapture, GpuOp, GpuOpKind, HostSpan, LaunchConfig, MemEvent, MemKind, Ns,
    Oom, Precision, Process, Source, SpanKind, StrId, SyncEvent, Thread, Timeline,
};

use super::category::{self, Class, is_collective_kernel};
use super::event::{Args, Id, RawEvent};
use super::meta::{DeviceProps, Meta};

/// Grid, block, shared memory, registers: the dedup key of a launch config.
type LaunchKey = ([u32; 3], [u32; 3], u32, u32);

/// Synthetic pids/tids for ids that are not integers live at and above this,
/// far above real Linux ids (at most 2^22).
const SYNTHETIC_ID_BASE: u32 = 0xF000_0000;

#[derive(Default)]
struct Counts {
    no_ts: u64,
    negative_dur: u64,
    gpu_annotations: u64,
    other_phases: u64,
}

pub struct Builder {
    tl: Timeline,
    procs: HashMap<u32, usize>,
    threads: HashMap<(u32, u32), (usize, usize)>,
    last_thread: Option<((u32, u32), (usize, usize))>,
    gpus: HashMap<u32, usize>,
    streams: HashMap<(u32, u64), (usize, usize)>,
    launches: HashMap<(usize, LaunchKey), u32>,
    proc_names: HashMap<u32, String>,
    thread_names: HashMap<(u32, u32), String>,
    /// Recently interned names by [`name_slot`]: most events repeat a
    /// name seen shortly before, and long kernel names are costly to hash.
    name_cache: Box<[StrId; NAME_SLOTS]>,
    /// Copy and memory kinds by name id (and whether a memset), read from
    /// each name once: a few names recur thousands of times.
    copy_kinds: HashMap<(StrId, bool), (CopyKind, MemKind, MemKind)>,
    counts: Counts,
}

impl Builder {
    pub fn new(name: String) -> Builder {
        Builder {
            tl: Timeline::new(Source::Kineto, name),
            procs: HashMap::default(),
            threads: HashMap::default(),
            last_thread: None,
            gpus: HashMap::default(),
            streams: HashMap::default(),
            launches: HashMap::default(),
            proc_names: HashMap::default(),
            thread_names: HashMap::default(),
            name_cache: Box::new([0; NAME_SLOTS]),
            copy_kinds: HashMap::default(),
            counts: Counts::default(),
        }
    }

    pub fn add(&mut self, ev: &RawEvent<'_>) {
        match ev.ph.as_deref() {
            Some("X") => self.complete(ev),
            Some("M") => self.metadata(ev),
            Some("i") | Some("I") => self.instant(ev),
            // Flows (s/f/t) repeat the correlation ids that args already carry;
            // counters and anything else carry nothing the model holds.
            Some("s") | Some("f") | Some("t") | Some("C") => {}
            _ => self.counts.other_phases += 1,
        }
    }

    fn complete(&mut self, ev: &RawEvent<'_>) {
        let Some(ts) = ev.ts else {
            self.counts.no_ts += 1;
            return;
        };
        let mut dur = ev.dur.map_or(0, |d| d.0);
        if dur < 0 {
            self.counts.negative_dur += 1;
            dur = 0;
        }
        let (ts, dur) = (ts.0, dur);
        let end = ts.saturating_add(dur);
        let name = ev.name.as_deref().unwrap_or("");
        let class = ev
            .cat
            .as_deref()
            .map_or(Class::Host(SpanKind::Other), category::classify);
        match class {
            Class::Host(kind) => {
                // ProfilerStep#N marks steps whatever category a version gave it.
                let kind = if name.starts_with("ProfilerStep#") {
                    SpanKind::Annotation
                } else {
                    kind
                };
                let arg = match kind {
                    SpanKind::CudaRuntime | SpanKind::CudaDriver => corr_of(&ev.args) as u64,
                    _ => 0,
                };
                let pid = self.id(ev.pid.as_ref());
                let tid = self.id(ev.tid.as_ref());
                let id = self.name_id(name);
                let (pi, ti) = self.thread(pid, tid);
                let p = &mut self.tl.processes[pi];
                p.start = p.start.min(ts);
                p.end = p.end.max(end);
                p.threads[ti].spans.push(HostSpan {
                    ts,
                    dur,
                    arg,
                    id,
                    kind,
                });
            }
            Class::Kernel | Class::Memcpy | Class::Memset => {
                self.gpu_op(class, ev, name, ts, end);
            }
            Class::Sync => {
                let device = self.device_of(ev);
                let gi = self.gpu(device);
                self.tl.gpus[gi].syncs.push(SyncEvent {
                    start: ts,
                    end,
                    corr: corr_of(&ev.args),
                    // -1 (no stream, e.g. Event Sync) becomes u64::MAX.
                    stream: ev.args.stream.unwrap_or(-1) as u64,
                    kind: category::sync_kind(name),
                });
            }
            Class::GpuAnnotation => self.counts.gpu_annotations += 1,
            Class::Skip => {}
        }
    }

    fn gpu_op(&mut self, class: Class, ev: &RawEvent<'_>, name: &str, start: Ns, end: Ns) {
        let device = self.device_of(ev);
        let stream = ev
            .args
            .stream
            .or_else(|| ev.tid.as_ref().and_then(Id::as_int))
            .unwrap_or(0) as u64;
        let (gi, si) = self.stream(device, stream);
        let a = &ev.args;
        let bytes = a.bytes.filter(|b| *b > 0).unwrap_or(0) as u64;
        let id = self.name_id(name);
        let kind = match class {
            Class::Memcpy => GpuOpKind::Memcpy,
            Class::Memset => GpuOpKind::Memset,
            _ => GpuOpKind::Kernel,
        };
        let mut op = GpuOp::new(kind, start, end, corr_of(a), id).with_bytes(bytes);
        match class {
            Class::Memcpy | Class::Memset => {
                let memset = class == Class::Memset;
                let (copy, src, dst) = *self.copy_kinds.entry((id, memset)).or_insert_with(|| {
                    if memset {
                        let dst = category::memset_kind(name);
                        (CopyKind::UNKNOWN, MemKind::UNKNOWN, dst)
                    } else {
                        category::memcpy_kinds(name)
                    }
                });
                op = op.with_copy(copy, src, dst);
            }
            _ => {
                if is_collective_kernel(name) {
                    op.set_precision(Precision::Comm);
                    if let Some(n) = a.msg_nelems.filter(|n| *n > 0) {
                        self.tl.gpus[gi]
                            .comm_elems
                            .insert((stream, start), n as u64);
                    }
                }
                if a.grid.is_some() || a.block.is_some() {
                    op.set_launch(self.launch_config(gi, a));
                }
            }
        }
        self.tl.gpus[gi].streams[si].ops.push(op);
    }

    /// `name`'s string id: from the cache when its slot holds it (checked by
    /// comparing the text), else interned and remembered there.
    #[inline]
    fn name_id(&mut self, name: &str) -> StrId {
        let slot = &mut self.name_cache[name_slot(name.as_bytes())];
        if self.tl.strings.get(*slot) == name {
            return *slot;
        }
        *slot = self.tl.strings.intern(name);
        *slot
    }

    fn launch_config(&mut self, gi: usize, a: &Args<'_>) -> u32 {
        let small = |v: Option<i64>| v.and_then(|x| u32::try_from(x).ok()).unwrap_or(0);
        let cfg = LaunchConfig {
            grid: a.grid.unwrap_or([0; 3]),
            block: a.block.unwrap_or([0; 3]),
            shared_mem: small(a.shared_memory),
            registers: small(a.registers),
        };
        self.intern_launch(gi, cfg)
    }

    fn intern_launch(&mut self, gi: usize, cfg: LaunchConfig) -> u32 {
        let key = (cfg.grid, cfg.block, cfg.shared_mem, cfg.registers);
        let configs = &mut self.tl.gpus[gi].launch_configs;
        *self.launches.entry((gi, key)).or_insert_with(|| {
            configs.push(cfg);
            (configs.len() - 1) as u32
        })
    }

    fn metadata(&mut self, ev: &RawEvent<'_>) {
        let Some(label) = ev.args.name.as_deref() else {
            return;
        };
        let pid = self.id(ev.pid.as_ref());
        match ev.name.as_deref() {
            Some("process_name") => {
                self.proc_names.insert(pid, label.to_owned());
            }
            Some("thread_name") => {
                let tid = self.id(ev.tid.as_ref());
                self.thread_names
                    .insert((pid, tid), label.trim().to_owned());
            }
            _ => {}
        }
    }

    /// PyTorch's memory profiler writes `[memory]` and `[OutOfMemory]` instants.
    fn instant(&mut self, ev: &RawEvent<'_>) {
        let (Some(ts), Some(name)) = (ev.ts, ev.name.as_deref()) else {
            return;
        };
        let a = &ev.args;
        // Device Type 0 is the CPU; -1 or a missing id is no device.
        let device = match (a.device_type, a.device_id) {
            (Some(t), Some(d)) if t != 0 && d >= 0 => u32::try_from(d).ok(),
            _ => None,
        };
        let Some(device) = device else { return };
        let bytes = a.mem_bytes.unwrap_or(0);
        match name {
            "[memory]" if bytes != 0 => {
                let gi = self.gpu(device);
                self.tl.gpus[gi].memory.push(MemEvent {
                    ts: ts.0,
                    bytes: bytes.unsigned_abs(),
                    address: a.addr.unwrap_or(0) as u64,
                    corr: 0,
                    alloc: bytes > 0,
                    kind: MemKind::DEVICE,
                });
            }
            "[OutOfMemory]" => {
                let pid = self.id(ev.pid.as_ref());
                let tid = self.id(ev.tid.as_ref());
                self.tl.ooms.push(Oom {
                    ts: ts.0,
                    pid,
                    tid,
                    requested: bytes.unsigned_abs(),
                    free: 0,
                    total: 0,
                    api: name.to_owned(),
                });
            }
            _ => {}
        }
    }

    /// A pid or tid as u32. Strings and out-of-range numbers get a synthetic
    /// id hashed from their text, so that pieces of one file parsed apart
    /// (see `parallel`) agree on it.
    #[inline]
    fn id(&mut self, id: Option<&Id<'_>>) -> u32 {
        match id {
            None => 0,
            // Kineto's pids and tids: plain small integers, twice per event.
            Some(&Id::Int(v)) if (0..i64::from(SYNTHETIC_ID_BASE)).contains(&v) => v as u32,
            Some(id) => text_id(id),
        }
    }

    fn device_of(&self, ev: &RawEvent<'_>) -> u32 {
        ev.args
            .device
            .or_else(|| ev.pid.as_ref().and_then(Id::as_int))
            .and_then(|d| u32::try_from(d).ok())
            .unwrap_or(0)
    }

    #[inline]
    fn thread(&mut self, pid: u32, tid: u32) -> (usize, usize) {
        // Events come in runs from one thread: skip the hash lookup then.
        if let Some((key, at)) = self.last_thread
            && key == (pid, tid)
        {
            return at;
        }
        self.thread_lookup(pid, tid)
    }

    fn thread_lookup(&mut self, pid: u32, tid: u32) -> (usize, usize) {
        if let Some(&at) = self.threads.get(&(pid, tid)) {
            self.last_thread = Some(((pid, tid), at));
            return at;
        }
        let pi = *self.procs.entry(pid).or_insert_with(|| {
            self.tl.processes.push(Process {
                pid,
                start: Ns::MAX,
                end: Ns::MIN,
                ..Process::default()
            });
            self.tl.processes.len() - 1
        });
        let threads = &mut self.tl.processes[pi].threads;
        threads.push(Thread {
            tid,
            ..Thread::default()
        });
        let at = (pi, threads.len() - 1);
        self.threads.insert((pid, tid), at);
        at
    }

    fn gpu(&mut self, device: u32) -> usize {
        *self.gpus.entry(device).or_insert_with(|| {
            self.tl.gpus.push(Gpu {
                id: device,
                ..Gpu::default()
            });
            self.tl.gpus.len() - 1
        })
    }

    fn stream(&mut self, device: u32, stream: u64) -> (usize, usize) {
        if let Some(&at) = self.streams.get(&(device, stream)) {
            return at;
        }
        let gi = self.gpu(device);
        let g = &mut self.tl.gpus[gi];
        g.stream_mut(stream);
        let si = g.streams.iter().position(|s| s.id == stream).unwrap_or(0);
        self.streams.insert((device, stream), (gi, si));
        (gi, si)
    }

    /// Appends everything `other` (the builder of a later piece of the same
    /// file) collected, as if its events had come through `add` here.
    pub fn absorb(&mut self, other: Builder) {
        let map = self.tl.strings.merge(&other.tl.strings);
        let remap = |id: u32| map.get(id as usize).copied().unwrap_or(0);
        for p in other.tl.processes {
            for t in p.threads {
                let (pi, ti) = self.thread(p.pid, t.tid);
                let dst = &mut self.tl.processes[pi];
                dst.start = dst.start.min(p.start);
                dst.end = dst.end.max(p.end);
                let spans = &mut dst.threads[ti].spans;
                spans.extend(t.spans.into_iter().map(|mut s| {
                    if s.kind.is_named() {
                        s.id = remap(s.id);
                    }
                    s
                }));
            }
        }
        for g in other.tl.gpus {
            let gi = self.gpu(g.id);
            let launch: Vec<u32> = g
                .launch_configs
                .iter()
                .map(|cfg| self.intern_launch(gi, *cfg))
                .collect();
            for st in g.streams {
                let (_, si) = self.stream(g.id, st.id);
                let ops = &mut self.tl.gpus[gi].streams[si].ops;
                ops.extend(st.ops.into_iter().map(|mut op| {
                    op.name = remap(op.name);
                    op.set_launch(
                        launch
                            .get(op.launch() as usize)
                            .copied()
                            .unwrap_or(u32::MAX),
                    );
                    op
                }));
            }
            let dst = &mut self.tl.gpus[gi];
            dst.syncs.extend(g.syncs);
            dst.memory.extend(g.memory);
            dst.comm_elems.extend(g.comm_elems);
        }
        self.tl.ooms.extend(other.tl.ooms);
        self.proc_names.extend(other.proc_names);
        self.thread_names.extend(other.thread_names);
        let (a, b) = (&mut self.counts, other.counts);
        a.no_ts += b.no_ts;
        a.negative_dur += b.negative_dur;
        a.gpu_annotations += b.gpu_annotations;
        a.other_phases += b.other_phases;
    }

    /// Applies the document's metadata, notes what was skipped, and sorts.
    pub fn finish(mut self, meta: Meta) -> Timeline {
        let gpu_active = self.tl.gpus.iter().any(|g| g.op_count() > 0);
        for p in &mut self.tl.processes {
            if let Some(n) = self.proc_names.remove(&p.pid) {
                p.cmdline = n;
            }
            p.rank = meta.rank;
            p.hostname = meta.host_name.clone().unwrap_or_default();
            // The profiler wrote a complete document.
            p.exited_cleanly = true;
            p.gpu_capture = if gpu_active {
                GpuCapture::Active
            } else {
                GpuCapture::NotAttempted
            };
            for t in &mut p.threads {
                if let Some(n) = self.thread_names.get(&(p.pid, t.tid)) {
                    t.name = self.tl.strings.intern(n);
                }
            }
        }
        let hip = self.tl.strings.iter().any(|(_, s)| HIP_CALLS.contains(&s));
        // ROCm traces may number the devices of their ops by the node's agent
        // (2, 9) and deviceProperties by the process's visible devices (0):
        // where every device described is the same model, that is the one.
        let same_model = meta
            .devices
            .windows(2)
            .all(|w| same_device_model(&w[0], &w[1]));
        for g in &mut self.tl.gpus {
            g.hip = hip;
            let described = meta.devices.iter().find(|d| d.id == g.id);
            if let Some(d) = described.or_else(|| meta.devices.first().filter(|_| same_model)) {
                g.name = d.name.clone();
                g.memory_bytes = d.memory_bytes;
                g.sm_count = d.sm_count;
                g.cc = d.cc;
                g.arch_name = d.arch_name.clone();
            }
        }
        self.tl.realtime_offset_ns = meta.base_time_ns.or_else(|| {
            // Without baseTimeNanoseconds, Kineto's ts are Unix microseconds.
            let (lo, _) = self.tl.extent()?;
            (lo > 1_000_000_000_000_000_000).then_some(0)
        });
        let c = &self.counts;
        if c.no_ts > 0 {
            self.tl
                .warn(format!("{} complete events without `ts` skipped", c.no_ts));
        }
        if c.negative_dur > 0 {
            self.tl.warn(format!(
                "{} events with a negative `dur` read as zero-length",
                c.negative_dur
            ));
        }
        if c.gpu_annotations > 0 {
            self.tl.info(format!(
                "{} GPU-side annotations (gpu_user_annotation) not kept",
                c.gpu_annotations
            ));
        }
        if c.other_phases > 0 {
            self.tl
                .info(format!("{} events of other phases skipped", c.other_phases));
        }
        if meta.world_size.is_some_and(|w| w > 1) {
            self.tl.info(format!(
                "rank {} of {}",
                meta.rank.map_or("?".into(), |r| r.to_string()),
                meta.world_size.unwrap_or(0)
            ));
        }
        self.tl.finalize();
        self.tl
    }
}

fn same_device_model(a: &DeviceProps, b: &DeviceProps) -> bool {
    (&a.name, a.cc, a.memory_bytes, a.sm_count, &a.arch_name)
        == (&b.name, b.cc, b.memory_bytes, b.sm_count, &b.arch_name)
}

/// Calls only a ROCm build of the profiler records: the trace's devices are
/// AMD GPUs (see `Gpu::hip`).
const HIP_CALLS: [&str; 6] = [
    "hipLaunchKernel",
    "hipModuleLaunchKernel",
    "hipExtModuleLaunchKernel",
    "hipMemcpyAsync",
    "hipMemsetAsync",
    "hipGraphLaunch",
];

/// The synthetic id of a pid or tid that is not a small integer (see `id`).
#[cold]
fn text_id(id: &Id<'_>) -> u32 {
    if let Some(v) = id.as_int().and_then(|v| u32::try_from(v).ok())
        && v < SYNTHETIC_ID_BASE
    {
        return v;
    }
    let text = match id {
        Id::Int(v) => v.to_string(),
        Id::Str(s) => s.to_string(),
    };
    // FNV-1a, folded into the synthetic range.
    let h = text.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    SYNTHETIC_ID_BASE | (h & !SYNTHETIC_ID_BASE)
}

/// Slots of the name cache (a power of two).
const NAME_SLOTS: usize = 512;

/// A name's cache slot, from its length and three of its 8-byte words
/// (start, middle, end): much cheaper than hashing all of a long name.
#[inline]
fn name_slot(b: &[u8]) -> usize {
    let n = b.len();
    let word = |at: usize| {
        b.get(at..at + 8)
            .map_or(0, |w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
    };
    let mix = if n >= 8 {
        word(0) ^ word(n / 2 - 4).rotate_left(21) ^ word(n - 8).rotate_left(42)
    } else {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(b);
        u64::from_le_bytes(w)
    };
    let h = (mix ^ n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> (64 - NAME_SLOTS.trailing_zeros())) as usize
}

/// The correlation id linking API calls and GPU work; 2021 traces without it
/// fall back to the external id, which links both sides the same way.
fn corr_of(a: &Args<'_>) -> u32 {
    a.correlation
        .or(a.external_id)
        .and_then(|c| u32::try_from(c).ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    #[test]
    fn names_sharing_a_cache_slot_keep_their_own_ids() {
        // Two names of one length that land in one slot, used alternately.
        let names: Vec<String> = (0..4096).map(|i| format!("void kernel_{i:04}()")).collect();
        let slot = name_slot(names[0].as_bytes());
        let other = names[1..]
            .iter()
            .find(|n| name_slot(n.as_bytes()) == slot)
            .expect("a colliding name");
        let mut b = Builder::new("t".into());
        let first = b.name_id(&names[0]);
        let second = b.name_id(other);
        assert_ne!(first, second);
        for _ in 0..3 {
            assert_eq!(b.name_id(&names[0]), first);
            assert_eq!(b.name_id(other), second);
        }
        assert_eq!(b.tl.strings.get(first), names[0]);
        assert_eq!(b.tl.strings.get(second), other.as_str());
        assert_eq!(b.name_id(""), 0);
        assert_eq!(b.name_id("ab"), b.tl.strings.intern("ab"));
    }

    #[test]
    fn copy_kinds_follow_each_name_and_class() {
        let ev = |cat: &str, name: &str| {
            format!(
                r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {{"stream": 7}}}}"#
            )
        };
        let up = ev("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)");
        let down = ev("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)");
        // One name as a memcpy and as a memset: each class reads it its way.
        let odd_copy = ev("gpu_memcpy", "Memcpy DtoD (Device -> Managed)");
        let odd_set = ev("gpu_memset", "Memcpy DtoD (Device -> Managed)");
        let set = ev("gpu_memset", "Memset (Device)");
        let events = [
            &up, &down, &up, &odd_copy, &odd_set, &set, &down, &odd_copy, &odd_set,
        ];
        let text = format!("[{}]", events.map(String::as_str).join(","));
        let mut b = Builder::new("t".into());
        super::super::document::parse_array(text.as_bytes(), &mut b).unwrap();
        let got: Vec<_> = b.tl.gpus[0].streams[0]
            .ops
            .iter()
            .map(|o| (o.copy(), o.src(), o.dst()))
            .collect();
        let u = (CopyKind::HTOD, MemKind::PAGEABLE, MemKind::DEVICE);
        let d = (CopyKind::DTOH, MemKind::DEVICE, MemKind::PINNED);
        let oc = (CopyKind::DTOD, MemKind::DEVICE, MemKind::MANAGED);
        let os = (CopyKind::UNKNOWN, MemKind::UNKNOWN, MemKind::UNKNOWN);
        let s = (CopyKind::UNKNOWN, MemKind::UNKNOWN, MemKind::DEVICE);
        assert_eq!(got, [u, d, u, oc, os, s, d, oc, os]);
    }

    #[test]
    fn ids_small_integers_pass_others_are_synthetic() {
        let mut b = Builder::new("t".into());
        let fnv = |text: &str| {
            let h = text.bytes().fold(0x811c_9dc5u32, |h, b| {
                (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
            });
            SYNTHETIC_ID_BASE | (h & !SYNTHETIC_ID_BASE)
        };
        assert_eq!(b.id(None), 0);
        assert_eq!(b.id(Some(&Id::Int(0))), 0);
        assert_eq!(b.id(Some(&Id::Int(4_194_304))), 4_194_304);
        let top = i64::from(SYNTHETIC_ID_BASE);
        assert_eq!(b.id(Some(&Id::Int(top - 1))), SYNTHETIC_ID_BASE - 1);
        assert_eq!(b.id(Some(&Id::Int(top))), fnv(&top.to_string()));
        assert_eq!(b.id(Some(&Id::Int(-1))), fnv("-1"));
        assert_eq!(b.id(Some(&Id::Str(Cow::Borrowed("11788")))), 11788);
        assert_eq!(b.id(Some(&Id::Str(Cow::Borrowed("stream 7")))), 7);
        assert_eq!(b.id(Some(&Id::Str(Cow::Borrowed("Spans")))), fnv("Spans"));
    }
}
