//! The one colour per idle cause, shared by every output that draws causes
//! (the HTML report's charts and legends; any future coloured output).
//!
//! Okabe & Ito's palette ("Color Universal Design", 2008): eight colours that
//! stay distinct under the common colour-vision deficiencies and in greyscale
//! print. The Perfetto trace cannot carry colours (TrackEvent has no colour
//! field: the Perfetto UI picks a slice's colour from a hash of its name), so
//! there the cause is in the slice name ("data/cpu") instead.

use crate::analysis::Cause;

/// Indexed by `Cause::index()`.
const CAUSE: [&str; 8] = [
    "#E69F00", // data: orange
    "#D55E00", // io: vermillion
    "#56B4E9", // cpu: sky blue
    "#CC79A7", // memory: reddish purple
    "#0072B2", // sync: blue
    "#009E73", // transfer: bluish green
    "#F0E442", // launch: yellow
    "#999999", // other: grey
];

/// Findings that are no idle cause ("precision", "comm"): the page's ink.
pub const NO_CAUSE: &str = "#7f7f7f";

/// The colour of an idle cause.
pub fn cause(c: Cause) -> &'static str {
    CAUSE[c.index()]
}

/// The colour of a cause by name ("data", "io", ...); `NO_CAUSE` for others.
pub fn cause_by_name(name: &str) -> &'static str {
    Cause::from_name(name).map_or(NO_CAUSE, cause)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cause_has_its_own_colour() {
        let mut seen: Vec<&str> = Cause::ALL.iter().map(|&c| cause(c)).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), Cause::ALL.len());
        assert_eq!(cause_by_name("io"), "#D55E00");
        assert_eq!(cause_by_name("precision"), NO_CAUSE);
    }
}
