//! Where the `traceEvents` array of a Kineto trace can be cut into pieces that
//! threads parse apart.
//!
//! A cut sits just before an event's `{` whose previous non-blank byte is the
//! `,` between two events; the blanks between must equal those the writer put
//! between `[` and the first event (Kineto: `\n  `), which pretty-printers
//! indent deeper for nested values. Turning that comma into `]` and the last
//! blank into `[` makes each piece a JSON array of its own. The search cannot
//! tell whether it is inside a string, so every piece must then parse
//! completely: a piece that starts or ends inside an event cannot, and the
//! callers fall back to one sequential pass, which also places corruption at
//! its exact offset.

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
    pub blank: usize,
    pub brace: usize,
}

/// The last piece: the rest of the array, then the document's remaining keys.
pub fn parse_tail(text: &[u8], name: &str) -> Option<(Builder, Meta)> {
    let mut stream = serde_json::Deserializer::from_slice(text).into_iter::<&RawValue>();
    let array = stream.next()?.ok()?;
    let end = stream.byte_offset();
    let bld = document::parse_piece(array.get().as_bytes(), name)?;
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

/// The first `,` + `sep` + `{` at or after `from`.
pub fn next_cut(text: &[u8], from: usize, sep: &[u8]) -> Option<Cut> {
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
fn cut_at(text: &[u8], brace: usize, sep: &[u8]) -> Option<Cut> {
    let blank = brace.checked_sub(sep.len()).filter(|&b| b > 0)?;
    (&text[blank..brace] == sep && text[blank - 1] == b',').then_some(Cut {
        comma: blank - 1,
        blank: brace - 1,
        brace,
    })
}

/// The blanks between `[` and the first event: the writer's separator
/// between events (Kineto: `\n  `). Pretty-printers indent nested values
/// deeper, so matching it exactly avoids most cuts inside events.
pub fn separator(text: &[u8], open: usize) -> Option<&[u8]> {
    let rest = text.get(open + 1..)?;
    let n = rest.iter().position(|b| !b.is_ascii_whitespace())?;
    (n > 0 && rest[n] == b'{').then(|| &rest[..n])
}

pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The last cut in `text`.
pub fn last_cut(text: &[u8], sep: &[u8]) -> Option<Cut> {
    let mut end = text.len();
    while let Some(brace) = text[..end].iter().rposition(|&b| b == b'{') {
        if let Some(cut) = cut_at(text, brace, sep) {
            return Some(cut);
        }
        end = brace;
    }
    None
}

/// Turns the bytes at a cut into `]` (ending the piece before it) and `[`
/// (starting the piece after it).
pub fn apply(text: &mut [u8], c: &Cut) {
    text[c.comma] = b']';
    text[c.blank] = b'[';
}
