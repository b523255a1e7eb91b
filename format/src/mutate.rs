//! Structure-aware mutation of trace files, for the fuzz tests of every reader
//! (this crate's and the analyzer's). Not used by the producer or the readers.
//!
//! A [`Seed`] is a trace (real or synthetic) plus the places worth hitting: the
//! header fields, every chunk header field and every record header. A mutation
//! writes boundary values (0, 1, MAX, MAX-k, powers of two, small deltas of the
//! old value) or random bytes there, or anywhere, cuts the file short or
//! appends junk. Mutations are applied in place and undone afterwards, so a
//! large seed is never copied.

use crate::bytes::get;
use crate::layout::{chk, hdr};
use crate::reader::TraceView;

/// A small deterministic generator (xorshift64*), so a failing iteration can be
/// replayed from its seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn word(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in [0, n); 0 when n is 0.
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.word() % n as u64) as usize
        }
    }

    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

/// A field worth mutating: its offset and width in bytes (1, 2, 4 or 8).
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub offset: usize,
    pub width: usize,
}

/// A trace to mutate, with its structure found while it was still valid.
#[derive(Debug, Clone)]
pub struct Seed {
    pub name: String,
    pub bytes: Vec<u8>,
    pub fields: Vec<Field>,
}

const HEADER_FIELDS: &[(usize, usize)] = &[
    (hdr::FORMAT_VERSION, 4),
    (hdr::HEADER_SIZE, 4),
    (hdr::CHUNK_SIZE, 4),
    (hdr::THREAD_SLOTS, 4),
    (hdr::THREAD_TABLE_OFFSET, 8),
    (hdr::CHUNKS_OFFSET, 8),
    (hdr::CAPACITY, 8),
    (hdr::PID, 4),
    (hdr::PPID, 4),
    (hdr::FLAGS, 4),
    (hdr::CHUNK_COUNT, 4),
    (hdr::START_MONO_NS, 8),
    (hdr::START_REAL_NS, 8),
    (hdr::START_TICKS, 8),
    (hdr::TICKS_PER_SEC, 8),
    (hdr::MIN_SPAN_NS, 8),
    (hdr::NEXT_CHUNK, 4),
    (hdr::NEXT_SLOT, 4),
    (hdr::STATE, 4),
    (hdr::SAMPLE_HZ, 4),
    (hdr::DROPPED, 8),
    (hdr::OVERWRITTEN, 8),
    (hdr::END_MONO_NS, 8),
    (hdr::CMDLINE_LEN, 4),
    (hdr::CMDLINE_TRUNCATED, 4),
];

const CHUNK_FIELDS: &[(usize, usize)] = &[
    (chk::MAGIC, 4),
    (chk::KIND, 1),
    (chk::TID, 4),
    (chk::COMMITTED, 4),
    (chk::SEQ, 8),
    (chk::RECORDS, 4),
    (chk::STATE, 4),
];

impl Seed {
    /// Finds the header, chunk and record fields of `bytes` (a readable trace;
    /// for anything else only the header fields are known).
    pub fn new(name: impl Into<String>, bytes: Vec<u8>) -> Seed {
        let mut fields: Vec<Field> = HEADER_FIELDS
            .iter()
            .map(|&(offset, width)| Field { offset, width })
            .collect();
        if let Ok(view) = TraceView::parse(&bytes) {
            for c in view.chunks().flatten() {
                let base = c.offset as usize;
                fields.extend(CHUNK_FIELDS.iter().map(|&(o, width)| Field {
                    offset: base + o,
                    width,
                }));
                for (off, _) in c.records().flatten() {
                    let off = off as usize;
                    // len, kind, aux, then the first body words.
                    fields.push(Field {
                        offset: off,
                        width: 2,
                    });
                    fields.push(Field {
                        offset: off + 2,
                        width: 1,
                    });
                    fields.push(Field {
                        offset: off + 4,
                        width: 4,
                    });
                    fields.push(Field {
                        offset: off + 8,
                        width: 8,
                    });
                }
            }
        }
        fields.retain(|f| f.offset + f.width <= bytes.len());
        Seed {
            name: name.into(),
            bytes,
            fields,
        }
    }
}

/// What one mutation round changed, so that it can be undone.
#[derive(Debug, Default)]
pub struct Undo {
    writes: Vec<(usize, [u8; 8], usize)>,
    /// Bytes the reader sees: a prefix of the seed (a truncation), or the
    /// whole seed.
    pub len: usize,
    /// Junk appended after the seed (the reader then needs a copy).
    pub tail: Vec<u8>,
}

fn interesting(rng: &mut Rng, width: usize, old: u64) -> u64 {
    let max = if width == 8 {
        u64::MAX
    } else {
        (1u64 << (width * 8)) - 1
    };
    let k = rng.below(17) as u64;
    let v = match rng.below(10) {
        0 => 0,
        1 => 1,
        2 => max,
        3 => max - k,
        4 => (max / 2).wrapping_add(k),
        5 => 1u64 << rng.below(width * 8),
        6 => old.wrapping_add(k + 1),
        7 => old.wrapping_sub(k + 1),
        8 => old ^ (1 << rng.below(width * 8)),
        _ => rng.word(),
    };
    v & max
}

fn write_le(buf: &mut [u8], offset: usize, width: usize, v: u64) {
    buf[offset..offset + width].copy_from_slice(&v.to_le_bytes()[..width]);
}

/// Applies 1 to 8 mutations to `seed.bytes` in place. Call [`undo`] before the
/// next round.
pub fn mutate(seed: &mut Seed, rng: &mut Rng) -> Undo {
    let len = seed.bytes.len();
    let mut u = Undo {
        len,
        ..Undo::default()
    };
    let rounds = 1 + rng.below(8).min(rng.below(8));
    for _ in 0..rounds {
        match rng.below(16) {
            // A boundary value in a known field (most rounds).
            0..=8 if !seed.fields.is_empty() => {
                let f = seed.fields[rng.below(seed.fields.len())];
                save(seed, &mut u, f.offset, f.width);
                let old = get_le(&seed.bytes, f.offset, f.width);
                let v = interesting(rng, f.width, old);
                write_le(&mut seed.bytes, f.offset, f.width, v);
            }
            // A boundary value anywhere, at any alignment.
            9 | 10 if len >= 8 => {
                let width = [1, 2, 4, 8][rng.below(4)];
                let at = rng.below(len - width + 1);
                save(seed, &mut u, at, width);
                let old = get_le(&seed.bytes, at, width);
                let v = interesting(rng, width, old);
                write_le(&mut seed.bytes, at, width, v);
            }
            // Random bytes: a few near the start (the header) or anywhere.
            11 | 12 if len > 0 => {
                let near = if rng.chance(2) { len.min(1024) } else { len };
                for _ in 0..1 + rng.below(8) {
                    let at = rng.below(near);
                    save(seed, &mut u, at, 1);
                    seed.bytes[at] = rng.word() as u8;
                }
            }
            // Copy 8 bytes from one place to another (a valid value elsewhere).
            13 if len >= 16 => {
                let from = rng.below(len - 8);
                let to = rng.below(len - 8);
                save(seed, &mut u, to, 8);
                let v: u64 = get(&seed.bytes, from);
                write_le(&mut seed.bytes, to, 8, v);
            }
            // Cut the file short: anywhere, or near a field.
            14 => {
                u.len = if rng.chance(2) || seed.fields.is_empty() {
                    rng.below(len + 1)
                } else {
                    let f = seed.fields[rng.below(seed.fields.len())];
                    (f.offset + rng.below(f.width + 1)).min(len)
                }
                .min(u.len);
            }
            // Append junk (zeros, or random).
            _ => {
                let n = rng.below(9000);
                let zero = rng.chance(2);
                u.tail = (0..n)
                    .map(|_| if zero { 0 } else { rng.word() as u8 })
                    .collect();
            }
        }
    }
    if u.len < len {
        u.tail.clear();
    }
    u
}

fn get_le(buf: &[u8], offset: usize, width: usize) -> u64 {
    let mut raw = [0u8; 8];
    raw[..width].copy_from_slice(&buf[offset..offset + width]);
    u64::from_le_bytes(raw)
}

fn save(seed: &Seed, u: &mut Undo, offset: usize, width: usize) {
    let mut old = [0u8; 8];
    old[..width].copy_from_slice(&seed.bytes[offset..offset + width]);
    u.writes.push((offset, old, width));
}

/// Restores the bytes `mutate` changed.
pub fn undo(seed: &mut Seed, u: Undo) {
    for (offset, old, width) in u.writes.into_iter().rev() {
        seed.bytes[offset..offset + width].copy_from_slice(&old[..width]);
    }
}

/// The mutated input: the seed's bytes as cut, plus any appended junk (copied
/// into `scratch` only then).
pub fn input<'a>(seed: &'a Seed, u: &Undo, scratch: &'a mut Vec<u8>) -> &'a [u8] {
    if u.tail.is_empty() {
        return &seed.bytes[..u.len];
    }
    scratch.clear();
    scratch.extend_from_slice(&seed.bytes[..u.len]);
    scratch.extend_from_slice(&u.tail);
    scratch
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_restores_the_seed() {
        let bytes: Vec<u8> = (0..40_000u32).map(|i| (i * 7) as u8).collect();
        let mut seed = Seed::new("x", bytes.clone());
        let mut rng = Rng::new(3);
        for _ in 0..2000 {
            let u = mutate(&mut seed, &mut rng);
            undo(&mut seed, u);
            assert!(seed.bytes == bytes);
        }
    }
}
