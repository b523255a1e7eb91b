//! A fast path for parsing pieces of the event array: a byte scanner that
//! knows the event layout, about twice as fast as going through serde.
//! SIMD JSON parsers were measured and lost (one thread, the 53.7 MB
//! df_index_resolver trace, portable and `target-cpu=native` builds alike):
//! simd-json 0.14's tape alone at 124-165 MB/s, a sonic-rs 0.5 `Value` at
//! 150-250 MB/s, against about 450 MB/s for this scanner with the events
//! built then. Since: about 2,400 instructions per event of that trace
//! with the model built (9.6 per byte, from 3,500), by reading the common
//! shapes inline (strings and blanks sixteen bytes at a time, digits
//! eight), Kineto's key order by one word compare per key, and keeping
//! values and the position out of memory (returned through the stack, they
//! stalled on store forwarding); rare shapes run out of line.
//!
//! It accepts a strict subset of what the serde path (`document`, `event`)
//! accepts and fills the same [`RawEvent`]s with the same values. Anything
//! else, valid or not (an escape in a kept string, a float pid, a syntax
//! error), makes it give up with [`Bail`]; the caller then parses the piece
//! again with serde, which is the reference for both results and errors. It
//! never has to explain an error, only to never accept what serde rejects:
//! JSON's grammar is checked in full (numbers, escapes, control characters,
//! commas, nesting), as serde_json does for values it skips.

use std::borrow::Cow;

use super::builder::Builder;
use super::event::{
    ArgKey, Args, Id, Nanos, RawEvent, Str, number_id, number_int, parse_int_text, raw_micros_to_ns,
};
use super::meta::Meta;
use super::micros::micros_to_ns;

/// The fast path declined; parse with serde instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bail;

type R<T> = Result<T, Bail>;

/// Nesting deeper than this is left to serde (whose limit is 128).
const MAX_DEPTH: u32 = 64;

/// Parses `text`, a JSON array of events (its `[` implied unless `opened`:
/// a piece of a compact array cut at `},{`), into the builder.
pub fn parse_array(text: &[u8], opened: bool, builder: &mut Builder) -> R<()> {
    let mut p = Scan { s: text, i: 0 };
    p.ws();
    if opened {
        p.events(builder)?;
    } else {
        p.events_after_open(builder)?;
    }
    p.ws();
    if p.i == text.len() { Ok(()) } else { Err(Bail) }
}

/// Parses a whole document, as [`document::parse`](super::document::parse)
/// does (its reference): an object whose `traceEvents` (anywhere among its
/// keys) is fed to the builder and whose metadata keys are read, or a bare
/// event array. Returns the metadata and whether events were found.
pub fn parse_document(text: &[u8], builder: &mut Builder) -> R<(Meta, bool)> {
    let mut p = Scan { s: text, i: 0 };
    let mut meta = Meta::default();
    p.ws();
    let found = match p.peek() {
        Some(b'[') => {
            p.events(builder)?;
            true
        }
        Some(b'{') => p.top_object(builder, &mut meta)?,
        _ => return Err(Bail),
    };
    p.ws();
    if p.i == text.len() {
        Ok((meta, found))
    } else {
        Err(Bail)
    }
}

/// The end of the JSON value at the start of `text`, checked as it is
/// skipped; `None` if it is not whole there.
pub fn value_end(text: &[u8]) -> Option<usize> {
    let mut p = Scan { s: text, i: 0 };
    p.skip_value(1).ok().map(|()| p.i)
}

const ONES: u64 = u64::MAX / 255;

/// The high bit of each byte of `w` that may be a `"`, `\\` or control
/// character; the lowest flagged byte is exact (borrows only run upward).
#[inline(always)]
fn special_mask(w: u64) -> u64 {
    let ctrl = w.wrapping_sub(ONES * 0x20) & !w;
    let q = w ^ (ONES * u64::from(b'"'));
    let quote = q.wrapping_sub(ONES) & !q;
    let b = w ^ (ONES * u64::from(b'\\'));
    let back = b.wrapping_sub(ONES) & !b;
    (ctrl | quote | back) & (ONES << 7)
}

/// The high bit of each zero byte of `w`, exactly (no borrow between bytes).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn zero_bytes(w: u64) -> u64 {
    let low = ONES * 0x7f;
    !(((w & low) + low) | w | low)
}

/// How many of the eight bytes of `w` (little-endian) lead with digits,
/// and the bytes less `'0'` (digits become their values).
#[inline(always)]
fn digit_run(w: u64) -> (usize, u64) {
    let x = w ^ (ONES * u64::from(b'0'));
    // Digits are the bytes now below 10; a byte's carry only reaches bytes
    // above the first that is not one.
    let other = (x.wrapping_add(ONES * 0x76) | x) & (ONES << 7);
    ((other.trailing_zeros() / 8) as usize, x)
}

/// Eight digit values, the first in the lowest byte, as a number.
#[inline(always)]
fn eight_digits(x: u64) -> u64 {
    const MASK: u64 = 0x0000_00ff_0000_00ff;
    let x = x.wrapping_mul(10).wrapping_add(x >> 8);
    (x & MASK)
        .wrapping_mul(100 + (1_000_000 << 32))
        .wrapping_add(((x >> 16) & MASK).wrapping_mul(1 + (10_000 << 32)))
        >> 32
}

const POW10: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// The digits (at most sixteen) at the start of `s[i..]`, as a number and
/// a count, read eight at a time; `None` when fewer than sixteen bytes are
/// left (the caller reads those one at a time).
#[inline(always)]
fn lead_digits(s: &[u8], i: usize) -> Option<(u64, usize)> {
    let b = s.get(i..i + 16)?;
    let (lo, hi) = b.split_at(8);
    let (k1, x1) = digit_run(u64::from_le_bytes(lo.try_into().unwrap_or([0; 8])));
    if k1 < 8 {
        if k1 == 0 {
            return Some((0, 0));
        }
        // The k1 digits moved to the top; zeros (leading) below.
        return Some((eight_digits(x1 << (64 - 8 * k1)), k1));
    }
    let (k2, x2) = digit_run(u64::from_le_bytes(hi.try_into().unwrap_or([0; 8])));
    let first = eight_digits(x1);
    if k2 == 0 {
        return Some((first, 8));
    }
    let rest = eight_digits(x2 << (64 - 8 * k2));
    Some((first * POW10[k2] + rest, 8 + k2))
}

/// The end of the run of digits at `s[i..]`.
#[inline(always)]
fn skip_digits(s: &[u8], mut i: usize) -> usize {
    while let Some(b) = s.get(i..i + 8) {
        let (k, _) = digit_run(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
        i += k;
        if k < 8 {
            return i;
        }
    }
    while let Some(b'0'..=b'9') = s.get(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
#[test]
fn digits_are_read_as_numbers() {
    for text in [
        "",
        "x",
        "0",
        "7,",
        "12",
        "123",
        "1234",
        "12345",
        "123456",
        "1234567",
        "12345678",
        "123456789",
        "1669783687464200",
        "9999999999999999",
        "00000001",
        "98765432.5",
        "1669783687464200123",
        "4/",
        "5:",
        "9\u{80}",
    ] {
        let digits = text.bytes().take_while(u8::is_ascii_digit).count();
        let mut s = text.as_bytes().to_vec();
        assert_eq!(skip_digits(&s, 0), digits, "{text}");
        if s.len() < 16 {
            assert_eq!(lead_digits(&s, 0), None, "{text}: short");
        }
        s.extend_from_slice(b" padding to sixteen bytes");
        assert_eq!(skip_digits(&s, 0), digits, "{text}");
        let n = digits.min(16);
        let want = text[..n].parse::<u64>().unwrap_or(0);
        assert_eq!(lead_digits(&s, 0), Some((want, n)), "{text}");
    }
    // Every byte next to a digit: only digits continue the run.
    for b in 0..=255u8 {
        let w = u64::from_le_bytes([b'1', b'2', b, b'3', b, 0xff, b'0', b'9']);
        let want = if b.is_ascii_digit() { 5 } else { 2 };
        assert_eq!(digit_run(w).0, want, "{b}");
    }
}

/// The index of the first `"`, `\\` or control character in `s` (its length
/// if none), and whether the bytes before it are all ASCII (`false` may be
/// said of ASCII bytes past the last full sixteen): sixteen bytes at a time
/// with SSE2 (kernel names run to hundreds of bytes), then eight at a time,
/// as serde_json does. Returned in two registers: through memory, the
/// caller's reload stalled on store forwarding.
#[inline(never)]
fn special_at(s: &[u8]) -> (usize, bool) {
    let mut off = 0;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
            _mm_set1_epi8,
        };
        let mut high = 0u32;
        // SAFETY: SSE2 is part of the x86_64 baseline; each unaligned load
        // reads s[off..off + 16], in bounds.
        unsafe {
            let quote = _mm_set1_epi8(b'"' as i8);
            let back = _mm_set1_epi8(b'\\' as i8);
            let ctrl_max = _mm_set1_epi8(0x1f);
            while off + 16 <= s.len() {
                let v = _mm_loadu_si128(s.as_ptr().add(off).cast());
                // Unsigned v <= 0x1f: min(v, 0x1f) == v.
                let ctrl = _mm_cmpeq_epi8(_mm_min_epu8(v, ctrl_max), v);
                let hit = _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, back)),
                    ctrl,
                );
                let bits = _mm_movemask_epi8(hit) as u32;
                // The bytes with their high bit set: not ASCII.
                let top = _mm_movemask_epi8(v) as u32;
                if bits != 0 {
                    let below = (1u32 << bits.trailing_zeros()) - 1;
                    return (
                        off + bits.trailing_zeros() as usize,
                        high | (top & below) == 0,
                    );
                }
                high |= top;
                off += 16;
            }
        }
    }
    (off + special_tail(&s[off..]), false)
}

/// [`special_at`] eight bytes at a time.
fn special_tail(s: &[u8]) -> usize {
    let mut off = 0;
    for chunk in s.chunks_exact(8) {
        let Ok(bytes) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let hit = special_mask(u64::from_le_bytes(bytes));
        if hit != 0 {
            return off + (hit.trailing_zeros() / 8) as usize;
        }
        off += 8;
    }
    off + s[off..]
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .unwrap_or(s.len() - off)
}

#[cfg(test)]
#[test]
fn special_at_finds_the_first_special_byte() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for len in 0..200 {
        for _ in 0..20 {
            let s: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    // Mostly plain bytes, some specials, some high bytes.
                    match seed % 97 {
                        0 => b'"',
                        1 => b'\\',
                        2 => (seed >> 8) as u8 % 0x20,
                        3..=10 => 0x80 | (seed >> 8) as u8,
                        _ => b'a' + (seed >> 8) as u8 % 26,
                    }
                })
                .collect();
            let want = s
                .iter()
                .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                .unwrap_or(s.len());
            let (at, ascii) = special_at(&s);
            assert_eq!(at, want, "{s:?}");
            // ASCII may only be said of ASCII.
            assert!(!ascii || s[..at].is_ascii(), "{s:?}");
            assert_eq!(special_tail(&s), want, "{s:?}");
        }
    }
    // ASCII found in the sixteen-byte steps is said to be.
    assert_eq!(special_at(b"abcdefghijklmnopqrst\"0123456789a"), (20, true));
    assert_eq!(
        special_at("abcdefghijklmnopqé\"0123456789ab".as_bytes()),
        (19, false)
    );
}

/// The common shape of a time, `123456.789` (no sign or exponent, at most
/// three decimals), to nanoseconds without the general parser.
fn plain_micros(t: &[u8]) -> Option<i64> {
    let (int, frac) = match t.iter().position(|&c| c == b'.') {
        Some(dot) => (&t[..dot], &t[dot + 1..]),
        None => (t, &t[t.len()..]),
    };
    if int.is_empty() || int.len() > 16 || frac.len() > 3 {
        return None;
    }
    // At most 19 digits: below u64::MAX.
    let mut v: u64 = 0;
    for &c in int.iter().chain(frac) {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u64::from(c - b'0');
    }
    let v = v.checked_mul(10u64.pow(3 - frac.len() as u32))?;
    i64::try_from(v).ok()
}

/// The event keys the reader keeps.
#[derive(Clone, Copy)]
enum EventKey {
    Ph,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Args,
    Other,
}

/// A key of at most eight bytes as a little-endian word, zero-padded.
const fn word(key: &[u8]) -> u64 {
    let mut w = 0u64;
    let mut i = key.len();
    while i > 0 {
        i -= 1;
        w = (w << 8) | key[i] as u64;
    }
    w
}

impl EventKey {
    /// `w`: the key's bytes, zero-padded (so a key holding a NUL byte must
    /// not come here).
    fn of_word(w: u64) -> EventKey {
        const PH: u64 = word(b"ph");
        const CAT: u64 = word(b"cat");
        const NAME: u64 = word(b"name");
        const PID: u64 = word(b"pid");
        const TID: u64 = word(b"tid");
        const TS: u64 = word(b"ts");
        const DUR: u64 = word(b"dur");
        const ARGS: u64 = word(b"args");
        match w {
            PH => EventKey::Ph,
            CAT => EventKey::Cat,
            NAME => EventKey::Name,
            PID => EventKey::Pid,
            TID => EventKey::Tid,
            TS => EventKey::Ts,
            DUR => EventKey::Dur,
            ARGS => EventKey::Args,
            _ => EventKey::Other,
        }
    }
}

/// Spreads the kept keys' words (with quotes and colon) over eight slots,
/// one each; checked when [`KEPT_KEYS`] is built.
const fn kept_key_slot(w: u64) -> usize {
    (w.wrapping_mul(0x7e0a_b2ed_31b1_c27f) >> 61) as usize
}

/// Each kept event key's word, `"ph":` and so on, in its slot.
const KEPT_KEYS: [(u64, EventKey); 8] = {
    let keys: [(&[u8], EventKey); 8] = [
        (b"\"ph\":", EventKey::Ph),
        (b"\"cat\":", EventKey::Cat),
        (b"\"name\":", EventKey::Name),
        (b"\"pid\":", EventKey::Pid),
        (b"\"tid\":", EventKey::Tid),
        (b"\"ts\":", EventKey::Ts),
        (b"\"dur\":", EventKey::Dur),
        (b"\"args\":", EventKey::Args),
    ];
    let mut table = [(0u64, EventKey::Other); 8];
    let mut i = 0;
    while i < keys.len() {
        let w = word(keys[i].0);
        let slot = kept_key_slot(w);
        assert!(table[slot].0 == 0, "two kept keys share a slot");
        table[slot] = (w, keys[i].1);
        i += 1;
    }
    table
};

struct Scan<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    /// Runs `f` on a copy of the scanner and takes its position back. Only
    /// the copy's address reaches `f` (the rare shapes, out of line), so
    /// the hot loops keep their own position in a register: with it in
    /// memory, every step was a store-to-load round trip.
    #[inline(always)]
    fn detached<T>(&mut self, f: impl FnOnce(&mut Scan<'a>) -> T) -> T {
        let mut copy = Scan {
            s: self.s,
            i: self.i,
        };
        let out = f(&mut copy);
        self.i = copy.i;
        out
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn next(&mut self) -> R<u8> {
        let c = self.peek().ok_or(Bail)?;
        self.i += 1;
        Ok(c)
    }

    fn eat(&mut self, c: u8) -> R<()> {
        if self.next()? == c { Ok(()) } else { Err(Bail) }
    }

    /// Skips blanks. Most gaps are empty or one space; pretty-printed
    /// indentation (`\n` and runs of spaces, about a quarter of a Kineto
    /// trace) is skipped eight bytes at a time.
    #[inline(always)]
    fn ws(&mut self) {
        let Some(&c) = self.s.get(self.i) else {
            return;
        };
        if c > b' ' {
            return;
        }
        if c == b' ' {
            self.i += 1;
            if self.s.get(self.i).is_some_and(|&c| c > b' ') {
                return;
            }
        }
        // Blanks, or a control character that ws_run stops at.
        self.ws_run();
    }

    fn ws_run(&mut self) {
        #[cfg(target_arch = "x86_64")]
        while let Some(block) = self.s.get(self.i..self.i + 16) {
            use std::arch::x86_64::{
                _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
            };
            // SAFETY: SSE2 is part of the x86_64 baseline; the unaligned
            // load reads `block`, sixteen bytes in bounds.
            let blank = unsafe {
                let v = _mm_loadu_si128(block.as_ptr().cast());
                let eq = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
                let hit = _mm_or_si128(
                    _mm_or_si128(eq(b' '), eq(b'\n')),
                    _mm_or_si128(eq(b'\r'), eq(b'\t')),
                );
                _mm_movemask_epi8(hit) as u32
            };
            if blank != 0xffff {
                self.i += (!blank).trailing_zeros() as usize;
                return;
            }
            self.i += 16;
        }
        #[cfg(not(target_arch = "x86_64"))]
        while let Some(bytes) = self.s.get(self.i..self.i + 8) {
            let w = u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]));
            let blank = zero_bytes(w ^ (ONES * u64::from(b' ')))
                | zero_bytes(w ^ (ONES * u64::from(b'\n')));
            let other = !blank & (ONES << 7);
            if other != 0 {
                self.i += (other.trailing_zeros() / 8) as usize;
                break;
            }
            self.i += 8;
        }
        // `\r`, `\t` and the last few bytes.
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.i += 1;
        }
    }

    /// The `:` after a key, with the blanks around it.
    #[inline(always)]
    fn colon(&mut self) -> R<()> {
        if self.s.get(self.i) == Some(&b':') {
            self.i += 1;
        } else {
            self.ws();
            self.eat(b':')?;
        }
        self.ws();
        Ok(())
    }

    /// After a member of an object or array: `,` (true: more follow) or
    /// `close` (false), blanks before either skipped.
    #[inline(always)]
    fn more(&mut self, close: u8) -> R<bool> {
        let c = match self.s.get(self.i) {
            Some(&c) if c > b' ' => c,
            _ => {
                self.ws();
                self.peek().ok_or(Bail)?
            }
        };
        self.i += 1;
        if c == b',' {
            Ok(true)
        } else if c == close {
            Ok(false)
        } else {
            Err(Bail)
        }
    }

    fn literal(&mut self, word: &[u8]) -> R<()> {
        if self.s[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(())
        } else {
            Err(Bail)
        }
    }

    /// From `self.i` (after an opening quote): where the first `"`, `\\` or
    /// control character is, and whether the bytes before it are ASCII (see
    /// [`special_at`]). The first sixteen bytes, which hold most keys and
    /// many values, are looked at inline.
    #[inline(always)]
    fn plain_run(&self) -> (usize, bool) {
        let (s, i) = (self.s, self.i);
        #[cfg(target_arch = "x86_64")]
        if let Some(block) = s.get(i..i + 16) {
            use std::arch::x86_64::{
                _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
                _mm_set1_epi8,
            };
            // SAFETY: SSE2 is part of the x86_64 baseline; the unaligned
            // load reads `block`, sixteen bytes in bounds.
            let (bits, top) = unsafe {
                let v = _mm_loadu_si128(block.as_ptr().cast());
                let ctrl = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
                let hit = _mm_or_si128(
                    _mm_or_si128(
                        _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)),
                        _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)),
                    ),
                    ctrl,
                );
                (_mm_movemask_epi8(hit) as u32, _mm_movemask_epi8(v) as u32)
            };
            if bits != 0 {
                let k = bits.trailing_zeros();
                return (i + k as usize, top & ((1 << k) - 1) == 0);
            }
            let (k, ascii) = special_at(&s[i + 16..]);
            return (i + 16 + k, ascii && top == 0);
        }
        let (k, ascii) = special_at(&s[i..]);
        (i + k, ascii)
    }

    /// After the opening quote: the raw contents and whether they hold an
    /// escape. Checks what serde_json checks of strings it skips: no control
    /// characters, valid escapes.
    #[inline(always)]
    fn string(&mut self) -> R<(&'a [u8], bool)> {
        let start = self.i;
        let (end, _) = self.plain_run();
        if self.s.get(end) == Some(&b'"') {
            self.i = end + 1;
            return Ok((&self.s[start..end], false));
        }
        self.detached(|p| p.string_long())
    }

    /// [`Self::string`] with escapes (or a control character, or no end).
    #[cold]
    #[inline(never)]
    fn string_long(&mut self) -> R<(&'a [u8], bool)> {
        let start = self.i;
        let mut escaped = false;
        loop {
            self.i += special_at(&self.s[self.i..]).0;
            match self.next()? {
                b'"' => return Ok((&self.s[start..self.i - 1], escaped)),
                b'\\' => {
                    escaped = true;
                    match self.next()? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                        b'u' => {
                            let hex = self.s.get(self.i..self.i + 4).ok_or(Bail)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return Err(Bail);
                            }
                            self.i += 4;
                        }
                        _ => return Err(Bail),
                    }
                }
                // Only a control character stops the scan otherwise.
                _ => return Err(Bail),
            }
        }
    }

    /// A string we keep, after its opening quote: borrowed when it has no
    /// escapes (valid UTF-8), else decoded by serde_json itself, so both
    /// paths agree on every escape (surrogates included).
    #[inline(always)]
    fn kept_str(&mut self) -> R<Cow<'a, str>> {
        let start = self.i;
        let (end, ascii) = self.plain_run();
        if ascii && self.s.get(end) == Some(&b'"') {
            self.i = end + 1;
            // SAFETY: ASCII is UTF-8; most names are, and checking that is cheaper.
            return Ok(Cow::Borrowed(unsafe {
                std::str::from_utf8_unchecked(&self.s[start..end])
            }));
        }
        self.detached(|p| p.kept_str_rare())
    }

    /// [`Self::kept_str`] of a string with escapes or other than ASCII.
    #[cold]
    #[inline(never)]
    fn kept_str_rare(&mut self) -> R<Cow<'a, str>> {
        let open = self.i - 1;
        let (raw, escaped) = self.string()?;
        if escaped {
            return serde_json::from_slice::<String>(&self.s[open..self.i])
                .map(Cow::Owned)
                .map_err(|_| Bail);
        }
        std::str::from_utf8(raw)
            .map(Cow::Borrowed)
            .map_err(|_| Bail)
    }

    /// An object key (compared, not kept); escapes decoded as serde does.
    #[inline]
    fn key(&mut self) -> R<Cow<'a, [u8]>> {
        self.eat(b'"')?;
        let open = self.i - 1;
        let (raw, escaped) = self.string()?;
        if !escaped {
            return Ok(Cow::Borrowed(raw));
        }
        serde_json::from_slice::<String>(&self.s[open..self.i])
            .map(|k| Cow::Owned(k.into_bytes()))
            .map_err(|_| Bail)
    }

    /// An event's key, as the keys the reader keeps. A key of at most seven
    /// plain bytes (all the kept ones) is read and compared as one word.
    #[inline(always)]
    fn event_key(&mut self) -> R<EventKey> {
        if self.peek() == Some(b'"')
            && let Some(bytes) = self.s.get(self.i + 1..self.i + 9)
        {
            let w = u64::from_le_bytes(bytes.try_into().map_err(|_| Bail)?);
            let hit = special_mask(w);
            let k = (hit.trailing_zeros() / 8) as usize;
            if hit != 0 && bytes[k] == b'"' {
                self.i += k + 2;
                // k < 8: the key's bytes, the rest zeroed.
                return Ok(EventKey::of_word(w & ((1u64 << (8 * k)) - 1)));
            }
        }
        let key = self.detached(|p| p.key())?;
        // A decoded `\u0000` must not pass for the padding.
        Ok(if key.len() < 8 && !key.contains(&0) {
            let mut b = [0u8; 8];
            b[..key.len()].copy_from_slice(&key);
            EventKey::of_word(u64::from_le_bytes(b))
        } else {
            EventKey::Other
        })
    }

    /// A kept event key with its colon, `"ts":`, matched as one word;
    /// `None`, with nothing read, for any other key or an odd layout.
    #[inline(always)]
    fn kept_key(&mut self) -> Option<EventKey> {
        let b = self.s.get(self.i..self.i + 8)?;
        let w = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        // The first quote after the opening one ends the key; the colon
        // follows it. The compare then checks every byte of the guess.
        let q = w ^ (ONES * u64::from(b'"'));
        let low = ONES * 0x7f;
        let quotes = !(((q & low) + low) | q | low) & !0x80;
        let len = (quotes.trailing_zeros() / 8) as usize + 2;
        if len > 8 {
            return None;
        }
        let key = w & (u64::MAX >> (64 - 8 * len));
        let (want, k) = KEPT_KEYS[kept_key_slot(key)];
        if key != want {
            return None;
        }
        self.i += len;
        Some(k)
    }

    /// An `args` key, as the keys the reader keeps.
    #[inline(always)]
    fn arg_key(&mut self) -> R<Option<ArgKey>> {
        self.eat(b'"')?;
        let (raw, escaped) = self.string()?;
        if !escaped {
            return Ok(ArgKey::of(raw));
        }
        self.i -= raw.len() + 2;
        Ok(ArgKey::of(&self.detached(|p| p.key())?))
    }

    /// A JSON number's text, checked against the grammar.
    fn number(&mut self) -> R<&'a [u8]> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => self.digits(),
            _ => return Err(Bail),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            self.digit()?;
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            self.digit()?;
            self.digits();
        }
        Ok(&self.s[start..self.i])
    }

    fn digit(&mut self) -> R<()> {
        if self.next()?.is_ascii_digit() {
            Ok(())
        } else {
            Err(Bail)
        }
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
    }

    /// The common integer, at most 16 digits (so no overflow) with no
    /// leading zero, not `-0` and not followed by a fraction or exponent:
    /// its value and end. `None` leaves the rest to [`Self::integer`].
    #[inline(always)]
    fn int_fast(&self) -> Option<(i64, usize)> {
        let s = self.s;
        // One digit alone (small ids, flags, grid sizes): no word needed.
        if let (Some(&c @ b'0'..=b'9'), Some(next)) = (s.get(self.i), s.get(self.i + 1))
            && !matches!(next, b'0'..=b'9' | b'.' | b'e' | b'E')
        {
            return Some((i64::from(c - b'0'), self.i + 1));
        }
        let neg = s.get(self.i) == Some(&b'-');
        let first = self.i + usize::from(neg);
        let (v, i) = match lead_digits(s, first) {
            Some((v, n)) => (v, first + n),
            None => {
                let (mut v, mut i) = (0u64, first);
                while let Some(&c @ b'0'..=b'9') = s.get(i) {
                    v = v.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
                    i += 1;
                }
                (v, i)
            }
        };
        let n = i - first;
        if n == 0 || n > 16 || (s[first] == b'0' && (n > 1 || neg)) {
            return None;
        }
        // A seventeenth digit, a fraction or an exponent.
        if let Some(b'0'..=b'9' | b'.' | b'e' | b'E') = s.get(i) {
            return None;
        }
        // Below 10^16: fits an i64 either way.
        let v = v as i64;
        Some((if neg { -v } else { v }, i))
    }

    /// Skips a value; the common scalars (strings, numbers of plain digits
    /// with an optional fraction) inline, the rest as [`Self::skip_value`].
    #[inline(always)]
    fn skip_fast(&mut self, depth: u32) -> R<()> {
        match self.peek() {
            Some(b'"') => {
                self.i += 1;
                self.string().map(|_| ())
            }
            Some(c @ b'0'..=b'9') => {
                let s = self.s;
                // A leading 0 stands alone ("01" then fails at the `1`).
                let mut i = if c == b'0' {
                    self.i + 1
                } else {
                    skip_digits(s, self.i + 1)
                };
                if s.get(i) == Some(&b'.') {
                    let frac = i + 1;
                    i = skip_digits(s, frac);
                    if i == frac {
                        return Err(Bail); // "1." is not JSON
                    }
                }
                if let Some(b'e' | b'E') = s.get(i) {
                    return self.detached(|p| p.number()).map(|_| ());
                }
                self.i = i;
                Ok(())
            }
            _ => self.detached(|p| p.skip_value(depth)),
        }
    }

    /// A plain integer that fits an i64 (serde's float and -0 cases are left to it).
    fn integer(&mut self) -> R<i64> {
        let neg = self.peek() == Some(b'-');
        if neg {
            self.i += 1;
        }
        let first = self.next()?;
        if !first.is_ascii_digit() || (first == b'0' && neg) {
            return Err(Bail);
        }
        // Accumulated negative, which reaches i64::MIN.
        let mut v = -i64::from(first - b'0');
        while let Some(c @ b'0'..=b'9') = self.peek() {
            if first == b'0' {
                return Err(Bail); // a leading zero: "01"
            }
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_sub(i64::from(c - b'0')))
                .ok_or(Bail)?;
            self.i += 1;
        }
        if let Some(b'.' | b'e' | b'E') = self.peek() {
            return Err(Bail);
        }
        if neg {
            Ok(v)
        } else {
            v.checked_neg().ok_or(Bail)
        }
    }

    /// A JSON array of events, each fed to the builder.
    fn events(&mut self, builder: &mut Builder) -> R<()> {
        self.eat(b'[')?;
        self.events_after_open(builder)
    }

    /// The rest of an event array after its `[`.
    fn events_after_open(&mut self, builder: &mut Builder) -> R<()> {
        let mut ev = RawEvent::default();
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.ws();
            self.event(&mut ev)?;
            builder.add(&ev);
            if !self.more(b']')? {
                return Ok(());
            }
        }
    }

    /// The document object: returns whether it has `traceEvents`.
    fn top_object(&mut self, builder: &mut Builder, meta: &mut Meta) -> R<bool> {
        self.eat(b'{')?;
        self.ws();
        let mut found = false;
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(false);
        }
        loop {
            self.ws();
            let key = self.key()?;
            // The serde path reads these keys as strings: they must be UTF-8.
            let key = std::str::from_utf8(&key).map_err(|_| Bail)?;
            self.colon()?;
            match key {
                "traceEvents" => {
                    found = true;
                    // `null` is an empty trace; other non-arrays are errors.
                    if !self.null() {
                        self.events(builder)?;
                    }
                }
                "deviceProperties" | "distributedInfo" | "baseTimeNanoseconds" | "host_name" => {
                    let start = self.i;
                    self.skip_value(1)?;
                    let v: serde_json::Value =
                        serde_json::from_slice(&self.s[start..self.i]).map_err(|_| Bail)?;
                    match key {
                        "deviceProperties" => meta.device_properties(&v),
                        "distributedInfo" => meta.distributed_info(&v),
                        "baseTimeNanoseconds" => meta.base_time(&v),
                        _ => meta.host_name(&v),
                    }
                }
                _ => self.skip_value(1)?,
            }
            if !self.more(b'}')? {
                return Ok(found);
            }
        }
    }

    fn skip_value(&mut self, depth: u32) -> R<()> {
        if depth > MAX_DEPTH {
            return Err(Bail);
        }
        match self.peek().ok_or(Bail)? {
            b'"' => {
                self.i += 1;
                self.string().map(|_| ())
            }
            b'{' => {
                self.i += 1;
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(());
                }
                loop {
                    self.ws();
                    self.key()?;
                    self.colon()?;
                    self.skip_fast(depth + 1)?;
                    if !self.more(b'}')? {
                        return Ok(());
                    }
                }
            }
            b'[' => {
                self.i += 1;
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(());
                }
                loop {
                    self.ws();
                    // Shapes and types (`[[1, 3], []]`, `["float", ""]`):
                    // scalars inline, no call per element.
                    self.skip_fast(depth + 1)?;
                    if !self.more(b']')? {
                        return Ok(());
                    }
                }
            }
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number().map(|_| ()),
        }
    }

    fn null(&mut self) -> bool {
        if self.s[self.i..].starts_with(b"null") {
            self.i += 4;
            true
        } else {
            false
        }
    }

    /// Reads a string field into `out` in place: the common plain ASCII
    /// string is stored as its three words; a whole `Option<Str>` returned
    /// and moved went through the stack and stalled on store forwarding.
    #[inline(always)]
    fn str_field(&mut self, out: &mut Option<Str<'a>>) -> R<()> {
        if self.peek() == Some(b'"') {
            let start = self.i + 1;
            self.i = start;
            let (end, ascii) = self.plain_run();
            if ascii && self.s.get(end) == Some(&b'"') {
                self.i = end + 1;
                // SAFETY: ASCII is UTF-8.
                let text = unsafe { std::str::from_utf8_unchecked(&self.s[start..end]) };
                *out = Some(Str(Cow::Borrowed(text)));
                return Ok(());
            }
            self.i = start - 1;
        }
        self.detached(|p| p.str_field_rare(out))
    }

    #[cold]
    #[inline(never)]
    fn str_field_rare(&mut self, out: &mut Option<Str<'a>>) -> R<()> {
        *out = self.opt_str()?;
        Ok(())
    }

    /// Reads a pid or tid into `out` in place (see [`Self::str_field`]).
    #[inline(always)]
    fn id_field(&mut self, out: &mut Option<Id<'a>>) -> R<()> {
        if let Some((v, end)) = self.int_fast() {
            self.i = end;
            *out = Some(Id::Int(v));
            return Ok(());
        }
        self.detached(|p| p.id_field_rare(out))
    }

    #[cold]
    #[inline(never)]
    fn id_field_rare(&mut self, out: &mut Option<Id<'a>>) -> R<()> {
        *out = self.opt_id_rare()?;
        Ok(())
    }

    fn opt_str(&mut self) -> R<Option<Str<'a>>> {
        if self.peek() != Some(b'"') {
            return self.null_or_bail();
        }
        self.i += 1;
        Ok(Some(Str(self.kept_str()?)))
    }

    #[cold]
    fn null_or_bail<T>(&mut self) -> R<Option<T>> {
        if self.null() { Ok(None) } else { Err(Bail) }
    }

    /// A pid or tid of any shape the serde path takes.
    fn opt_id_rare(&mut self) -> R<Option<Id<'a>>> {
        if self.peek() == Some(b'n') {
            return if self.null() { Ok(None) } else { Err(Bail) };
        }
        if self.peek() == Some(b'"') {
            self.i += 1;
            return Ok(Some(Id::Str(self.kept_str()?)));
        }
        let start = self.i;
        if let Ok(v) = self.integer() {
            return Ok(Some(Id::Int(v)));
        }
        // Floats, -0, past i64: rare, read by the serde path's own code.
        self.i = start;
        let t = self.number()?;
        number_id(t).map(Some).ok_or(Bail)
    }

    #[inline(always)]
    fn opt_nanos(&mut self) -> R<Option<Nanos>> {
        if let Some(v) = self.plain_time() {
            return Ok(Some(Nanos(v)));
        }
        self.detached(|p| p.opt_nanos_rare())
    }

    #[cold]
    #[inline(never)]
    fn opt_nanos_rare(&mut self) -> R<Option<Nanos>> {
        if self.null() {
            return Ok(None);
        }
        if self.peek() == Some(b'"') {
            let open = self.i;
            self.i += 1;
            self.string()?;
            let t = std::str::from_utf8(&self.s[open..self.i]).map_err(|_| Bail)?;
            return raw_micros_to_ns(t)
                .map(|v| Some(Nanos(v)))
                .map_err(|_| Bail);
        }
        let t = self.number()?;
        if let Some(v) = plain_micros(t) {
            return Ok(Some(Nanos(v)));
        }
        let t = std::str::from_utf8(t).map_err(|_| Bail)?;
        micros_to_ns(t).map(|v| Some(Nanos(v))).map_err(|_| Bail)
    }

    /// The common time, `123456.789` (at most 16 integer digits and three
    /// decimals, no sign or exponent), read and converted in one pass; `None`
    /// leaves everything else, moved nowhere, to the general path.
    #[inline(always)]
    fn plain_time(&mut self) -> Option<i64> {
        let s = self.s;
        let start = self.i;
        let (mut v, mut i) = match lead_digits(s, start) {
            Some((v, n)) => (v, start + n),
            None => {
                let (mut v, mut i) = (0u64, start);
                while let Some(&c @ b'0'..=b'9') = s.get(i) {
                    if i - start == 16 {
                        return None;
                    }
                    v = v * 10 + u64::from(c - b'0');
                    i += 1;
                }
                (v, i)
            }
        };
        let int_digits = i - start;
        // "01" is not JSON; a seventeenth digit is left to the general path.
        if int_digits == 0
            || (int_digits > 1 && s[start] == b'0')
            || s.get(i).is_some_and(u8::is_ascii_digit)
        {
            return None;
        }
        let mut scale = 1000;
        if s.get(i) == Some(&b'.') {
            i += 1;
            while let Some(&c @ b'0'..=b'9') = s.get(i) {
                if scale == 1 {
                    return None; // a fourth decimal
                }
                v = v * 10 + u64::from(c - b'0');
                scale /= 10;
                i += 1;
            }
            if scale == 1000 {
                return None; // "1." is not JSON
            }
        }
        if let Some(b'e' | b'E') = s.get(i) {
            return None;
        }
        // At most 19 digits: no overflow above, and v * scale < 2^63 here.
        let ns = i64::try_from(v.checked_mul(scale)?).ok()?;
        self.i = i;
        Some(ns)
    }

    /// The kept key `want` (its word, quotes and colon, `len` bytes) with
    /// the blanks after it, if it is next; else nothing is read.
    #[inline(always)]
    fn expect_key(&mut self, want: u64, len: usize) -> bool {
        let Some(b) = self.s.get(self.i..self.i + 8) else {
            return false;
        };
        let w = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        if w & (u64::MAX >> (64 - 8 * len)) != want {
            return false;
        }
        self.i += len;
        self.ws();
        true
    }

    /// Kineto writes an event's kept keys first and in one order (`ph`,
    /// `cat`, `name`, `pid`, `tid`, `ts`, `dur`): while they come so, each
    /// key is one compare and nothing is dispatched. Returns whether the
    /// object ended; else the scan stands before the next key (or a flow's
    /// or counter's second one) for the general loop of [`Self::event`].
    #[inline(always)]
    fn kineto_order(&mut self, ev: &mut RawEvent<'a>) -> R<bool> {
        if !self.expect_key(word(b"\"ph\":"), 5) {
            return Ok(false);
        }
        self.str_field(&mut ev.ph)?;
        if !self.more(b'}')? {
            return Ok(true);
        }
        if matches!(ev.ph.as_deref(), Some("s" | "f" | "t" | "C")) {
            return Ok(false);
        }
        self.ws();
        if !self.expect_key(word(b"\"cat\":"), 6) {
            return Ok(false);
        }
        self.str_field(&mut ev.cat)?;
        if !self.more(b'}')? {
            return Ok(true);
        }
        self.ws();
        if !self.expect_key(word(b"\"name\":"), 7) {
            return Ok(false);
        }
        self.str_field(&mut ev.name)?;
        if !self.more(b'}')? {
            return Ok(true);
        }
        self.ws();
        if !self.expect_key(word(b"\"pid\":"), 6) {
            return Ok(false);
        }
        self.id_field(&mut ev.pid)?;
        if !self.more(b'}')? {
            return Ok(true);
        }
        self.ws();
        if !self.expect_key(word(b"\"tid\":"), 6) {
            return Ok(false);
        }
        self.id_field(&mut ev.tid)?;
        if !self.more(b'}')? {
            return Ok(true);
        }
        self.ws();
        if !self.expect_key(word(b"\"ts\":"), 5) {
            return Ok(false);
        }
        ev.ts = self.opt_nanos()?;
        if !self.more(b'}')? {
            return Ok(true);
        }
        self.ws();
        if !self.expect_key(word(b"\"dur\":"), 6) {
            return Ok(false);
        }
        ev.dur = self.opt_nanos()?;
        if !self.more(b'}')? {
            return Ok(true);
        }
        self.ws();
        Ok(false)
    }

    /// One event object, with the serde visitor's semantics (later duplicate
    /// keys win; after a flow's or counter's `ph`, the rest is skipped).
    fn event(&mut self, ev: &mut RawEvent<'a>) -> R<()> {
        *ev = RawEvent::default();
        self.eat(b'{')?;
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(());
        }
        if self.kineto_order(ev)? {
            return Ok(());
        }
        let mut skip = matches!(ev.ph.as_deref(), Some("s" | "f" | "t" | "C"));
        loop {
            self.ws();
            let key = match self.kept_key() {
                Some(k) => {
                    self.ws();
                    k
                }
                None => {
                    let k = self.event_key()?;
                    self.colon()?;
                    k
                }
            };
            if skip {
                self.skip_fast(1)?;
            } else {
                match key {
                    EventKey::Ph => {
                        self.str_field(&mut ev.ph)?;
                        skip = matches!(ev.ph.as_deref(), Some("s" | "f" | "t" | "C"));
                    }
                    EventKey::Cat => self.str_field(&mut ev.cat)?,
                    EventKey::Name => self.str_field(&mut ev.name)?,
                    EventKey::Pid => self.id_field(&mut ev.pid)?,
                    EventKey::Tid => self.id_field(&mut ev.tid)?,
                    EventKey::Ts => ev.ts = self.opt_nanos()?,
                    EventKey::Dur => ev.dur = self.opt_nanos()?,
                    EventKey::Args => self.args(&mut ev.args)?,
                    EventKey::Other => self.skip_fast(1)?,
                }
            }
            if !self.more(b'}')? {
                return Ok(());
            }
        }
    }

    /// Fills `a` in place (a later `args` replaces an earlier one whole):
    /// returning the large struct by value cost a copy per event.
    fn args(&mut self, a: &mut Args<'a>) -> R<()> {
        *a = Args::default();
        if self.peek() != Some(b'{') {
            return self.detached(|p| p.skip_value(1));
        }
        self.i += 1;
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.ws();
            let key = self.arg_key()?;
            self.colon()?;
            match key {
                Some(ArgKey::Grid) => a.grid = self.detached(|p| p.dim3())?,
                Some(ArgKey::Block) => a.block = self.detached(|p| p.dim3())?,
                Some(ArgKey::Name) => {
                    if self.peek() == Some(b'"') {
                        self.i += 1;
                        a.name = Some(self.kept_str()?);
                    } else {
                        self.detached(|p| p.skip_value(2))?;
                    }
                }
                Some(k) => {
                    let v = self.loose_int()?;
                    a.set_int(k, v);
                }
                None => self.skip_fast(2)?,
            }
            if !self.more(b'}')? {
                return Ok(());
            }
        }
    }

    /// An args value read as an integer, as the serde path's `Loose::int`:
    /// integers and numeric strings; other shapes read as absent.
    #[inline(always)]
    fn loose_int(&mut self) -> R<Option<i64>> {
        if let Some((v, end)) = self.int_fast() {
            self.i = end;
            return Ok(Some(v));
        }
        self.detached(|p| p.loose_int_rare())
    }

    #[cold]
    #[inline(never)]
    fn loose_int_rare(&mut self) -> R<Option<i64>> {
        match self.peek().ok_or(Bail)? {
            b'"' => {
                self.i += 1;
                Ok(parse_int_text(&self.kept_str()?))
            }
            b'-' | b'0'..=b'9' => {
                let start = self.i;
                if let Ok(v) = self.integer() {
                    return Ok(Some(v));
                }
                // Floats, -0, past i64: rare, read by the serde path's own code.
                self.i = start;
                let t = self.number()?;
                number_int(t).ok_or(Bail)
            }
            _ => self.skip_value(2).map(|_| None),
        }
    }

    /// `[x, y, z]` of integers (1 to 3 of them, each fitting u32, each read
    /// as [`Self::loose_int`]); other shapes read as absent, as in the serde path.
    fn dim3(&mut self) -> R<Option<[u32; 3]>> {
        if self.peek() != Some(b'[') {
            self.skip_value(2)?;
            return Ok(None);
        }
        self.i += 1;
        self.ws();
        let mut out = [1u32; 3];
        let mut n = 0usize;
        let mut ok = true;
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(None);
        }
        loop {
            self.ws();
            match self.loose_int()?.and_then(|v| u32::try_from(v).ok()) {
                Some(x) if n < 3 => out[n] = x,
                _ => ok = false,
            }
            n += 1;
            if !self.more(b']')? {
                return Ok(ok.then_some(out));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::kineto::document;

    fn both(text: &str) -> (R<()>, Result<(), serde_json::Error>) {
        let mut a = Builder::new("t".into());
        let mut b = Builder::new("t".into());
        (
            parse_array(text.as_bytes(), true, &mut a),
            document::parse_array(text.as_bytes(), &mut b),
        )
    }

    #[test]
    fn accepts_what_serde_accepts() {
        let ok = r#" [ {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.5, "dur": 2,
            "args": {"stream": 7, "correlation": "12", "grid": [1, 2, 3], "x": [{"y": null}, true, -1.5e3, "\u00e9\n"]}},
            {"ph": "f", "id": 1, "ts": "not checked after a flow's ph"}, {} ] "#;
        let (fast, serde) = both(ok);
        assert_eq!(fast, Ok(()));
        assert!(serde.is_ok(), "{serde:?}");
    }

    #[test]
    fn never_accepts_what_serde_rejects() {
        for bad in [
            "[{}, ]",
            "[{\"a\": 1,}]",
            "[{\"a\": 01}]",
            "[{\"a\": 1.}]",
            "[{\"a\": \"\t\"}]",
            "[{\"a\": \"\\x\"}]",
            "[{\"a\": \"\\u12g4\"}]",
            "[{\"a\": tru}]",
            "[{\"a\": 1} {}]",
            "[{\"a\" 1}]",
            "[{\"ts\": \"x\"}]",
            "[{\"name\": 5}]",
            "[7]",
            "[{}] x",
            "[{\"args\": {\"grid\": [1, ]}}]",
            // Control characters are not blanks, however they are reached.
            "[{\"a\": \u{1}1}]",
            "[{\"a\":\u{b}1}]",
            "[{\"a\": 1}, \n        \u{c}{}]",
        ] {
            let (fast, serde) = both(bad);
            assert!(serde.is_err(), "serde accepts {bad}");
            assert_eq!(fast, Err(Bail), "{bad}");
        }
    }

    #[test]
    fn takes_rare_shapes_too() {
        // Escapes in kept strings, float and huge ids, -0, quoted times.
        for text in [
            r#"[{"ph": "X", "name": "a\"b\u00e9", "ts": 1, "pid": 1, "tid": 1}]"#,
            r#"[{"ph": "X", "pid": 1.0, "tid": 18446744073709551615, "ts": 1}]"#,
            r#"[{"ph": "X", "ts": "2.5", "dur": "1e1", "args": {"stream": -0, "device": 1.0, "grid": ["2", 1.0, 1]}}]"#,
        ] {
            let mut a = Builder::new("t".into());
            let mut b = Builder::new("t".into());
            assert_eq!(parse_array(text.as_bytes(), true, &mut a), Ok(()), "{text}");
            document::parse_array(text.as_bytes(), &mut b).unwrap();
            assert_eq!(fingerprint(a), fingerprint(b), "{text}");
        }
    }

    #[test]
    fn kineto_order_and_others_agree_with_serde() {
        // Kineto's order whole, cut short, broken at each key, with keys
        // repeated after it, in compact and odd layouts, and flows.
        for text in [
            r#"[{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 2, "ts": 3, "dur": 4, "args": {"External id": 5}}]"#,
            r#"[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1.5,"dur":2,"args":{"stream":7,"correlation":9}}]"#,
            r#"[{"ph": "X"}, {"ph": "X", "cat": "cpu_op"}, {"ph": "X", "cat": "c", "name": "n"}]"#,
            r#"[{"ph": "X", "cat": "c", "name": "n", "pid": 1}, {"ph": "X", "cat": "c", "name": "n", "pid": 1, "tid": 2}]"#,
            r#"[{"ph": "X", "cat": "c", "name": "n", "pid": 1, "tid": 2, "ts": 3}]"#,
            r#"[{"ph": "X", "cat": "c", "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4}]"#,
            r#"[{"ph": "X", "name": "n", "cat": "cpu_op", "pid": 1, "tid": 2, "ts": 3, "dur": 4}]"#,
            r#"[{"ph": "X", "cat": "cpu_op", "x": 1, "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4}]"#,
            r#"[{"ph": "X", "cat": "cpu_op", "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4, "name": "m", "ts": 9}]"#,
            r#"[{"ph": "X", "cat": "cpu_op", "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": 4, "ph": "f", "name": 5}]"#,
            r#"[{"ph": "f", "cat": "cpu_op", "name": 5, "pid": [], "ts": "x"}, {"ph": "C", "ts": {}}]"#,
            r#"[{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 5,
                "args": {"Device Type": 1, "Device Id": 0, "Addr": 7, "Bytes": 64}}]"#,
            "[{\"ph\":  \"X\", \"cat\" : \"cpu_op\",\n  \"name\":\t\"n\", \"pid\":\n1 , \"tid\": 2\n, \"ts\": 3 ,\"dur\":4}]",
            r#"[{"pid": 1, "ph": "X", "cat": "cpu_op", "name": "n", "tid": 2, "ts": 3, "dur": 4}]"#,
            r#"[{"ph": "X", "cat": null, "name": null, "pid": null, "tid": null, "ts": null, "dur": null}]"#,
            r#"[{"ph": "X", "cat": "cpu_op", "name": "n", "pid": "Spans", "tid": -3, "ts": 1e3, "dur": 0.5}]"#,
        ] {
            let mut a = Builder::new("t".into());
            let mut b = Builder::new("t".into());
            assert_eq!(parse_array(text.as_bytes(), true, &mut a), Ok(()), "{text}");
            document::parse_array(text.as_bytes(), &mut b).unwrap();
            assert_eq!(fingerprint(a), fingerprint(b), "{text}");
        }
        // And what serde rejects, in order or not.
        for bad in [
            r#"[{"ph": "X", "cat": 5}]"#,
            r#"[{"ph": "X", "cat": "c", "name": "n", "pid": {}}]"#,
            r#"[{"ph": "X", "cat": "c", "name": "n", "pid": 1, "tid": 2, "ts": "x"}]"#,
            r#"[{"ph": "X", "cat": "c", "name": "n", "pid": 1, "tid": 2, "ts": 3, "dur": [1]}]"#,
            r#"[{"ph": "X", "cat": "c",}]"#,
            r#"[{"ph": "X" "cat": "c"}]"#,
        ] {
            let (fast, serde) = both(bad);
            assert!(serde.is_err(), "serde accepts {bad}");
            assert_eq!(fast, Err(Bail), "{bad}");
        }
    }

    fn fingerprint(b: Builder) -> String {
        let tl = b.finish(crate::read::kineto::meta::Meta::default());
        let mut out = String::new();
        for p in &tl.processes {
            for t in &p.threads {
                for sp in &t.spans {
                    out += &format!(
                        "{} {} {:?} {} {} {}|",
                        p.pid,
                        t.tid,
                        sp,
                        tl.strings.get(sp.id),
                        sp.ts,
                        sp.arg
                    );
                }
            }
        }
        for g in &tl.gpus {
            out += &format!(
                "{:?} {:?} {:?} {:?}|",
                g.syncs, g.memory, g.launch_configs, g.comm_elems
            );
            for st in &g.streams {
                for o in &st.ops {
                    out += &format!("{} {} {:?} {}|", g.id, st.id, o, tl.strings.get(o.name));
                }
            }
        }
        out + &format!("{:?}", tl.notes)
    }

    const SAMPLE: &str = r#"[
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": "11", "ts": 1695835535000010.123, "dur": 20.5,
    "args": {"External id": 2, "Input Dims": [[64, 64], []], "Concrete Inputs": ["", "\u00e9\n"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11, "ts": 12, "dur": 5, "args": {"correlation": 101}},
  {"ph": "X", "cat": "kernel", "name": "sgemm", "pid": 0, "tid": 7, "ts": 20.5, "dur": 100,
    "args": {"device": 0, "stream": 7, "correlation": 101, "grid": [64, 2, 1], "block": [256, 1, 1], "blocks per SM": 0.5}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 130, "dur": 10, "args": {"bytes": "4096", "stream": "0x7"}},
  {"ph": "s", "id": 101, "pid": 10, "tid": 11, "ts": 12, "cat": "ac2g", "name": "ac2g"},
  {"ph": "i", "name": "[memory]", "pid": 10, "tid": 11, "ts": 11, "args": {"Device Type": 1, "Device Id": 0, "Addr": 1400, "Bytes": -16}},
  {"name": "thread_name", "ph": "M", "pid": 10, "tid": 11, "args": {"name": "main"}},
  {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 150, "dur": 4, "args": {"stream": 7, "correlation": 106}},
  {"ph": "X", "name": "odd", "pid": 1, "tid": 2, "ts": 3, "dur": -1, "args": [1, {"a": null}, false, true]}
]"#;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 512, ..Default::default() })]

        /// Whatever the fast path accepts, serde accepts too, with the same result.
        #[test]
        fn agrees_with_serde(edits in proptest::collection::vec((0usize..2000, proptest::sample::select(
            &b" \n\t,:[]{}\"\\0123456789.eE+-xnulltrfa\x01\xc3"[..])), 0..4)) {
            let mut text = SAMPLE.as_bytes().to_vec();
            for (at, byte) in edits {
                let at = at % text.len();
                text[at] = byte;
            }
            let mut a = Builder::new("t".into());
            let mut b = Builder::new("t".into());
            let fast = parse_array(&text, true, &mut a);
            let serde = document::parse_array(&text, &mut b);
            if fast.is_ok() {
                proptest::prop_assert!(serde.is_ok(), "fast accepted what serde rejects: {}", String::from_utf8_lossy(&text));
                proptest::prop_assert_eq!(fingerprint(a), fingerprint(b));
            }
        }
    }

    #[test]
    fn sample_takes_the_fast_path() {
        let mut a = Builder::new("t".into());
        let mut b = Builder::new("t".into());
        assert_eq!(parse_array(SAMPLE.as_bytes(), true, &mut a), Ok(()));
        document::parse_array(SAMPLE.as_bytes(), &mut b).unwrap();
        assert_eq!(fingerprint(a), fingerprint(b));
    }
}
