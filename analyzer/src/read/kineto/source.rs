//! Getting a trace's JSON text into memory: plain files are memory-mapped,
//! gzip files (found by their magic bytes, not their name) are inflated once.
//! Events borrow their strings from this text.

use std::fs::File;
use std::io::{self, Read};
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;
use memmap2::{MmapMut, MmapOptions};

use super::KinetoError;

pub enum Text {
    /// A private copy-on-write map: the parallel parser patches a few bytes.
    Mapped(MmapMut),
    Inflated(Vec<u8>),
    /// Bytes handed to us uncompressed.
    Owned(Vec<u8>),
    Empty,
}

impl Text {
    pub fn is_decompressed(&self) -> bool {
        matches!(self, Text::Inflated(_))
    }
}

impl Deref for Text {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Text::Mapped(m) => m,
            Text::Inflated(v) | Text::Owned(v) => v,
            Text::Empty => &[],
        }
    }
}

impl DerefMut for Text {
    fn deref_mut(&mut self) -> &mut [u8] {
        match self {
            Text::Mapped(m) => m,
            Text::Inflated(v) | Text::Owned(v) => v,
            Text::Empty => &mut [],
        }
    }
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Maps a file as it is on disk (gzip or not).
pub fn map(path: &Path) -> Result<Text, KinetoError> {
    let io_err = |err| KinetoError::Io {
        path: path.to_owned(),
        err,
    };
    let file = File::open(path).map_err(io_err)?;
    let len = file.metadata().map_err(io_err)?.len();
    if len == 0 {
        return Ok(Text::Empty);
    }
    // SAFETY: a private (copy-on-write) map: our writes never reach the file.
    // A file truncated underneath us is the one hazard, as with any mmap reader.
    let map = unsafe { MmapOptions::new().map_copy(&file) }.map_err(io_err)?;
    Ok(Text::Mapped(map))
}

pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&GZIP_MAGIC)
}

/// The JSON text of `raw`: itself, or inflated when it is gzip.
pub fn json_text(path: &Path, raw: Text) -> Result<Text, KinetoError> {
    if is_gzip(&raw) {
        inflate(path, &raw).map(Text::Inflated)
    } else {
        Ok(raw)
    }
}

fn inflate(path: &Path, gz: &[u8]) -> Result<Vec<u8>, KinetoError> {
    // ISIZE (the last 4 bytes) is the inflated size mod 2^32: a capacity hint
    // that saves the copies of a growing Vec.
    let hint = gz
        .len()
        .checked_sub(4)
        .and_then(|i| gz.get(i..))
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)
        .map_or(0, |n| n as usize)
        .min(gz.len().saturating_mul(64));
    let mut counted = Counted { inner: gz, read: 0 };
    let mut out = Vec::with_capacity(hint);
    let r = MultiGzDecoder::new(&mut counted).read_to_end(&mut out);
    match r {
        Ok(_) => Ok(out),
        Err(err) => Err(KinetoError::Gzip {
            path: path.to_owned(),
            offset: counted.read,
            err,
        }),
    }
}

/// Counts the compressed bytes consumed, to place gzip errors.
struct Counted<'a> {
    inner: &'a [u8],
    read: u64,
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

/// True for names a Kineto trace file can have.
pub fn has_trace_extension(p: &Path) -> bool {
    let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    n.ends_with(".json") || n.ends_with(".json.gz")
}

/// The trace files of a directory (not recursive), sorted by name.
pub fn list_dir(dir: &Path) -> Result<Vec<PathBuf>, KinetoError> {
    let io_err = |err| KinetoError::Io {
        path: dir.to_owned(),
        err,
    };
    let mut out = vec![];
    for entry in std::fs::read_dir(dir).map_err(io_err)? {
        let p = entry.map_err(io_err)?.path();
        if p.is_file() && has_trace_extension(&p) {
            out.push(p);
        }
    }
    out.sort();
    if out.is_empty() {
        return Err(KinetoError::NoTraces(dir.to_owned()));
    }
    Ok(out)
}

/// Whether `found` holds for some prefix of a file's first `n` bytes of JSON
/// text (inflated when gzipped), for sniffing; an error where it does not
/// and those bytes could not all be read. `found` must only turn true as
/// the prefix grows (a needle search): the prefix doubles from 16 kB, so a
/// trace whose key comes early is not inflated 256 kB deep.
pub fn head_has(path: &Path, n: usize, found: impl Fn(&[u8]) -> bool) -> io::Result<bool> {
    let mut f = File::open(path)?;
    let mut magic = [0u8; 2];
    let got = f.read(&mut magic)?;
    let f = File::open(path)?;
    let mut r: Box<dyn Read> = if got == 2 && magic == GZIP_MAGIC {
        Box::new(MultiGzDecoder::new(f))
    } else {
        Box::new(f)
    };
    let mut out = Vec::with_capacity(n);
    let mut want = n.min(16 << 10);
    loop {
        let before = out.len();
        // A truncated stream still yields its first bytes before failing.
        let read = (&mut r).take((want - before) as u64).read_to_end(&mut out);
        if found(&out) {
            return Ok(true);
        }
        // Bytes that could not be read might have held it: the error says
        // so, where a plain "no" would pass a damaged trace over.
        read?;
        if out.len() < want || want == n {
            return Ok(false);
        }
        want = (want * 2).min(n);
    }
}
