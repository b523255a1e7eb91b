//! Reader for native recordings: a directory of per-process trace files (or one
//! file). Files are read in parallel; within a file, chunks are decoded in
//! parallel batches and merged per thread and per stream. All processes of a
//! recording share CLOCK_MONOTONIC, so they land on one timeline.

mod batch;
mod corr;
mod decode;
mod file;
mod partial;

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use stallscope_format::FormatError;

use crate::model::{Source, Timeline};

pub use file::read_file;

#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    #[error("{0}")]
    Format(#[from] FormatError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0} holds no stallscope trace files (*.sst)")]
    Empty(PathBuf),
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
        source: e,
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
/// Damaged chunks are skipped with a warning naming the file and offset; a file
/// whose header is unreadable is an error.
pub fn read_recording(path: &Path) -> Result<Timeline, NativeError> {
    let files = if path.is_dir() {
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
    let mut parts: Vec<Timeline> = files
        .par_iter()
        .map(|f| read_file(f))
        .collect::<Result<_, _>>()?;
    let unmoved = corr::make_unique(&mut parts);
    let mut tl = Timeline::new(Source::Native, name);
    for w in unmoved {
        tl.warn(w);
    }
    for p in parts {
        merge(&mut tl, p);
    }
    tl.finalize();
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
