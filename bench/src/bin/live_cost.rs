//! The live reader's cost (issue 17): a synthetic job writes about 1 M
//! events/s into a trace file through the format crate's writer (the shim's
//! own primitives), and the live reader polls it once per second. The CPU
//! time of each poll (thread CPU clock) is the cost; the target is at most 5%
//! of one core at a 1 s refresh.
//!
//! ```text
//! live_cost reader [SECS] [--flight]   the reader alone (new records only)
//! live_cost tick [SECS]                reader + windowed diagnosis (what
//!                                      `top` and the exporter do)
//! live_cost shim [ROUNDS]              a read-heavy Python job under
//!                                      `record` with and without --metrics
//! ```
//!
//! The event mix is 40% CUDA API calls, 40% kernels (two streams) and 20% host
//! spans, as training jobs write them; timestamps are real CLOCK_MONOTONIC.

use std::fs::OpenOptions;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use stallscope_analyzer::live::Monitor;
use stallscope_bench::*;
use stallscope_format::HostOp;
use stallscope_format::layout::{
    ChunkKind, DEFAULT_CHUNK_SIZE, Geometry, HeaderInit, encode_header,
};
use stallscope_format::records::{self, Api, Kernel, Span};
use stallscope_format::writer::{ChunkWriter, Claim, MetaStream, Region};

const RATE: u64 = 1_000_000;

fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A trace file being written, as the shim writes it.
struct Writer {
    _map: memmap2::MmapMut,
    region: Region,
    meta: MetaStream,
}

impl Writer {
    fn create(path: &Path, capacity: u64, flight: bool) -> Writer {
        let geo = Geometry::new(capacity, DEFAULT_CHUNK_SIZE, 64).expect("geometry");
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .expect("create");
        file.set_len(geo.chunk_offset(geo.chunk_count))
            .expect("size");
        // SAFETY: a private file of that size, mapped once.
        let mut map = unsafe { memmap2::MmapMut::map_mut(&file).expect("map") };
        let init = HeaderInit {
            capacity,
            pid: std::process::id(),
            ppid: 1,
            flags: if flight {
                stallscope_format::layout::flags::FLIGHT_RECORDER
            } else {
                0
            },
            start_mono_ns: mono_ns(),
            min_span_ns: 20_000,
            sample_hz: 100,
            producer: "live_cost".into(),
            hostname: "bench".into(),
            cmdline: b"python\0train.py".to_vec(),
            ..Default::default()
        };
        encode_header(&mut map, &init, &geo);
        // SAFETY: the mapping covers the geometry and holds the header.
        let region = unsafe { Region::new(map.as_mut_ptr(), geo, flight) };
        let w = Writer {
            _map: map,
            region,
            meta: MetaStream::new(),
        };
        for (id, s) in [(1u32, "cudaLaunchKernel"), (2, "sm90_xmma_gemm_bf16")] {
            let len = records::string_record_len(s.as_bytes());
            w.meta.write(
                &w.region,
                len,
                &mut |b| records::encode_string(b, id, s.as_bytes()),
                &mut |_, _| true,
            );
        }
        w.meta.write(
            &w.region,
            records::ApiName::LEN,
            &mut |b| {
                records::ApiName {
                    domain: 1,
                    cbid: 211,
                    name: 1,
                }
                .encode(b)
            },
            &mut |_, _| true,
        );
        w
    }

    fn chunk(&self, tid: u32) -> Option<ChunkWriter> {
        match self
            .region
            .claim_chunk(ChunkKind::Thread, tid, &mut |_, _| true)
        {
            Claim::Chunk(c) => Some(c),
            _ => None,
        }
    }

    /// Writes one record; false when the file is full.
    fn put(&self, w: &mut ChunkWriter, tid: u32, len: usize, f: &dyn Fn(&mut [u8])) -> bool {
        // SAFETY: this thread owns the chunk writer.
        if unsafe { w.write(len, f) } {
            return true;
        }
        unsafe { w.seal() };
        match self.chunk(tid) {
            Some(c) => {
                *w = c;
                unsafe { w.write(len, f) }
            }
            None => false,
        }
    }
}

/// Writes RATE events/s until `stop`; counts them in `written`.
fn write_job(path: &Path, capacity: u64, flight: bool, stop: &AtomicBool, written: &AtomicU64) {
    let out = Writer::create(path, capacity, flight);
    let (main, cupti) = (100u32, 101u32);
    let mut wm = out.chunk(main).expect("a chunk");
    let mut wc = out.chunk(cupti).expect("a chunk");
    let t0 = Instant::now();
    let mut n = 0u64;
    let mut corr = 1u32;
    let mut gpu_t = mono_ns();
    while !stop.load(Ordering::Relaxed) {
        let due = (t0.elapsed().as_secs_f64() * RATE as f64) as u64;
        if n >= due {
            std::thread::sleep(Duration::from_micros(500));
            continue;
        }
        let now = mono_ns();
        let mut ok = true;
        while n < due && ok {
            match n % 5 {
                0 | 1 => {
                    let a = Api {
                        domain: 1,
                        cbid: 211,
                        tid: main,
                        correlation: corr,
                        start: now,
                        end: now + 3_000,
                        result: 0,
                    };
                    ok = out.put(&mut wc, cupti, Api::LEN, &|b| a.encode(b));
                }
                2 | 3 => {
                    gpu_t = gpu_t.max(now) + 1_000;
                    let k = Kernel {
                        device: 0,
                        stream: 7 + (corr % 2),
                        correlation: corr,
                        start: gpu_t,
                        end: gpu_t + 800,
                        name: 2,
                        grid_x: 108,
                        grid_y: 1,
                        grid_z: 1,
                        block_x: 256,
                        block_y: 1,
                        block_z: 1,
                        shared_mem: 0,
                        registers: 64,
                        ..Default::default()
                    };
                    corr += 1;
                    ok = out.put(&mut wc, cupti, Kernel::LEN, &|b| k.encode(b));
                }
                _ => {
                    let s = Span {
                        op: HostOp::Read as u8,
                        obj: 0,
                        ts: now,
                        dur: 25_000,
                        bytes: 4096,
                    };
                    ok = out.put(&mut wm, main, Span::LEN, &|b| s.encode(b));
                }
            }
            n += 1;
        }
        written.store(n, Ordering::Relaxed);
        if !ok {
            eprintln!("live_cost: the file is full after {n} events");
            break;
        }
    }
}

/// Polls once per second while the writer runs; the CPU ms of each poll.
fn measure(secs: u64, flight: bool, full_tick: bool) -> anyhow::Result<()> {
    let dir = Path::new("/dev/shm").join(format!("live-cost-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    // ~50 bytes per event; the flight recorder keeps 256 MiB.
    let capacity = if flight {
        256 << 20
    } else {
        (secs + 4) * RATE * 56 + (64 << 20)
    };
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let writer = {
        let (stop, written, path) = (stop.clone(), written.clone(), dir.join("100.sst"));
        std::thread::spawn(move || write_job(&path, capacity, flight, &stop, &written))
    };
    let mut monitor = Monitor::new(&dir, 10_000_000_000);
    let mut cpu_ms = Vec::new();
    let mut records = Vec::new();
    std::thread::sleep(Duration::from_millis(200));
    let t0 = Instant::now();
    let mut last_written = 0;
    for _ in 0..secs {
        std::thread::sleep(Duration::from_secs(1));
        let c0 = thread_cpu_ns();
        let n = if full_tick {
            monitor.tick().poll.records
        } else {
            monitor.poll_only().records
        };
        cpu_ms.push((thread_cpu_ns() - c0) as f64 / 1e6);
        records.push(n as f64);
        last_written = written.load(Ordering::Relaxed);
    }
    let elapsed = t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let _ = writer.join();
    let _ = std::fs::remove_dir_all(&dir);
    // The first poll reads what piled up before it; leave it out.
    let steady_cpu: Vec<f64> = cpu_ms[1..].to_vec();
    let mut c = steady_cpu.clone();
    let mut r = records[1..].to_vec();
    let med_cpu = median(&mut c);
    let med_rec = median(&mut r);
    println!(
        "live {} ({}), {secs} polls at 1 s: writer {:.2} M events/s; median {:.0} k records per poll; \
         median CPU per poll {:.2} ms = {:.2}% of one core (max {:.2} ms)",
        if full_tick {
            "tick (reader + 10 s window diagnosis)"
        } else {
            "reader"
        },
        if flight { "flight recorder" } else { "plain" },
        last_written as f64 / 1e6 / (elapsed + 0.2),
        med_rec / 1e3,
        med_cpu,
        med_cpu / 10.0,
        steady_cpu.iter().cloned().fold(0.0, f64::max)
    );
    Ok(())
}

/// A read-heavy Python job under `record`, with and without --metrics.
fn shim(rounds: usize) -> anyhow::Result<()> {
    let bin = built("stallscope")?;
    let gpusim = built("libgpusim.so")?;
    let py = python()?;
    let tmp = std::env::temp_dir().join(format!("live-cost-shim-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let (mut plain, mut metrics) = (vec![], vec![]);
    for round in 0..rounds {
        for with in [false, true] {
            let out = tmp.join(format!("r{round}-{with}"));
            let mut c = Command::new(&bin);
            c.arg("record")
                .arg("-o")
                .arg(&out)
                .arg("--cupti")
                .arg(&gpusim);
            if with {
                // Port 0: a free one; the exporter lingers 10 s after the job.
                c.args(["--metrics", "127.0.0.1:0"]);
            }
            c.arg("--")
                .arg(&py)
                .arg(workload("scenario.py"))
                .arg(&gpusim)
                .arg("data_cpu")
                .env("SCENARIO_DIR", &tmp)
                .env("SCENARIO_STEPS", "40");
            let (secs, _) = timed(&mut c)?;
            if with {
                metrics.push(secs);
            } else {
                plain.push(secs);
            }
            let _ = std::fs::remove_dir_all(&out);
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let (p, m) = (median(&mut plain), median(&mut metrics));
    println!(
        "data-bound gpusim job (40 steps) under record, {rounds} rounds interleaved: \
         median {p:.3} s without --metrics, {m:.3} s with (x{:.3})",
        m / p
    );
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("reader");
    let n: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(8);
    let flight = args.iter().any(|a| a == "--flight");
    match mode {
        "reader" => measure(n.max(3), flight, false),
        "tick" => measure(n.max(3), flight, true),
        "shim" => shim(n.max(1) as usize),
        _ => anyhow::bail!("usage: live_cost reader|tick|shim [N] [--flight]"),
    }
}
