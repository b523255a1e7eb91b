//! `stallscope dump`: print every record of a trace, as text or JSON lines.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use serde_json::{Map, Value, json};
use stallscope_format::records::Object;
use stallscope_format::{FdClass, HostOp, Record, TraceFile, fs_name};

/// Print every record of a trace file (or of every file in a recording
/// directory). Readable records are printed even when a file is damaged; the
/// damage is reported on stderr with its byte offset and the exit code is 2.
#[derive(Debug, Args)]
pub struct DumpArgs {
    /// A trace file (.sst) or a recording directory
    pub trace: PathBuf,

    /// One JSON object per line (fields: pid, tid, kind, ts_ns, dur_ns, ...)
    #[arg(long)]
    pub json: bool,

    /// In a directory, treat a file that cannot be read at all as damage
    /// (exit 2) instead of skipping it with a warning, as analyze --strict does
    #[arg(long)]
    pub strict: bool,
}

/// What became of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Dumped {
    Clean,
    /// Read, but some chunks or records were damaged.
    Damaged,
    /// Not readable at all (no header): why.
    Unreadable(String),
}

pub fn run(a: DumpArgs) -> anyhow::Result<ExitCode> {
    let files = trace_files(&a.trace)?;
    // Like analyze: in a directory, an unreadable file is skipped with a
    // warning unless --strict; a file named on its own must be readable.
    let skip_unreadable = files.len() > 1 || a.trace.is_dir();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut damaged = false;
    let mut readable = 0;
    let written = files.iter().try_for_each(|f| {
        match dump_file(f, a.json, &mut out)? {
            Dumped::Clean => readable += 1,
            Dumped::Damaged => {
                readable += 1;
                damaged = true;
            }
            Dumped::Unreadable(e) if a.strict || !skip_unreadable => {
                eprintln!("stallscope: {e}");
                damaged = true;
            }
            Dumped::Unreadable(e) => {
                eprintln!("stallscope: warning: skipped an unreadable trace file: {e}")
            }
        }
        Ok::<_, anyhow::Error>(())
    });
    if readable == 0 {
        damaged = true;
    }
    let written = written.and_then(|()| out.flush().map_err(Into::into));
    match written {
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Err(e),
        Ok(()) => Ok(if damaged {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        }),
    }
}

/// The trace files named by `p`: the file itself, or the .sst files of a directory.
pub fn trace_files(p: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(p).with_context(|| format!("cannot read {}", p.display()))?;
    if !meta.is_dir() {
        return Ok(vec![p.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(p)
        .with_context(|| format!("cannot list {}", p.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|e| e.extension().is_some_and(|x| x == "sst"))
        .collect();
    files.sort();
    anyhow::ensure!(
        !files.is_empty(),
        "{} holds no trace files (*.sst)",
        p.display()
    );
    Ok(files)
}

struct Names {
    strings: HashMap<u32, String>,
    objects: HashMap<u32, Object>,
}

impl Names {
    fn string(&self, id: u32) -> &str {
        self.strings.get(&id).map(String::as_str).unwrap_or("")
    }
}

/// Dumps one file; says whether it was damaged or unreadable.
fn dump_file(path: &Path, json: bool, out: &mut impl Write) -> anyhow::Result<Dumped> {
    let file = match TraceFile::open(path) {
        Ok(f) => f,
        Err(e) => return Ok(Dumped::Unreadable(e.to_string())),
    };
    let view = match file.view() {
        Ok(v) => v,
        Err(e) => return Ok(Dumped::Unreadable(e.to_string())),
    };
    let h = &view.header;
    let pid = h.pid;
    let mut damaged = false;
    let mut chunks = vec![];
    for c in view.chunks() {
        match c {
            Ok(c) => chunks.push(c),
            Err(e) => {
                eprintln!("stallscope: {}", e.in_file(path));
                damaged = true;
            }
        }
    }
    chunks.sort_by_key(|c| (c.tid, c.seq));
    let mut names = Names {
        strings: HashMap::new(),
        objects: HashMap::new(),
    };
    for c in &chunks {
        for (_, r) in c.records().flatten() {
            match r {
                Record::String { id, text } => {
                    names
                        .strings
                        .insert(id, String::from_utf8_lossy(text).into_owned());
                }
                Record::Object(o) => {
                    names.objects.insert(o.obj, o);
                }
                _ => {}
            }
        }
    }

    let header = json!({
        "pid": pid, "tid": 0, "kind": "header", "file": path.display().to_string(),
        "ppid": h.ppid, "host": h.hostname, "cmdline": h.argv, "producer": h.producer,
        "format_version": h.format_version, "start_mono_ns": h.start_mono_ns,
        "start_real_ns": h.start_real_ns, "end_mono_ns": h.end_mono_ns,
        "min_span_ns": h.min_span_ns, "sample_hz": h.sample_hz, "state": h.state,
        "flags": h.flags, "dropped": h.dropped, "overwritten": h.overwritten,
        "chunks": chunks.len(),
    });
    emit(out, json, &header, h.start_mono_ns)?;
    for c in &chunks {
        for r in c.records() {
            match r {
                Ok((_, rec)) => {
                    let v = record_json(pid, c.tid, rec, &names);
                    emit(out, json, &v, h.start_mono_ns)?;
                }
                Err(e) => {
                    eprintln!("stallscope: {}", e.in_file(path));
                    damaged = true;
                }
            }
        }
    }
    for t in view.threads() {
        let mut ops = Map::new();
        for op in HostOp::ALL {
            let c = t.ops[op as usize];
            if c.calls > 0 {
                ops.insert(
                    op.name().into(),
                    json!({"calls": c.calls, "bytes": c.bytes, "ns": h.ticks_to_ns(c.ticks)}),
                );
            }
        }
        let v =
            json!({"pid": pid, "tid": t.tid, "kind": "counters", "dropped": t.dropped, "ops": ops});
        emit(out, json, &v, h.start_mono_ns)?;
    }
    Ok(if damaged {
        Dumped::Damaged
    } else {
        Dumped::Clean
    })
}

fn emit(out: &mut impl Write, json: bool, v: &Value, t0: u64) -> std::io::Result<()> {
    if json {
        serde_json::to_writer(&mut *out, v)?;
        return writeln!(out);
    }
    // Text: a relative time, pid/tid, kind, then the remaining fields.
    let o = v.as_object().expect("records are objects");
    let ts = o.get("ts_ns").and_then(Value::as_u64);
    match ts {
        Some(ts) => write!(out, "{:>14.6} ", (ts as f64 - t0 as f64) / 1e9)?,
        None => write!(out, "{:>14} ", "-")?,
    }
    write!(
        out,
        "{}/{} {}",
        o["pid"],
        o["tid"],
        o["kind"].as_str().unwrap_or("?")
    )?;
    for (k, val) in o {
        if matches!(k.as_str(), "pid" | "tid" | "kind" | "ts_ns") {
            continue;
        }
        match val {
            Value::String(s) => write!(out, " {k}={s:?}")?,
            other => write!(out, " {k}={other}")?,
        }
    }
    writeln!(out)
}

fn record_json(pid: u32, chunk_tid: u32, rec: Record<'_>, n: &Names) -> Value {
    let mut v = match rec {
        Record::Span(s) => {
            let op = HostOp::from_code(s.op);
            let mut m = json!({
                "tid": chunk_tid, "kind": "span", "op": op.map_or("unknown", HostOp::name),
                "ts_ns": s.ts, "dur_ns": s.dur,
            });
            let is_sync_object = matches!(op, Some(HostOp::SemWait | HostOp::CondWait));
            if is_sync_object {
                m["addr"] = json!(format!("0x{:x}", s.bytes));
            } else {
                m["bytes"] = json!(s.bytes);
            }
            if let Some(o) = n.objects.get(&s.obj) {
                describe_object(&mut m, o, n);
            }
            m
        }
        Record::Burst(b) => {
            let op = HostOp::from_code(b.op);
            let mut m = json!({
                "tid": chunk_tid, "kind": "burst", "op": op.map_or("unknown", HostOp::name),
                "ts_ns": b.ts, "dur_ns": b.dur, "bytes": b.bytes, "calls": b.calls,
                "files": b.file_count(), "busy_ns": b.busy,
            });
            if let Some(o) = n.objects.get(&b.obj) {
                describe_object(&mut m, o, n);
            }
            m
        }
        Record::String { id, text } => {
            json!({"tid": chunk_tid, "kind": "string", "id": id, "text": String::from_utf8_lossy(text)})
        }
        Record::Object(o) => {
            let mut m = json!({"tid": chunk_tid, "kind": "object", "obj": o.obj, "ts_ns": o.ts,
                               "dev": o.dev, "ino": o.ino});
            describe_object(&mut m, &o, n);
            m
        }
        Record::ThreadName(t) => {
            json!({"tid": t.tid, "kind": "thread_name", "ts_ns": t.ts, "name": n.string(t.name)})
        }
        Record::Sample(s) => json!({
            "tid": s.tid, "kind": "sample", "ts_ns": s.ts, "state": (s.state as char).to_string(),
            "cpu_ns": s.cpu_ns, "run_delay_ns": s.run_delay_ns, "majflt": s.majflt, "minflt": s.minflt,
        }),
        Record::Clock(c) => json!({"tid": chunk_tid, "kind": "clock", "ts_ns": c.mono_ns,
                                   "real_ns": c.real_ns, "ticks": c.ticks}),
        Record::ProcessEnd(e) => {
            json!({"tid": chunk_tid, "kind": "process_end", "ts_ns": e.ts, "reason": e.reason})
        }
        Record::Note(x) => json!({"tid": chunk_tid, "kind": "note", "ts_ns": x.ts, "code": x.code,
                                  "text": n.string(x.text)}),
        Record::Kernel(k) => json!({
            "tid": chunk_tid, "kind": "kernel", "ts_ns": k.start, "dur_ns": k.end.saturating_sub(k.start),
            "device": k.device, "stream": k.stream, "context": k.context, "correlation": k.correlation,
            "name": n.string(k.name), "grid": [k.grid_x, k.grid_y, k.grid_z],
            "block": [k.block_x, k.block_y, k.block_z], "shared_mem": k.shared_mem, "registers": k.registers,
        }),
        Record::Memcpy(m) => json!({
            "tid": chunk_tid, "kind": "memcpy", "ts_ns": m.start, "dur_ns": m.end.saturating_sub(m.start),
            "device": m.device, "stream": m.stream, "correlation": m.correlation, "bytes": m.bytes,
            "copy_kind": m.copy_kind, "src_kind": m.src_kind, "dst_kind": m.dst_kind,
        }),
        Record::Memset(m) => json!({
            "tid": chunk_tid, "kind": "memset", "ts_ns": m.start, "dur_ns": m.end.saturating_sub(m.start),
            "device": m.device, "stream": m.stream, "correlation": m.correlation, "bytes": m.bytes,
        }),
        Record::Sync(s) => json!({
            "tid": chunk_tid, "kind": "sync", "ts_ns": s.start, "dur_ns": s.end.saturating_sub(s.start),
            "sync_type": s.sync_type, "stream": s.stream, "device": s.device, "correlation": s.correlation,
        }),
        Record::Api(x) => json!({
            "tid": x.tid, "kind": "api", "ts_ns": x.start, "dur_ns": x.end.saturating_sub(x.start),
            "domain": x.domain, "cbid": x.cbid, "correlation": x.correlation, "result": x.result,
        }),
        Record::Memory(m) => json!({
            "tid": chunk_tid, "kind": "memory", "ts_ns": m.ts, "op": m.op, "device": m.device,
            "address": m.address, "bytes": m.bytes, "mem_kind": m.mem_kind, "correlation": m.correlation,
        }),
        Record::Overhead(o) => json!({
            "tid": chunk_tid, "kind": "overhead", "ts_ns": o.start, "dur_ns": o.end.saturating_sub(o.start),
            "overhead_kind": o.overhead_kind, "object_id": o.object_id,
        }),
        Record::Marker(m) => json!({
            "tid": m.tid, "kind": "marker", "ts_ns": m.ts, "flags": m.flags, "id": m.id,
            "name": n.string(m.name), "domain": n.string(m.domain),
        }),
        Record::Device(d) => json!({
            "tid": chunk_tid, "kind": "device", "device": d.device, "name": n.string(d.name),
            "global_mem": d.global_mem, "sm_count": d.sm_count, "cc": [d.cc_major, d.cc_minor],
        }),
        Record::Oom(o) => json!({
            "tid": o.tid, "kind": "oom", "ts_ns": o.ts, "requested": o.requested, "free": o.free,
            "total": o.total, "cbid": o.cbid, "result": o.result,
        }),
        Record::GpuDropped(d) => json!({"tid": chunk_tid, "kind": "gpu_dropped", "ts_ns": d.ts,
                                        "device": d.device, "count": d.count}),
        Record::GpuStatus(s) => {
            json!({"tid": chunk_tid, "kind": "gpu_status", "ts_ns": s.ts, "status": s.status,
                                       "cupti_version": s.cupti_version, "reason": n.string(s.reason)})
        }
        Record::ApiName(a) => {
            json!({"tid": chunk_tid, "kind": "api_name", "domain": a.domain, "cbid": a.cbid,
                                     "name": n.string(a.name)})
        }
        Record::Unknown { kind, bytes } => {
            json!({"tid": chunk_tid, "kind": "unknown", "code": kind,
                                                  "len": bytes.len()})
        }
    };
    v["pid"] = json!(pid);
    v
}

fn describe_object(m: &mut Value, o: &Object, n: &Names) {
    let class = FdClass::from_code(o.class);
    m["class"] = json!(class.name());
    m["path"] = json!(n.string(o.path));
    m["fd"] = json!(o.fd);
    if matches!(class, FdClass::File | FdClass::Dir) {
        m["fs"] = json!(fs_name(o.fs_magic));
        m["fs_magic"] = json!(format!("0x{:x}", o.fs_magic));
    }
}
