//! The stallscope on-disk trace format.
//!
//! This crate is the only place that defines bytes on disk. One file holds one
//! process image:
//!
//! ```text
//! [0, HEADER_SIZE)                      file header (magic, versions, pid, clocks, cmdline)
//! [thread_table_offset, +slots*SLOT)    per-thread counters, updated in place
//! [chunks_offset, ...)                  fixed-size chunks of length-prefixed records
//! ```
//!
//! The producer (the shim) maps the file `MAP_SHARED` and writes records straight
//! into it; each chunk publishes its committed length with a release store, so a
//! process killed at any instant leaves a file that reads back up to the record in
//! flight. Readers validate every length and offset and never panic on bad input.
//!
//! * [`layout`]: the fixed structures (header, thread slots, chunk headers).
//! * [`records`]: every record kind, with its encoder and decoder.
//! * [`writer`]: lock-free primitives the shim uses to claim slots and chunks.
//! * [`reader`]: the validating reader the analyzer uses.
//! * `mutate`: structure-aware mutation of traces, for the readers' fuzz tests.

pub mod bytes;
pub mod error;
pub mod layout;
#[doc(hidden)]
pub mod mutate;
pub mod ops;
pub mod reader;
pub mod records;
pub mod writer;

pub use error::{FormatError, FormatErrorKind};
pub use ops::{FdClass, HostOp, fs_name};
pub use reader::{Chunk, RecordIter, TraceFile, TraceView};
pub use records::Record;

/// File magic: the first eight bytes of every trace file.
pub const MAGIC: [u8; 8] = *b"STLSCOPE";
/// The format version this crate writes and the newest it reads.
pub const FORMAT_VERSION: u32 = 1;
/// File name extension of trace files.
pub const FILE_EXTENSION: &str = "sst";
