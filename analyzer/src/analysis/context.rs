//! Shared lookups for the analyses of one timeline: correlation links, name
//! classes, and per-thread activity segments computed once.

use std::sync::{Arc, Mutex};

use rustc_hash::{FxHashMap, FxHashSet};

use super::activity::{
    self, Act, Classifier, CopyIndex, LongSpans, NameTable, Seg, Sub, copy_index,
};
use super::busy::PrecisionMap;
use super::saves;
use super::whatif::BURST_GAP_NS;
use stallscope_format::{FdClass, HostOp};

use crate::model::{
    CorrIndex, GpuOp, HostSpan, LaunchRef, Ns, Process, SpanKind, Thread, Timeline,
};

/// The segments of a sorted list overlapping [a, b), clipped to it. A clipped
/// merged CPU segment keeps its share of launch time.
#[inline]
pub fn clip(all: &[Seg], a: Ns, b: Ns) -> impl Iterator<Item = Seg> + '_ {
    let i = all.partition_point(|s| s.end <= a);
    all[i..]
        .iter()
        .take_while(move |s| s.start < b)
        .map(move |s| clip_one(s, a, b))
}

/// One segment clipped to [a, b) (which it overlaps).
#[inline]
pub fn clip_one(s: &Seg, a: Ns, b: Ns) -> Seg {
    let (start, end) = (s.start.max(a), s.end.min(b));
    // Times inside the segment keep their share of it.
    let part = |ns: u32| {
        if ns == 0 || (start == s.start && end == s.end) {
            ns
        } else {
            (ns as f64 * (end - start) as f64 / (s.end - s.start).max(1) as f64) as u32
        }
    };
    Seg {
        start,
        end,
        launch_ns: part(s.launch_ns),
        own_ns: part(s.own_ns),
        ..*s
    }
}

/// A thread, by process and thread index.
pub type ThreadRef = (u32, u32);

pub struct Context<'a> {
    pub tl: &'a Timeline,
    pub corr: CorrIndex,
    pub names: NameTable,
    pub copies: CopyIndex,
    pub precision: PrecisionMap<'a>,
    /// The analyzed window.
    pub window: (Ns, Ns),
    /// Correlation ids of copies that recur every step (offload).
    pub offload: FxHashSet<u32>,
    segs: Mutex<FxHashMap<ThreadRef, Arc<Vec<Seg>>>>,
    long: Mutex<FxHashMap<ThreadRef, Arc<LongSpans>>>,
    file_io: Mutex<FxHashMap<u32, Arc<FxHashMap<u32, FileIo>>>>,
}

/// Reads and writes of one I/O object over the whole recording.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileIo {
    /// In reads (`HostOp::is_read`).
    pub read_ns: Ns,
    pub read_bytes: u64,
    /// In writes and their flushes (`HostOp::is_write`, fsync, fdatasync).
    pub write_ns: Ns,
    pub write_bytes: u64,
    /// Write calls (flushes not counted): bytes per call tell a log's small
    /// appends from a checkpoint's large writes.
    pub write_calls: u64,
    /// Files read one after another in runs of short calls (the object is
    /// then their folder).
    pub files: u64,
}

impl FileIo {
    /// Mostly written (a checkpoint, a log), not read: more time in its
    /// writes and fsyncs than in its reads.
    pub fn mostly_written(&self) -> bool {
        self.write_ns > self.read_ns
    }
}

/// The context's lookups that need neither the correlation index nor the
/// window, so they can be built beside them.
pub struct Lookups<'a> {
    names: NameTable,
    copies: CopyIndex,
    precision: PrecisionMap<'a>,
}

impl<'a> Lookups<'a> {
    pub fn build(tl: &'a Timeline) -> Lookups<'a> {
        Lookups {
            names: NameTable::new(&tl.strings),
            copies: copy_index(tl),
            precision: PrecisionMap::new(&tl.strings),
        }
    }
}

/// Segments reach this far before the window, to see what led into it.
const MARGIN: Ns = 50_000_000;

impl<'a> Context<'a> {
    pub fn new(tl: &'a Timeline, window: (Ns, Ns)) -> Context<'a> {
        Self::from_parts(tl, window, CorrIndex::build(tl), Lookups::build(tl))
    }

    pub fn from_parts(
        tl: &'a Timeline,
        window: (Ns, Ns),
        corr: CorrIndex,
        lookups: Lookups<'a>,
    ) -> Context<'a> {
        Context {
            corr,
            names: lookups.names,
            copies: lookups.copies,
            precision: lookups.precision,
            window,
            offload: FxHashSet::default(),
            segs: Mutex::new(FxHashMap::default()),
            long: Mutex::new(FxHashMap::default()),
            file_io: Mutex::new(FxHashMap::default()),
            tl,
        }
    }

    pub fn process(&self, r: ThreadRef) -> &'a Process {
        &self.tl.processes[r.0 as usize]
    }

    pub fn thread(&self, r: ThreadRef) -> &'a Thread {
        &self.tl.processes[r.0 as usize].threads[r.1 as usize]
    }

    /// The API call that launched `op`, if known.
    #[inline]
    pub fn launch_of(&self, op: &GpuOp) -> Option<(ThreadRef, &'a HostSpan)> {
        let LaunchRef {
            process,
            thread,
            span,
        } = self.corr.get(op.corr)?;
        let t = &self.tl.processes[process as usize].threads[thread as usize];
        Some(((process, thread), &t.spans[span as usize]))
    }

    fn classifier(&self) -> Classifier<'_> {
        Classifier {
            names: &self.names,
            copies: &self.copies,
            offload: &self.offload,
        }
    }

    /// Activity segments of a thread over the window (plus a margin before
    /// it), computed once per thread.
    pub fn segments(&self, r: ThreadRef) -> Arc<Vec<Seg>> {
        if let Some(s) = self.segs.lock().expect("not poisoned").get(&r) {
            return s.clone();
        }
        let mut segs = self.classifier().segments(
            self.process(r),
            self.thread(r),
            self.window.0 - MARGIN,
            self.window.1,
        );
        saves::absorb(&mut segs);
        activity::mark_queued(&mut segs, &self.thread(r).samples, BURST_GAP_NS);
        activity::mark_run_gaps(&mut segs, &self.thread(r).runs);
        let segs = Arc::new(segs);
        self.segs
            .lock()
            .expect("not poisoned")
            .entry(r)
            .or_insert(segs)
            .clone()
    }

    /// Reads and writes per I/O object of process `pi`, over the whole
    /// recording: one pass over its spans, however many files and questions
    /// (the advice asks several per file).
    pub fn file_io(&self, pi: u32) -> Arc<FxHashMap<u32, FileIo>> {
        if let Some(m) = self.file_io.lock().expect("not poisoned").get(&pi) {
            return m.clone();
        }
        let mut m: FxHashMap<u32, FileIo> = FxHashMap::default();
        let mut last: Option<(u32, FileIo)> = None;
        for t in &self.tl.processes[pi as usize].threads {
            for s in &t.spans {
                let SpanKind::Host(op) = s.kind else { continue };
                let write = op.is_write() || matches!(op, HostOp::Fsync | HostOp::Fdatasync);
                if !write && !op.is_read() {
                    continue;
                }
                // A thread reads one file many times in a row.
                let f = match &mut last {
                    Some((id, f)) if *id == s.id => f,
                    _ => {
                        if let Some((id, f)) = last.take() {
                            *m.entry(id).or_default() = f;
                        }
                        let f = m.get(&s.id).copied().unwrap_or_default();
                        &mut last.insert((s.id, f)).1
                    }
                };
                if write {
                    f.write_ns += s.dur;
                    f.write_bytes += s.arg;
                    f.write_calls += u64::from(op.is_write());
                } else {
                    f.read_ns += s.dur;
                    f.read_bytes += s.arg;
                }
            }
        }
        if let Some((id, f)) = last {
            m.insert(id, f);
        }
        // A run of short calls is one span over its extent: count its calls,
        // and the time inside them.
        for r in self.tl.processes[pi as usize]
            .threads
            .iter()
            .flat_map(|t| &t.runs)
        {
            let Some(f) = m.get_mut(&r.obj) else { continue };
            let busy = r.busy_ns.min(Ns::MAX as u64) as Ns;
            if r.files > 1 && r.op.is_read() {
                f.files += u64::from(r.files);
            }
            if r.op.is_write() {
                f.write_ns += busy - r.dur;
                f.write_calls += r.calls.saturating_sub(1);
            } else if r.op.is_read() {
                f.read_ns += busy - r.dur;
            }
        }
        let m = Arc::new(m);
        self.file_io
            .lock()
            .expect("not poisoned")
            .entry(pi)
            .or_insert(m)
            .clone()
    }

    /// Time `r` spent on I/O in [a, b): the I/O segments of `segments(r)`
    /// clipped to [a, b), without classifying the whole thread (producers are
    /// asked about a few waits each).
    pub fn io_in(&self, r: ThreadRef, a: Ns, b: Ns) -> Ns {
        if let Some(s) = self.segs.lock().expect("not poisoned").get(&r) {
            return clip(s, a, b)
                .filter(|s| s.act == Act::Io)
                .map(|s| s.end - s.start)
                .sum();
        }
        let long = self
            .long
            .lock()
            .expect("not poisoned")
            .entry(r)
            .or_insert_with(|| Arc::new(LongSpans::new(self.thread(r))))
            .clone();
        self.classifier().io_in(
            self.process(r),
            self.thread(r),
            &long,
            self.window.0 - MARGIN,
            self.window.1,
            a,
            b,
        )
    }

    /// How the launch call of an op spent its time (launch, copy staging, ...).
    pub fn api_act(&self, r: ThreadRef, span: &HostSpan) -> (Act, Sub) {
        self.classifier()
            .span_activity(self.process(r), span)
            .map(|(a, s, _)| (a, s))
            .unwrap_or((Act::Launch, Sub::NONE))
    }

    /// Cumulative CPU time of a thread at `t`, interpolated between samples.
    pub fn cpu_at(&self, r: ThreadRef, t: Ns) -> f64 {
        cpu_at(self.process(r), self.thread(r), t)
    }

    /// Cumulative run-queue delay of a thread at `t` (same interpolation).
    pub fn run_delay_at(&self, r: ThreadRef, t: Ns) -> f64 {
        let s = &self.thread(r).samples;
        let i = s.partition_point(|x| x.ts <= t);
        match (i.checked_sub(1).map(|k| &s[k]), s.get(i)) {
            (Some(a), Some(b)) => {
                let f = (t - a.ts) as f64 / (b.ts - a.ts).max(1) as f64;
                a.run_delay_ns as f64 + f * (b.run_delay_ns as f64 - a.run_delay_ns as f64)
            }
            (Some(a), None) => a.run_delay_ns as f64,
            (None, Some(b)) => {
                before_first_sample(self.process(r), self.thread(r), t, b.ts, b.run_delay_ns)
            }
            (None, None) => 0.0,
        }
    }

    /// How long `r`'s process was alive in [x, y). A DataLoader without
    /// persistent_workers starts new workers each epoch: those of another
    /// epoch could not have made the batch waited for.
    pub fn alive_in(&self, r: ThreadRef, x: Ns, y: Ns) -> Ns {
        let (start, end) = lifetime(self.process(r));
        (y.min(end) - x.max(start)).max(0)
    }

    /// The most of the worker processes among `producers` (of process `pi`,
    /// see `is_worker`) alive at once, by their lifetimes: the number of
    /// workers, however many epochs re-created them. A tool whose output
    /// `pi` read while they ran (nvidia-smi) is no worker; where no producer
    /// is a worker (a decoder `pi` pipes from), all count.
    pub fn at_once(&self, pi: u32, producers: &[ThreadRef]) -> usize {
        let me = &self.tl.processes[pi as usize];
        let procs: Vec<&Process> = producers.iter().map(|&r| self.process(r)).collect();
        workers_at_once(&[me], procs)
    }

    /// How many of the worker processes among `producers` (of process `pi`)
    /// started inside the window: workers the DataLoader created again for a
    /// later epoch (persistent_workers off), not ones started before the
    /// first step (see `is_worker`: a tool the loop runs now and then is
    /// none).
    pub fn started_in_window(&self, pi: u32, producers: &[ThreadRef]) -> usize {
        let me = &self.tl.processes[pi as usize];
        producers
            .iter()
            .map(|&r| self.process(r))
            .filter(|p| p.start > self.window.0 && p.pid != me.pid && is_worker(me, p))
            .count()
    }

    /// Threads that produce work for process `pi`: the busiest thread of each
    /// producer process (`producer_processes`), else the other threads of
    /// the process itself. A thread waiting on an in-process queue is so
    /// followed through the helper thread that fills it (DataLoader
    /// `pin_memory=True`, ProcessPoolExecutor) to the workers behind it.
    ///
    /// Producers idle through the whole window are left out while any worked:
    /// helpers that sit blocked on a pipe or socket (multiprocessing's
    /// resource tracker, a Manager's server between calls) feed no batches,
    /// and counting them made the workers look starved and their number too
    /// large.
    pub fn producers(&self, pi: u32, except: u32) -> Vec<ThreadRef> {
        let mut out = Vec::new();
        let all = producer_processes(self.tl, pi as usize);
        let (w0, w1) = self.window;
        for ci in working_or_all(self.tl, all, w0, w1) {
            let c = &self.tl.processes[ci];
            let busiest = c
                .threads
                .iter()
                .enumerate()
                .filter(|(_, t)| !self.is_own_thread(t))
                .max_by_key(|(_, t)| {
                    t.samples.last().map_or(0, |s| s.cpu_ns) + t.spans.len() as u64
                });
            if let Some((ti, _)) = busiest {
                out.push((ci as u32, ti as u32));
            }
        }
        if out.is_empty() {
            let p = &self.tl.processes[pi as usize];
            for (ti, t) in p.threads.iter().enumerate() {
                if ti as u32 != except
                    && !self.is_own_thread(t)
                    && (!t.spans.is_empty() || t.samples.len() > 1)
                {
                    out.push((pi, ti as u32));
                }
            }
        }
        out
    }

    /// The shim's own sampler thread is not part of the program.
    fn is_own_thread(&self, t: &Thread) -> bool {
        self.tl.strings.get(t.name) == "stallscope"
    }
}

/// Cumulative CPU time of thread `th` of `p` at `t`, interpolated between
/// samples.
pub fn cpu_at(p: &Process, th: &Thread, t: Ns) -> f64 {
    let s = &th.samples;
    let i = s.partition_point(|x| x.ts <= t);
    match (i.checked_sub(1).map(|k| &s[k]), s.get(i)) {
        (Some(a), Some(b)) => {
            let f = (t - a.ts) as f64 / (b.ts - a.ts).max(1) as f64;
            a.cpu_ns as f64 + f * (b.cpu_ns as f64 - a.cpu_ns as f64)
        }
        (Some(a), None) => a.cpu_ns as f64,
        (None, Some(b)) => before_first_sample(p, th, t, b.ts, b.cpu_ns),
        (None, None) => 0.0,
    }
}

/// A counter of thread `th` at `t`, before its first sample (`ts`, `value`).
/// A process samples its threads from its first hooked call on, so a forked
/// DataLoader worker's first sample can hold a whole batch of CPU time. A
/// main thread's counters start at zero with its process (fork), so they are
/// interpolated from there; of other threads, the start is not known, and
/// the sample's value holds.
fn before_first_sample(p: &Process, th: &Thread, t: Ns, ts: Ns, value: u64) -> f64 {
    if th.tid != p.pid || p.start >= ts {
        return value as f64;
    }
    let f = (t - p.start).max(0) as f64 / (ts - p.start) as f64;
    f * value as f64
}

/// The share of its time in a window under which a process that did nothing
/// but wait used the CPU only to start or wake up: a forked child's first
/// millisecond, or a Python start-up smeared over the span before its first
/// sample (1-8 ms in windows under a second, measured), not batches.
const IDLE_CPU_SHARE: f64 = 0.02;

/// Whether process `pi` worked in [x, y): CPU time beside the shim's own
/// thread for at least `IDLE_CPU_SHARE` of the time it was alive there,
/// or host work other than waiting for a pipe, a Unix socket, a lock or a
/// poll (a file read, the network, a sleep that paces remote storage). A
/// process blocked on local IPC throughout feeds no one.
pub fn worked_in(tl: &Timeline, pi: usize, x: Ns, y: Ns) -> bool {
    let p = &tl.processes[pi];
    let (start, end) = lifetime(p);
    let (x, y) = (x.max(start), y.min(end));
    if x >= y {
        return false;
    }
    let own = |t: &Thread| tl.strings.get(t.name) == "stallscope";
    let used: f64 = p
        .threads
        .iter()
        .filter(|t| !own(t))
        .map(|t| cpu_at(p, t, y) - cpu_at(p, t, x))
        .sum();
    if used > 0.0 && used >= IDLE_CPU_SHARE * (y - x) as f64 {
        return true;
    }
    let waits = |s: &HostSpan| match s.kind {
        SpanKind::Host(
            HostOp::Poll | HostOp::Select | HostOp::EpollWait | HostOp::SemWait | HostOp::CondWait,
        ) => true,
        // Local IPC (multiprocessing's queues are pipes, its Pipe() and
        // managers Unix sockets); a network read is work.
        SpanKind::Host(HostOp::Read | HostOp::Readv | HostOp::Recv) => p
            .object(s.id)
            .is_some_and(|o| matches!(o.class, FdClass::Pipe | FdClass::UnixSocket)),
        SpanKind::Host(HostOp::Sleep) => s.ts < x,
        _ => false,
    };
    p.threads
        .iter()
        .filter(|t| !own(t))
        .any(|t| t.spans.iter().any(|s| s.ts < y && s.end() > x && !waits(s)))
}

/// The processes of `procs` that worked in [x, y) (see [`worked_in`]), or
/// all of them where none did: then they are starved, not idle helpers.
pub fn working_or_all(tl: &Timeline, procs: Vec<usize>, x: Ns, y: Ns) -> Vec<usize> {
    let working: Vec<usize> = procs
        .iter()
        .copied()
        .filter(|&i| worked_in(tl, i, x, y))
        .collect();
    if working.is_empty() { procs } else { working }
}

/// The producers of trainer `pi` (see [`producer_processes`]) that worked in
/// `window`: its workers.
pub fn feeding_processes(tl: &Timeline, pi: usize, window: (Ns, Ns)) -> Vec<usize> {
    working_or_all(tl, producer_processes(tl, pi), window.0, window.1)
}

/// The processes feeding the trainers (`trainer_ix`: the processes that
/// launched GPU work, [`super::host::is_trainer`]) in `window`, each once
/// (see [`feeding_processes`]), and the most of their workers alive at once
/// (see [`workers_at_once`]): the report's `processes.workers` and
/// `workers_at_once`.
pub fn trainer_workers(tl: &Timeline, trainer_ix: &[usize], window: (Ns, Ns)) -> (usize, usize) {
    let trainers: Vec<&Process> = trainer_ix.iter().map(|&i| &tl.processes[i]).collect();
    // An image that exec'd into a trainer shares its pid: no worker either.
    let mut feeding: Vec<usize> = trainer_ix
        .iter()
        .flat_map(|&i| feeding_processes(tl, i, window))
        .filter(|&i| trainers.iter().all(|t| t.pid != tl.processes[i].pid))
        .collect();
    feeding.sort_unstable();
    feeding.dedup();
    let procs: Vec<&Process> = feeding.iter().map(|&i| &tl.processes[i]).collect();
    (feeding.len(), workers_at_once(&trainers, procs))
}

/// The most of the workers among `procs` (processes feeding `trainers`: a
/// fork or multiprocessing child of one of them, see `is_worker`) alive at
/// once: the number of DataLoader workers, however many epochs re-created
/// them, which the data fix doubles. A tool whose output a trainer read
/// while they ran (nvidia-smi) is no worker; where none is a worker (a
/// decoder a trainer pipes from), all count.
pub fn workers_at_once(trainers: &[&Process], procs: Vec<&Process>) -> usize {
    let workers: Vec<&Process> = procs
        .iter()
        .copied()
        .filter(|p| trainers.iter().any(|me| is_worker(me, p)))
        .collect();
    most_at_once(if workers.is_empty() { procs } else { workers }.into_iter())
}

/// A process's start and end; one whose end is not known (a timeline built
/// without it) lives on.
fn lifetime(p: &Process) -> (Ns, Ns) {
    (p.start, if p.end > p.start { p.end } else { Ns::MAX })
}

/// The most of `procs` alive at once (one per entry: a process's threads
/// each count).
fn most_at_once<'p>(procs: impl Iterator<Item = &'p Process>) -> usize {
    let mut edges: Vec<(Ns, i32)> = Vec::new();
    for p in procs {
        let (start, end) = lifetime(p);
        edges.extend([(start, 1), (end, -1)]);
    }
    // An exit before a start at the same time.
    edges.sort_unstable();
    let (mut now, mut most) = (0i32, 0i32);
    for (_, d) in edges {
        now += d;
        most = most.max(now);
    }
    most.max(0) as usize
}

/// Whether `p` is a worker of `me`: a fork of it (its command line) or a
/// child of multiprocessing's spawn or forkserver (or of `multiprocess`, the
/// copy of it that Hugging Face datasets use).
fn is_worker(me: &Process, p: &Process) -> bool {
    p.cmdline == me.cmdline || p.cmdline.contains("multiprocess")
}

/// The processes that feed process `pi`: its workers (forks of it and
/// multiprocessing children: DataLoader or pool workers) with all they
/// start, and the peers it reads from through pipes. Never its ancestors or
/// launchers (a shell, env, pyenv shims, torchrun), nor the other programs
/// it runs (wandb's service, torch.compile's worker pool, tools) unless it
/// reads their output.
///
/// A wrapper that execs the trainer keeps its pid, so children the wrapper
/// forked before the exec (pyenv's helper commands) have the trainer's pid
/// as their parent: only children that started after the trainer's image did
/// count (exec starts a new trace, so `Process::start` is the exec time).
pub fn producer_processes(tl: &Timeline, pi: usize) -> Vec<usize> {
    let me = &tl.processes[pi];
    // The latest image of each pid: the one that exec'd last.
    let mut by_pid: FxHashMap<u32, usize> = FxHashMap::default();
    for (i, p) in tl.processes.iter().enumerate() {
        let e = by_pid.entry(p.pid).or_insert(i);
        if tl.processes[*e].start < p.start {
            *e = i;
        }
    }
    let mut ancestors: FxHashSet<u32> = FxHashSet::default();
    let mut cur = me.ppid;
    while cur != 0 && ancestors.insert(cur) {
        cur = by_pid.get(&cur).map_or(0, |&i| tl.processes[i].ppid);
    }
    // A child that runs another program (wandb's service, torch.compile's
    // worker pool, a tool) is a helper, and so is all it starts; a worker
    // is a producer, and so is all it starts (a decoder it reads).
    let descends = |c: &Process| {
        let mut c = c;
        for _ in 0..64 {
            if c.ppid == me.pid {
                return c.start >= me.start && is_worker(me, c);
            }
            match by_pid.get(&c.ppid) {
                Some(&i) if tl.processes[i].pid != c.pid => c = &tl.processes[i],
                _ => return false,
            }
        }
        false
    };
    // Pipes any thread of `pi` reads from (a helper thread may do the
    // reading for the thread that waits).
    // The scan stops once every pipe of `pi` is known to be read (a trainer
    // polls its DataLoader pipes in its first step; its spans may number
    // tens of millions), and is skipped when `pi` has no pipes.
    let pipes: FxHashSet<(u64, u64)> = me
        .objects
        .iter()
        .filter(|o| o.class == FdClass::Pipe && o.ino != 0)
        .map(|o| (o.dev, o.ino))
        .collect();
    let mut read: FxHashSet<(u64, u64)> = FxHashSet::default();
    'scan: for t in &me.threads {
        if read.len() == pipes.len() {
            break;
        }
        for s in &t.spans {
            if let SpanKind::Host(
                HostOp::Read | HostOp::Readv | HostOp::Poll | HostOp::Select | HostOp::EpollWait,
            ) = s.kind
                && let Some(o) = me.object(s.id)
                && o.class == FdClass::Pipe
                && o.ino != 0
                && read.insert((o.dev, o.ino))
                && read.len() == pipes.len()
            {
                break 'scan;
            }
        }
    }
    tl.processes
        .iter()
        .enumerate()
        .filter(|&(i, c)| {
            i != pi
                && c.pid != me.pid
                // An image that exec'd is its next image's start-up.
                && by_pid.get(&c.pid) == Some(&i)
                && !ancestors.contains(&c.pid)
                && (descends(c)
                    || c.objects
                        .iter()
                        .any(|o| o.class == FdClass::Pipe && read.contains(&(o.dev, o.ino))))
        })
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{HostSpan, IoObject, Sample, Source};

    fn proc(pid: u32, ppid: u32, start: Ns) -> Process {
        Process {
            pid,
            ppid,
            start,
            threads: vec![Thread {
                tid: pid,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn cmd(mut p: Process, c: &str) -> Process {
        p.cmdline = c.to_string();
        p
    }

    fn pipe(id: u32, ino: u64) -> IoObject {
        IoObject {
            id,
            class: FdClass::Pipe,
            fs_magic: 0,
            dev: 9,
            ino,
            path: 0,
            fd: id as i32,
        }
    }

    #[test]
    fn producers_are_descendants_and_pipe_peers_never_launchers() {
        let mut tl = Timeline::new(Source::Native, "t");
        // torchrun (1) runs `sh -c '/bin/true; exec python train.py'` (10):
        // the shell forks a helper (11) before the exec, which keeps pid 10.
        tl.processes.push(proc(1, 0, 0));
        tl.processes.push(proc(10, 1, 10));
        tl.processes.push(proc(11, 10, 20));
        let mut trainer = proc(10, 1, 100);
        // The trainer reads from pipe 77 (a data service, 30) and writes its
        // output to pipe 88, which its launcher holds too.
        trainer.objects = vec![pipe(1, 77), pipe(2, 88)];
        trainer.threads.push(Thread {
            tid: 15,
            spans: vec![span(HostOp::Read, 1, 150, 160)],
            ..Default::default()
        });
        tl.processes.push(trainer);
        // A worker (12) forked by the trainer, and its own child (13).
        tl.processes.push(proc(12, 10, 200));
        tl.processes.push(proc(13, 12, 300));
        let mut service = proc(30, 1, 50);
        service.objects = vec![pipe(4, 77)];
        tl.processes.push(service);
        let mut launcher_pipe = proc(31, 1, 60);
        launcher_pipe.objects = vec![pipe(3, 88)];
        tl.processes.push(launcher_pipe);
        let pids = |v: Vec<usize>| -> Vec<u32> {
            let mut p: Vec<u32> = v.iter().map(|&i| tl.processes[i].pid).collect();
            p.sort_unstable();
            p
        };
        assert_eq!(pids(producer_processes(&tl, 3)), vec![12, 13, 30]);
        // The worker's producers: its child only (never the trainer above it).
        assert_eq!(pids(producer_processes(&tl, 4)), vec![13]);
        // Through the context: the busiest thread of each.
        let cx = Context::new(&tl, (0, 1000));
        assert_eq!(cx.producers(3, 0).len(), 3);
        // Without producer processes, the other threads of the process.
        assert_eq!(cx.producers(5, 0), vec![]);
        assert_eq!(cx.producers(3, 0)[0], (4, 0));
    }

    #[test]
    fn programs_the_trainer_runs_are_helpers_and_what_its_workers_run_feeds_it() {
        let mut tl = Timeline::new(Source::Native, "t");
        tl.processes.push(cmd(proc(10, 1, 0), "python train.py"));
        // A forked worker and the decoder it pipes from; a spawned worker.
        tl.processes.push(cmd(proc(20, 10, 10), "python train.py"));
        tl.processes
            .push(cmd(proc(21, 20, 20), "ffmpeg -i clip.mp4 -"));
        let spawned = "python -c from multiprocessing.spawn import spawn_main; spawn_main()";
        tl.processes.push(cmd(proc(22, 10, 30), spawned));
        let dill = "python -c from multiprocess.spawn import spawn_main; spawn_main()";
        tl.processes.push(cmd(proc(23, 10, 30), dill));
        // wandb's service, started as a fork that exec'd, and a thread pool
        // it forked; torch.compile's worker pool.
        tl.processes.push(cmd(proc(30, 10, 40), "python train.py"));
        tl.processes
            .push(cmd(proc(30, 10, 41), "python -m wandb service"));
        tl.processes
            .push(cmd(proc(31, 30, 50), "python -m wandb service"));
        tl.processes
            .push(cmd(proc(40, 10, 60), "python compile_worker/__main__.py"));
        let mut pids: Vec<u32> = producer_processes(&tl, 0)
            .iter()
            .map(|&i| tl.processes[i].pid)
            .collect();
        pids.sort_unstable();
        assert_eq!(pids, [20, 21, 22, 23]);
    }

    #[test]
    fn workers_of_each_epoch_count_once_and_later_ones_are_restarts() {
        let mut tl = Timeline::new(Source::Native, "t");
        tl.processes.push(cmd(proc(10, 1, 0), "python train.py"));
        // Two workers per epoch (forks: the trainer's command line): before
        // the window, then twice inside it (an epoch's workers exit before
        // the next one's start).
        for (k, (start, end)) in [(50, 400), (400, 700), (700, 1000)].into_iter().enumerate() {
            for j in 0..2 {
                let mut w = cmd(proc(20 + 2 * k as u32 + j, 10, start), "python train.py");
                w.end = end;
                tl.processes.push(w);
            }
        }
        // And tools the loop ran once, in the last epoch: one whose output
        // it read (a pipe peer, but no worker), one it did not (no producer).
        let mut tool = cmd(proc(30, 10, 750), "nvidia-smi");
        tool.end = 800;
        tool.objects = vec![pipe(1, 55)];
        tl.processes.push(tool);
        let mut other = cmd(proc(31, 10, 750), "git rev-parse HEAD");
        other.end = 800;
        tl.processes.push(other);
        tl.processes[0].objects = vec![pipe(1, 55)];
        tl.processes[0].threads[0].spans = vec![span(HostOp::Read, 1, 760, 770)];
        let cx = Context::new(&tl, (100, 1200));
        let producers = cx.producers(0, 0);
        assert_eq!(producers.len(), 7);
        assert_eq!(cx.at_once(0, &producers), 2);
        // The later epochs' workers; not the tool.
        assert_eq!(cx.started_in_window(0, &producers), 4);
        // Alive over part of [300, 500): the first epoch's until 400, the
        // second's from then.
        let alive: Vec<Ns> = producers
            .iter()
            .map(|&r| cx.alive_in(r, 300, 500))
            .collect();
        assert_eq!(alive, [100, 100, 100, 100, 0, 0, 0]);
        // The report's counts agree: seven feed the trainer (one of them
        // the tool), two workers at a time (not three while the tool ran).
        assert_eq!(trainer_workers(&tl, &[], (100, 1200)), (0, 0), "no trainer");
        assert_eq!(trainer_workers(&tl, &[0], (100, 1200)), (7, 2));
    }

    fn span(op: HostOp, id: u32, ts: Ns, end: Ns) -> HostSpan {
        HostSpan {
            ts,
            dur: end - ts,
            arg: 0,
            id,
            kind: SpanKind::Host(op),
        }
    }

    fn sample(ts: Ns, cpu_ns: u64, run_delay_ns: u64) -> Sample {
        Sample {
            ts,
            cpu_ns,
            run_delay_ns,
            majflt: 0,
            minflt: 0,
            state: b'R',
        }
    }

    fn cpu(ts: Ns, cpu_ns: u64) -> Sample {
        sample(ts, cpu_ns, 0)
    }

    #[test]
    fn producers_idle_through_the_window_are_left_out() {
        let mut tl = Timeline::new(Source::Native, "t");
        tl.processes.push(proc(10, 1, 0));
        let window = (1000, 2000);
        // Working in the window: on a CPU 60% of it; reading a file; pacing
        // itself with sleeps that start there.
        let mut busy = proc(20, 10, 0);
        busy.threads[0].samples = vec![cpu(1000, 50), cpu(2000, 650)];
        let mut reader = proc(21, 10, 0);
        reader.objects = vec![IoObject {
            class: FdClass::File,
            ..pipe(1, 5)
        }];
        reader.threads[0].spans = vec![span(HostOp::Pread, 1, 1500, 1510)];
        let mut sleeper = proc(22, 10, 0);
        sleeper.threads[0].spans = vec![span(HostOp::Sleep, 0, 1200, 1300)];
        // Idle: blocked on a pipe from before the window to after it (with
        // 1% of it on a CPU, waking up), or on a Unix socket; in a sleep
        // begun before it; the shim's own sampler thread on a CPU.
        let mut pool = proc(23, 10, 0);
        pool.objects = vec![pipe(1, 6)];
        pool.threads[0].spans = vec![span(HostOp::Read, 1, 500, 3000)];
        pool.threads[0].samples = vec![cpu(1000, 5), cpu(2000, 15)];
        let mut manager = proc(27, 10, 0);
        manager.objects = vec![IoObject {
            class: FdClass::UnixSocket,
            ..pipe(1, 7)
        }];
        manager.threads[0].spans = vec![span(HostOp::Recv, 1, 800, 2800)];
        let mut dozing = proc(24, 10, 0);
        dozing.threads[0].spans = vec![span(HostOp::Sleep, 0, 900, 2500)];
        let mut sampled = proc(25, 10, 0);
        sampled.threads.push(Thread {
            tid: 26,
            name: tl.strings.intern("stallscope"),
            samples: vec![cpu(1000, 0), cpu(2000, 900)],
            ..Default::default()
        });
        tl.processes
            .extend([busy, reader, sleeper, pool, dozing, sampled, manager]);
        let pids = |v: Vec<usize>| -> Vec<u32> { v.iter().map(|&i| tl.processes[i].pid).collect() };
        assert_eq!(
            pids(producer_processes(&tl, 0)),
            [20, 21, 22, 23, 24, 25, 27]
        );
        assert_eq!(pids(feeding_processes(&tl, 0, window)), [20, 21, 22]);
        let cx = Context::new(&tl, window);
        let fed: Vec<u32> = cx.producers(0, 0).iter().map(|r| r.0).collect();
        assert_eq!(fed, [1, 2, 3]);
        // Later, all were idle: then all of them are kept (the trainer
        // starved them), none dropped.
        assert_eq!(feeding_processes(&tl, 0, (2500, 2900)).len(), 7);
    }

    #[test]
    fn a_worker_sampled_late_spent_its_cpu_since_its_fork() {
        let mut tl = Timeline::new(Source::Native, "t");
        // Forked at 1000, first sampled at its first hooked call, 100 later,
        // with 90 of CPU and 10 of run delay behind it.
        let mut w = proc(20, 10, 1000);
        w.threads[0].samples = vec![sample(1100, 90, 10), sample(1200, 180, 10)];
        // A thread of its own, started at some unknown time.
        w.threads.push(Thread {
            tid: 21,
            samples: vec![sample(1100, 50, 0)],
            ..Default::default()
        });
        tl.processes.push(w);
        let cx = Context::new(&tl, (0, 2000));
        assert_eq!(cx.cpu_at((0, 0), 900), 0.0);
        assert_eq!(cx.cpu_at((0, 0), 1050), 45.0);
        assert_eq!(cx.run_delay_at((0, 0), 1050), 5.0);
        assert_eq!(cx.cpu_at((0, 0), 1150), 135.0);
        // Of another thread, the sample's value holds before it.
        assert_eq!(cx.cpu_at((0, 1), 1050), 50.0);
    }

    /// A run of 200 short log appends is one span: the file's totals count
    /// 200 writes (small ones: a log, not a checkpoint) and the time inside
    /// them, not the run's extent.
    #[test]
    fn file_totals_count_the_calls_and_time_inside_runs() {
        let mut tl = Timeline::new(Source::Native, "t");
        let mut p = proc(10, 1, 0);
        p.threads[0].spans = vec![
            HostSpan {
                arg: 200 * 120,
                ..span(HostOp::Write, 1, 100, 1_100)
            },
            HostSpan {
                arg: 1 << 20,
                ..span(HostOp::Read, 1, 2_000, 2_300)
            },
        ];
        p.threads[0].runs = vec![crate::model::RunSpan {
            ts: 100,
            dur: 1_000,
            op: HostOp::Write,
            obj: 1,
            calls: 200,
            files: 1,
            busy_ns: 800,
        }];
        tl.processes.push(p);
        let cx = Context::new(&tl, (0, 10_000));
        let f = cx.file_io(0)[&1];
        assert_eq!(
            (f.write_calls, f.write_ns, f.write_bytes),
            (200, 800, 24_000)
        );
        assert_eq!((f.read_ns, f.read_bytes), (300, 1 << 20));
        assert_eq!(f.files, 0, "one file");
    }

    /// Runs over files count the files they read, not those they wrote.
    #[test]
    fn a_folder_counts_the_files_its_runs_read() {
        let mut tl = Timeline::new(Source::Native, "t");
        let mut p = proc(10, 1, 0);
        let run = |op, ts, files| crate::model::RunSpan {
            ts,
            dur: 1_000,
            op,
            obj: 1,
            calls: 2 * u64::from(files),
            files,
            busy_ns: 900,
        };
        p.threads[0].runs = vec![
            run(HostOp::Write, 0, 50),
            run(HostOp::Read, 2_000, 600),
            run(HostOp::Read, 4_000, 600),
        ];
        p.threads[0].spans = p.threads[0]
            .runs
            .iter()
            .map(|r| span(r.op, 1, r.ts, r.ts + r.dur))
            .collect();
        tl.processes.push(p);
        let cx = Context::new(&tl, (0, 10_000));
        let f = cx.file_io(0)[&1];
        assert_eq!(f.files, 1_200);
        assert_eq!((f.read_ns, f.write_ns), (1_800, 900));
    }
}
