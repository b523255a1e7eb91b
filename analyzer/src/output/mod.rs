//! Outputs: render a timeline and its diagnosis. Outputs never reach back into
//! readers.

pub mod colors;
pub mod diff;
pub mod html;
pub mod markdown;
pub mod metrics;
pub mod perfetto;
pub mod report;
pub mod saved;
pub mod text;
