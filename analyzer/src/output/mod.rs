//! Outputs: render a timeline and its diagnosis. Outputs never reach back into
//! readers.

pub mod diff;
pub mod markdown;
pub mod perfetto;
pub mod report;
pub mod saved;
pub mod text;
