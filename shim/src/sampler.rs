//! Thread samples: about 100 times a second, each thread's state, CPU time,
//! run-queue delay and page faults, recorded when they change. Major faults
//! reveal memory-mapped datasets; run-queue delay reveals CPU contention. Once
//! a second the tick calibration is refined and a clock pair recorded.
//!
//! A sampler thread does this from /proc, but only once the process has a
//! second thread of its own (or starts CUDA, which brings several): merely
//! having one more thread makes a single-threaded program slower, since glibc
//! and CPython then take their multi-threaded paths (measured: 6-10% on a
//! Python loop reading small files, with a thread that only sleeps). Until
//! then the one thread samples itself, at the hooked call that follows each
//! period: its own CPU time and faults come from clock_gettime and getrusage.

use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use stallscope_format::records::{Clock, Sample, ThreadName};

use crate::clock::{self, Pair};
use crate::recorder::{self, Writer};
use crate::tls::gettid;
use crate::{diag, fd_room, real};

/// Threads followed at once; more are sampled in later rounds as others exit.
const MAX_THREADS: usize = 256;
/// Re-list /proc/self/task every this many ticks.
const RELIST_TICKS: u64 = 10;

/// A thread being followed. It holds no fd: /proc files are opened for each
/// read and closed right after, so the shim never keeps fds the program could
/// collide with or run short of (issue 14, items 1 and 4). That costs about
/// 1 µs more per file than a pread on a kept fd (measured: 2.45 µs against
/// 1.29 µs for open+pread+close of /proc/self/task/TID/stat).
struct Tracked {
    tid: u32,
    /// The thread is gone (its stat could not be read).
    gone: bool,
    last: Option<Sample>,
    name_hash: u64,
    quiet_ticks: u32,
    /// CPU time from `stat` (clock ticks) at the last read, to tell a thread
    /// that has not run since without reading its schedstat.
    stat_cpu: u64,
}

static HZ: AtomicU32 = AtomicU32::new(0);
static THREAD_STARTED: AtomicBool = AtomicBool::new(false);
/// Tick count at which the single thread samples itself next; MAX when the
/// sampler thread runs (or sampling is off).
static NEXT_SELF: AtomicU64 = AtomicU64::new(u64::MAX);
/// Self-sampling state: last CLOCK_MONOTONIC of a clock pair, name hash.
static SELF_CLOCK: AtomicU64 = AtomicU64::new(0);
static SELF_NAME: AtomicU64 = AtomicU64::new(0);
static SELF_COUNT: AtomicU64 = AtomicU64::new(0);

/// Arms sampling for this process image (again in a forked child, where the
/// parent's sampler thread does not exist).
pub fn start(hz: u32, start: Pair) {
    HZ.store(hz, Ordering::Relaxed);
    THREAD_STARTED.store(false, Ordering::Relaxed);
    SELF_CLOCK.store(start.mono, Ordering::Relaxed);
    SELF_NAME.store(0, Ordering::Relaxed);
    // The first self-sample one period in: a process image that ends (or
    // execs) sooner records nothing and leaves no file.
    NEXT_SELF.store(
        if hz == 0 {
            u64::MAX
        } else {
            start.ticks + clock::ticks_per_sec() / hz as u64
        },
        Ordering::Relaxed,
    );
}

/// When the calling (only) thread should sample itself next, in ticks.
#[inline(always)]
pub fn next_self_sample() -> u64 {
    NEXT_SELF.load(Ordering::Relaxed)
}

/// Starts the sampler thread, once: the process has more than one thread.
pub fn ensure_thread() {
    let hz = HZ.load(Ordering::Relaxed);
    if hz == 0 || THREAD_STARTED.swap(true, Ordering::AcqRel) {
        return;
    }
    NEXT_SELF.store(u64::MAX, Ordering::Relaxed);
    let spawned = crate::threads::spawn("stallscope", move || run(hz));
    if let Err(e) = spawned {
        diag::say(&format!(
            "cannot start the sampler thread ({e}); thread samples are off"
        ));
    }
}

/// The single thread samples itself (called on the recorder's cold path).
pub fn sample_self(w: &mut Writer<'_>, now_ticks: u64) {
    let hz = HZ.load(Ordering::Relaxed).max(1) as u64;
    NEXT_SELF.store(now_ticks + clock::ticks_per_sec() / hz, Ordering::Relaxed);
    if SELF_COUNT
        .fetch_add(1, Ordering::Relaxed)
        .is_multiple_of(RELIST_TICKS)
    {
        crate::gpu::poll_lazy();
    }
    let now = clock::mono_ns();
    let tid = w.tid();
    let mut buf = [0u8; 64];
    let name_len = read_small(b"/proc/thread-self/comm\0", &mut buf);
    let name = trim_newline(&buf[..name_len]);
    let hash = fnv(name);
    if SELF_NAME.swap(hash, Ordering::Relaxed) != hash {
        let id = w.string(name);
        let rec = ThreadName {
            reserved: 0,
            tid,
            ts: now,
            name: id,
        };
        w.event(ThreadName::LEN, &mut |b| rec.encode(b));
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointers.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    let mut ru: libc::rusage = unsafe { core::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let mut sb = [0u8; 128];
    let n = read_small(b"/proc/thread-self/schedstat\0", &mut sb);
    let s = Sample {
        // It is running: it just made a call.
        state: b'R',
        tid,
        ts: now,
        cpu_ns: ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64,
        run_delay_ns: parse_schedstat(&sb[..n]).map_or(0, |x| x.1),
        majflt: ru.ru_majflt as u32,
        minflt: ru.ru_minflt as u32,
    };
    w.event(Sample::LEN, &mut |b| s.encode(b));
    if now.saturating_sub(SELF_CLOCK.load(Ordering::Relaxed)) >= 1_000_000_000 {
        SELF_CLOCK.store(now, Ordering::Relaxed);
        once_a_second(w.recorder(), w);
    }
}

/// Reads a small file through an fd that lives only for this call.
/// `path` must end with a NUL byte.
fn read_small(path: &[u8], buf: &mut [u8]) -> usize {
    debug_assert_eq!(path.last(), Some(&0));
    // SAFETY: NUL-terminated path, writable buffer.
    let fd = unsafe { real::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC, 0) };
    if fd < 0 {
        return 0;
    }
    let n = unsafe { real::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    unsafe { real::close(fd) };
    n.max(0) as usize
}

fn trim_newline(b: &[u8]) -> &[u8] {
    b.strip_suffix(b"\n").unwrap_or(b)
}

/// Refines the tick calibration and records a clock pair.
fn once_a_second(rec: &recorder::Recorder, w: &mut Writer<'_>) {
    let p = clock::refine_now();
    if clock::using_tsc() {
        recorder::rescale(rec);
    }
    let c = Clock {
        reserved: 0,
        mono_ns: p.mono,
        real_ns: clock::real_ns(),
        ticks: p.ticks,
    };
    w.event(Clock::LEN, &mut |b| c.encode(b));
}

fn run(hz: u32) {
    recorder::own_thread();
    let me = gettid();
    let period = 1_000_000_000 / hz as u64;
    let mut threads: Vec<Tracked> = Vec::new();
    let mut next = clock::mono_ns();
    let mut last_clock = next;
    let mut tick = 0u64;
    loop {
        next += period;
        sleep_until(next);
        let Some(rec) = recorder::recorder() else {
            return;
        };
        if !recorder::enabled() {
            return;
        }
        let now = clock::mono_ns();
        if now > next + 10 * period {
            next = now; // fell behind (suspended, overloaded): do not burst
        }
        if tick.is_multiple_of(RELIST_TICKS) {
            fd_room::refresh_limit();
        }
        // Each read holds an fd for a moment: none while the program is
        // near its fd limit, where it needs every number (see `fd_room`).
        if fd_room::room() {
            if tick.is_multiple_of(RELIST_TICKS) {
                relist(&mut threads, me);
                crate::gpu::poll_lazy();
            }
            recorder::with_writer(|w| {
                for t in threads.iter_mut() {
                    if !fd_room::room() {
                        break;
                    }
                    sample(w, t, now);
                }
            });
            threads.retain(|t| !t.gone);
        }
        if now - last_clock >= 1_000_000_000 {
            last_clock = now;
            recorder::with_writer(|w| once_a_second(rec, w));
        }
        tick += 1;
    }
}

fn sleep_until(deadline: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline % 1_000_000_000) as libc::c_long,
    };
    // EINTR just ends this sleep early; the loop re-arms.
    unsafe {
        real::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            core::ptr::null_mut(),
        )
    };
}

/// Picks up new threads (and forgets none: exited ones fail their next read).
fn relist(threads: &mut Vec<Tracked>, me: u32) {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return;
    };
    for entry in dir.flatten() {
        if threads.len() >= MAX_THREADS {
            break;
        }
        let Some(tid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if tid == me || threads.iter().any(|t| t.tid == tid) {
            continue;
        }
        threads.push(Tracked {
            tid,
            gone: false,
            last: None,
            name_hash: 0,
            quiet_ticks: 0,
            stat_cpu: u64::MAX,
        });
    }
}

/// Reads `/proc/self/task/<tid>/<leaf>` through a transient fd. None if it
/// cannot be opened or read: the thread exited, or the program is at its fd
/// limit (then the sample is skipped: the program's fds come first).
fn read_task_file(tid: u32, leaf: &[u8], buf: &mut [u8]) -> Option<usize> {
    let mut path = [0u8; 64];
    let mut at = 0;
    for part in [b"/proc/self/task/".as_slice(), &digits(tid), b"/", leaf] {
        for &b in part.iter().take_while(|&&b| b != 0) {
            path[at] = b;
            at += 1;
        }
    }
    let n = read_small(&path[..=at], buf);
    (n > 0).then_some(n)
}

/// The decimal digits of `v`, NUL-padded.
fn digits(mut v: u32) -> [u8; 10] {
    let mut rev = [0u8; 10];
    let mut n = 0;
    loop {
        rev[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let mut out = [0u8; 10];
    for i in 0..n {
        out[i] = rev[n - 1 - i];
    }
    out
}

fn sample(w: &mut Writer<'_>, t: &mut Tracked, now: u64) {
    let mut buf = [0u8; 1024];
    let Some(n) = read_task_file(t.tid, b"stat", &mut buf) else {
        // Exited (or no fd to spare right now: it is listed again later).
        t.gone = true;
        return;
    };
    let Some(stat) = parse_stat(&buf[..n]) else {
        return;
    };
    let name_hash = fnv(stat.comm);
    if name_hash != t.name_hash {
        t.name_hash = name_hash;
        let name = w.string(stat.comm);
        let rec = ThreadName {
            reserved: 0,
            tid: t.tid,
            ts: now,
            name,
        };
        w.event(ThreadName::LEN, &mut |b| rec.encode(b));
    }
    // A thread that still sleeps with the same CPU ticks and faults has
    // nothing new to record: skip its schedstat (half the cost of a sample,
    // and most threads of a big process sleep). Its exact CPU time is read
    // again when anything moves, and at the once-a-second confirmation.
    let idle = stat.state != b'R'
        && stat.cpu_ticks_ns == t.stat_cpu
        && t.last.is_some_and(|l| {
            l.state == stat.state
                && l.majflt == stat.majflt as u32
                && l.minflt == stat.minflt as u32
        });
    t.stat_cpu = stat.cpu_ticks_ns;
    if idle && t.quiet_ticks + 1 < 100 {
        t.quiet_ticks += 1;
        return;
    }
    let (cpu_ns, run_delay_ns) = {
        let mut sb = [0u8; 128];
        match read_task_file(t.tid, b"schedstat", &mut sb) {
            Some(m) => parse_schedstat(&sb[..m]).unwrap_or((stat.cpu_ticks_ns, 0)),
            None => (stat.cpu_ticks_ns, 0),
        }
    };
    let s = Sample {
        state: stat.state,
        tid: t.tid,
        ts: now,
        cpu_ns,
        run_delay_ns,
        majflt: stat.majflt as u32,
        minflt: stat.minflt as u32,
    };
    let changed = match t.last {
        None => true,
        Some(l) => {
            l.state != s.state
                || l.cpu_ns != s.cpu_ns
                || l.run_delay_ns != s.run_delay_ns
                || l.majflt != s.majflt
        }
    };
    t.quiet_ticks += 1;
    // Unchanged threads are still confirmed about once a second.
    if changed || t.quiet_ticks >= 100 {
        t.quiet_ticks = 0;
        t.last = Some(s);
        w.event(Sample::LEN, &mut |b| s.encode(b));
    }
}

#[derive(Debug, PartialEq)]
struct Stat<'a> {
    comm: &'a [u8],
    state: u8,
    minflt: u64,
    majflt: u64,
    cpu_ticks_ns: u64,
}

/// Parses /proc/<pid>/task/<tid>/stat. The name may hold spaces and
/// parentheses, so fields are counted from the last ')'.
fn parse_stat(b: &[u8]) -> Option<Stat<'_>> {
    let open = b.iter().position(|&c| c == b'(')?;
    let close = b.iter().rposition(|&c| c == b')')?;
    let comm = b.get(open + 1..close)?;
    let rest = std::str::from_utf8(b.get(close + 1..)?).ok()?;
    let f: Vec<&str> = rest.split_ascii_whitespace().take(13).collect();
    if f.len() < 13 {
        return None;
    }
    let num = |i: usize| f[i].parse::<u64>().ok();
    // Clock ticks are 100 Hz on every Linux ABI stallscope supports.
    let tick_ns = 10_000_000;
    Some(Stat {
        comm,
        state: *f[0].as_bytes().first()?,
        minflt: num(7)?,
        majflt: num(9)?,
        cpu_ticks_ns: (num(11)? + num(12)?) * tick_ns,
    })
}

/// Parses /proc/.../schedstat: on-CPU ns, run-queue wait ns, timeslices.
fn parse_schedstat(b: &[u8]) -> Option<(u64, u64)> {
    let s = std::str::from_utf8(b).ok()?;
    let mut it = s.split_ascii_whitespace();
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &c| {
        (h ^ c as u64).wrapping_mul(0x100_0000_01b3)
    }) | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_names() {
        let line = b"1234 (pt_data (worker) 1) D 1 1234 1234 0 -1 4194560 5000 0 42 0 150 25 0 0 20 0 3 0 100 0 0";
        let s = parse_stat(line).unwrap();
        assert_eq!(s.comm, b"pt_data (worker) 1");
        assert_eq!(s.state, b'D');
        assert_eq!(s.minflt, 5000);
        assert_eq!(s.majflt, 42);
        assert_eq!(s.cpu_ticks_ns, 175 * 10_000_000);
        assert!(parse_stat(b"1 (x) R 1 2").is_none());
        assert!(parse_stat(b"garbage").is_none());
    }

    #[test]
    fn reads_task_files_by_tid() {
        assert_eq!(&digits(0)[..2], b"0\0");
        assert_eq!(&digits(4_294_967_295), b"4294967295");
        let tid = gettid();
        let mut buf = [0u8; 1024];
        let n = read_task_file(tid, b"stat", &mut buf).unwrap();
        assert!(buf[..n].starts_with(format!("{tid} (").as_bytes()));
        assert!(read_task_file(u32::MAX, b"stat", &mut buf).is_none());
    }

    #[test]
    fn parses_schedstat() {
        assert_eq!(parse_schedstat(b"123456 789 10\n"), Some((123456, 789)));
        assert_eq!(parse_schedstat(b""), None);
    }

    #[test]
    fn reads_own_stat() {
        let b = std::fs::read("/proc/thread-self/stat").unwrap();
        let s = parse_stat(&b).unwrap();
        assert_eq!(s.state, b'R');
    }
}
