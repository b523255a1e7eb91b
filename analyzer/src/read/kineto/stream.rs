//! Gzip traces: inflating and parsing at the same time.
//!
//! A producer thread inflates the file into pieces of about [`PIECE_BYTES`],
//! each ended at the last cut (see [`cuts`](super::cuts)) it holds, and sends
//! them on; worker threads parse the pieces into builders meanwhile, and hand
//! the buffers back for reuse; a joiner thread absorbs the builders in file
//! order as they come. Inflating (about a quarter of the work) thus
//! overlaps parsing, and the whole inflated text never sits in memory at once.
//! `None` (a piece that does not parse, a damaged stream, an odd layout)
//! sends the caller to one sequential pass over the fully inflated text.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::{Mutex, mpsc};

use flate2::bufread::MultiGzDecoder;

use super::builder::Builder;
use super::cuts;
use super::document;
use super::meta::Meta;

/// Inflated bytes per piece.
const PIECE_BYTES: usize = 512 << 10;
/// Below this many compressed bytes one pass is as fast.
pub const MIN_STREAM_BYTES: usize = 256 << 10;
/// Bytes read at a time while looking for the `traceEvents` key.
const HEAD_STEP: usize = 64 << 10;

/// Parses the gzip stream `gz`; `None` when that is not possible this way.
pub fn parse(gz: &[u8], name: &str) -> Option<(Builder, Meta)> {
    let (piece_tx, piece_rx) = mpsc::sync_channel::<(usize, Piece)>(2);
    let (free_tx, free_rx) = mpsc::channel::<Piece>();
    let (done_tx, done_rx) = mpsc::channel::<(usize, Option<Builder>)>();
    let pieces = Mutex::new(piece_rx);
    std::thread::scope(|s| {
        let producer = s.spawn(move || produce(gz, name, &piece_tx, &free_rx));
        // Joins parsed pieces in file order while later ones are still parsed.
        let joiner = s.spawn(move || join_in_order(done_rx));
        // Plain threads blocking on the channel: idle rayon workers would
        // spin, taking CPU from the producer.
        for _ in 0..rayon::current_num_threads().max(1) {
            let (done, free, pieces) = (done_tx.clone(), free_tx.clone(), &pieces);
            s.spawn(move || {
                while let Some((i, piece)) = next_piece(pieces) {
                    let b = document::parse_piece(piece.text(), name, true);
                    // The producer may be gone already; then the buffer is just freed.
                    let _ = free.send(piece);
                    let _ = done.send((i, b));
                }
            });
        }
        drop(done_tx);
        let body = joiner.join().ok()?;
        let (head, tail, tail_meta) = producer.join().ok()??;
        let mut all = body?.unwrap_or_else(|| Builder::new(name.to_owned()));
        all.absorb(tail);
        let mut meta = head;
        meta.overlay(tail_meta);
        Some((all, meta))
    })
}

fn next_piece(pieces: &Mutex<mpsc::Receiver<(usize, Piece)>>) -> Option<(usize, Piece)> {
    pieces.lock().ok()?.recv().ok()
}

/// Absorbs builders into the first one in index order; `None` if a piece
/// failed or one is missing.
fn join_in_order(done: mpsc::Receiver<(usize, Option<Builder>)>) -> Option<Option<Builder>> {
    let mut waiting: BTreeMap<usize, Option<Builder>> = BTreeMap::new();
    let mut next = 0;
    let mut all: Option<Builder> = None;
    let mut failed = false;
    for (i, b) in done {
        waiting.insert(i, b);
        while let Some(b) = waiting.remove(&next) {
            match (b, all.as_mut()) {
                (None, _) => failed = true,
                (Some(b), Some(a)) => a.absorb(b),
                (Some(b), None) => all = Some(b),
            }
            next += 1;
        }
    }
    (!failed && waiting.is_empty()).then_some(all)
}

/// Inflated text in `buf[..len]`. The rest of `buf` is initialized scratch
/// that inflating writes into, so a recycled buffer is never zeroed again
/// (`read_to_end` into a cleared `Vec` zeroes every byte it reads into).
#[derive(Default)]
struct Piece {
    buf: Vec<u8>,
    len: usize,
}

impl Piece {
    fn text(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Makes `buf[len..len + n]` available.
    fn room(&mut self, n: usize) -> usize {
        let end = self.len + n;
        if self.buf.len() < end {
            self.buf.resize(end, 0);
        }
        end
    }

    fn push(&mut self, bytes: &[u8]) {
        let end = self.room(bytes.len());
        self.buf[self.len..end].copy_from_slice(bytes);
        self.len = end;
    }

    /// Appends up to `n` inflated bytes; `Some(true)` at the end of the stream.
    fn fill(&mut self, dec: &mut impl Read, n: usize) -> Option<bool> {
        let end = self.room(n);
        while self.len < end {
            match dec.read(&mut self.buf[self.len..end]) {
                Ok(0) => return Some(true),
                Ok(got) => self.len += got,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        Some(false)
    }

    /// Drops the first `n` bytes.
    fn consume(&mut self, n: usize) {
        self.buf.copy_within(n..self.len, 0);
        self.len -= n;
    }
}

/// Inflates and sends the pieces; returns the metadata before the events, and
/// the builder and metadata of the tail (the last piece and what follows it).
fn produce(
    gz: &[u8],
    name: &str,
    tx: &mpsc::SyncSender<(usize, Piece)>,
    free: &mpsc::Receiver<Piece>,
) -> Option<(Meta, Builder, Meta)> {
    // Straight from the slice: `read::MultiGzDecoder` would copy the input
    // through a 32 KiB buffer, and each such chunk's inflate call then also
    // copies up to 32 KiB of output into zlib's window.
    let mut dec = MultiGzDecoder::new(gz);
    let mut pending = Piece::default();
    // The head: everything up to the first event.
    let (head, open, sep, bare) = loop {
        let eof = pending.fill(&mut dec, HEAD_STEP)?;
        let text = pending.text();
        let found = cuts::events_start(text).and_then(|(head, open, bare)| {
            let sep = cuts::separator(text, open)?;
            Some((head, open, sep, bare))
        });
        if let Some(found) = found {
            break found;
        }
        if eof || pending.len > cuts::KEY_SEARCH_LIMIT {
            return None;
        }
    };
    pending.consume(open);

    let mut index = 0;
    // Where the search for a cut in `pending` starts: past what was searched.
    let mut searched = 0;
    loop {
        let eof = pending.fill(&mut dec, PIECE_BYTES)?;
        // At the end, too, cut: the tail parsed here alone stays one event.
        let Some(cut) = cuts::last_cut(pending.text(), searched, &sep) else {
            if eof {
                break;
            }
            // One event longer than a piece, or no cut at all: read on.
            searched = pending.len.saturating_sub(sep.lead_len());
            continue;
        };
        searched = 0;
        let mut next = free.try_recv().unwrap_or_default();
        next.len = 0;
        next.push(b"[");
        next.push(&pending.text()[cut.brace..]);
        cuts::apply(&mut pending.buf[..pending.len], &cut);
        pending.len = cut.comma + 1;
        tx.send((index, pending)).ok()?;
        index += 1;
        pending = next;
        if eof {
            break;
        }
    }
    let (tail, tail_meta) = cuts::parse_tail(pending.text(), name, bare, true)?;
    Some((head, tail, tail_meta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(text: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(text).unwrap();
        e.finish().unwrap()
    }

    fn doc(n: usize) -> Vec<u8> {
        let mut s = String::from(
            "{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 4},\n  \"traceEvents\": [\n",
        );
        for i in 0..n {
            s.push_str(&format!(
                "  {{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k{}\", \"pid\": 0, \"tid\": 7,\n    \"ts\": {i}.5, \"dur\": 1,\n    \"args\": {{\"stream\": 7, \"correlation\": {i}, \"grid\": [1, 1, 1]}}\n  }},\n",
                i % 13
            ));
        }
        s.push_str("  {\"ph\": \"i\", \"name\": \"end\", \"pid\": 1, \"tid\": 1, \"ts\": 1}\n  ],\n  \"baseTimeNanoseconds\": 9\n}\n");
        s.into_bytes()
    }

    #[test]
    fn pieces_agree_with_one_pass() {
        let text = doc(120_000);
        let mut seq = Builder::new("t".into());
        let (m, _) = document::parse(&text, &mut seq).unwrap();
        let one = seq.finish(m);
        let (b, m) = parse(&gz(&text), "t").expect("streamed");
        let two = b.finish(m);
        assert_eq!(two.gpu_op_count(), 120_000);
        assert_eq!(two.processes.len(), one.processes.len());
        assert_eq!(
            (
                two.realtime_offset_ns,
                two.processes.first().and_then(|p| p.rank)
            ),
            (Some(9), None)
        );
        let ops = |t: &crate::model::Timeline| {
            t.gpus[0].streams[0]
                .ops
                .iter()
                .map(|o| {
                    (
                        o.start,
                        o.corr,
                        t.strings.get(o.name).to_owned(),
                        o.launch(),
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(ops(&one), ops(&two));
        assert_eq!(two.gpus[0].launch_configs.len(), 1);
    }

    #[test]
    fn concatenated_members_read_as_one_stream() {
        let text = doc(60_000);
        let at = text.len() / 3;
        let mut z = gz(&text[..at]);
        z.extend(gz(&text[at..]));
        let (b, m) = parse(&z, "t").expect("streamed");
        let t = b.finish(m);
        assert_eq!(t.gpu_op_count(), 60_000);
        assert_eq!(t.realtime_offset_ns, Some(9));
    }

    #[test]
    fn damaged_stream_gives_up() {
        let mut z = gz(&doc(120_000));
        let n = z.len();
        z.truncate(n * 2 / 3);
        assert!(parse(&z, "t").is_none());
        let mut text = doc(120_000);
        let at = text.len() / 2;
        let at = at + text[at..].iter().position(|&b| b == b'k').unwrap();
        text[at - 1] = b'?';
        assert!(parse(&gz(&text), "t").is_none());
    }
}
