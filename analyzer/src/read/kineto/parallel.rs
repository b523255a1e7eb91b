//! Parsing one large trace on several threads.
//!
//! The `traceEvents` array is cut into pieces just before an event's `{`, where
//! the previous non-blank byte is the `,` between two events, and at least one
//! blank separates them (Kineto writes `},\n  {`). Turning that comma into `]`
//! and the blank into `[` makes every piece a JSON array of its own, which a
//! thread parses into its own [`Builder`]; the builders are then joined in file
//! order. The cut points are found by a byte search that cannot tell whether it
//! is inside a string, so each piece must parse completely: a piece that
//! starts or ends inside an event cannot. On any failure the caller parses the
//! whole text sequentially, which also places corruption at its exact offset.

use rayon::prelude::*;
use serde_json::value::RawValue;

use super::builder::Builder;
use super::document;
use super::meta::Meta;

/// Below this, one thread is as fast.
const MIN_PARALLEL_BYTES: usize = 4 << 20;
/// The key must appear this early (Kineto writes a few KB of metadata first).
const KEY_SEARCH_LIMIT: usize = 16 << 20;
/// The last piece, parsed twice (once to find where the array ends), is kept small.
const TAIL_BYTES: usize = 256 << 10;

/// Parses `text` in `pieces` parts; `None` when that is not possible.
/// `text` is modified at the cut points and must not be reused on success.
pub fn parse(text: &mut [u8], name: &str, pieces: usize) -> Option<(Builder, Meta)> {
    if pieces < 2 || text.len() < MIN_PARALLEL_BYTES {
        return None;
    }
    let key = find(
        &text[..text.len().min(KEY_SEARCH_LIMIT)],
        b"\"traceEvents\"",
    )?;
    let head = head_meta(&text[..key])?;
    let open = array_start(text, key + b"\"traceEvents\"".len())?;

    let sep = separator(text, open)?.to_vec();
    // Cut points: evenly spread, plus one near the end for the tail.
    let span = text.len() - open;
    let mut targets: Vec<usize> = (1..pieces).map(|i| open + i * span / pieces).collect();
    targets.push(text.len().saturating_sub(TAIL_BYTES).max(open + 1));
    let mut cuts: Vec<Cut> = vec![];
    for t in targets {
        let from = cuts.last().map_or(t, |c: &Cut| t.max(c.brace + 1));
        if let Some(c) = next_cut(text, from, &sep) {
            cuts.push(c);
        }
    }
    if cuts.len() < 2 {
        return None;
    }
    let saved: Vec<(usize, u8)> = cuts
        .iter()
        .flat_map(|c| [(c.comma, text[c.comma]), (c.blank, text[c.blank])])
        .collect();
    for c in &cuts {
        text[c.comma] = b']';
        text[c.blank] = b'[';
    }
    let result = parse_pieces(text, name, open, &cuts);
    if result.is_none() {
        for (at, byte) in saved {
            text[at] = byte;
        }
    }
    let (builder, tail_meta) = result?;
    let mut meta = head;
    meta.overlay(tail_meta);
    Some((builder, meta))
}

#[derive(Debug, Clone, Copy)]
struct Cut {
    comma: usize,
    blank: usize,
    brace: usize,
}

fn parse_pieces(text: &[u8], name: &str, open: usize, cuts: &[Cut]) -> Option<(Builder, Meta)> {
    // Whole pieces: [open..=cut0.comma], [cut0.blank..=cut1.comma], ...
    let mut ranges = vec![(open, cuts[0].comma + 1)];
    ranges.extend(cuts.windows(2).map(|w| (w[0].blank, w[1].comma + 1)));
    let tail_from = cuts.last()?.blank;
    let (body, tail) = rayon::join(
        || {
            ranges
                .par_iter()
                .map(|&(a, b)| {
                    let mut bld = Builder::new(name.to_owned());
                    document::parse_array(&text[a..b], &mut bld)
                        .ok()
                        .map(|_| bld)
                })
                .collect::<Option<Vec<Builder>>>()
        },
        || parse_tail(&text[tail_from..], name),
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

/// The last piece: the rest of the array, then the document's remaining keys.
fn parse_tail(text: &[u8], name: &str) -> Option<(Builder, Meta)> {
    let mut stream = serde_json::Deserializer::from_slice(text).into_iter::<&RawValue>();
    let array = stream.next()?.ok()?;
    let end = stream.byte_offset();
    let mut bld = Builder::new(name.to_owned());
    document::parse_array(array.get().as_bytes(), &mut bld).ok()?;
    // After the array: `}` or `, "key": value ... }`.
    let rest = &text[end..];
    let i = rest.iter().position(|b| !b.is_ascii_whitespace())?;
    let meta = match rest[i] {
        b'}' if rest[i + 1..].iter().all(u8::is_ascii_whitespace) => Meta::default(),
        b',' => {
            let mut doc = Vec::with_capacity(rest.len() - i);
            doc.push(b'{');
            doc.extend_from_slice(&rest[i + 1..]);
            let mut scratch = Builder::new(String::new());
            document::parse(&doc, &mut scratch).ok()?.0
        }
        _ => return None,
    };
    Some((bld, meta))
}

/// Metadata before `"traceEvents"`, checked by parsing it as a document whose
/// event list is empty (this also proves the key is at the top level).
fn head_meta(prefix: &[u8]) -> Option<Meta> {
    let mut doc = Vec::with_capacity(prefix.len() + 20);
    doc.extend_from_slice(prefix);
    doc.extend_from_slice(b"\"traceEvents\":[]}");
    let mut scratch = Builder::new(String::new());
    match document::parse(&doc, &mut scratch) {
        Ok((meta, true)) => Some(meta),
        _ => None,
    }
}

/// The index of the `[` that opens the array after the key.
fn array_start(text: &[u8], mut i: usize) -> Option<usize> {
    let skip = |text: &[u8], mut i: usize| {
        while text.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        i
    };
    i = skip(text, i);
    (text.get(i) == Some(&b':')).then_some(())?;
    i = skip(text, i + 1);
    (text.get(i) == Some(&b'[')).then_some(i)
}

/// The first `,` + `sep` + `{` at or after `from`.
fn next_cut(text: &[u8], from: usize, sep: &[u8]) -> Option<Cut> {
    let mut i = from;
    while i < text.len() {
        let brace = i + text[i..].iter().position(|&b| b == b'{')?;
        if brace > sep.len() {
            let blank = brace - sep.len();
            if &text[blank..brace] == sep && text[blank - 1] == b',' {
                return Some(Cut {
                    comma: blank - 1,
                    blank: brace - 1,
                    brace,
                });
            }
        }
        i = brace + 1;
    }
    None
}

/// The blanks between `[` and the first event: the writer's separator
/// between events (Kineto: `\n  `). Pretty-printers indent nested values
/// deeper, so matching it exactly avoids most cuts inside events.
fn separator(text: &[u8], open: usize) -> Option<&[u8]> {
    let rest = text.get(open + 1..)?;
    let n = rest.iter().position(|b| !b.is_ascii_whitespace())?;
    (n > 0 && rest[n] == b'{').then(|| &rest[..n])
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
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
