//! PyTorch-profiler (Kineto) Chrome-trace JSON reader.
//!
//! Reads `.json` and `.json.gz` traces (gzip is detected by its magic bytes),
//! one file per rank, into the same [`Timeline`] as native recordings:
//!
//! | Kineto | model |
//! |---|---|
//! | `cuda_runtime`/`Runtime` (also `hip*` calls) | `SpanKind::CudaRuntime`, `arg` = correlation id |
//! | `cuda_driver` | `SpanKind::CudaDriver`, `arg` = correlation id |
//! | `cpu_op`/`Operator` | `SpanKind::CpuOp` |
//! | `python_function` | `SpanKind::PyFunction` |
//! | `user_annotation`, and `ProfilerStep#N` in any category | `SpanKind::Annotation` |
//! | other host categories | `SpanKind::Other` |
//! | `kernel`/`Kernel`, `gpu_memcpy`/`Memcpy`, `gpu_memset`/`Memset` | `GpuOp` on `Gpu` `args.device` (else pid), `Stream` `args.stream` (else tid) |
//! | `cuda_sync` | `Gpu::syncs` (stream -1 becomes `u64::MAX`) |
//! | `[memory]` / `[OutOfMemory]` instants | `Gpu::memory` / `Timeline::ooms` |
//! | `deviceProperties` | `Gpu` name, memory, SM count, compute capability (by `id`; where every device described is one model, also a device numbered otherwise, as ROCm traces number their ops by the node's agent) |
//! | HIP launch, copy or graph calls (`hipLaunchKernel`, ...) | `Gpu::hip`: AMD GPUs, even unnamed |
//! | `distributedInfo.rank` | `Process::rank` |
//! | `baseTimeNanoseconds` | `Timeline::realtime_offset_ns` |
//!
//! GPU ops keep `Precision::Unknown` for the analyses to classify, except
//! NCCL/RCCL kernels ([`is_collective_kernel`]), which get `Precision::Comm`.
//! Correlation ids come from `args.correlation`, else `args.External id`
//! (both sides of a launch carry the same one). Flow events (`ac2g`, `async`)
//! repeat those ids and are not needed. `gpu_user_annotation` ranges are
//! counted in a note but not kept: the model has no GPU-side ranges.
//!
//! Times are read exactly: `ts`/`dur` are decimal microseconds (whatever
//! `displayTimeUnit` says) and become integer nanoseconds without going
//! through f64.
//!
//! Quirks are tolerated (missing fields, zero-length kernels, events outside
//! steps, unknown categories, `args` of any shape); corruption (bad JSON, a
//! `ts` that is not a number, a truncated or damaged gzip stream) is an error
//! naming the file and the byte offset.
//!
//! Parsing never builds a `serde_json::Value` of the document: events are
//! read one at a time into a reused struct borrowing from the text and fed to
//! the `builder`, by a byte scanner (`fast`) that takes every trace shape
//! (escapes, quoted times, float ids, `traceEvents` anywhere, bare event
//! arrays); serde (`event`, `document`) is the reference it must agree with,
//! and reads what the scanner declines (only invalid or exotic JSON). Files go to rayon threads
//! in parallel; a large file is itself cut into pieces parsed on several
//! threads (`cuts`): gzip files are inflated and parsed in a pipeline
//! (`stream`), plain files are memory-mapped and split (`parallel`). Any
//! doubt there falls back to one sequential pass, which is the reference for
//! errors.

mod builder;
mod category;
mod cuts;
mod document;
mod error;
mod event;
mod fast;
mod meta;
mod micros;
mod parallel;
#[cfg(test)]
mod shapes;
pub(crate) mod source;
mod stream;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::model::Timeline;

pub use category::is_collective_kernel;
pub use error::KinetoError;
pub use micros::micros_to_ns;

/// How to read a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Threads one large file is parsed on (1: a single pass). Defaults to
    /// rayon's thread count.
    pub threads: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            threads: rayon::current_num_threads(),
        }
    }
}

/// Reads one Kineto trace file.
pub fn read_file(path: &Path) -> Result<Timeline, KinetoError> {
    read_file_with(path, &ReadOptions::default())
}

/// Reads one Kineto trace file with explicit options.
pub fn read_file_with(path: &Path, opts: &ReadOptions) -> Result<Timeline, KinetoError> {
    let raw = source::map(path)?;
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    read_raw(path, name, raw, opts)
}

/// Reads a trace already in memory (gzip or not); `name` labels the timeline
/// and stands for the path in errors.
pub fn read_bytes(name: &str, bytes: Vec<u8>) -> Result<Timeline, KinetoError> {
    let raw = source::Text::Owned(bytes);
    read_raw(
        Path::new(name),
        name.to_owned(),
        raw,
        &ReadOptions::default(),
    )
}

fn read_raw(
    path: &Path,
    name: String,
    raw: source::Text,
    opts: &ReadOptions,
) -> Result<Timeline, KinetoError> {
    if opts.threads >= 2
        && source::is_gzip(&raw)
        && raw.len() >= stream::MIN_STREAM_BYTES
        && let Some((builder, meta)) = stream::parse(&raw, &name)
    {
        return Ok(builder.finish(meta));
    }
    let mut text = source::json_text(path, raw)?;
    parse_text(path, name, &mut text, opts)
}

fn parse_text(
    path: &Path,
    name: String,
    text: &mut source::Text,
    opts: &ReadOptions,
) -> Result<Timeline, KinetoError> {
    if let Some((builder, meta)) = parallel::parse(text, &name, opts.threads) {
        return Ok(builder.finish(meta));
    }
    // One pass: the fast scanner, else serde, the reference for results and errors.
    let mut builder = builder::Builder::new(name.clone());
    if let Ok((meta, found)) = fast::parse_document(text, &mut builder) {
        if found {
            return Ok(builder.finish(meta));
        }
        return Err(not_kineto(path));
    }
    let mut builder = builder::Builder::new(name);
    match document::parse(text, &mut builder) {
        Ok((meta, true)) => Ok(builder.finish(meta)),
        Ok((_, false)) => Err(not_kineto(path)),
        Err(e) => Err(KinetoError::json(
            path.to_owned(),
            text,
            text.is_decompressed(),
            &e,
        )),
    }
}

fn not_kineto(path: &Path) -> KinetoError {
    KinetoError::NotKineto {
        path: path.to_owned(),
        reason: "the JSON has no `traceEvents` array".into(),
    }
}

/// Reads several traces in parallel: files, and directories of rank files
/// (`*.json`, `*.json.gz`, not recursive). The result is sorted by rank when
/// every trace names a distinct one, else kept in argument (then name) order.
pub fn read_paths(paths: &[PathBuf]) -> Result<Vec<Timeline>, KinetoError> {
    let mut files = vec![];
    for p in paths {
        if p.is_dir() {
            let found: Vec<PathBuf> = source::list_dir(p)?
                .into_iter()
                .filter(|f| may_be_trace(f))
                .collect();
            if found.is_empty() {
                return Err(KinetoError::NoTraces(p.clone()));
            }
            files.extend(found);
        } else {
            files.push(p.clone());
        }
    }
    let mut out = files
        .par_iter()
        .map(|p| read_file(p))
        .collect::<Result<Vec<_>, _>>()?;
    let ranks: Vec<Option<u32>> = out.iter().map(rank_of).collect();
    let mut distinct: Vec<u32> = ranks.iter().flatten().copied().collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() == out.len() {
        out.sort_by_key(rank_of);
    }
    Ok(out)
}

/// The distributed rank a Kineto timeline says it is.
pub fn rank_of(tl: &Timeline) -> Option<u32> {
    tl.processes.iter().find_map(|p| p.rank)
}

/// A cheap sniff for CLI auto-detection: a file whose first bytes look like a
/// Chrome trace, or a directory holding one (see `may_be_trace`).
pub fn looks_like_kineto(path: &Path) -> bool {
    if path.is_dir() {
        return source::list_dir(path)
            .map(|files| files.iter().any(|f| may_be_trace(f)))
            .unwrap_or(false);
    }
    sniff(path).unwrap_or(false)
}

/// Whether a file's first bytes look like a Chrome trace; an error where
/// they cannot be read (gone, unreadable, a damaged gzip stream).
fn sniff(path: &Path) -> std::io::Result<bool> {
    source::head_has(path, 256 * 1024, |head| {
        let text = String::from_utf8_lossy(head);
        let t = text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        let has = |needle: &str| t.contains(needle);
        if t.starts_with('{') {
            has("\"traceEvents\"") || (has("\"schemaVersion\"") && has("\"deviceProperties\""))
        } else {
            t.starts_with('[') && has("\"ph\"")
        }
    })
}

/// Whether a file given, or listed in a rank directory, is read as a trace:
/// it looks like one, or its head cannot be read, so that the reader names
/// its damage rather than the file being passed over. (Other JSON a run
/// directory holds, configs and reports, is passed over.)
pub fn may_be_trace(path: &Path) -> bool {
    sniff(path).unwrap_or(true)
}
