//! Where the `traceEvents` array of a Kineto trace can be cut into pieces that
//! threads parse apart.
//!
//! A cut sits just before an event's `{` whose previous non-blank byte is the
//! `,` between two events; the blanks between must equal those the writer put
//! between `[` and the first event (Kineto: `\n  `), which pretty-printers
//! indent deeper for nested values. Turning that comma into `]` and the last
//! blank into `[` makes each piece a JSON array of its own; compact JSON
//! (`},{`) has no blank, so its pieces start at the `{` with the `[` implied
//! (see [`Cut::opened`]).
//!
//! The search cannot tell whether it is inside a string or a nested value,
//! so every piece must then parse completely. That check is enough: the
//! piece before a false cut is the text of the real array up to a point
//! inside a string or an unclosed event, so the `]` put there cannot end it,
//! and a strict parser rejects it; the callers then fall back to one
//! sequential pass, which also places corruption at its exact offset.

use serde_json::value::RawValue;

use super::builder::Builder;
use super::document;
use super::meta::Meta;

/// The key must appear this early (Kineto writes a few KB of metadata first).
pub const KEY_SEARCH_LIMIT: usize = 16 << 20;
pub const KEY: &[u8] = b"\"traceEvents\"";

#[derive(Debug, Clone, Copy)]
pub struct Cut {
    pub comma: usize,
    pub brace: usize,
}

impl Cut {
    /// Whether a blank precedes the `{`, to be turned into the `[` that
    /// opens the next piece; without one (`},{`) that `[` is implied.
    pub fn opened(&self) -> bool {
        self.brace > self.comma + 1
    }

    /// Where the next piece starts: at its `[`, else at its first `{`.
    pub fn start(&self) -> usize {
        if self.opened() {
            self.brace - 1
        } else {
            self.brace
        }
    }
}

/// Where the event array starts: the metadata before it, the index of its
/// `[`, and whether the document is a bare event array (the Chrome "JSON
/// Array Format" of autograd-profiler exports) rather than an object.
pub fn events_start(text: &[u8]) -> Option<(Meta, usize, bool)> {
    let first = text.iter().position(|b| !b.is_ascii_whitespace())?;
    if text[first] == b'[' {
        return Some((Meta::default(), first, true));
    }
    let key = find(&text[..text.len().min(KEY_SEARCH_LIMIT)], KEY)?;
    let open = array_start(text, key + KEY.len())?;
    Some((head_meta(&text[..key])?, open, false))
}

/// The last piece: the rest of the array, then the document's remaining keys
/// (none when `bare`). Without `opened`, `text` starts at an event whose `[`
/// is implied.
pub fn parse_tail(text: &[u8], name: &str, bare: bool, opened: bool) -> Option<(Builder, Meta)> {
    if !opened {
        // A copy with its `[`: the tail is small.
        return parse_tail(&with_open(text), name, bare, true);
    }
    let mut stream = serde_json::Deserializer::from_slice(text).into_iter::<&RawValue>();
    let array = stream.next()?.ok()?;
    let end = stream.byte_offset();
    let bld = document::parse_piece(array.get().as_bytes(), name, true)?;
    // After the array: `}` or `, "key": value ... }`.
    let rest = &text[end..];
    let Some(i) = rest.iter().position(|b| !b.is_ascii_whitespace()) else {
        return bare.then(|| (bld, Meta::default()));
    };
    if bare {
        return None;
    }
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

/// `[` followed by `text`.
pub fn with_open(text: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(text.len() + 1);
    v.push(b'[');
    v.extend_from_slice(text);
    v
}

/// Metadata before `"traceEvents"`, checked by parsing it as a document whose
/// event list is empty (this also proves the key is at the top level).
pub fn head_meta(prefix: &[u8]) -> Option<Meta> {
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
pub fn array_start(text: &[u8], mut i: usize) -> Option<usize> {
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

/// What comes between two events, as the writer put it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sep {
    /// The blanks after the comma.
    pub blanks: Vec<u8>,
    /// The blanks after the first event's `{`.
    pub inner: Vec<u8>,
    /// The first event's first key, with its quotes. An event starts with
    /// `{`, `inner`, then this key, `"ph"` or `"name"`: writers start events
    /// alike, and nested objects (`"args": [{"x": 1}, {"y": 2}]`) rarely do.
    pub key: Vec<u8>,
}

impl Sep {
    /// How many bytes after its `{` tell whether an event starts there: a
    /// `{` closer than this to the end of a text is searched again once
    /// the text is longer.
    pub fn lead_len(&self) -> usize {
        1 + self.inner.len() + self.key.len().max(b"\"name\"".len())
    }

    /// Whether `ev` starts like an event.
    fn leads(&self, ev: &[u8]) -> bool {
        let Some(rest) = ev
            .strip_prefix(b"{")
            .and_then(|r| r.strip_prefix(&self.inner[..]))
        else {
            return false;
        };
        [&self.key[..], b"\"ph\"", b"\"name\""]
            .iter()
            .any(|k| rest.starts_with(k))
    }
}

/// The first `,` + `sep` + `{` at or after `from`.
pub fn next_cut(text: &[u8], from: usize, sep: &Sep) -> Option<Cut> {
    let mut i = from;
    while i < text.len() {
        let brace = i + text[i..].iter().position(|&b| b == b'{')?;
        if let Some(cut) = cut_at(text, brace, sep) {
            return Some(cut);
        }
        i = brace + 1;
    }
    None
}

/// The cut at the `{` at `brace`, if `,` + `sep` comes right before it.
fn cut_at(text: &[u8], brace: usize, sep: &Sep) -> Option<Cut> {
    let blank = brace.checked_sub(sep.blanks.len()).filter(|&b| b > 0)?;
    (text[blank..brace] == sep.blanks[..] && text[blank - 1] == b',' && sep.leads(&text[brace..]))
        .then_some(Cut {
            comma: blank - 1,
            brace,
        })
}

/// The writer's blanks between events: those after the first event's
/// comma (Kineto: `\n  `; Python's `json.dump`: a space), else, for a lone
/// first event, those between `[` and it. The gap after `[` may differ:
/// Kineto 0.1 (the TensorBoard plugin's samples of 2020-21) puts a blank
/// line there. Pretty-printers indent nested values deeper, so matching the
/// gap exactly avoids most cuts inside events. Compact JSON (`},{`) gives
/// no blanks; `None` when the array does not start with an object.
pub fn separator(text: &[u8], open: usize) -> Option<Sep> {
    let rest = text.get(open + 1..)?;
    let n = rest.iter().position(|b| !b.is_ascii_whitespace())?;
    if rest[n] != b'{' {
        return None;
    }
    let (inner, key) = lead(&rest[n..])?;
    let (inner, key) = (inner.to_vec(), key.to_vec());
    let between = super::fast::value_end(&rest[n..]).and_then(|end| {
        let gap = rest[n + end..].strip_prefix(b",")?;
        let m = gap.iter().position(|b| !b.is_ascii_whitespace())?;
        (gap[m] == b'{').then(|| gap[..m].to_vec())
    });
    let blanks = match between {
        Some(b) => b,
        None if n > 0 => rest[..n].to_vec(),
        None => return None,
    };
    Some(Sep { blanks, inner, key })
}

/// The blanks after the `{` of the event at `ev[0]`, and its first key with
/// quotes (`"ph"` for an empty event or an escaped key).
fn lead(ev: &[u8]) -> Option<(&[u8], &[u8])> {
    let q = 1 + ev.get(1..)?.iter().position(|b| !b.is_ascii_whitespace())?;
    let inner = &ev[1..q];
    if ev[q] != b'"' {
        return Some((inner, b"\"ph\""));
    }
    let close = q + 1 + ev[q + 1..].iter().position(|&b| b == b'"' || b == b'\\')?;
    Some((
        inner,
        if ev[close] == b'"' {
            &ev[q..=close]
        } else {
            b"\"ph\""
        },
    ))
}

pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The last cut in `text` whose `{` is at or after `from`: a caller that
/// found none in a text it then extends passes the old length, so that a
/// long stretch without a cut is searched once, not once per extension.
pub fn last_cut(text: &[u8], from: usize, sep: &Sep) -> Option<Cut> {
    let mut end = text.len();
    while let Some(at) = text[from.min(end)..end].iter().rposition(|&b| b == b'{') {
        let brace = from.min(end) + at;
        if let Some(cut) = cut_at(text, brace, sep) {
            return Some(cut);
        }
        end = brace;
    }
    None
}

/// Turns the bytes at a cut into `]` (ending the piece before it) and, when
/// there is a blank, `[` (starting the piece after it).
pub fn apply(text: &mut [u8], c: &Cut) {
    text[c.comma] = b']';
    if c.opened() {
        text[c.brace - 1] = b'[';
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kineto 0.1 puts a blank line after `[`; the separator is the gap
    /// between events all the same.
    #[test]
    fn separator_is_the_gap_between_events() {
        let text =
            b"{\"traceEvents\": [\n  \n  {\"ph\": \"X\"},\n  {\"ph\": \"X\"},\n  {\"ph\": \"i\"}]}";
        let (_, open, bare) = events_start(text).unwrap();
        assert!(!bare);
        let sep = separator(text, open).unwrap();
        assert_eq!(sep.blanks, b"\n  ");
        assert!(next_cut(text, open + 1, &sep).is_some());
        // A lone event: the blanks after `[`.
        let one = b"[\n \n {\"ph\": \"X\"}\n]";
        assert_eq!(separator(one, 0).unwrap().blanks, b"\n \n ");
        // Compact: no blanks.
        let compact = b"[{\"ph\":\"X\"},{\"ph\":\"X\"}]";
        assert_eq!(separator(compact, 0).unwrap().blanks, b"");
    }

    /// A search that starts past the text searched before finds a cut
    /// whose event had only begun at the end of the shorter text, and no
    /// cut before that.
    #[test]
    fn last_cut_from_skips_what_was_searched() {
        let full = b"[\n  {\"ph\": \"X\"},\n  {\"ph\": \"X\"},\n  {\"ph\": \"i\"}]";
        let sep = separator(full, 0).unwrap();
        let last = last_cut(full, 0, &sep).unwrap();
        // The text ends two bytes into the last event: no cut there yet.
        let short = &full[..last.brace + 3];
        let first = last_cut(short, 0, &sep).unwrap();
        assert!(first.brace < last.brace);
        let from = short.len().saturating_sub(sep.lead_len());
        assert_eq!(
            last_cut(full, from, &sep).map(|c| c.brace),
            Some(last.brace)
        );
        assert!(last_cut(full, last.brace + 1, &sep).is_none());
    }
}
