//! The attribution rules of the diagnosis, on small hand-built timelines: each
//! test builds the situation a rule is about and checks where the idle time went.

use stallscope_analyzer::analysis::{Cause, Diagnosis, diagnose};
use stallscope_analyzer::model::{
    CopyKind, Gpu, GpuOp, GpuOpKind, HostSpan, IoObject, MemKind, Ns, Precision, Process, RunSpan,
    Sample, Source, SpanKind, Stream, Thread, Timeline,
};
use stallscope_analyzer::output::{report::Report, text};
use stallscope_format::{FdClass, HostOp};

const MS: Ns = 1_000_000;
const US: Ns = 1_000;

struct B {
    tl: Timeline,
    corr: u32,
}

impl B {
    fn new() -> B {
        let mut tl = Timeline::new(Source::Native, "rules");
        tl.gpus.push(Gpu {
            id: 0,
            name: "test".into(),
            cc: (9, 0),
            streams: vec![Stream { id: 7, ops: vec![] }],
            ..Default::default()
        });
        tl.processes.push(Process {
            pid: 10,
            ppid: 1,
            cmdline: "python train.py".into(),
            ..Default::default()
        });
        tl.processes[0].threads.push(Thread {
            tid: 10,
            ..Default::default()
        });
        B { tl, corr: 1 }
    }

    fn name(&mut self, s: &str) -> u32 {
        self.tl.strings.intern(s)
    }

    /// The trainer's file at `path` on the filesystem `fs_magic`, as
    /// object 1 (spans name it by that id).
    fn file(&mut self, path: &str, fs_magic: u32) {
        let path = self.name(path);
        self.tl.processes[0].objects.push(IoObject {
            id: 1,
            class: FdClass::File,
            fs_magic,
            dev: 1,
            ino: 2,
            path,
            fd: 4,
        });
    }

    /// One forked worker (process 1) and the pipe from it, the trainer's
    /// object `obj`.
    fn worker(&mut self, obj: u32) {
        let pipe = self.name("pipe:[42]");
        self.tl.processes[0].objects.push(IoObject {
            id: obj,
            class: FdClass::Pipe,
            fs_magic: 0,
            dev: 0,
            ino: 42,
            path: pipe,
            fd: 5,
        });
        self.tl.processes.push(Process {
            pid: 11,
            ppid: 10,
            cmdline: "python train.py".into(),
            ..Default::default()
        });
        self.tl.processes[1].threads.push(Thread {
            tid: 11,
            ..Default::default()
        });
    }

    fn span(&mut self, proc_: usize, kind: SpanKind, ts: Ns, dur: Ns, id: u32, arg: u64) {
        self.tl.processes[proc_].threads[0].spans.push(HostSpan {
            ts,
            dur,
            arg,
            id,
            kind,
        });
    }

    /// A launch call at `t` for a kernel running [start, start+dur) on `stream`.
    fn launch(&mut self, t: Ns, start: Ns, dur: Ns, kernel: &str, stream: u64) {
        let corr = self.corr;
        self.corr += 1;
        let api = self.name("cudaLaunchKernel");
        self.span(0, SpanKind::CudaRuntime, t, 5 * US, api, corr as u64);
        let name = self.name(kernel);
        let g = &mut self.tl.gpus[0];
        if g.streams.iter().all(|s| s.id != stream) {
            g.streams.push(Stream {
                id: stream,
                ops: vec![],
            });
        }
        g.stream_mut(stream).ops.push(GpuOp::new(
            GpuOpKind::Kernel,
            start,
            start + dur,
            corr,
            name,
        ));
    }

    fn sync(&mut self, t: Ns, until: Ns) {
        let id = self.name("cudaStreamSynchronize");
        let corr = self.corr;
        self.corr += 1;
        self.span(0, SpanKind::CudaRuntime, t, until - t, id, corr as u64);
    }

    /// A `dur` long GEMM launched at `t` and a sync on it: when the host
    /// is back.
    fn gemm_and_wait(&mut self, t: Ns, dur: Ns) -> Ns {
        self.launch(t, t + 10 * US, dur, "sm90_xmma_gemm_bf16bf16", 7);
        self.sync(t + 20 * US, t + dur + 10 * US);
        t + dur + 10 * US
    }

    fn step(&mut self, i: usize, start: Ns, end: Ns) {
        let id = self.name(&format!("ProfilerStep#{i}"));
        self.span(0, SpanKind::Annotation, start, end - start, id, 0);
    }

    fn done(mut self) -> (Timeline, Diagnosis) {
        self.tl.finalize();
        let d = diagnose(&self.tl);
        (self.tl, d)
    }
}

fn idle(d: &Diagnosis, c: Cause) -> Ns {
    d.devices[0].idle_by_cause[c.index()]
}

fn top(d: &Diagnosis) -> String {
    d.findings
        .first()
        .map(|f| format!("{}/{}", f.cause, f.sub_cause))
        .unwrap_or_default()
}

/// Each step: launch 10 ms of GPU work, sync, then `cpu` of host work.
fn sync_then_cpu(cpu: Ns) -> (Timeline, Diagnosis) {
    let mut b = B::new();
    let mut t = 0;
    for i in 0..6 {
        let s0 = t;
        b.launch(t, t + 10 * US, 10 * MS, "sm90_xmma_gemm_bf16bf16", 7);
        b.sync(t + 20 * US, t + 10 * MS + 10 * US);
        t += 10 * MS + 10 * US + cpu;
        b.step(i, s0, t);
    }
    b.done()
}

#[test]
fn host_work_after_a_sync_is_the_syncs_up_to_the_wait() {
    // 4 ms of logging after a 10 ms wait: all of it could have overlapped.
    let (_, d) = sync_then_cpu(4 * MS);
    assert!(
        idle(&d, Cause::Sync) >= 5 * 4 * MS,
        "{:?}",
        d.devices[0].idle_by_cause
    );
    assert_eq!(idle(&d, Cause::Cpu), 0);
    assert_eq!(top(&d), "sync/stream");

    // 30 ms after a 10 ms wait: 10 ms is the sync's, 20 ms is CPU-bound.
    let (_, d) = sync_then_cpu(30 * MS);
    let (sync, cpu) = (idle(&d, Cause::Sync), idle(&d, Cause::Cpu));
    assert!(cpu > sync && sync > 0, "sync {sync} cpu {cpu}");
    // 30 ms without a launch is host work (not dispatch), which moving it
    // off the loop removes.
    assert_eq!(
        top(&d),
        "cpu/host-work",
        "removing the CPU work saves more than removing the sync"
    );
    let f = &d.findings[0];
    // Without the CPU work a step is the 10 ms of GPU work.
    assert!(
        (f.est_step_ns_after - 10 * MS).abs() < MS,
        "{}",
        f.est_step_ns_after
    );
}

/// torch.compile until `compiled` (start-up: the window starts there), a
/// 20 ms GEMM waited for until 20.01 ms, 4 ms of host work, then 40 ms of
/// dispatch-bound kernels that never repeat (no steps) and no wait.
fn compiled_then_synced(compiled: Ns) -> Diagnosis {
    let mut b = B::new();
    let compile = b.name("torch/_inductor/compile_fx.py(1420): compile_fx");
    b.span(0, SpanKind::Annotation, 0, compiled, compile, 0);
    let mut t = b.gemm_and_wait(0, 20 * MS) + 4 * MS;
    let end = t + 40 * MS;
    while t < end {
        let k = format!("sm90_xmma_gemm_bf16bf16_{t}");
        b.launch(t, t + 5 * US, 150 * US, &k, 7);
        t += 200 * US;
    }
    b.done().1
}

#[test]
fn a_sync_claims_only_its_wait_inside_the_window() {
    // The wait ends before start-up does: the replay, which starts at the
    // window, cannot remove it, so the host work after it is the host's.
    let d = compiled_then_synced(20 * MS + 100 * US);
    assert_eq!(d.window.0, 20 * MS + 100 * US);
    let (sync, cpu) = (idle(&d, Cause::Sync), idle(&d, Cause::Cpu));
    assert_eq!(sync, 0, "{:?}", d.devices[0].idle_by_cause);
    assert!(cpu >= 3 * MS + 800 * US, "{:?}", d.devices[0].idle_by_cause);
    // The wait straddles the window's start: 1 ms of it is inside, and as
    // much of the host work after it could have overlapped the GEMM.
    let d = compiled_then_synced(19 * MS + 10 * US);
    assert_eq!(d.window.0, 19 * MS + 10 * US);
    let (sync, cpu) = (idle(&d, Cause::Sync), idle(&d, Cause::Cpu));
    assert!(
        (900 * US..=MS + 100 * US).contains(&sync) && cpu >= 2 * MS + 800 * US,
        "{:?}",
        d.devices[0].idle_by_cause
    );
}

#[test]
fn every_idle_nanosecond_gets_one_cause() {
    let (_, d) = sync_then_cpu(7 * MS);
    let dev = &d.devices[0];
    let sum: Ns = dev.idle_by_cause.iter().sum();
    assert_eq!(sum, dev.idle_ns);
    let gaps: Ns = dev.gaps.iter().map(|g| g.dur()).sum();
    assert_eq!(gaps, dev.idle_ns);
    assert!(
        dev.gaps.windows(2).all(|w| w[0].end <= w[1].start),
        "gaps overlap"
    );
    assert_eq!(dev.busy_ns + dev.idle_ns, dev.window.1 - dev.window.0);
}

/// A trainer that waits on a pipe before each step, and one forked worker
/// whose samples say what it did meanwhile.
fn data_wait(worker: &dyn Fn(&mut Process, Ns, Ns)) -> Diagnosis {
    let mut b = B::new();
    b.worker(1);
    let mut t = 0;
    for i in 0..6 {
        let s0 = t;
        b.span(0, SpanKind::Host(HostOp::Poll), t, 20 * MS, 1, 0);
        worker(&mut b.tl.processes[1], t, t + 20 * MS);
        t += 20 * MS;
        t = b.gemm_and_wait(t, 10 * MS);
        b.step(i, s0, t);
    }
    b.done().1
}

/// A sample of a runnable thread: its CPU time and run-queue delay so far.
fn runnable(ts: Ns, cpu_ns: u64, run_delay_ns: u64) -> Sample {
    Sample {
        ts,
        cpu_ns,
        run_delay_ns,
        majflt: 0,
        minflt: 0,
        state: b'R',
    }
}

/// Samples of the trainer thread (up to `end`) that say it waited 4 ms
/// for a CPU at each of `at`.
fn waited_4_ms_at(b: &mut B, at: &[Ns], end: Ns) {
    let th = &mut b.tl.processes[0].threads[0];
    let mut delay = 0;
    th.samples.push(runnable(0, 0, 0));
    for &p in at {
        th.samples.push(runnable(p - MS, 0, delay));
        delay += 4 * MS as u64;
        th.samples.push(runnable(p + 5 * MS, 0, delay));
    }
    th.samples.push(runnable(end + MS, 0, delay));
}

fn samples(p: &mut Process, a: Ns, b: Ns, cpu_share: f64, state: u8) {
    let t = &mut p.threads[0];
    let base = t.samples.last().map_or(0, |s| s.cpu_ns);
    let mut ts = a;
    while ts <= b {
        let cpu = base + ((ts - a) as f64 * cpu_share) as u64;
        t.samples.push(Sample {
            ts,
            cpu_ns: cpu,
            run_delay_ns: 0,
            majflt: 0,
            minflt: 0,
            state,
        });
        ts += MS;
    }
}

#[test]
fn waiting_for_batches_follows_the_producers() {
    let d = data_wait(&|p, a, b| samples(p, a, b, 0.95, b'R'));
    assert_eq!(top(&d), "data/cpu");
    advises_what_it_models(&d);

    let d = data_wait(&|p, a, b| {
        samples(p, a, b, 0.05, b'D');
        let path = p.objects.len() as u32 + 1;
        p.objects.push(IoObject {
            id: path,
            class: FdClass::File,
            fs_magic: 0x6969,
            dev: 1,
            ino: 9,
            path: 0,
            fd: 3,
        });
        let t = &mut p.threads[0];
        let mut ts = a;
        while ts + MS <= b {
            t.spans.push(HostSpan {
                ts,
                dur: 900 * US,
                arg: 65536,
                id: path,
                kind: SpanKind::Host(HostOp::Read),
            });
            ts += MS;
        }
    });
    assert_eq!(top(&d), "data/io");
    advises_what_it_models(&d);

    let d = data_wait(&|p, a, b| samples(p, a, b, 0.0, b'S'));
    assert_eq!(top(&d), "data/starved");
    advises_what_it_models(&d);
}

/// A data finding's fix leads with the workers its what-if modeled: a
/// sleeping producer was once advised a deeper prefetch_factor while the
/// saving assumed twice the workers.
/// A worker slowed by other load on the machine: half of each 20 ms batch
/// wait it was runnable but waiting for a CPU. More workers, which the fix
/// assumes get cores, make a batch in 20 ms less that wait each (30 ms
/// between batches recorded, 10 ms of it waiting), not in 30 ms.
#[test]
fn the_data_fix_leaves_out_the_producers_wait_for_a_cpu() {
    let loaded = |p: &mut Process, a: Ns, b: Ns| {
        let t = &mut p.threads[0];
        let (cpu0, delay0) = t
            .samples
            .last()
            .map_or((0, 0), |s| (s.cpu_ns, s.run_delay_ns));
        let mut ts = a;
        while ts <= b {
            let half = (ts - a) as u64 / 2;
            t.samples.push(runnable(ts, cpu0 + half, delay0 + half));
            ts += MS;
        }
    };
    let d = data_wait(&loaded);
    assert_eq!(top(&d), "data/cpu");
    let f = &d.findings[0];
    assert!(
        f.assumption.contains("num_workers 1 -> 4")
            && f.assumption.contains("waited for a CPU")
            && f.assumption
                .contains("a batch every 5.0 ms instead of every 30.0 ms"),
        "{}",
        f.assumption
    );
    // Without load the assumption is the recorded interval, and says nothing of it.
    let d = data_wait(&|p, a, b| samples(p, a, b, 0.95, b'R'));
    let f = &d.findings[0];
    assert!(
        !f.assumption.contains("CPU") && f.assumption.contains("a batch every 7.5 ms"),
        "{}",
        f.assumption
    );
}

fn advises_what_it_models(d: &Diagnosis) {
    let f = &d.findings[0];
    assert!(
        f.assumption.contains("num_workers 1 -> 4"),
        "{}",
        f.assumption
    );
    assert!(
        f.fix
            .starts_with("more DataLoader workers (num_workers 1 -> 4)"),
        "{}",
        f.fix
    );
    assert!(!f.fix.contains("prefetch_factor"), "{}", f.fix);
}

#[test]
fn reads_in_the_loop_are_io_with_the_filesystem() {
    let mut b = B::new();
    b.file("/mnt/data/shard.arrow", 0x6969);
    let mut t = 0;
    for i in 0..5 {
        let s0 = t;
        for _ in 0..10 {
            b.span(0, SpanKind::Host(HostOp::Read), t, MS, 1, 1 << 20);
            t += MS + 10 * US;
        }
        t = b.gemm_and_wait(t, 10 * MS);
        b.step(i, s0, t);
    }
    let (_, d) = b.done();
    assert_eq!(top(&d), "io/nfs");
    assert!(
        d.findings[0]
            .evidence
            .contains("/mnt/data/shard.arrow on nfs"),
        "{}",
        d.findings[0].evidence
    );
}

/// Each step the loop reads a folder of small files, one after another:
/// one run of 10 ms, `busy` of it inside the calls and the rest its own
/// Python between them; then a 10 ms GEMM.
fn small_files_in_the_loop(busy: Ns) -> Diagnosis {
    let mut b = B::new();
    b.file("/mnt/data/images", 0x6969);
    b.tl.processes[0].objects[0].class = FdClass::Dir;
    let mut t = 0;
    for i in 0..5 {
        let s0 = t;
        b.span(0, SpanKind::Host(HostOp::Read), t, 10 * MS, 1, 600 * 4096);
        b.tl.processes[0].threads[0].runs.push(RunSpan {
            ts: t,
            dur: 10 * MS,
            op: HostOp::Read,
            obj: 1,
            calls: 600,
            files: 600,
            busy_ns: busy as u64,
        });
        t += 10 * MS + 10 * US;
        t = b.gemm_and_wait(t, 10 * MS);
        b.step(i, s0, t);
    }
    b.done().1
}

/// Faster storage saves a run's time in calls, not the loop's own time
/// between them; many small files are advised shards.
#[test]
fn small_files_read_in_the_loop_save_their_time_in_calls_and_are_advised_shards() {
    let saved = |d: &Diagnosis| d.steps.mean_ns as f64 - d.findings[0].est_step_ns_after as f64;
    let (dense, sparse) = (
        small_files_in_the_loop(10 * MS),
        small_files_in_the_loop(6 * MS),
    );
    assert_eq!(top(&sparse), "io/nfs");
    let ratio = saved(&sparse) / saved(&dense);
    assert!(
        (ratio - 0.6).abs() < 0.05,
        "saves {ratio:.2} of what a run all in calls saves, not 0.6"
    );
    let f = &sparse.findings[0];
    assert!(
        f.evidence.contains("/mnt/data/images/* (3000 small files"),
        "{}",
        f.evidence
    );
    assert!(f.fix.contains("shards"), "{}", f.fix);
}

/// Each step: the trainer waits `batch_wait` on the pipe from its one
/// DataLoader worker while the GPU runs the last step's 3 ms kernel, then
/// reads 5 ms of files while the GPU idles, then launches the next kernel.
fn reads_between_batches(batch_wait: Ns) -> Diagnosis {
    let mut b = B::new();
    b.file("/mnt/data/shard.arrow", 0x6969);
    b.worker(2);
    let mut t = 0;
    for i in 0..12 {
        let s0 = t;
        b.span(0, SpanKind::Host(HostOp::Poll), t, batch_wait, 2, 0);
        t += batch_wait;
        for _ in 0..5 {
            b.span(0, SpanKind::Host(HostOp::Read), t, MS, 1, 1 << 20);
            t += MS;
        }
        b.launch(t, t + 10 * US, 3 * MS, "sm90_xmma_gemm_bf16bf16", 7);
        t += 20 * US;
        b.step(i, s0, t);
    }
    samples(&mut b.tl.processes[1], 0, t, 0.95, b'R');
    b.done().1
}

/// When the workers pace the loop (the trainer waits for every batch while
/// the GPU is still busy), serving the reads from RAM alone only moves the
/// wait to the next batch: the io finding says so, and is worth what it is
/// together with faster batches, which it then also advises. With batches
/// ready on time, the reads' fix is worth its idle time alone, and the
/// finding says nothing of batches.
#[test]
fn a_fix_the_batch_pace_would_swallow_is_paired_with_faster_batches() {
    let paced = reads_between_batches(3 * MS);
    assert_eq!(top(&paced), "io/nfs", "{:#?}", paced.findings);
    let f = &paced.findings[0];
    let window = paced.window.1 - paced.window.0;
    // Alone, it saves only what the first batch's wait gives back.
    let alone: f64 = f
        .evidence
        .split("alone, this fix saves ")
        .nth(1)
        .and_then(|r| r.split('%').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}", f.evidence));
    assert!(alone < 10.0, "{}", f.evidence);
    assert!(f.fix.contains("num_workers 1 -> 4"), "{}", f.fix);
    assert!(
        f.assumption.contains("with faster batches too"),
        "{}",
        f.assumption
    );
    // The GPU idles 5 of every 8 ms; with both fixes the 3 ms kernels set
    // the pace.
    assert!(f.est_saving_ns * 2 > window, "{f:?} of {window}");
    let after = f.est_step_ns_after as f64;
    let ratio = 1.0 - f.est_saving_ns as f64 / window as f64;
    assert!(
        (after / paced.steps.mean_ns as f64 - ratio).abs() < 0.01,
        "{f:?}"
    );
    let all = paced.combined.as_ref().expect("combined");
    assert!(all.est_saving_ns >= f.est_saving_ns, "{all:?} vs {f:?}");

    let ready = reads_between_batches(50 * US);
    assert_eq!(top(&ready), "io/nfs", "{:#?}", ready.findings);
    let f = &ready.findings[0];
    assert!(!f.evidence.contains("alone"), "{}", f.evidence);
    assert!(!f.fix.contains("num_workers"), "{}", f.fix);
    // Alone, it saves about its idle time.
    let window = ready.window.1 - ready.window.0;
    let idle = f.share_pct / 100.0 * window as f64;
    assert!(f.est_saving_ns as f64 > 0.9 * idle, "{f:?} of {window}");
}

/// Each step the loop reads 5 ms of files while the GPU idles, then
/// launches a 3 ms kernel: it never waits for a batch. Its one DataLoader
/// worker is at work `busy` of each step, and waits for its next index on
/// a pipe the rest of it.
fn reads_with_a_worker_at(busy: f64) -> Diagnosis {
    let mut b = B::new();
    b.file("/mnt/data/shard.arrow", 0x6969);
    b.worker(2);
    let mut t = 0;
    for i in 0..12 {
        let s0 = t;
        for _ in 0..5 {
            b.span(0, SpanKind::Host(HostOp::Read), t, MS, 1, 1 << 20);
            t += MS;
        }
        b.launch(t, t + 10 * US, 3 * MS, "sm90_xmma_gemm_bf16bf16", 7);
        t += 20 * US;
        b.step(i, s0, t);
        let spare = ((1.0 - busy) * (t - s0) as f64) as Ns;
        if spare > 0 {
            b.span(1, SpanKind::Host(HostOp::Poll), t - spare, spare, 0, 0);
        }
    }
    samples(&mut b.tl.processes[1], 0, t, busy, b'R');
    b.done().1
}

/// A loop that never waits for a batch may still be paced by its workers:
/// when they had no spare time, a faster loop would wait for batches, so
/// the io fix alone saves at most their spare share, and says so. With
/// workers mostly waiting for work, it saves its idle time.
#[test]
fn a_loop_fix_saves_no_more_than_the_busy_workers_spare_time() {
    let balanced = reads_with_a_worker_at(0.97);
    let f = balanced
        .findings
        .iter()
        .chain(&balanced.minor)
        .find(|f| f.cause == "io")
        .unwrap_or_else(|| panic!("no io finding: {:#?}", balanced.findings));
    let window = (balanced.window.1 - balanced.window.0) as f64;
    assert!(
        (f.est_saving_ns as f64) < 0.05 * window,
        "{f:?} of {window}"
    );
    assert!(f.evidence.contains("at work 97%"), "{}", f.evidence);
    assert!(f.assumption.contains("spare time"), "{}", f.assumption);
    // Nor does every fix at once.
    let all = balanced.combined.as_ref().expect("combined");
    assert!(
        (all.est_saving_ns as f64) < 0.05 * window,
        "{all:?} of {window}"
    );

    let slack = reads_with_a_worker_at(0.3);
    assert_eq!(top(&slack), "io/nfs", "{:#?}", slack.findings);
    let f = &slack.findings[0];
    assert!(!f.evidence.contains("at work"), "{}", f.evidence);
    let window = slack.window.1 - slack.window.0;
    let idle = f.share_pct / 100.0 * window as f64;
    assert!(f.est_saving_ns as f64 > 0.9 * idle, "{f:?} of {window}");
}

/// Each step: 10 ms of GPU work, then the loop writes `writes` of `bytes`
/// each (`write_ns` apiece) to `path` and fsyncs it (`fsync_ns`).
fn writes_each_step(
    path: &str,
    writes: usize,
    bytes: u64,
    write_ns: Ns,
    fsync_ns: Ns,
) -> Diagnosis {
    let mut b = B::new();
    b.file(path, 0xEF53);
    let mut t = 0;
    for i in 0..6 {
        let s0 = t;
        t = b.gemm_and_wait(t, 10 * MS);
        for _ in 0..writes {
            b.span(0, SpanKind::Host(HostOp::Write), t, write_ns, 1, bytes);
            t += write_ns + US;
        }
        b.span(0, SpanKind::Host(HostOp::Fsync), t, fsync_ns, 1, 0);
        t += fsync_ns + US;
        b.step(i, s0, t);
    }
    b.done().1
}

#[test]
fn a_stall_on_small_appends_is_advised_as_logging_and_on_large_writes_as_saving() {
    // A metrics log: one 200-byte record and an fsync per step.
    let d = writes_each_step("/runs/exp1/metrics.jsonl", 1, 200, 20 * US, 4 * MS);
    let f = &d.findings[0];
    assert_eq!(f.cause, "io", "{:?}", d.findings);
    assert!(
        f.fix.starts_with("log from a background thread"),
        "{}",
        f.fix
    );
    assert!(f.assumption.contains("log writes"), "{}", f.assumption);
    assert!(
        f.evidence.contains("writing /runs/exp1/metrics.jsonl"),
        "{}",
        f.evidence
    );

    // A checkpoint: eight 4 MB tensor writes and an fsync per step.
    let d = writes_each_step("/ckpt/model.pt", 8, 4 << 20, MS / 2, 2 * MS);
    let f = &d.findings[0];
    assert_eq!(f.cause, "io", "{:?}", d.findings);
    assert!(f.fix.starts_with("save asynchronously"), "{}", f.fix);
    assert!(f.assumption.contains("the saves move"), "{}", f.assumption);
}

#[test]
fn work_queued_behind_another_stream_is_other() {
    let mut b = B::new();
    let mut t = 0;
    for i in 0..5 {
        let s0 = t;
        // Both launched at once; stream 8 waits for stream 7 (an event), then
        // stream 7 idles until the next step.
        b.launch(t, t + 10 * US, 5 * MS, "sm90_xmma_gemm_bf16bf16", 7);
        b.launch(
            t + 10 * US,
            t + 10 * US + 5 * MS + 20 * US,
            5 * MS,
            "ncclDevKernel_AllReduce",
            8,
        );
        b.sync(t + 30 * US, t + 10 * MS + 50 * US);
        t += 10 * MS + 60 * US;
        b.step(i, s0, t);
    }
    let (_, d) = b.done();
    // Only the 20 µs between the two kernels is idle, and it is a dependency.
    assert!(
        idle(&d, Cause::Other) > 0,
        "{:?}",
        d.devices[0].idle_by_cause
    );
    assert_eq!(
        d.devices[0]
            .gaps
            .iter()
            .filter(|g| g.cause == Cause::Other)
            .map(|g| g.sub)
            .next(),
        Some("dependency")
    );
}

/// Five 10 ms steps of one GEMM each, the host waiting on each.
fn gemm_bound_job(kernel: &str) -> Diagnosis {
    let mut b = B::new();
    let mut t = 0;
    for i in 0..5 {
        let s0 = t;
        b.launch(t, t + 10 * US, 10 * MS, kernel, 7);
        b.sync(t + 20 * US, t + 10 * MS + 10 * US);
        t += 10 * MS + 20 * US;
        b.step(i, s0, t);
    }
    b.done().1
}

#[test]
fn fp32_gemm_time_gives_a_precision_finding_with_its_assumption() {
    let d = gemm_bound_job("ampere_sgemm_128x64_nn");
    assert_eq!(top(&d), "precision/fp32");
    let f = &d.findings[0];
    assert!(
        f.evidence.contains("Hopper") && f.evidence.contains("ampere_sgemm"),
        "{}",
        f.evidence
    );
    assert!(f.est_step_ns_after < 4 * MS, "{}", f.est_step_ns_after);
}

/// Five GPU-bound steps on an H100: a GEMM of `gemm` then SDPA's FP32
/// memory-efficient attention (FP32 q, k, v) of `attention`.
fn gemm_then_fp32_attention(gemm: (&str, Ns), attention: Ns) -> Diagnosis {
    let sdpa = "fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, \
                cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)";
    let mut b = B::new();
    let mut t = 0;
    for i in 0..5 {
        let s0 = t;
        b.launch(t, t + 10 * US, gemm.1, gemm.0, 7);
        b.launch(t + 6 * US, t + 10 * US + gemm.1, attention, sdpa, 7);
        let end = t + 10 * US + gemm.1 + attention;
        b.sync(t + 20 * US, end);
        t = end + 10 * US;
        b.step(i, s0, t);
    }
    b.done().1
}

/// TF32 matmuls do not reach SDPA's FP32 kernels. Where those outweigh the
/// FP32 GEMMs (attention called on FP32 inputs beside BF16 GEMMs), the fix
/// is BF16 autocast with attention inside it, and the what-if moves
/// attention; advising TF32 there saved nothing. Where the FP32 GEMMs
/// weigh more, TF32 stays the first step and attention keeps its time.
#[test]
fn fp32_attention_that_outweighs_the_fp32_gemms_is_advised_autocast() {
    let d = gemm_then_fp32_attention(("sm90_xmma_gemm_bf16bf16", 4 * MS), 6 * MS);
    assert_eq!(top(&d), "precision/fp32");
    let f = &d.findings[0];
    assert!(
        f.fix.contains("torch.bfloat16") && f.fix.contains("attention inside it"),
        "{}",
        f.fix
    );
    assert!(!f.fix.starts_with("smallest step"), "{}", f.fix);
    assert!(f.assumption.contains("attention moves"), "{}", f.assumption);
    // 4 ms + 6 ms / 5.5 and the launch gaps.
    assert!(
        (5 * MS..6 * MS).contains(&f.est_step_ns_after),
        "{}",
        f.est_step_ns_after
    );

    let d = gemm_then_fp32_attention(("ampere_sgemm_128x64_nn", 6 * MS), 4 * MS);
    let f = &d.findings[0];
    assert_eq!(format!("{}/{}", f.cause, f.sub_cause), "precision/fp32");
    assert!(
        f.fix.contains("set_float32_matmul_precision(\"high\")"),
        "{}",
        f.fix
    );
    assert!(f.assumption.contains("keep their time"), "{}", f.assumption);
    // 6 ms / 5.5 + 4 ms.
    assert!(
        (5 * MS..6 * MS).contains(&f.est_step_ns_after),
        "{}",
        f.est_step_ns_after
    );
}

/// A GPU-bound FP32 loop whose host runs `depth` launches ahead: once that
/// many are pending, each launch call blocks until an earlier kernel ends
/// (CUDA holds about 1024; 1022 were pending on an H200 when such calls
/// returned). Six steps of 100 kernels of 2 ms.
fn queue_full_job(depth: usize) -> (Timeline, Diagnosis) {
    let mut b = B::new();
    let (mut t, mut gpu) = (0, 0);
    let mut ends: Vec<Ns> = Vec::new();
    let mut starts = Vec::new();
    for i in 0..600usize {
        if i % 100 == 0 {
            starts.push(t);
        }
        // Blocked until kernel i - depth is done, returning 20 µs after.
        let ret = match i.checked_sub(depth) {
            Some(k) => (t + 5 * US).max(ends[k] + 20 * US),
            None => t + 5 * US,
        };
        let start = gpu.max(ret + 10 * US);
        b.launch(t, start, 2 * MS, "ampere_sgemm_128x64_nn", 7);
        b.tl.processes[0].threads[0].spans.last_mut().unwrap().dur = ret - t;
        gpu = start + 2 * MS;
        ends.push(gpu);
        t = ret + 5 * US;
    }
    starts.push(t);
    for (i, w) in starts.windows(2).enumerate() {
        b.step(i, w[0], w[1]);
    }
    b.done()
}

#[test]
fn a_launch_blocked_on_a_full_queue_returns_when_the_gpu_frees_room() {
    // FP32 -> TF32 ~5x on Hopper: the kernels take 40 ms a step, not 200.
    // Read as the call's own time, the blocked launches held the host to
    // the recorded pace: "200 ms -> 200 ms".
    let (_, d) = queue_full_job(300);
    let f = d
        .findings
        .iter()
        .find(|f| f.cause == "precision")
        .unwrap_or_else(|| panic!("{:?}", d.findings));
    let step = d.steps.mean_ns;
    assert!(step > 190 * MS, "step {step}");
    assert!(
        f.est_step_ns_after < step * 3 / 10,
        "{} -> {}: {}",
        step,
        f.est_step_ns_after,
        f.evidence
    );
    // 100 pending are no full queue: such a slow call is its own cost (a
    // module loading), kept as recorded.
    let (_, d) = queue_full_job(100);
    let f = d.findings.iter().find(|f| f.cause == "precision").unwrap();
    assert!(
        f.est_step_ns_after > d.steps.mean_ns * 8 / 10,
        "{} -> {}",
        d.steps.mean_ns,
        f.est_step_ns_after
    );
}

#[test]
fn cublas_jit_gemms_count_by_their_type_letters() {
    // CUDA 12.8+ cuBLAS names every Hopper/Blackwell GEMM `nvjet_*`.
    let d = gemm_bound_job("nvjet_sss_128x128_32x4_1x2_h_bz_TNT");
    assert_eq!(top(&d), "precision/fp32");
    for bf16 in [
        "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
        "nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT",
    ] {
        let d = gemm_bound_job(bf16);
        assert!(
            d.findings.iter().all(|f| !f.cause.starts_with("precision")),
            "{bf16}: {:?}",
            d.findings.iter().map(|f| &f.cause).collect::<Vec<_>>()
        );
    }
}

#[test]
fn empty_and_host_only_timelines_do_not_panic() {
    let tl = Timeline::new(Source::Native, "empty");
    let d = diagnose(&tl);
    assert!(d.devices.is_empty() && d.findings.is_empty());
    let mut b = B::new();
    b.span(0, SpanKind::Host(HostOp::Read), 0, MS, 0, 10);
    b.tl.gpus.clear();
    let (_, d) = b.done();
    assert!(d.devices.is_empty());
}

/// Batches loaded in the loop (num_workers=0), as a profiler with
/// with_stack=True records them: the DataLoader annotation, and beneath it
/// the Python frames of torch/utils/data/dataloader.py (TraceLens's OWLv2
/// inference traces on MI300X and H100). `op` is the framework op each step
/// runs (an inference or a training job).
fn loading_in_the_loop(op: &str) -> Diagnosis {
    let mut b = B::new();
    let loader = b.name("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
    let frame = b.name("torch/utils/data/dataloader.py(728): __next__");
    let fetch = b.name("torch/utils/data/dataloader.py(787): _next_data");
    let op = b.name(op);
    let mut t = 0;
    for i in 0..6 {
        let s0 = t;
        b.span(0, SpanKind::Annotation, t, 40 * MS, loader, 0);
        b.span(
            0,
            SpanKind::PyFunction,
            t + 10 * US,
            40 * MS - 20 * US,
            frame,
            0,
        );
        b.span(
            0,
            SpanKind::PyFunction,
            t + 20 * US,
            40 * MS - 40 * US,
            fetch,
            0,
        );
        t += 40 * MS;
        b.span(0, SpanKind::CpuOp, t, 30 * US, op, 0);
        b.launch(
            t + 40 * US,
            t + 50 * US,
            10 * MS,
            "sm90_xmma_gemm_bf16bf16",
            7,
        );
        b.sync(t + 60 * US, t + 10 * MS + 50 * US);
        t += 10 * MS + 60 * US;
        b.step(i, s0, t);
    }
    b.done().1
}

#[test]
fn loading_in_the_loop_is_modeled_as_dataloader_workers_whatever_the_python_frames() {
    for (op, mode) in [
        ("aten::linear", "inference"),
        (
            "autograd::engine::evaluate_function: MmBackward0",
            "training",
        ),
    ] {
        let d = loading_in_the_loop(op);
        assert_eq!(top(&d), "data/cpu", "{mode}");
        let f = &d.findings[0];
        // The what-if and the advice are about the loader the trace shows:
        // its num_workers=0, not workers "the trace does not show".
        assert!(
            f.assumption.contains("4 DataLoader workers"),
            "{mode}: {}",
            f.assumption
        );
        assert!(f.fix.contains("num_workers 0 -> 4"), "{mode}: {}", f.fix);
        // 40 ms of loading per 50 ms step: four workers take nearly all of it.
        let window = d.window.1 - d.window.0;
        assert!(f.est_saving_ns > window / 2, "{mode}: {f:?}");
    }
}

/// Each step launches a kernel that starts 40 ms after its quick launch
/// call returned, the GPU idle meanwhile, and no stream-wait record says
/// why (TraceLens's SGLang MI300X traces: hipStreamWaitEvent carries no
/// stream). The op was held on the GPU side: other/dependency, not launch
/// latency.
#[test]
fn an_op_held_long_after_its_quick_launch_is_a_dependency() {
    let mut b = B::new();
    let mut t = 0;
    for i in 0..6 {
        let s0 = t;
        b.launch(t, t + 40 * MS, 5 * MS, "sm90_xmma_gemm_bf16bf16", 7);
        t += 45 * MS + 10 * US;
        b.step(i, s0, t);
    }
    let (_, d) = b.done();
    let (other, launch) = (idle(&d, Cause::Other), idle(&d, Cause::Launch));
    // Five gaps in the window (it starts at the first kernel).
    assert!(other > 5 * 39 * MS, "other {other}, launch {launch}");
    assert!(launch < 6 * MS, "other {other}, launch {launch}");
}

/// A launch call slowed to 5 ms because its thread waited 4.5 ms for a CPU
/// (a loaded machine, as the thread's run-queue samples say): CPU
/// contention, not a slow launch (module loading, JIT).
#[test]
fn a_launch_call_that_waited_for_a_cpu_is_contention() {
    let mut b = B::new();
    let mut t = 0;
    for i in 0..6 {
        let s0 = t;
        let corr = b.corr;
        b.corr += 1;
        let api = b.name("cudaLaunchKernel");
        b.span(0, SpanKind::CudaRuntime, t, 5 * MS, api, corr as u64);
        let k = b.name("sm90_xmma_gemm_bf16bf16");
        b.tl.gpus[0].stream_mut(7).ops.push(GpuOp::new(
            GpuOpKind::Kernel,
            t + 5 * MS + 10 * US,
            t + 15 * MS,
            corr,
            k,
        ));
        t += 15 * MS + 10 * US;
        b.step(i, s0, t);
    }
    // Run-queue delay grows 4.5 ms during each launch call.
    let th = &mut b.tl.processes[0].threads[0];
    let mut delay = 0;
    for i in 0..6u64 {
        let s0 = i as Ns * (15 * MS + 10 * US);
        for (ts, d) in [(s0, 0), (s0 + 5 * MS, 4_500_000)] {
            delay += d;
            th.samples.push(runnable(ts, 0, delay));
        }
    }
    let (_, d) = b.done();
    let (cpu, launch) = (idle(&d, Cause::Cpu), idle(&d, Cause::Launch));
    assert!(cpu > 5 * 4 * MS, "cpu {cpu}, launch {launch}");
    assert!(launch < MS, "cpu {cpu}, launch {launch}");
}

/// Python dispatch (150 us before each 50 us kernel) on a loaded machine:
/// the thread waits for a CPU 60% of the time, so the idle time is
/// cpu/contention. Its what-if is the dispatch one (CUDA graphs: less
/// dispatch, less waiting for a CPU), so the fix leads with that, and the
/// assumption says the wait goes with the dispatch.
#[test]
fn dispatch_that_waits_for_a_cpu_is_advised_as_the_what_if_models_it() {
    let mut b = B::new();
    let mut t = 0;
    for i in 0..6 {
        let s0 = t;
        for _ in 0..100 {
            t += 150 * US;
            b.launch(t, t + 5 * US, 50 * US, "sm90_xmma_gemm_bf16bf16", 7);
            t += 5 * US;
        }
        b.step(i, s0, t);
    }
    // Samples every millisecond: 0.4 ms of CPU and 0.6 ms in the run queue.
    let th = &mut b.tl.processes[0].threads[0];
    for k in 0..=t / MS + 1 {
        th.samples.push(runnable(
            k * MS,
            (k * 400 * US) as u64,
            (k * 600 * US) as u64,
        ));
    }
    let (_, d) = b.done();
    assert_eq!(top(&d), "cpu/contention", "{:#?}", d.findings);
    let f = &d.findings[0];
    assert!(
        f.fix
            .starts_with("less dispatch to wait for a CPU: CUDA graphs"),
        "{}",
        f.fix
    );
    assert!(f.fix.contains("OMP_NUM_THREADS"), "{}", f.fix);
    assert!(
        f.assumption.contains("its wait for a CPU included"),
        "{}",
        f.assumption
    );
    // The burst shrinks to 3 us a launch: the step is the GPU's 5 ms.
    assert!(
        f.est_step_ns_after < 6 * MS,
        "{} -> {}",
        d.steps.mean_ns,
        f.est_step_ns_after
    );
}

/// Python dispatch (150 us before each 100 us kernel) preempted for 4 ms
/// once a step, after a small read (so that the stretch is a segment of its
/// own, not part of a run of dispatch and launches): the run-queue samples
/// around it say the thread waited 4 ms of it. It is dispatch that waited
/// for a CPU (cpu/contention, which CUDA graphs shrink with the dispatch),
/// not host work to move off the loop; and the dispatch what-if removes it
/// with the dispatch.
#[test]
fn dispatch_preempted_between_launches_is_not_host_work() {
    let mut b = B::new();
    b.file("/tmp/train.log", 0xEF53);
    let mut t = 0;
    let mut preempted = Vec::new();
    for i in 0..6 {
        let s0 = t;
        for k in 0..60 {
            if k == 30 {
                b.span(0, SpanKind::Host(HostOp::Read), t, 20 * US, 1, 4096);
                t += 20 * US;
                preempted.push(t);
                t += 4 * MS;
            }
            t += 150 * US;
            b.launch(t, t + 5 * US, 100 * US, "sm90_xmma_gemm_bf16bf16", 7);
            t += 5 * US;
        }
        b.step(i, s0, t);
    }
    waited_4_ms_at(&mut b, &preempted, t);
    let (_, d) = b.done();
    assert!(
        d.findings.iter().all(|f| f.sub_cause != "host-work"),
        "{:#?}",
        d.findings
    );
    let f = d
        .findings
        .iter()
        .find(|f| f.cause == "cpu")
        .unwrap_or_else(|| panic!("no cpu finding: {:#?}", d.findings));
    assert_eq!(f.sub_cause, "contention");
    // Graphs leave the GPU's 6 ms a step (and a launch's latency).
    assert!(
        f.est_step_ns_after < 7 * MS,
        "{} -> {}",
        d.steps.mean_ns,
        f.est_step_ns_after
    );
}

/// A 300 ms context creation, then dispatch-bound GPU work without step
/// markers: 5 ms of it is too little to advise on (no findings, and the
/// start-up says why); 40 ms of it is a steady state with findings.
#[test]
fn too_little_after_start_up_gets_no_findings() {
    let run = |gpu_work: Ns| {
        let mut b = B::new();
        let free = b.name("cudaFree");
        b.span(0, SpanKind::CudaRuntime, 0, 300 * MS, free, 0);
        // Kernels that never repeat: no step pattern to detect.
        let mut t = 300 * MS;
        while t < 300 * MS + gpu_work {
            t += 200 * US;
            let k = format!("sm90_xmma_gemm_bf16bf16_{t}");
            b.launch(t, t + 5 * US, 20 * US, &k, 7);
            t += 5 * US;
        }
        b.done().1
    };
    let short = run(5 * MS);
    let s = short.startup.as_ref().expect("start-up");
    assert!(s.mostly() && s.short_rest && !s.all, "{s:?}");
    assert!(short.findings.is_empty(), "{:#?}", short.findings);
    let long = run(40 * MS);
    let s = long.startup.as_ref().expect("start-up");
    assert!(!s.short_rest, "{s:?}");
    assert_eq!(top(&long), "cpu/python", "{:#?}", long.findings);
}

/// The dispatch loop of `dispatch_preempted_between_launches_is_not_host_work`,
/// preempted inside a launch call instead: the call takes 4 ms, of which the
/// thread waited 4 ms for a CPU. It is dispatch that waited for a CPU too,
/// and the dispatch what-if (CUDA graphs) removes the call with its wait.
#[test]
fn launch_call_preempted_is_dispatch_that_waited_for_a_cpu() {
    let mut b = B::new();
    let api = b.name("cudaLaunchKernel");
    let mut t = 0;
    let mut preempted = Vec::new();
    for i in 0..6 {
        let s0 = t;
        for k in 0..60 {
            t += 150 * US;
            let call = if k == 30 { 4 * MS + 5 * US } else { 5 * US };
            if k == 30 {
                preempted.push(t);
            }
            b.launch(t, t + call, 100 * US, "sm90_xmma_gemm_bf16bf16", 7);
            let spans = &mut b.tl.processes[0].threads[0].spans;
            let last = spans.len() - 1;
            assert_eq!(spans[last].id, api);
            spans[last].dur = call;
            t += call;
        }
        b.step(i, s0, t);
    }
    waited_4_ms_at(&mut b, &preempted, t);
    let (_, d) = b.done();
    let f = d
        .findings
        .iter()
        .find(|f| f.cause == "cpu")
        .unwrap_or_else(|| panic!("no cpu finding: {:#?}", d.findings));
    assert_eq!(f.sub_cause, "contention", "{:#?}", d.findings);
    assert!(
        f.est_step_ns_after < 7 * MS,
        "{} -> {}: {:#?}",
        d.steps.mean_ns,
        f.est_step_ns_after,
        d.findings
    );
}

/// A profiler trace of a dispatch-bound loop fed by DataLoader workers:
/// each step takes a batch (`wait(i)` in the DataLoader range), then
/// launches 60 kernels of 100 µs, 150 µs of Python apart.
fn dispatch_fed_by_workers(wait: impl Fn(usize) -> Ns) -> Diagnosis {
    let mut b = B::new();
    b.tl.source = Source::Kineto;
    let loader = b.name("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__");
    let mut t = 0;
    for i in 0..8 {
        let s0 = t;
        b.span(0, SpanKind::Annotation, t, wait(i), loader, 0);
        t += wait(i);
        for _ in 0..60 {
            t += 150 * US;
            b.launch(t, t + 5 * US, 100 * US, "sm90_xmma_gemm_bf16bf16", 7);
            t += 5 * US;
        }
        b.step(i, s0, t);
    }
    b.done().1
}

/// Taking a ready batch from the workers costs the same 1.3-1.5 ms each step
/// (pytorch/kineto's ResNet-50 samples on V100): that range is no wait for a
/// late batch, so it does not cap the dispatch what-if at the recorded pace.
/// Ranges of 15-25 ms are waits: the workers set the pace, whatever the loop
/// saves.
#[test]
fn a_ready_batch_costs_its_range_and_a_late_one_sets_the_pace() {
    let python = |d: &Diagnosis| {
        d.findings
            .iter()
            .find(|f| (f.cause.as_str(), f.sub_cause.as_str()) == ("cpu", "python"))
            .unwrap_or_else(|| panic!("no cpu/python finding: {:#?}", d.findings))
            .clone()
    };
    let ready = dispatch_fed_by_workers(|i| [1_350, 1_420, 1_380, 1_500][i % 4] * US);
    let f = python(&ready);
    assert_eq!(top(&ready), "cpu/python");
    // Graphs leave the 6 ms of kernels, the batch and a launch latency a
    // step, from 10.7 ms.
    assert!(
        f.est_step_ns_after < 8 * MS,
        "{} -> {}",
        ready.steps.mean_ns,
        f.est_step_ns_after
    );
    let late = dispatch_fed_by_workers(|i| [15, 25, 20, 18][i % 4] * MS);
    let f = python(&late);
    assert_eq!(top(&late), "data/workers");
    // The batches came when the workers had them: at most the odd wait
    // shorter than the saving is taken back.
    assert!(
        f.est_saving_ns * 5 < late.findings[0].est_saving_ns,
        "{:#?}",
        late.findings
    );
}

/// A short window of a loop that waits 30 ms for each batch and then runs
/// 8 ms of GPU work: twice the workers bring a batch every 19 ms, so no step
/// is shorter than that. (The producers once began the window with their
/// prefetch queue full, and 12 steps at the GPU's 8 ms pace came out at
/// 8 ms: a saving beyond the batch wait, at a pace the batches never allow.)
#[test]
fn the_data_fix_runs_no_faster_than_the_batches_it_assumes() {
    let mut b = B::new();
    b.tl.source = Source::Kineto;
    let loader = b.name("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__");
    let mut t = 0;
    for i in 0..12 {
        let s0 = t;
        b.span(0, SpanKind::Annotation, t, 30 * MS, loader, 0);
        t += 30 * MS;
        t = b.gemm_and_wait(t, 8 * MS);
        b.step(i, s0, t);
    }
    let d = b.done().1;
    let f = &d.findings[0];
    assert_eq!(
        (f.cause.as_str(), f.sub_cause.as_str()),
        ("data", "workers")
    );
    // "a batch every 19.0 ms instead of every 38.0 ms": twice the workers.
    let every = |at: usize| -> f64 {
        let rest = &f.assumption[at + "every ".len()..];
        rest[..rest.find(" ms").expect("in ms")]
            .parse()
            .expect("a number")
    };
    let at = f.assumption.find("a batch every ").expect(&f.assumption) + "a batch ".len();
    let (after, before) = (every(at), every(f.assumption.rfind("every ").unwrap_or(0)));
    assert!((after * 2.0 - before).abs() < 0.2, "{}", f.assumption);
    let period = (after * MS as f64) as Ns;
    // No faster than one batch per period.
    assert!(
        f.est_step_ns_after >= period - period / 20,
        "{} -> {} with a batch every {period}",
        d.steps.mean_ns,
        f.est_step_ns_after
    );
    assert!(f.est_step_ns_after < d.steps.mean_ns * 3 / 5, "{:#?}", f);
}

/// A loop that copies its inputs to the GPU (a 6 ms call a step, for a 1 ms
/// copy from `src` memory), then runs a 3 ms kernel and waits for it,
/// in a process started as `cmdline`.
fn copies_each_step(cmdline: &str, src: MemKind) -> Diagnosis {
    let mut b = B::new();
    b.tl.processes[0].cmdline = cmdline.into();
    let (api, copy) = (b.name("cudaMemcpyAsync"), b.name("Memcpy HtoD"));
    let mut t = 0;
    for i in 0..8 {
        let s0 = t;
        let corr = b.corr;
        b.corr += 1;
        b.span(0, SpanKind::CudaRuntime, t, 6 * MS, api, corr as u64);
        b.tl.gpus[0].stream_mut(7).ops.push(
            GpuOp::new(GpuOpKind::Memcpy, t + 10 * US, t + MS, corr, copy).with_copy(
                CopyKind::HTOD,
                src,
                MemKind::DEVICE,
            ),
        );
        t += 6 * MS;
        t = b.gemm_and_wait(t, 3 * MS);
        b.step(i, s0, t);
    }
    b.done().1
}

/// The transfer what-if states the fix its advice names: pinned memory for
/// pageable copies, else copies overlapped with the GPU's work, which in a
/// serving engine is its overlap scheduler's to do.
#[test]
fn the_transfer_fix_assumes_what_its_advice_says() {
    let finding = |d: &Diagnosis| {
        let f = d.findings.iter().find(|f| f.cause == "transfer");
        f.unwrap_or_else(|| panic!("no transfer finding: {:#?}", d.findings))
            .clone()
    };
    let f = finding(&copies_each_step("python train.py", MemKind::PAGEABLE));
    assert!(
        f.fix.contains("pin_memory") || f.fix.contains("pin the host"),
        "{}",
        f.fix
    );
    assert!(
        f.assumption.starts_with("pinned memory"),
        "{}",
        f.assumption
    );

    let f = finding(&copies_each_step("python train.py", MemKind::PINNED));
    assert!(f.fix.contains("side stream"), "{}", f.fix);
    assert!(
        f.assumption.contains("copied ahead on a side stream"),
        "{}",
        f.assumption
    );

    let f = finding(&copies_each_step(
        "python -m vllm.entrypoints.openai.api_server",
        MemKind::PINNED,
    ));
    assert!(f.fix.contains("--async-scheduling"), "{}", f.fix);
    assert!(
        f.assumption.contains("the engine prepares"),
        "{}",
        f.assumption
    );
    assert!(f.est_saving_ns > 0, "{f:#?}");
}

/// Eager attention on a busy GPU: each step launches QK^T (2 ms), a
/// softmax (`softmax` long) and PV (2 ms) as separate kernels, then `other`
/// (a fused attention kernel, a loss), and waits for them.
fn attention_steps(softmax: &str, softmax_ns: Ns, other: Option<(&str, Ns)>) -> Diagnosis {
    let mut b = B::new();
    b.tl.source = Source::Kineto;
    let mut t = 0;
    for i in 0..6 {
        let s0 = t;
        let mut kernels = vec![
            ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", 2 * MS),
            (softmax, softmax_ns),
            ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n", 2 * MS),
        ];
        kernels.extend(other);
        let mut gpu = t + 20 * US;
        for (k, dur) in kernels {
            gpu = gpu.max(t + 20 * US);
            b.launch(t, gpu, dur, k, 7);
            gpu += dur;
            t += 30 * US;
        }
        b.sync(t, gpu + 10 * US);
        t = gpu + 10 * US;
        b.step(i, s0, t);
    }
    b.done().1
}

const SOFTMAX: &str = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)";

/// Softmax kernels that take a large share of a busy GPU are attention
/// run unfused: fusing it (SDPA) removes them, and the finding says so
/// with the kernel it saw. A log-softmax (the loss), fused attention
/// doing most of the work, or a small softmax is no such finding.
#[test]
fn a_softmax_on_its_own_is_attention_run_unfused() {
    let d = attention_steps(SOFTMAX, 3 * MS, None);
    assert_eq!(top(&d), "attention/unfused", "{:#?}", d.findings);
    let f = &d.findings[0];
    // The 7 ms step less its 3 ms softmax.
    let after = f.est_step_ns_after;
    assert!(
        (3_900_000..4_300_000).contains(&after),
        "{} -> {after}",
        d.steps.mean_ns
    );
    assert!(f.fix.contains("scaled_dot_product_attention"), "{}", f.fix);
    assert!(
        f.evidence.contains("at::native::cunn_SoftMaxForward<…>"),
        "{}",
        f.evidence
    );
    assert!(
        f.assumption.contains("softmax kernels' time goes"),
        "{}",
        f.assumption
    );
    let combined = d.combined.as_ref().expect("combined");
    assert!(combined.est_step_ns_after <= after);

    let none = |d: &Diagnosis| d.findings.iter().all(|f| f.cause != "attention");
    let log = SOFTMAX.replace("SoftMaxForwardEpilogue", "LogSoftMaxForwardEpilogue");
    assert!(none(&attention_steps(&log, 3 * MS, None)));
    let flash = "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, false, false, false, false, true, true, false, false>(Flash_fwd_params)";
    assert!(none(&attention_steps(
        SOFTMAX,
        3 * MS,
        Some((flash, 4 * MS))
    )));
    assert!(none(&attention_steps(SOFTMAX, 150 * US, None)));
}

/// BF16 GEMMs on a Hopper GPU get the FP8 option, when the GPU sets the
/// pace; GEMMs whose weights are MXFP4 already (triton_kernels' MoE GEMMs, gpt-oss in vLLM) do not: the
/// model is quantized past FP8.
#[test]
fn fp8_is_no_option_for_weights_in_4_bits() {
    // Each step waits for its GEMM, or, with `host` > 0, the host computes
    // that long per step and never waits.
    let run_full = |gemm: &str, host: Ns| {
        let mut b = B::new();
        b.tl.source = Source::Kineto;
        let mut t = 0;
        for i in 0..6 {
            let s0 = t;
            let gpu = t + 20 * US;
            b.launch(t, gpu, 3 * MS, gemm, 7);
            if host == 0 {
                b.sync(t + 30 * US, gpu + 3 * MS + 10 * US);
                t = gpu + 3 * MS + 10 * US;
            } else {
                t += host;
            }
            b.step(i, s0, t);
        }
        b.done()
    };
    let run_with = |gemm: &str, host: Ns| run_full(gemm, host).1;
    let run = |gemm: &str| run_with(gemm, 0);
    let hopper_gemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
    // Where the host sets the pace, FP8 would save nothing: no option.
    let host_bound = run_with(hopper_gemm, 30 * MS);
    assert!(host_bound.options.is_empty(), "{:#?}", host_bound.options);
    let bf16 = run(hopper_gemm);
    assert_eq!(
        bf16.options
            .iter()
            .map(|f| f.sub_cause.as_str())
            .collect::<Vec<_>>(),
        ["fp8"],
        "{:#?}",
        bf16.options
    );
    let ogs = "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu";
    let mxfp4 = run(ogs);
    assert!(mxfp4.options.is_empty(), "{:#?}", mxfp4.options);
    // Their time is BF16 GEMM time all the same, and 4-bit weights' time too.
    let busy = &mxfp4.devices[0].busy_by_precision;
    let bf16_ns = busy
        .iter()
        .find(|x| x.0 == Precision::Bf16)
        .map_or(0, |x| x.1);
    assert_eq!(bf16_ns, 18 * MS);
    assert_eq!(mxfp4.devices[0].low_bit_gemm_ns, 18 * MS);
    assert_eq!(bf16.devices[0].low_bit_gemm_ns, 0);
    // The kernel-time line says so, under the types.
    let said = |(tl, d): (Timeline, Diagnosis)| text::render(&Report::build(&tl, &d), None);
    let low =
        "100% in GEMMs with 4-bit weights (MXFP4, NVFP4, INT4), counted above by activation type";
    let four = said(run_full(ogs, 0));
    assert!(
        four.contains("100% BF16/FP16") && four.contains(low),
        "{four}"
    );
    let full = said(run_full(hopper_gemm, 0));
    assert!(!full.contains("4-bit"), "{full}");
}

/// A trace that starts mid-job: a tiny kernel, then the host sets up an
/// event wait on stream 7 and launches, and the kernel starts `held` later on
/// an idle GPU; 20 back-to-back kernels follow. `first` is the length of the
/// first kernel, `blocking` makes the held op's call a copy that lasts until
/// it starts, `steps` marks two steps.
fn joined_mid_job(first: Ns, held: Ns, blocking: bool, steps: bool) -> (Timeline, Diagnosis) {
    let mut b = B::new();
    b.launch(0, 10 * US, first, "elementwise_kernel_with_index", 7);
    let wait = b.name("hipStreamWaitEvent");
    b.span(0, SpanKind::CudaRuntime, 20 * US, 10 * US, wait, 999);
    let t0 = 40 * US + held;
    b.launch(40 * US, t0, 2 * MS, "resolve_future_token_ids", 7);
    if blocking {
        // A copy (a slow kernel launch would be start-up: module loading).
        let copy = b.name("hipMemcpyWithStream");
        let call = b.tl.processes[0].threads[0].spans.last_mut().unwrap();
        (call.id, call.dur) = (copy, held);
        let op = b.tl.gpus[0].stream_mut(7).ops.last_mut().unwrap();
        *op = GpuOp::new(GpuOpKind::Memcpy, op.start, op.end, op.corr, op.name);
    }
    for i in 1..20 {
        b.launch(
            50 * US + i * 10 * US,
            t0 + i * 2 * MS,
            2 * MS,
            "Cijk_BBS_gemm",
            7,
        );
    }
    if steps {
        b.step(0, 0, t0 + 20 * MS);
        b.step(1, t0 + 20 * MS, t0 + 40 * MS);
    }
    b.done()
}

#[test]
fn an_op_held_at_the_start_waits_for_work_launched_before_the_trace() {
    let (tl, d) = joined_mid_job(4 * US, 400 * MS, false, false);
    let t0 = 40 * US + 400 * MS;
    assert_eq!(d.window.0, t0, "{:?}", d.lead_in);
    assert_eq!(d.lead_in.len(), 1);
    assert!(d.lead_in[0].event_wait);
    assert_eq!(d.lead_in[0].held_ns, 400 * MS - 5 * US);
    assert_eq!(idle(&d, Cause::Other), 0);
    // The GPU is busy from the window's start: no what-if saves anything,
    // so the replay of the ops launched before the window is not late.
    let saved = d.combined.as_ref().map_or(0, |c| c.est_saving_ns);
    assert!(saved < 100 * US, "{:?}", d.combined);
    let r = stallscope_analyzer::output::report::Report::build(&tl, &d);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("left out the first 400 ms")
                && n.contains("the trace does not show (launched before the trace began")),
        "{:?}",
        r.notes
    );

    // Each condition on its own keeps the stretch in the window, as a
    // dependency: a launch call that blocked until its op started, recorded
    // work before the gap (a step's worth, not a warm-up kernel), and steps.
    for (first, blocking, steps) in [
        (4 * US, true, false),
        (20 * MS, false, false),
        (4 * US, false, true),
    ] {
        let (_, d) = joined_mid_job(first, 400 * MS, blocking, steps);
        assert!(d.lead_in.is_empty(), "{first} {blocking} {steps}");
        assert!(d.window.0 < 100 * US, "{first} {blocking} {steps}");
        let idle = d.devices[0].idle_ns;
        assert!(idle > 370 * MS, "{first} {blocking} {steps}: {idle}");
    }
}

/// Five steps of 10 ms, each a 1.5 ms launch call by `api` of two kernels of
/// `kernel` each, the first starting 200 µs into the call.
fn slow_launch_each_step(api: &str, kernel: Ns) -> Diagnosis {
    let mut b = B::new();
    let call = b.name(api);
    for i in 0..5 {
        let t = i * 10 * MS;
        b.step(i as usize, t, t + 10 * MS);
        let corr = b.corr;
        b.corr += 1;
        b.span(0, SpanKind::CudaRuntime, t, 1_500 * US, call, corr as u64);
        for (k, name) in ["gemm_graph_node", "norm_graph_node"].iter().enumerate() {
            let name = b.name(name);
            let start = t + 200 * US + k as Ns * kernel;
            b.tl.gpus[0].stream_mut(7).ops.push(GpuOp::new(
                GpuOpKind::Kernel,
                start,
                start + kernel,
                corr,
                name,
            ));
        }
    }
    b.done().1
}

#[test]
fn a_graph_launch_slow_on_every_replay_is_not_start_up() {
    let graph = slow_launch_each_step("hipGraphLaunch", 4 * MS);
    assert!(graph.startup.is_none(), "{:?}", graph.startup);
    assert_eq!(graph.steps.steps.len(), 5);
    // The same first launch by a kernel launch call is lazy module loading.
    let kernel = slow_launch_each_step("cudaLaunchKernel", 4 * MS);
    let s = kernel.startup.as_ref().expect("start-up");
    assert!(s.items.iter().any(|i| i.kind == "module-load"), "{s:?}");
}

/// A graph's kernels start while its launch call runs: replayed from the
/// call's end, each step would run 1.3 ms late, and every what-if would
/// save that on top of the idle time.
#[test]
fn ops_that_start_during_their_slow_launch_call_replay_from_its_start() {
    let d = slow_launch_each_step("cudaGraphLaunch", 4_900 * US);
    let idle = d.devices[0].idle_ns;
    let saved = d.combined.as_ref().map_or(0, |c| c.est_saving_ns);
    assert!(saved <= idle, "idle {idle}, {:?}", d.combined);
}

/// Two ranks whose all-reduce runs over peer memory (PyTorch's symmetric
/// memory, as vLLM on B200s): its time is communication, and the ranks are
/// matched at it as at NCCL's, whatever the reader set.
#[test]
fn ranks_count_a_peer_memory_all_reduce_as_communication() {
    let ar = "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, unsigned int**, unsigned long, unsigned long)";
    let rank = |late: Ns| {
        let mut b = B::new();
        for i in 0..4 {
            let t = i * 2 * MS;
            b.launch(
                t,
                t + 10 * US,
                500 * US,
                "sm90_xmma_gemm_bf16bf16_bf16f32_f32",
                7,
            );
            b.launch(t + 20 * US, t + 600 * US + late, 300 * US, ar, 7);
        }
        b.done().0
    };
    let cmp = stallscope_analyzer::analysis::ranks::compare_ranks(&[rank(0), rank(100 * US)]);
    for r in &cmp.ranks {
        assert_eq!(r.comm_ns, 4 * 300 * US, "rank {}", r.rank);
    }
    assert_eq!(cmp.collectives.len(), 1, "{:?}", cmp.collectives);
}

/// The masked precision finding of the test below names the host's batches
/// only where waiting for them is much of what the host does: a loop that
/// reads files for 12 ms and waits 0.1 ms for each batch is paced by its
/// reads; one that waits 12 ms for each batch is paced by its batches.
#[test]
fn a_masked_kernel_fix_names_the_batches_only_where_they_pace_the_host() {
    let run = |read: Ns, wait: Ns| {
        let mut b = B::new();
        b.file("/mnt/data/shard.arrow", 0x6969);
        b.worker(2);
        let mut t = 0;
        for i in 0..8 {
            let s0 = t;
            b.span(0, SpanKind::Host(HostOp::Poll), t, wait, 2, 0);
            t += wait;
            b.launch(t, t + 10 * US, 10 * MS, "ampere_sgemm_128x64_nn", 7);
            t += 10 * US;
            b.span(0, SpanKind::Host(HostOp::Read), t, read, 1, 1 << 20);
            t += read;
            let done = (s0 + wait + 10 * US + 10 * MS).max(t) + 10 * US;
            b.sync(t, done);
            t = done;
            b.step(i, s0, t);
        }
        b.done().1
    };
    let precision = |d: &Diagnosis| {
        d.findings
            .iter()
            .chain(&d.minor)
            .find(|f| f.cause == "precision")
            .map(|f| f.evidence.clone())
            .unwrap_or_else(|| panic!("no precision finding: {:#?}", d.findings))
    };
    let reads = precision(&run(12 * MS, 100 * US));
    assert!(
        reads.contains("the host sets the pace") && !reads.contains("batches"),
        "{reads}"
    );
    let batches = precision(&run(0, 12 * MS));
    assert!(batches.contains("batches"), "{batches}");
}

/// Each step launches a 10 ms FP32 GEMM, then reads files for 12 ms while
/// it runs: the reads set the pace, so BF16 alone saves nothing, yet once
/// the reads are gone the GEMM sets it and BF16 halves the step. The
/// precision finding stays a finding and says both; with reads shorter
/// than the GEMM it saves on its own and says nothing of the kind.
#[test]
fn a_kernel_fix_the_host_pace_masks_says_what_it_saves_after_the_host_fixes() {
    let run = |read: Ns| {
        let mut b = B::new();
        b.file("/mnt/data/shard.arrow", 0x6969);
        let mut t = 0;
        for i in 0..8 {
            let s0 = t;
            b.launch(t, t + 10 * US, 10 * MS, "ampere_sgemm_128x64_nn", 7);
            t += 10 * US;
            b.span(0, SpanKind::Host(HostOp::Read), t, read, 1, 1 << 20);
            t += read;
            let done = (s0 + 10 * US + 10 * MS).max(t) + 10 * US;
            b.sync(t, done);
            t = done;
            b.step(i, s0, t);
        }
        b.done().1
    };
    let d = run(12 * MS);
    let text = |d: &Diagnosis| format!("{:#?}", d.findings);
    let p = d
        .findings
        .iter()
        .find(|f| f.cause == "precision")
        .unwrap_or_else(|| panic!("precision is minor: {}", text(&d)));
    let step = d.steps.mean_ns as f64;
    assert!(p.est_step_ns_after as f64 > 0.85 * step, "{}", text(&d));
    assert!(
        p.evidence.contains("once the other fixes are made"),
        "{}",
        p.evidence
    );
    // The io fix leaves the 10 ms GEMM; BF16 then cuts it by its ratio.
    let io = d.findings.iter().find(|f| f.cause == "io").unwrap();
    let combined = d.combined.as_ref().unwrap().est_step_ns_after;
    assert!(
        combined < io.est_step_ns_after / 2,
        "every fix at once {combined}: {}",
        text(&d)
    );

    let d = run(4 * MS);
    let p = d.findings.iter().find(|f| f.cause == "precision").unwrap();
    assert!(p.est_saving_ns > d.steps.mean_ns, "{}", text(&d));
    assert!(
        !p.evidence.contains("once the other fixes"),
        "{}",
        p.evidence
    );
}
