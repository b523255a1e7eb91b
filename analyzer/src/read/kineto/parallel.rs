//! Parsing one large trace held in memory on several threads: the
//! `traceEvents` array is cut (see [`cuts`](super::cuts)) into one piece per
//! thread plus a small tail, each parsed into its own [`Builder`], and the
//! builders are joined in file order. `None` sends the caller to one
//! sequential pass.

use rayon::prelude::*;

use super::builder::Builder;
use super::cuts::{self, Cut};
use super::document;
use super::meta::Meta;

/// Below this, one thread is as fast.
const MIN_PARALLEL_BYTES: usize = 4 << 20;
/// The last piece, parsed twice (once to find where the array ends), is kept small.
const TAIL_BYTES: usize = 256 << 10;

/// Parses `text` in `pieces` parts; `None` when that is not possible.
/// `text` is modified at the cut points and must not be reused on success.
pub fn parse(text: &mut [u8], name: &str, pieces: usize) -> Option<(Builder, Meta)> {
    if pieces < 2 || text.len() < MIN_PARALLEL_BYTES {
        return None;
    }
    let (head, open, bare) = cuts::events_start(text)?;
    let sep = cuts::separator(text, open)?;
    // Cut points: evenly spread, plus one near the end for the tail.
    let span = text.len() - open;
    let mut targets: Vec<usize> = (1..pieces).map(|i| open + i * span / pieces).collect();
    targets.push(text.len().saturating_sub(TAIL_BYTES).max(open + 1));
    let mut points: Vec<Cut> = vec![];
    for t in targets {
        let from = points.last().map_or(t, |c: &Cut| t.max(c.brace + 1));
        if let Some(c) = cuts::next_cut(text, from, &sep) {
            points.push(c);
        }
    }
    if points.len() < 2 {
        return None;
    }
    let (builder, tail_meta) = parse_at(text, name, open, bare, &points)?;
    let mut meta = head;
    meta.overlay(tail_meta);
    Some((builder, meta))
}

/// Parses the array opening at `open` cut at `points` (in order; the last
/// one starts the tail); `None`, with `text` restored, when a piece does not
/// parse, as after any cut that is not between two events.
pub fn parse_at(
    text: &mut [u8],
    name: &str,
    open: usize,
    bare: bool,
    points: &[Cut],
) -> Option<(Builder, Meta)> {
    let saved: Vec<(usize, u8)> = points
        .iter()
        .flat_map(|c| [(c.comma, text[c.comma]), (c.start(), text[c.start()])])
        .collect();
    for c in points {
        cuts::apply(text, c);
    }
    let result = parse_pieces(text, name, open, points, bare);
    if result.is_none() {
        for (at, byte) in saved {
            text[at] = byte;
        }
    }
    result
}

fn parse_pieces(
    text: &[u8],
    name: &str,
    open: usize,
    points: &[Cut],
    bare: bool,
) -> Option<(Builder, Meta)> {
    // Whole pieces: [open..=cut0.comma], [cut0.start()..=cut1.comma], ...
    let mut ranges = vec![(open, points[0].comma + 1, true)];
    ranges.extend(
        points
            .windows(2)
            .map(|w| (w[0].start(), w[1].comma + 1, w[0].opened())),
    );
    let last = points.last()?;
    let (body, tail) = rayon::join(
        || {
            ranges
                .par_iter()
                .map(|&(a, b, opened)| document::parse_piece(&text[a..b], name, opened))
                .collect::<Option<Vec<Builder>>>()
        },
        || cuts::parse_tail(&text[last.start()..], name, bare, last.opened()),
    );
    let mut parts = body?.into_iter();
    let mut all = parts.next()?;
    for p in parts {
        all.absorb(p);
    }
    let (tail_builder, meta) = tail?;
    all.absorb(tail_builder);
    Some((all, meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(n: usize) -> Vec<u8> {
        let mut s = String::from(
            "{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 3},\n\"traceEvents\": [\n",
        );
        for i in 0..n {
            // Strings holding `,\n {` must not fool the cutter.
            s.push_str(&format!(
                "  {{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op,\\n {{{i}\", \"pid\": 1, \"tid\": 1, \"ts\": {i}, \"dur\": 1,\n    \"args\": {{\"a\": [{{\"x\": 1}},\n {{\"y\": 2}}]}}}},\n"
            ));
        }
        s.push_str("  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": \"main\"}}\n],\n\"baseTimeNanoseconds\": 5}\n");
        s.into_bytes()
    }

    #[test]
    fn pieces_agree_with_one_pass() {
        let text = doc(60_000);
        assert!(text.len() > MIN_PARALLEL_BYTES);
        let mut seq = Builder::new("t".into());
        let (meta1, _) = document::parse(&text, &mut seq).unwrap();
        let one = seq.finish(meta1);
        let mut copy = text.clone();
        let (par, meta2) = parse(&mut copy, "t", 4).expect("parallel parse");
        let two = par.finish(meta2);
        assert_eq!(one.host_span_count(), 60_000);
        assert_eq!(two.host_span_count(), 60_000);
        assert_eq!(two.realtime_offset_ns, Some(5));
        assert_eq!(two.processes[0].rank, Some(3));
        let names = |t: &crate::model::Timeline| {
            t.processes[0].threads[0]
                .spans
                .iter()
                .map(|s| (s.ts, t.strings.get(s.id).to_owned()))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&one), names(&two));
        assert_eq!(two.strings.get(two.processes[0].threads[0].name), "main");
    }

    #[test]
    fn refuses_and_restores_on_bad_piece() {
        let mut text = doc(60_000);
        let mid = text.len() / 2;
        let at = mid + text[mid..].iter().position(|&b| b == b'X').unwrap();
        text[at - 1] = b'#'; // corrupt a "ph" value
        let orig = text.clone();
        assert!(parse(&mut text, "t", 4).is_none());
        assert_eq!(text, orig);
    }
}
