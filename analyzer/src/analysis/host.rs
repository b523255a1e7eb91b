//! The host side of a recording: I/O wait by filesystem and file, CPU by
//! process, each process's role in the job, and what was lost on the way
//! (dropped records, damaged files). A host-only recording is reported from
//! this alone; a GPU report shows a summary of it.
//!
//! Times are counted inside the analysis window (the steps, else the GPU's
//! active window, else the whole recording; see `analysis_window`), so the
//! host figures of a GPU report describe the same steady state as its
//! findings: a checkpoint loaded during start-up is start-up's cost, not the
//! steps'. A host-only recording's window is all of it.

use rustc_hash::{FxHashMap, FxHashSet};
use stallscope_format::{FdClass, HostOp, fs_name};

use crate::model::{HostSpan, IoObject, Ns, Process, SpanKind, StrId, Thread, Timeline};

/// What a process did in the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Launched GPU work.
    Trainer,
    /// Fed a trainer in the window (its producers: DataLoader workers, pipe
    /// peers); in a host-only recording, any process the main process started.
    Worker,
    /// Started the job and waited for it: an ancestor of a trainer or of the
    /// main process (a shell, torchrun, a pyenv shim), or an image that exec'd
    /// into one.
    Launcher,
    /// Host-only recordings: the process the job's work starts from (the
    /// first below the launchers).
    Main,
    /// Anything else: a helper a launcher ran beside the job, or one the
    /// trainer started that sat idle through the window (torch.compile's
    /// worker pool once the model is compiled).
    Other,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Trainer => "trainer",
            Role::Worker => "worker",
            Role::Launcher => "launcher",
            Role::Main => "main",
            Role::Other => "other",
        }
    }
}

/// Time blocked in reads and writes on one filesystem or file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IoWait {
    /// The filesystem's name, or the file's path.
    pub what: String,
    pub fs: &'static str,
    pub wait_ns: Ns,
    pub bytes: u64,
    pub calls: u64,
    /// `bytes` split: moved by reads, and by writes.
    pub read_bytes: u64,
    pub write_bytes: u64,
}

impl IoWait {
    /// Bytes over wait time, in MB (10^6 bytes) per second.
    pub fn mb_per_s(&self) -> f64 {
        if self.wait_ns <= 0 {
            return 0.0;
        }
        self.bytes as f64 * 1e3 / self.wait_ns as f64
    }

    /// Adds span `s`: `calls` calls that waited `wait` in all (a run of
    /// short calls is one span over its extent).
    fn add(&mut self, op: HostOp, s: &HostSpan, calls: u64, wait: Ns) {
        self.wait_ns += wait;
        self.bytes += s.arg;
        self.calls += calls;
        if op.is_read() {
            self.read_bytes += s.arg;
        } else {
            self.write_bytes += s.arg;
        }
    }
}

/// One process image (a pid that exec'd has one per image).
#[derive(Debug, Clone, PartialEq)]
pub struct ProcHost {
    /// Index into `Timeline::processes`.
    pub index: usize,
    pub role: Role,
    /// CPU time in the window, from the thread samples.
    pub cpu_ns: Ns,
    /// Time waiting for a CPU (run-queue delay) in the window.
    pub run_delay_ns: Ns,
    /// File reads and writes in the window.
    pub io_wait_ns: Ns,
    pub io_bytes: u64,
}

/// Calls below the span threshold: counted by the shim per thread and op,
/// so they are in no filesystem or file row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unattributed {
    pub calls: u64,
    pub bytes: u64,
    pub ns: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostSummary {
    /// Longest wait first.
    pub io_by_fs: Vec<IoWait>,
    /// Longest wait first, all of them (the report keeps the top ones).
    pub io_by_file: Vec<IoWait>,
    /// In timeline order.
    pub processes: Vec<ProcHost>,
    pub dropped_records: u64,
    /// The readers' warnings about what they skipped (file and offset).
    pub damage: Vec<String>,
    /// Reads and writes (of any fd) too short to be spans, over the whole
    /// recording.
    pub unattributed: Unattributed,
}

/// Calls that wait on storage: reads, writes and flushes.
fn is_io(op: HostOp) -> bool {
    op.is_read() || op.is_write() || matches!(op, HostOp::Fsync | HostOp::Fdatasync)
}

/// I/O wait per (filesystem, file), in order of first appearance. A file is
/// named by its path, or by its inode when the path is unknown; the name is
/// formatted once per object, not once per span (a recording may hold
/// millions of reads).
#[derive(Default)]
struct FileSums {
    /// (filesystem, path string id or inode) -> index in `list`.
    by_object: FxHashMap<(&'static str, FileKey), usize>,
    /// (filesystem, name) -> index in `list`: objects with the same name
    /// are one file.
    by_name: FxHashMap<(&'static str, String), usize>,
    list: Vec<IoWait>,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum FileKey {
    /// A path, and whether it names a folder's files.
    Path(StrId, bool),
    Inode(u64, u64),
}

impl FileSums {
    /// The row of `o`'s file.
    fn index(&mut self, tl: &Timeline, fs: &'static str, o: &IoObject) -> usize {
        let key = match o.path {
            0 => FileKey::Inode(o.dev, o.ino),
            _ => FileKey::Path(o.path, o.class == FdClass::Dir),
        };
        let (by_name, list) = (&mut self.by_name, &mut self.list);
        *self.by_object.entry((fs, key)).or_insert_with(|| {
            let what = match o.path {
                0 => format!("(dev {} inode {})", o.dev, o.ino),
                _ => o.label(&tl.strings).into_owned(),
            };
            *by_name.entry((fs, what)).or_insert_with_key(|k| {
                list.push(IoWait {
                    what: k.1.clone(),
                    fs,
                    ..Default::default()
                });
                list.len() - 1
            })
        })
    }
}

/// Host analysis over `window` (see the module comment for why the window).
pub fn analyze(tl: &Timeline, window: (Ns, Ns)) -> HostSummary {
    let (w0, w1) = window;
    let roles = roles(tl, window);
    let mut fs: Vec<IoWait> = Vec::new();
    let mut fs_index: FxHashMap<&'static str, usize> = FxHashMap::default();
    let mut files = FileSums::default();
    let mut processes = Vec::with_capacity(tl.processes.len());
    let mut unattributed = Unattributed::default();
    for (pi, p) in tl.processes.iter().enumerate() {
        let mut ph = ProcHost {
            index: pi,
            role: roles[pi],
            cpu_ns: 0,
            run_delay_ns: 0,
            io_wait_ns: 0,
            io_bytes: 0,
        };
        // Per object id: its filesystem's and file's rows (None: not a
        // file), resolved once per object, not once per span.
        let mut rows: FxHashMap<u32, Option<(usize, usize)>> = FxHashMap::default();
        let mut last: Option<(u32, Option<(usize, usize)>)> = None;
        for t in &p.threads {
            let (cpu, delay) = cpu_in(t, w0, w1);
            ph.cpu_ns += cpu;
            ph.run_delay_ns += delay;
            let from = t.spans.partition_point(|s| s.ts < w0);
            let mut runs = t.runs[t.runs.partition_point(|r| r.ts < w0)..]
                .iter()
                .peekable();
            for s in t.spans[from..].iter().take_while(|s| s.ts < w1) {
                let SpanKind::Host(op) = s.kind else {
                    continue;
                };
                if !is_io(op) {
                    continue;
                }
                while runs.next_if(|r| r.ts < s.ts).is_some() {}
                let (calls, wait) = match runs.next_if(|r| r.is(s)) {
                    Some(r) => (r.calls, r.busy_ns.min(Ns::MAX as u64) as Ns),
                    None => (1, s.dur),
                };
                let row = match last {
                    Some((id, row)) if id == s.id => row,
                    _ => {
                        let row = *rows.entry(s.id).or_insert_with(|| {
                            let o = p.object(s.id)?;
                            if !o.is_storage() {
                                return None;
                            }
                            let name = fs_name(o.fs_magic);
                            let f = *fs_index.entry(name).or_insert_with(|| {
                                fs.push(IoWait {
                                    what: name.to_string(),
                                    fs: name,
                                    ..Default::default()
                                });
                                fs.len() - 1
                            });
                            Some((f, files.index(tl, name, o)))
                        });
                        last = Some((s.id, row));
                        row
                    }
                };
                let Some((f, file)) = row else { continue };
                ph.io_wait_ns += wait;
                ph.io_bytes += s.arg;
                fs[f].add(op, s, calls, wait);
                files.list[file].add(op, s, calls, wait);
            }
            unattributed = add_unattributed(unattributed, t);
        }
        processes.push(ph);
    }
    let sorted = |m: Vec<IoWait>| {
        let mut v = m;
        v.sort_by(|a, b| b.wait_ns.cmp(&a.wait_ns).then_with(|| a.what.cmp(&b.what)));
        v
    };
    HostSummary {
        io_by_fs: sorted(fs),
        io_by_file: sorted(files.list),
        processes,
        dropped_records: tl.processes.iter().map(|p| p.dropped_records).sum(),
        damage: damage(tl),
        unattributed,
    }
}

/// CPU time and run-queue delay of a thread between the last sample before
/// `w0` (none: the thread started inside) and the last at or before `w1`.
/// Samples are cumulative, so a thread's CPU after its last sample is not
/// seen (a process that ends by `_exit` takes no final one).
fn cpu_in(t: &Thread, w0: Ns, w1: Ns) -> (Ns, Ns) {
    let before = t.samples.partition_point(|s| s.ts < w0);
    let upto = t.samples.partition_point(|s| s.ts <= w1);
    if upto == 0 || upto <= before {
        return (0, 0);
    }
    let end = &t.samples[upto - 1];
    let (cpu0, delay0) = match before {
        0 => (0, 0),
        i => (t.samples[i - 1].cpu_ns, t.samples[i - 1].run_delay_ns),
    };
    (
        end.cpu_ns.saturating_sub(cpu0) as Ns,
        end.run_delay_ns.saturating_sub(delay0) as Ns,
    )
}

/// The shim's per-thread totals of reads and writes less the spans it kept,
/// runs of short calls counted by their calls (one pass over the spans: a
/// recording may hold tens of millions).
fn add_unattributed(mut u: Unattributed, t: &Thread) -> Unattributed {
    if t.totals.is_empty() {
        return u;
    }
    let mut kept = [(0u64, 0u64, 0u64); HostOp::ALL.len()];
    for s in &t.spans {
        if let SpanKind::Host(op) = s.kind
            && is_io(op)
        {
            let k = &mut kept[op as usize];
            k.0 += 1;
            k.1 += s.arg;
            k.2 += s.dur.max(0) as u64;
        }
    }
    // A run's span holds many calls, and its duration is the run's extent,
    // not the time inside them: (calls, busy, extent) per op.
    let mut runs = [(0u64, 0u64, 0u64); HostOp::ALL.len()];
    for r in &t.runs {
        let k = &mut runs[r.op as usize];
        k.0 += r.calls.saturating_sub(1);
        k.1 += r.busy_ns;
        k.2 += r.dur.max(0) as u64;
    }
    for op in HostOp::ALL.into_iter().filter(|&op| is_io(op)) {
        let (Some(tot), mut k) = (t.totals.get(op as usize), kept[op as usize]) else {
            continue;
        };
        let r = runs[op as usize];
        k.0 += r.0;
        k.2 = (k.2 + r.1).saturating_sub(r.2);
        u.calls += tot.calls.saturating_sub(k.0);
        u.bytes += tot.bytes.saturating_sub(k.1);
        u.ns += tot.ns.saturating_sub(k.2);
    }
    u
}

/// The readers' warnings about skipped files, chunks and events: each names
/// the file and the byte offset where reading stopped.
fn damage(tl: &Timeline) -> Vec<String> {
    tl.notes
        .iter()
        .filter(|n| n.level == crate::model::NoteLevel::Warning && is_damage(&n.text))
        .map(|n| n.text.clone())
        .collect()
}

/// A reader warning that says something was skipped (damaged or unreadable).
pub fn is_damage(note: &str) -> bool {
    let n = note.strip_prefix("warning: ").unwrap_or(note);
    n.starts_with("skipped ") || n.contains(" skipped")
}

/// Processes that launched GPU work (a CUDA call with a correlation id).
pub fn is_trainer(p: &Process) -> bool {
    p.threads
        .iter()
        .any(|t| t.spans.iter().any(|s| s.kind.is_named() && s.arg != 0))
}

/// Each process's role. With trainers: trainers, their producers that worked
/// in `window` (workers), their ancestors and the images that exec'd into
/// them (launchers), the rest other. Without (host-only): from each root of
/// the process tree, processes that only started exec'd children and waited
/// for them are launchers; the first that is not is the main process, and
/// everything below it a worker.
pub fn roles(tl: &Timeline, window: (Ns, Ns)) -> Vec<Role> {
    let n = tl.processes.len();
    let mut roles = vec![Role::Other; n];
    let by_pid = latest_images(tl);
    let trainers: Vec<usize> = (0..n).filter(|&i| is_trainer(&tl.processes[i])).collect();
    if !trainers.is_empty() {
        for &t in &trainers {
            for w in super::context::feeding_processes(tl, t, window) {
                roles[w] = Role::Worker;
            }
        }
        for &t in &trainers {
            let me = &tl.processes[t];
            let mut up: FxHashSet<u32> = FxHashSet::default();
            let mut cur = me.ppid;
            while cur != 0 && up.insert(cur) {
                cur = by_pid.get(&cur).map_or(0, |&i| tl.processes[i].ppid);
            }
            for (i, p) in tl.processes.iter().enumerate() {
                if up.contains(&p.pid) || (p.pid == me.pid && p.start < me.start) {
                    roles[i] = Role::Launcher;
                }
            }
        }
        for &t in &trainers {
            roles[t] = Role::Trainer;
        }
        return roles;
    }
    // Host-only: the tree of latest images.
    let mut kids: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
    let mut latest: Vec<usize> = by_pid.values().copied().collect();
    latest.sort_by_key(|&i| (tl.processes[i].start, tl.processes[i].pid));
    for &i in &latest {
        let p = &tl.processes[i];
        if p.ppid != p.pid && by_pid.contains_key(&p.ppid) {
            kids.entry(p.ppid).or_default().push(i);
        }
    }
    let mut seen: FxHashSet<u32> = FxHashSet::default();
    // (process, role of its parent): roots have none.
    let mut stack: Vec<(usize, Option<Role>)> = latest
        .iter()
        .rev()
        .filter(|&&i| {
            let p = &tl.processes[i];
            p.ppid == p.pid || !by_pid.contains_key(&p.ppid)
        })
        .map(|&i| (i, None))
        .collect();
    while let Some((i, parent)) = stack.pop() {
        let p = &tl.processes[i];
        if !seen.insert(p.pid) {
            continue;
        }
        // Children forked before this image began are an earlier image's
        // (a wrapper's helpers, as pyenv runs before its exec): not the
        // job's, when this image is.
        let all = kids.get(&p.pid).map_or(&[][..], |v| v.as_slice());
        let (children, before): (Vec<usize>, Vec<usize>) =
            all.iter().partition(|&&c| tl.processes[c].start >= p.start);
        let children = children.as_slice();
        for &c in &before {
            stack.push((c, Some(Role::Other)));
        }
        let role = match parent {
            Some(Role::Main | Role::Worker) => Role::Worker,
            Some(Role::Other) => Role::Other,
            _ if launches(tl, p, children) => Role::Launcher,
            _ => Role::Main,
        };
        roles[i] = role;
        let longest = children
            .iter()
            .map(|&c| life(&tl.processes[c], p))
            .max()
            .unwrap_or(0);
        for &c in children.iter().rev() {
            // A launcher's short helpers (a `date`, a `nvidia-smi`) are
            // not the job: the job's processes run a tenth of its life, or
            // are its longest child.
            let l = life(&tl.processes[c], p);
            let job = role != Role::Launcher || l == longest || 10 * l >= life(p, p);
            stack.push((c, Some(if job { role } else { Role::Other })));
        }
    }
    // Earlier images of a pid: the wrapper that exec'd into a launcher or
    // the main process launched it; an early image of a worker is the same
    // worker.
    for (i, p) in tl.processes.iter().enumerate() {
        if let Some(&l) = by_pid.get(&p.pid)
            && l != i
        {
            roles[i] = match roles[l] {
                Role::Main | Role::Launcher | Role::Trainer => Role::Launcher,
                r => r,
            };
        }
    }
    roles
}

/// A launcher only starts other programs (its children exec'd: their
/// command lines differ from its own; forked workers keep it) and waits for
/// them: they run for at least half its life.
fn launches(tl: &Timeline, p: &Process, children: &[usize]) -> bool {
    if children.is_empty() {
        return false;
    }
    let kids: Vec<&Process> = children.iter().map(|&c| &tl.processes[c]).collect();
    if kids.iter().any(|c| c.cmdline == p.cmdline) {
        return false;
    }
    let mut spans: Vec<(Ns, Ns)> = kids
        .iter()
        .map(|c| (c.start.max(p.start), c.end.min(p.end)))
        .filter(|s| s.1 > s.0)
        .collect();
    spans.sort_unstable();
    let mut covered: Ns = 0;
    let mut reach = Ns::MIN;
    for (a, b) in spans {
        let a = a.max(reach);
        if b > a {
            covered += b - a;
        }
        reach = reach.max(b);
    }
    2 * covered >= (p.end - p.start).max(1)
}

/// How long `c` ran inside `p`'s life.
fn life(c: &Process, p: &Process) -> Ns {
    (c.end.min(p.end) - c.start.max(p.start)).max(0)
}

/// pid -> the index of its latest image (the one that exec'd last).
fn latest_images(tl: &Timeline) -> FxHashMap<u32, usize> {
    let mut by_pid: FxHashMap<u32, usize> = FxHashMap::default();
    for (i, p) in tl.processes.iter().enumerate() {
        let e = by_pid.entry(p.pid).or_insert(i);
        if tl.processes[*e].start < p.start {
            *e = i;
        }
    }
    by_pid
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{IoObject, OpTotals, RunSpan, Sample, Source};

    fn proc(pid: u32, ppid: u32, cmd: &str, start: Ns, end: Ns) -> Process {
        Process {
            pid,
            ppid,
            cmdline: cmd.into(),
            start,
            end,
            threads: vec![Thread {
                tid: pid,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn file(tl: &mut Timeline, id: u32, magic: u32, path: &str) -> IoObject {
        IoObject {
            id,
            class: FdClass::File,
            fs_magic: magic,
            dev: 1,
            ino: id as u64,
            path: tl.strings.intern(path),
            fd: 3,
        }
    }

    fn io(op: HostOp, ts: Ns, dur: Ns, bytes: u64, id: u32) -> HostSpan {
        HostSpan {
            ts,
            dur,
            arg: bytes,
            id,
            kind: SpanKind::Host(op),
        }
    }

    fn sample(ts: Ns, cpu_ns: u64) -> Sample {
        Sample {
            ts,
            cpu_ns,
            state: b'R',
            ..Default::default()
        }
    }

    fn names(tl: &Timeline, roles: &[Role]) -> Vec<(u32, &'static str)> {
        tl.processes
            .iter()
            .zip(roles)
            .map(|(p, r)| (p.pid, r.name()))
            .collect()
    }

    #[test]
    fn io_wait_by_filesystem_and_file_inside_the_window() {
        let mut tl = Timeline::new(Source::Native, "t");
        let mut p = proc(10, 1, "python r.py", 0, 1_000_000);
        let a = file(&mut tl, 1, 0xEF53, "/data/a.bin");
        let b = file(&mut tl, 2, 0x6969, "/mnt/nfs/b.bin");
        let pipe = IoObject {
            class: FdClass::Pipe,
            ..file(&mut tl, 3, 0x5049_5045, "")
        };
        p.objects = vec![a, b, pipe];
        p.threads[0].spans = vec![
            // Before the window: start-up's read, not the steps'.
            io(HostOp::Read, 50, 100, 4096, 1),
            io(HostOp::Read, 1_000, 1_000, 1_000_000, 1),
            io(HostOp::Pread, 3_000, 1_000, 1_000_000, 1),
            io(HostOp::Read, 5_000, 4_000, 2_000_000, 2),
            // A pipe is a producer, not storage; a poll is no read.
            io(HostOp::Read, 6_000, 9_000, 10, 3),
            io(HostOp::Poll, 7_000, 9_000, 0, 1),
            io(HostOp::Write, 20_000, 1_000, 500, 1),
            // After the window.
            io(HostOp::Read, 90_000, 1_000, 77, 2),
        ];
        p.threads[0].samples = vec![sample(0, 0), sample(500, 100), sample(50_000, 30_100)];
        tl.processes.push(p);
        let h = analyze(&tl, (1_000, 60_000));
        assert_eq!(h.io_by_fs.len(), 2);
        let nfs = &h.io_by_fs[0];
        assert_eq!((nfs.what.as_str(), nfs.fs), ("nfs", "nfs"));
        assert_eq!((nfs.wait_ns, nfs.bytes, nfs.calls), (4_000, 2_000_000, 1));
        // 2 MB in 4 µs.
        assert_eq!(nfs.mb_per_s(), 500_000.0);
        let ext4 = &h.io_by_fs[1];
        assert_eq!((ext4.what.as_str(), ext4.fs), ("ext4", "ext4"));
        assert_eq!(
            (ext4.wait_ns, ext4.bytes, ext4.calls),
            (3_000, 2_000_500, 3)
        );
        let files: Vec<(&str, &str, u64)> = h
            .io_by_file
            .iter()
            .map(|f| (f.what.as_str(), f.fs, f.bytes))
            .collect();
        assert_eq!(
            files,
            vec![
                ("/mnt/nfs/b.bin", "nfs", 2_000_000),
                ("/data/a.bin", "ext4", 2_000_500)
            ]
        );
        let ph = &h.processes[0];
        assert_eq!((ph.io_wait_ns, ph.io_bytes), (7_000, 4_000_500));
        // CPU from the last sample before the window to the last inside.
        assert_eq!(ph.cpu_ns, 30_000);
        assert_eq!(ph.role, Role::Main);
    }

    #[test]
    fn calls_below_the_span_threshold_are_counted_apart() {
        let mut tl = Timeline::new(Source::Native, "t");
        let mut p = proc(10, 1, "python", 0, 100);
        p.objects = vec![file(&mut tl, 1, 0xEF53, "/a")];
        p.threads[0].spans = vec![io(HostOp::Read, 10, 30, 4096, 1)];
        let mut totals = vec![OpTotals::default(); HostOp::ALL.len()];
        totals[HostOp::Read as usize] = OpTotals {
            calls: 11,
            bytes: 4096 + 10 * 100,
            ns: 30 + 50,
        };
        totals[HostOp::Poll as usize] = OpTotals {
            calls: 5,
            bytes: 0,
            ns: 1_000,
        };
        p.threads[0].totals = totals;
        tl.processes.push(p);
        let h = analyze(&tl, (0, 100));
        assert_eq!(
            h.unattributed,
            Unattributed {
                calls: 10,
                bytes: 1000,
                ns: 50
            }
        );
    }

    /// A run of short calls is one span over its extent; the file's row
    /// counts its calls and the time inside them, and the calls left over
    /// are the ones outside any span.
    #[test]
    fn a_run_of_short_calls_counts_its_calls_and_their_time() {
        let mut tl = Timeline::new(Source::Native, "t");
        let mut p = proc(10, 1, "python", 0, 100_000);
        p.objects = vec![file(&mut tl, 1, 0xEF53, "/a")];
        p.threads[0].spans = vec![
            io(HostOp::Pread, 1_000, 30, 4096, 1),
            // 100 reads of 4 KiB in 10 µs, 8 µs of it inside the calls.
            io(HostOp::Pread, 2_000, 10_000, 409_600, 1),
            // After the run.
            io(HostOp::Pread, 12_000, 40, 4096, 1),
        ];
        p.threads[0].runs = vec![RunSpan {
            ts: 2_000,
            dur: 10_000,
            op: HostOp::Pread,
            obj: 1,
            calls: 100,
            files: 1,
            busy_ns: 8_000,
        }];
        let mut totals = vec![OpTotals::default(); HostOp::ALL.len()];
        totals[HostOp::Pread as usize] = OpTotals {
            calls: 2 + 100 + 7,
            bytes: 2 * 4096 + 409_600 + 700,
            ns: 70 + 8_000 + 100,
        };
        p.threads[0].totals = totals;
        tl.processes.push(p);
        let h = analyze(&tl, (0, 100_000));
        let f = &h.io_by_file[0];
        assert_eq!(
            (f.calls, f.wait_ns, f.bytes),
            (102, 8_070, 2 * 4096 + 409_600)
        );
        assert_eq!(h.processes[0].io_wait_ns, 8_070);
        assert_eq!(
            h.unattributed,
            Unattributed {
                calls: 7,
                bytes: 700,
                ns: 100
            }
        );
        // Outside the window, the run is not counted, nor found by mistake
        // for a later span.
        let h = analyze(&tl, (5_000, 100_000));
        assert_eq!((h.io_by_file[0].calls, h.io_by_file[0].wait_ns), (1, 40));
    }

    /// A run over small files has their folder as its object: the folder's
    /// files are one row, apart from a file of the same name read alone.
    #[test]
    fn a_folders_files_are_one_row() {
        let mut tl = Timeline::new(Source::Native, "t");
        let mut p = proc(10, 1, "python", 0, 100_000);
        let dir = IoObject {
            class: FdClass::Dir,
            ..file(&mut tl, 1, 0xEF53, "/data/train")
        };
        p.objects = vec![dir, file(&mut tl, 2, 0xEF53, "/data/train")];
        p.threads[0].spans = vec![
            io(HostOp::Read, 1_000, 10_000, 600 * 4096, 1),
            io(HostOp::Read, 20_000, 10_000, 600 * 4096, 1),
            io(HostOp::Read, 40_000, 50, 4096, 2),
        ];
        let run = |ts| RunSpan {
            ts,
            dur: 10_000,
            op: HostOp::Read,
            obj: 1,
            calls: 600,
            files: 600,
            busy_ns: 9_000,
        };
        p.threads[0].runs = vec![run(1_000), run(20_000)];
        tl.processes.push(p);
        let h = analyze(&tl, (0, 100_000));
        let rows: Vec<_> = h
            .io_by_file
            .iter()
            .map(|f| (f.what.as_str(), f.calls, f.wait_ns))
            .collect();
        assert_eq!(
            rows,
            [("/data/train/*", 1_200, 18_000), ("/data/train", 1, 50)]
        );
        assert_eq!(h.io_by_fs[0].calls, 1_201);
        let root = IoObject {
            class: FdClass::Dir,
            ..file(&mut tl, 3, 0xEF53, "/")
        };
        assert_eq!(root.label(&tl.strings), "/*");
    }

    #[test]
    fn host_only_roles_launchers_main_and_workers() {
        let mut tl = Timeline::new(Source::Native, "t");
        // `sh -c 'env python main.py'`: the shell forks, its child execs env,
        // which execs python (pid 3 keeps its pid), which forks workers 4 and
        // 5; worker 4 forks a helper 6. The shell also ran `date` (7) briefly
        // before, which is the job too (under the launcher, not the main).
        tl.processes
            .push(proc(2, 1, "sh -c env python main.py", 0, 1000));
        tl.processes.push(proc(7, 2, "date", 1, 2));
        tl.processes
            .push(proc(3, 2, "sh -c env python main.py", 3, 4));
        tl.processes.push(proc(3, 2, "env python main.py", 4, 5));
        tl.processes.push(proc(3, 2, "python main.py", 5, 999));
        tl.processes.push(proc(4, 3, "python main.py", 100, 900));
        tl.processes.push(proc(5, 3, "python main.py", 100, 900));
        tl.processes.push(proc(6, 4, "python main.py", 200, 300));
        // pyenv's helper, forked by the wrapper image of pid 3 before it
        // exec'd into python: a launcher's helper, not a worker.
        tl.processes
            .push(proc(8, 3, "bash pyenv-which python", 4, 5));
        // Something unrelated the recording caught (no recorded parent).
        tl.processes.push(proc(50, 40, "python other.py", 10, 20));
        let r = roles(&tl, (Ns::MIN, Ns::MAX));
        assert_eq!(
            names(&tl, &r),
            vec![
                (2, "launcher"),
                (7, "other"),
                (3, "launcher"),
                (3, "launcher"),
                (3, "main"),
                (4, "worker"),
                (5, "worker"),
                (6, "worker"),
                (8, "other"),
                (50, "main"),
            ]
        );
        // A main process that forks one worker stays the main one (the
        // worker keeps its command line), and one that ran a short helper
        // program is no launcher either.
        let mut tl = Timeline::new(Source::Native, "t");
        tl.processes.push(proc(3, 1, "python main.py", 0, 1000));
        tl.processes.push(proc(4, 3, "python main.py", 10, 990));
        let r = roles(&tl, (Ns::MIN, Ns::MAX));
        assert_eq!(names(&tl, &r), vec![(3, "main"), (4, "worker")]);
        let mut tl = Timeline::new(Source::Native, "t");
        tl.processes.push(proc(3, 1, "python main.py", 0, 1000));
        tl.processes.push(proc(4, 3, "uname -a", 10, 20));
        let r = roles(&tl, (Ns::MIN, Ns::MAX));
        assert_eq!(names(&tl, &r), vec![(3, "main"), (4, "worker")]);
    }

    #[test]
    fn gpu_roles_trainer_workers_launchers_other() {
        let mut tl = Timeline::new(Source::Native, "t");
        tl.processes.push(proc(1, 0, "torchrun train.py", 0, 1000));
        tl.processes.push(proc(9, 1, "nvidia-smi", 5, 6));
        tl.processes
            .push(proc(10, 1, "sh -c exec python train.py", 10, 20));
        let mut trainer = proc(10, 1, "python train.py", 20, 990);
        trainer.threads[0].spans = vec![HostSpan {
            ts: 30,
            dur: 5,
            arg: 7,
            id: 0,
            kind: SpanKind::CudaRuntime,
        }];
        tl.processes.push(trainer);
        tl.processes.push(proc(11, 10, "python train.py", 40, 980));
        let r = roles(&tl, (Ns::MIN, Ns::MAX));
        assert_eq!(
            names(&tl, &r),
            vec![
                (1, "launcher"),
                (9, "other"),
                (10, "launcher"),
                (10, "trainer"),
                (11, "worker"),
            ]
        );
    }

    #[test]
    fn dropped_records_and_damage() {
        let mut tl = Timeline::new(Source::Native, "t");
        let mut p = proc(10, 1, "python", 0, 100);
        p.dropped_records = 7;
        tl.processes.push(p);
        let mut q = proc(11, 10, "python", 0, 100);
        q.dropped_records = 5;
        tl.processes.push(q);
        tl.warn("skipped a damaged chunk: /r/11.sst: at byte offset 4096 (0x1000): bad");
        tl.warn("pid 10: 7 records were dropped at the size cap (raise --max-mb)");
        tl.info("pid 10: skipped nothing");
        let h = analyze(&tl, (0, 100));
        assert_eq!(h.dropped_records, 12);
        assert_eq!(
            h.damage,
            vec!["skipped a damaged chunk: /r/11.sst: at byte offset 4096 (0x1000): bad"]
        );
    }
}
