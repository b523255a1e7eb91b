//! Reader for native recordings: a directory of per-process trace files (or one
//! file). Files are read in parallel; within a file, chunks are decoded in
//! parallel batches and merged per thread and per stream. All processes of a
//! recording share CLOCK_MONOTONIC, so they land on one timeline.

mod batch;
mod corr;
mod decode;
mod file;
pub mod live;
mod partial;

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use stallscope_format::FormatError;

use crate::model::{Source, Timeline};

pub use file::read_file;

#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    #[error(transparent)]
    Format(#[from] FormatError),
    // The cause is in the message only (see `KinetoError::Io`).
    #[error("{path}: {err}")]
    Io { path: PathBuf, err: std::io::Error },
    #[error("{0} holds no stallscope trace files (*.sst)")]
    Empty(PathBuf),
    #[error("{0} (--strict refuses a recording with an unreadable trace file)")]
    Strict(Box<NativeError>),
    #[error(
        "{dir} holds no readable stallscope trace file ({count} unreadable; the first: {first})"
    )]
    NoneReadable {
        dir: PathBuf,
        count: usize,
        first: Box<NativeError>,
    },
}

/// How to read a recording.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// Fail on a file of the directory that cannot be read at all (0 bytes,
    /// zeros, junk, another format, a cut-off header) instead of skipping it
    /// with a warning. A process killed while creating its file, or a stray
    /// file, then fails the whole recording.
    pub strict: bool,
}

/// True if `p` is a native trace file or a directory holding some.
pub fn is_native(p: &Path) -> bool {
    if p.is_dir() {
        return trace_files(p).is_ok_and(|f| !f.is_empty());
    }
    std::fs::File::open(p)
        .and_then(|mut f| {
            let mut magic = [0u8; 8];
            std::io::Read::read_exact(&mut f, &mut magic)
                .map(|()| magic == stallscope_format::MAGIC)
        })
        .unwrap_or(false)
}

/// The trace files of a recording directory, sorted.
pub fn trace_files(dir: &Path) -> Result<Vec<PathBuf>, NativeError> {
    let rd = std::fs::read_dir(dir).map_err(|e| NativeError::Io {
        path: dir.into(),
        err: e,
    })?;
    let mut v: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension()
                .is_some_and(|x| x == stallscope_format::FILE_EXTENSION)
        })
        .collect();
    v.sort();
    Ok(v)
}

/// Reads a recording (directory) or a single trace file into one timeline.
/// Damaged chunks are skipped with a warning naming the file and offset. A
/// file of a directory that cannot be read at all is skipped with a warning
/// (see [`ReadOptions::strict`]); a single file that cannot is an error.
pub fn read_recording(path: &Path) -> Result<Timeline, NativeError> {
    read_recording_with(path, ReadOptions::default())
}

/// `read_recording` with options.
pub fn read_recording_with(path: &Path, opts: ReadOptions) -> Result<Timeline, NativeError> {
    let is_dir = path.is_dir();
    let files = if is_dir {
        let f = trace_files(path)?;
        if f.is_empty() {
            return Err(NativeError::Empty(path.into()));
        }
        f
    } else {
        vec![path.to_path_buf()]
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let read: Vec<Result<Timeline, NativeError>> = files.par_iter().map(|f| read_file(f)).collect();
    let mut parts = Vec::with_capacity(read.len());
    let mut skipped = Vec::new();
    for r in read {
        match r {
            Ok(t) => parts.push(t),
            Err(e) if !is_dir => return Err(e),
            Err(e) if opts.strict => return Err(NativeError::Strict(Box::new(e))),
            Err(e) => skipped.push(e),
        }
    }
    if parts.is_empty() {
        return Err(NativeError::NoneReadable {
            dir: path.into(),
            count: skipped.len(),
            first: Box::new(skipped.remove(0)),
        });
    }
    let unmoved = corr::make_unique(&mut parts);
    let mut tl = Timeline::new(Source::Native, name);
    for e in skipped {
        tl.warn(format!("skipped an unreadable trace file: {e}"));
    }
    for w in unmoved {
        tl.warn(w);
    }
    for p in parts {
        merge(&mut tl, p);
    }
    // Each thread's spans come sorted from `read_file` (a file per process).
    tl.finalize_spans_sorted();
    Ok(tl)
}

/// Moves one file's timeline into the recording's, re-interning its strings.
fn merge(into: &mut Timeline, mut part: Timeline) {
    let map = into.strings.merge(&part.strings);
    // The first file's ids stay as they are.
    let identity = map.iter().enumerate().all(|(i, &id)| id as usize == i);
    if !identity {
        let remap = |id: u32| map.get(id as usize).copied().unwrap_or(0);
        for p in &mut part.processes {
            p.threads.par_iter_mut().for_each(|t| {
                t.name = remap(t.name);
                for s in &mut t.spans {
                    if s.kind.is_named() {
                        s.id = remap(s.id);
                    }
                }
            });
            for o in &mut p.objects {
                o.path = remap(o.path);
            }
        }
        for g in &mut part.gpus {
            g.streams.par_iter_mut().for_each(|s| {
                for op in &mut s.ops {
                    op.name = remap(op.name);
                }
            });
        }
    }
    into.processes.append(&mut part.processes);
    for g in part.gpus {
        match into.gpus.iter_mut().find(|x| x.id == g.id) {
            None => into.gpus.push(g),
            Some(x) => merge_gpu(x, g),
        }
    }
    into.ooms.append(&mut part.ooms);
    into.notes.append(&mut part.notes);
    if into.realtime_offset_ns.is_none() {
        into.realtime_offset_ns = part.realtime_offset_ns;
    }
}

/// Several processes can use the same GPU (and even the same stream ids).
fn merge_gpu(into: &mut crate::model::Gpu, g: crate::model::Gpu) {
    if into.name.is_empty() {
        into.name = g.name;
        into.memory_bytes = g.memory_bytes;
        into.sm_count = g.sm_count;
        into.cc = g.cc;
    }
    let base = into.launch_configs.len() as u32;
    into.launch_configs.extend(g.launch_configs);
    for mut s in g.streams {
        for op in &mut s.ops {
            if op.launch() != u32::MAX {
                op.set_launch(op.launch() + base);
            }
        }
        into.stream_mut(s.id).ops.append(&mut s.ops);
    }
    into.syncs.extend(g.syncs);
    into.memory.extend(g.memory);
    into.dropped_records += g.dropped_records;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A checked-in recording plus a 0-byte and a junk file.
    fn recording_with_junk() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces/item-sync");
        for f in trace_files(&src).expect("traces/item-sync") {
            std::fs::copy(&f, dir.path().join(f.file_name().expect("a name"))).expect("copy");
        }
        std::fs::write(dir.path().join("1.sst"), b"").expect("write");
        std::fs::write(dir.path().join("2.sst"), vec![0x5a; 30_000]).expect("write");
        dir
    }

    #[test]
    fn unreadable_files_are_skipped_with_a_warning_unless_strict() {
        let dir = recording_with_junk();
        let tl = read_recording(dir.path()).expect("the readable file is read");
        assert_eq!(tl.processes.len(), 1);
        let skipped: Vec<&str> = tl
            .notes
            .iter()
            .map(|n| n.text.as_str())
            .filter(|t| t.starts_with("skipped an unreadable trace file"))
            .collect();
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        assert!(skipped[0].contains("1.sst") && skipped[1].contains("2.sst"));

        let err = read_recording_with(dir.path(), ReadOptions { strict: true })
            .expect_err("--strict refuses the junk");
        assert!(matches!(err, NativeError::Strict(_)), "{err}");
        assert!(err.to_string().contains("1.sst"), "{err}");
    }

    #[test]
    fn nothing_readable_is_an_error_and_a_single_file_must_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("1.sst"), b"").expect("write");
        std::fs::write(dir.path().join("2.sst"), vec![0; 20_000]).expect("write");
        let err = read_recording(dir.path()).expect_err("nothing to read");
        assert!(
            matches!(err, NativeError::NoneReadable { count: 2, .. }),
            "{err}"
        );
        let err = read_recording(&dir.path().join("2.sst")).expect_err("junk");
        assert!(matches!(err, NativeError::Format(_)), "{err}");
    }
}
