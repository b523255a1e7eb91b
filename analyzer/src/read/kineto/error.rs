//! Errors of the Kineto reader. Each names the file, and corruption names the
//! byte offset where it was found.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum KinetoError {
    // The cause is in the message, not also in `source()`: a chain printed
    // whole (`{:#}`) would repeat it.
    #[error("{path}: {err}")]
    Io { path: PathBuf, err: std::io::Error },
    /// The gzip stream is damaged; `offset` counts compressed bytes read so far.
    #[error("{path}: corrupt gzip data near compressed byte {offset}: {err}")]
    Gzip {
        path: PathBuf,
        offset: u64,
        err: std::io::Error,
    },
    /// Malformed JSON or a field of the wrong type. `offset` is a byte offset
    /// into the JSON text (the decompressed text for `.gz` files).
    #[error("{path}: invalid Kineto trace at byte {offset} (line {line}, column {column}){gz}: {msg}", gz = if *.decompressed { " of the decompressed JSON" } else { "" })]
    Json {
        path: PathBuf,
        offset: u64,
        line: usize,
        column: usize,
        decompressed: bool,
        msg: String,
    },
    /// Well-formed JSON that is not a Chrome trace (no `traceEvents`).
    #[error("{path}: not a Kineto trace: {reason}")]
    NotKineto { path: PathBuf, reason: String },
    /// A directory argument held no `.json` / `.json.gz` file.
    #[error("{0}: no Kineto trace files (*.json, *.json.gz) found")]
    NoTraces(PathBuf),
}

impl KinetoError {
    /// The file the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            KinetoError::Io { path, .. }
            | KinetoError::Gzip { path, .. }
            | KinetoError::Json { path, .. }
            | KinetoError::NotKineto { path, .. } => path,
            KinetoError::NoTraces(path) => path,
        }
    }

    /// The byte offset of the corruption, when there is one.
    pub fn offset(&self) -> Option<u64> {
        match self {
            KinetoError::Gzip { offset, .. } | KinetoError::Json { offset, .. } => Some(*offset),
            _ => None,
        }
    }

    /// Converts a serde_json error on `text` into one with a byte offset.
    pub(crate) fn json(
        path: PathBuf,
        text: &[u8],
        decompressed: bool,
        e: &serde_json::Error,
    ) -> KinetoError {
        let (line, column) = (e.line(), e.column());
        let mut msg = e.to_string();
        // serde_json appends " at line L column C"; we print our own position.
        if let Some(i) = msg.rfind(" at line ") {
            msg.truncate(i);
        }
        KinetoError::Json {
            path,
            offset: byte_offset(text, line, column),
            line,
            column,
            decompressed,
            msg,
        }
    }
}

/// serde_json reports 1-based lines and the count of bytes consumed on that
/// line as the column; turn that back into an index into `text`.
fn byte_offset(text: &[u8], line: usize, column: usize) -> u64 {
    if line == 0 {
        return 0;
    }
    let mut start = 0usize;
    let mut seen = 1usize;
    if line > 1 {
        for (i, &b) in text.iter().enumerate() {
            if b == b'\n' {
                seen += 1;
                if seen == line {
                    start = i + 1;
                    break;
                }
            }
        }
    }
    let off = start + column.saturating_sub(1);
    off.min(text.len()) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_of_line_and_column() {
        let text = b"{\n  \"a\": 1,\n  \"b\": x\n}";
        let e = serde_json::from_slice::<serde_json::Value>(text).unwrap_err();
        let off = byte_offset(text, e.line(), e.column()) as usize;
        assert_eq!(text[off], b'x', "line {} col {}", e.line(), e.column());
    }
}
