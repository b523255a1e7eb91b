//! Outputs: render a timeline and its diagnosis. Outputs never reach back into
//! readers.

pub mod perfetto;
