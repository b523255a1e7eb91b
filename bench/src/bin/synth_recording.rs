//! Writes a synthetic native recording of about N events, for the analysis
//! benchmark: `synth_recording DIR EVENTS [--api-from-cupti]`.
//!
//! A trainer process launches kernels on two streams (an API record and a
//! kernel record per launch, with ProfilerStep NVTX ranges), reads a file and
//! waits on a DataLoader pipe once per step; a worker process reads files. The
//! event mix is roughly 40% API calls, 40% kernels, 20% host spans and samples.

use std::fs::OpenOptions;
use std::path::Path;

use stallscope_format::HostOp;
use stallscope_format::layout::{ChunkKind, Geometry, HeaderInit, encode_header};
use stallscope_format::records::{self, Api, Kernel, Marker, Object, Sample, Span};
use stallscope_format::writer::{ChunkWriter, Claim, MetaStream, Region};

struct Out {
    _map: memmap2::MmapMut,
    region: Region,
    meta: MetaStream,
    file: std::fs::File,
    events: u64,
}

impl Out {
    fn create(path: &Path, pid: u32, ppid: u32, capacity: u64) -> Out {
        let geo = Geometry::new(capacity, 1 << 20, 16).expect("geometry");
        let len = geo.chunk_offset(geo.chunk_count);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .expect("create");
        file.set_len(len).expect("size");
        let mut map = unsafe { memmap2::MmapMut::map_mut(&file).expect("map") };
        let init = HeaderInit {
            capacity,
            pid,
            ppid,
            start_mono_ns: 1_000_000_000,
            min_span_ns: 20_000,
            sample_hz: 100,
            producer: "synth".into(),
            hostname: "bench".into(),
            cmdline: b"python\0train.py".to_vec(),
            ..Default::default()
        };
        encode_header(&mut map, &init, &geo);
        let region = unsafe { Region::new(map.as_mut_ptr(), geo, false) };
        Out {
            _map: map,
            region,
            meta: MetaStream::new(),
            file,
            events: 0,
        }
    }

    fn chunk(&self, tid: u32) -> ChunkWriter {
        match self
            .region
            .claim_chunk(ChunkKind::Thread, tid, &mut |_, _| true)
        {
            Claim::Chunk(c) => c,
            other => panic!("capacity too small: {other:?}"),
        }
    }

    fn string(&self, id: u32, s: &str) {
        let len = records::string_record_len(s.as_bytes());
        assert!(self.meta.write(
            &self.region,
            len,
            &mut |b| records::encode_string(b, id, s.as_bytes()),
            &mut |_, _| true
        ));
    }

    fn meta(&self, len: usize, f: &mut dyn FnMut(&mut [u8])) {
        assert!(self.meta.write(&self.region, len, f, &mut |_, _| true));
    }

    fn put(&mut self, w: &mut ChunkWriter, tid: u32, len: usize, f: &dyn Fn(&mut [u8])) {
        if !unsafe { w.write(len, f) } {
            unsafe { w.seal() };
            *w = self.chunk(tid);
            assert!(unsafe { w.write(len, f) });
        }
        self.events += 1;
    }

    fn finish(self) -> u64 {
        // Trim the unused tail so the file size is the trace size.
        let used = self.region.geometry().chunk_offset(
            stallscope_format::TraceView::parse(unsafe {
                std::slice::from_raw_parts(self.region.base(), 1 << 16)
            })
            .map(|v| v.header.chunks_claimed)
            .unwrap_or(0),
        );
        drop(self._map);
        self.file.set_len(used).expect("trim");
        self.events
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = Path::new(&args[1]);
    let target: u64 = args[2].parse().expect("event count");
    // As the shim writes them, API records come from CUPTI's buffers, in the
    // CUPTI thread's chunks; by default they sit in the caller's own chunks,
    // where the caller's spans arrive already in order.
    let api_from_cupti = args.get(3).is_some_and(|a| a == "--api-from-cupti");
    std::fs::create_dir_all(dir).expect("mkdir");
    let per_step_kernels = 2000u64;
    let steps = (target * 4 / 10 / per_step_kernels).max(2);

    let mut trainer = Out::create(&dir.join("1000.sst"), 1000, 1, target * 60 + (64 << 20));
    let (main, cupti) = (1000u32, 1001u32);
    for (id, s) in [
        (1, "cudaLaunchKernel"),
        (2, "ProfilerStep#"),
        (3, "/data/shard.bin"),
        (4, "pipe:[42]"),
        (5, "ampere_sgemm_128x64_nn"),
        (6, "vectorized_elementwise_kernel"),
        (7, "sm80_xmma_gemm_bf16bf16_bf16f32"),
    ] {
        trainer.string(id, s);
    }
    trainer.meta(records::ApiName::LEN, &mut |b| {
        records::ApiName {
            domain: 1,
            cbid: 211,
            name: 1,
        }
        .encode(b)
    });
    let file_obj = Object {
        class: 1,
        obj: 1,
        ts: 0,
        dev: 1,
        ino: 7,
        fs_magic: 0x6969,
        path: 3,
        fd: 5,
    };
    trainer.meta(Object::LEN, &mut |b| file_obj.encode(b));
    let pipe_obj = Object {
        class: 3,
        obj: 2,
        ts: 0,
        dev: 2,
        ino: 42,
        fs_magic: 0,
        path: 4,
        fd: 6,
    };
    trainer.meta(Object::LEN, &mut |b| pipe_obj.encode(b));
    let mut wm = trainer.chunk(main);
    let mut wc = trainer.chunk(cupti);
    let mut t: u64 = 2_000_000_000;
    let mut gpu_free = [t; 2];
    let mut corr = 1u32;
    for step in 0..steps {
        let step_start = t;
        let m = Marker {
            flags: records::marker_flags::START,
            tid: main,
            ts: t,
            id: step as u32,
            name: 2,
            domain: 0,
        };
        trainer.put(&mut wm, main, Marker::LEN, &|b| m.encode(b));
        // Wait for the batch, read a file.
        let wait = Span {
            op: HostOp::Poll as u8,
            obj: 2,
            ts: t,
            dur: 3_000_000,
            bytes: 0,
        };
        trainer.put(&mut wm, main, Span::LEN, &|b| wait.encode(b));
        t += 3_000_000;
        for _ in 0..200 {
            let r = Span {
                op: HostOp::Read as u8,
                obj: 1,
                ts: t,
                dur: 25_000,
                bytes: 65536,
            };
            trainer.put(&mut wm, main, Span::LEN, &|b| r.encode(b));
            t += 27_000;
        }
        for k in 0..per_step_kernels {
            let stream = (k % 7 == 0) as usize;
            let api = Api {
                domain: 1,
                tid: main,
                start: t,
                end: t + 4_000,
                correlation: corr,
                cbid: 211,
                result: 0,
            };
            if api_from_cupti {
                trainer.put(&mut wc, cupti, Api::LEN, &|b| api.encode(b));
            } else {
                trainer.put(&mut wm, main, Api::LEN, &|b| api.encode(b));
            }
            let start = gpu_free[stream].max(t + 6_000);
            let dur = if k % 10 == 0 { 40_000 } else { 8_000 };
            let kern = Kernel {
                device: 0,
                start,
                end: start + dur,
                correlation: corr,
                stream: 7 + stream as u32,
                name: if k % 10 == 0 {
                    5
                } else if k % 3 == 0 {
                    7
                } else {
                    6
                },
                grid_x: 128,
                grid_y: 1,
                grid_z: 1,
                block_x: 256,
                block_y: 1,
                block_z: 1,
                ..Default::default()
            };
            trainer.put(&mut wc, cupti, Kernel::LEN, &|b| kern.encode(b));
            gpu_free[stream] = start + dur;
            corr += 1;
            t += 7_000;
        }
        let m = Marker {
            flags: records::marker_flags::END,
            tid: main,
            ts: t,
            id: step as u32,
            name: 2,
            domain: 0,
        };
        trainer.put(&mut wm, main, Marker::LEN, &|b| m.encode(b));
        let s = Sample {
            state: b'R',
            tid: main,
            ts: t,
            cpu_ns: t - 2_000_000_000,
            run_delay_ns: 0,
            majflt: 0,
            minflt: 0,
        };
        trainer.put(&mut wm, main, Sample::LEN, &|b| s.encode(b));
        let _ = step_start;
    }
    unsafe {
        wm.seal();
        wc.seal();
    }
    let mut total = trainer.finish();

    // A worker with the rest of the events: file reads and samples.
    let rest = target.saturating_sub(total);
    let mut worker = Out::create(&dir.join("1001.sst"), 1001, 1000, rest * 40 + (64 << 20));
    worker.string(1, "/data/images.tar");
    let obj = Object {
        class: 1,
        obj: 1,
        ts: 0,
        dev: 1,
        ino: 9,
        fs_magic: 0xEF53,
        path: 1,
        fd: 3,
    };
    worker.meta(Object::LEN, &mut |b| obj.encode(b));
    let mut ww = worker.chunk(1001);
    let mut t = 2_000_000_000u64;
    for i in 0..rest {
        if i % 50 == 0 {
            let s = Sample {
                state: b'R',
                tid: 1001,
                ts: t,
                cpu_ns: t - 2_000_000_000,
                run_delay_ns: 0,
                majflt: 0,
                minflt: 0,
            };
            worker.put(&mut ww, 1001, Sample::LEN, &|b| s.encode(b));
        } else {
            let r = Span {
                op: HostOp::Read as u8,
                obj: 1,
                ts: t,
                dur: 30_000,
                bytes: 131072,
            };
            worker.put(&mut ww, 1001, Span::LEN, &|b| r.encode(b));
        }
        t += 40_000;
    }
    unsafe { ww.seal() };
    total += worker.finish();
    println!("{total}");
}
