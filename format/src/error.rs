//! Reader errors. Every error names the file (when known) and the byte offset.

use std::fmt;
use std::path::PathBuf;

/// What was wrong, without the location.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatErrorKind {
    #[error("not a stallscope trace (bad magic)")]
    BadMagic,
    #[error(
        "trace format version {found} is newer than this reader understands ({supported}); upgrade stallscope"
    )]
    NewerVersion { found: u32, supported: u32 },
    #[error("file is truncated: need {needed} bytes, have {have}")]
    Truncated { needed: u64, have: u64 },
    #[error("invalid header field {field}: {value}")]
    BadHeader { field: &'static str, value: u64 },
    #[error("chunk committed length {committed} exceeds the chunk payload size {capacity}")]
    BadCommitted { committed: u64, capacity: u64 },
    #[error(
        "record length {len} is invalid (must be a multiple of 8, at least 8, within the chunk)"
    )]
    BadRecordLength { len: u64 },
    #[error("record of kind {kind} is {len} bytes, shorter than its minimum {min}")]
    ShortRecord { kind: u8, len: u64, min: u64 },
    #[error("string record is not valid: {0}")]
    BadString(&'static str),
    #[error("I/O error: {0}")]
    Io(String),
}

/// A reader error with its location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    pub path: Option<PathBuf>,
    pub offset: u64,
    pub kind: FormatErrorKind,
}

impl FormatError {
    pub fn at(offset: u64, kind: FormatErrorKind) -> Self {
        FormatError {
            path: None,
            offset,
            kind,
        }
    }

    /// Attaches the file name, for errors raised while parsing a byte slice.
    pub fn in_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(p) => write!(f, "{}: ", p.display())?,
            None => f.write_str("trace: ")?,
        }
        write!(
            f,
            "at byte offset {} (0x{:x}): {}",
            self.offset, self.offset, self.kind
        )
    }
}

impl std::error::Error for FormatError {}
