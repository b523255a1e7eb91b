//! One Chrome-trace event, borrowed from the JSON text.
//!
//! Fields the reader relies on have strict types (a string `ts` is corruption);
//! `args` may have any shape, and only the keys we use are looked at.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::micros::micros_to_ns;

/// The fields of one event the reader uses. Deserialized in place (see
/// [`EventSeed`]) so the ~300-byte struct is not moved per event.
#[derive(Debug, Default)]
pub struct RawEvent<'a> {
    pub ph: Option<Str<'a>>,
    pub cat: Option<Str<'a>>,
    pub name: Option<Str<'a>>,
    pub pid: Option<Id<'a>>,
    pub tid: Option<Id<'a>>,
    pub ts: Option<Nanos>,
    pub dur: Option<Nanos>,
    pub args: Args<'a>,
}

impl<'de: 'a, 'a> Deserialize<'de> for RawEvent<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut ev = RawEvent::default();
        de::DeserializeSeed::deserialize(EventSeed { ev: &mut ev }, d)?;
        Ok(ev)
    }
}

/// Fills a reused [`RawEvent`] from the next JSON value, which must be an object.
pub struct EventSeed<'e, 'a> {
    pub ev: &'e mut RawEvent<'a>,
}

impl<'de: 'a, 'a> de::DeserializeSeed<'de> for EventSeed<'_, 'a> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        *self.ev = RawEvent::default();
        d.deserialize_map(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for EventSeed<'_, 'a> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace event object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let ev = self.ev;
        // Flows and counters (a third of a typical trace) carry nothing we
        // keep: once `ph` (Kineto's first key) says so, skip the rest unread.
        let mut skip = false;
        while let Some(Key(key)) = map.next_key::<Key>()? {
            if skip {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            match &*key {
                b"ph" => {
                    ev.ph = map.next_value()?;
                    skip = matches!(ev.ph.as_deref(), Some("s" | "f" | "t" | "C"));
                }
                b"cat" => ev.cat = map.next_value()?,
                b"name" => ev.name = map.next_value()?,
                b"pid" => ev.pid = map.next_value()?,
                b"tid" => ev.tid = map.next_value()?,
                b"ts" => ev.ts = map.next_value()?,
                b"dur" => ev.dur = map.next_value()?,
                b"args" => ev.args = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// An object key as raw bytes: compared, never kept, so not UTF-8 checked.
struct Key<'a>(Cow<'a, [u8]>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Key<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(v.to_vec())))
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Borrowed(v.as_bytes())))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(v.as_bytes().to_vec())))
            }
        }
        d.deserialize_bytes(V(std::marker::PhantomData))
    }
}

/// A string borrowed from the JSON text when it has no escapes. (serde's own
/// `Cow<str>` always copies unless it is a direct `#[serde(borrow)]` field.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Str<'a>(pub Cow<'a, str>);

impl std::ops::Deref for Str<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Str<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}

/// A time in nanoseconds, read exactly from a microsecond JSON number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nanos(pub i64);

impl<'de> Deserialize<'de> for Nanos {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw: &'de RawValue = Deserialize::deserialize(d)?;
        let text = raw.get();
        raw_micros_to_ns(text).map(Nanos).map_err(|why| {
            de::Error::custom(format_args!(
                "expected a number of microseconds, found `{}` ({why})",
                clip(text)
            ))
        })
    }
}

/// A time's raw JSON text to nanoseconds: a number, or a number in a string
/// without escapes (`"1695835535000010.123"`: some exporters quote times).
pub fn raw_micros_to_ns(text: &str) -> Result<i64, &'static str> {
    match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(inner) if !inner.contains('\\') => micros_to_ns(inner),
        Some(_) => Err("an escaped string"),
        None => micros_to_ns(text),
    }
}

/// A JSON number that is not a plain i64 (a float, `-0`, past i64), read as
/// the serde path reads a pid or tid, by the same code.
pub fn number_id(text: &[u8]) -> Option<Id<'static>> {
    match serde_json::from_slice::<Id>(text).ok()? {
        Id::Int(v) => Some(Id::Int(v)),
        Id::Str(s) => Some(Id::Str(Cow::Owned(s.into_owned()))),
    }
}

/// Such a number as an `args` integer, as the serde path reads it.
pub fn number_int(text: &[u8]) -> Option<Option<i64>> {
    serde_json::from_slice::<Loose>(text).ok().map(Loose::int)
}

fn clip(s: &str) -> &str {
    match s.char_indices().nth(40) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// A pid or tid: Kineto writes numbers, older traces and some spans strings
/// ("Spans", "stream 7", "11788").
#[derive(Debug, Clone, PartialEq)]
pub enum Id<'a> {
    Int(i64),
    Str(Cow<'a, str>),
}

impl Id<'_> {
    /// The id as an integer: numbers, numeric strings, or the digits after a
    /// word ("stream 7" -> 7).
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Id::Int(v) => Some(*v),
            Id::Str(s) => {
                let s = s.trim();
                s.parse()
                    .ok()
                    .or_else(|| s.rsplit(' ').next().and_then(|t| t.parse().ok()))
            }
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Id<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Id<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or a string")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Id<'a>, E> {
                Ok(Id::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id<'a>, E> {
                // Thread ids past i63 do not occur; keep them distinct anyway.
                Ok(i64::try_from(v).map_or_else(|_| Id::Str(Cow::Owned(v.to_string())), Id::Int))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Id<'a>, E> {
                if v.fract() == 0.0 && v.abs() < 9.0e15 {
                    Ok(Id::Int(v as i64))
                } else {
                    Ok(Id::Str(Cow::Owned(v.to_string())))
                }
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Id<'a>, E> {
                Ok(Id::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Id<'a>, E> {
                Ok(Id::Str(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// The `args` keys the reader uses. Values of unexpected types read as absent:
/// args differ across PyTorch versions and vendors (ROCm writes `"stream": "0x0"`).
#[derive(Debug, Default)]
pub struct Args<'a> {
    pub correlation: Option<i64>,
    pub external_id: Option<i64>,
    pub device: Option<i64>,
    pub stream: Option<i64>,
    pub bytes: Option<i64>,
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    pub shared_memory: Option<i64>,
    pub registers: Option<i64>,
    /// `name` of metadata events (process_name, thread_name).
    pub name: Option<Cow<'a, str>>,
    /// Memory events: "Device Type", "Device Id", "Addr", "Bytes".
    pub device_type: Option<i64>,
    pub device_id: Option<i64>,
    pub addr: Option<i64>,
    pub mem_bytes: Option<i64>,
    /// A collective kernel's message size in elements ("Out msg nelems",
    /// else "In msg nelems"; PyTorch 2.x writes them on NCCL/RCCL kernels).
    pub msg_nelems: Option<i64>,
}

/// An `args` key the reader keeps (shared by both parsers, so they agree).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKey {
    Correlation,
    ExternalId,
    Device,
    Stream,
    Bytes,
    Grid,
    Block,
    SharedMemory,
    Registers,
    Name,
    DeviceType,
    DeviceId,
    Addr,
    MemBytes,
    OutNelems,
    InNelems,
}

impl ArgKey {
    /// Most keys are none of these: told apart on length first, then by
    /// comparisons of known length, which compile to a few word compares.
    #[inline(always)]
    pub fn of(key: &[u8]) -> Option<ArgKey> {
        Some(match key.len() {
            11 => match key {
                b"External id" | b"external id" => ArgKey::ExternalId,
                b"correlation" => ArgKey::Correlation,
                b"Device Type" => ArgKey::DeviceType,
                _ => return None,
            },
            6 => match key {
                b"stream" => ArgKey::Stream,
                b"device" => ArgKey::Device,
                _ => return None,
            },
            5 => match key {
                b"bytes" => ArgKey::Bytes,
                b"block" => ArgKey::Block,
                b"Bytes" => ArgKey::MemBytes,
                _ => return None,
            },
            4 => match key {
                b"grid" => ArgKey::Grid,
                b"name" => ArgKey::Name,
                b"Addr" => ArgKey::Addr,
                _ => return None,
            },
            13 => match key {
                b"shared memory" => ArgKey::SharedMemory,
                b"In msg nelems" => ArgKey::InNelems,
                _ => return None,
            },
            14 if key == b"Out msg nelems" => ArgKey::OutNelems,
            20 if key == b"registers per thread" => ArgKey::Registers,
            9 if key == b"Device Id" => ArgKey::DeviceId,
            _ => return None,
        })
    }
}

impl Args<'_> {
    /// Sets an integer-valued key (the others are set directly).
    pub fn set_int(&mut self, k: ArgKey, v: Option<i64>) {
        match k {
            ArgKey::Correlation => self.correlation = v,
            ArgKey::ExternalId => self.external_id = v,
            ArgKey::Device => self.device = v,
            ArgKey::Stream => self.stream = v,
            ArgKey::Bytes => self.bytes = v,
            ArgKey::SharedMemory => self.shared_memory = v,
            ArgKey::Registers => self.registers = v,
            ArgKey::DeviceType => self.device_type = v,
            ArgKey::DeviceId => self.device_id = v,
            ArgKey::Addr => self.addr = v,
            ArgKey::MemBytes => self.mem_bytes = v,
            ArgKey::OutNelems => self.msg_nelems = v.or(self.msg_nelems),
            ArgKey::InNelems => self.msg_nelems = self.msg_nelems.or(v),
            ArgKey::Grid | ArgKey::Block | ArgKey::Name => {}
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Args<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ArgsVisitor(std::marker::PhantomData))
    }
}

struct ArgsVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for ArgsVisitor<'a> {
    type Value = Args<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("event args")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Args<'a>, A::Error> {
        let mut a = Args::default();
        while let Some(Key(key)) = map.next_key::<Key>()? {
            match ArgKey::of(&key) {
                Some(ArgKey::Grid) => a.grid = map.next_value::<Loose>()?.dim3(),
                Some(ArgKey::Block) => a.block = map.next_value::<Loose>()?.dim3(),
                Some(ArgKey::Name) => {
                    if let Loose::Str(s) = map.next_value::<Loose>()? {
                        a.name = Some(s);
                    }
                }
                Some(k) => a.set_int(k, map.next_value::<Loose>()?.int()),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(a)
    }

    // Any other shape: nothing we use.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Args<'a>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Args::default())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Args<'a>, E> {
        Ok(Args::default())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Args<'a>, E> {
        Ok(Args::default())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Args<'a>, E> {
        Ok(Args::default())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Args<'a>, E> {
        Ok(Args::default())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Args<'a>, E> {
        Ok(Args::default())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Args<'a>, E> {
        Ok(Args::default())
    }
}

/// An args value of any type, keeping only what can become an integer, a
/// string or a 3-vector.
enum Loose<'a> {
    Int(i64),
    Float(f64),
    Str(Cow<'a, str>),
    Dim3(Option<[u32; 3]>),
    Other,
}

impl Loose<'_> {
    fn int(self) -> Option<i64> {
        match self {
            Loose::Int(v) => Some(v),
            Loose::Float(v) if v.fract() == 0.0 && v.abs() < 9.0e18 => Some(v as i64),
            Loose::Str(s) => parse_int_text(&s),
            _ => None,
        }
    }

    fn dim3(self) -> Option<[u32; 3]> {
        match self {
            Loose::Dim3(d) => d,
            _ => None,
        }
    }
}

/// "2560", "0x7fda0e810200", " 7 " -> integers; anything else -> None.
pub fn parse_int_text(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok().map(|v| v as i64);
    }
    s.parse().ok()
}

impl<'de> Deserialize<'de> for Loose<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Loose<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Loose<'de>, E> {
                Ok(Loose::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Loose<'de>, E> {
                // Pointers and u64::MAX-style sentinels keep their bits.
                Ok(Loose::Int(v as i64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Loose<'de>, E> {
                Ok(Loose::Float(v))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Loose<'de>, E> {
                Ok(Loose::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Loose<'de>, E> {
                Ok(Loose::Other)
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Loose<'de>, E> {
                Ok(Loose::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Loose<'de>, E> {
                Ok(Loose::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Loose<'de>, A::Error> {
                let mut out = [1u32; 3];
                let mut n = 0usize;
                let mut ok = true;
                while let Some(v) = seq.next_element::<Loose>()? {
                    match v.int().and_then(|x| u32::try_from(x).ok()) {
                        Some(x) if n < 3 => out[n] = x,
                        _ => ok = false,
                    }
                    n += 1;
                }
                Ok(Loose::Dim3((ok && n > 0).then_some(out)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Loose<'de>, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Loose::Other)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kept_arg_key_is_recognised() {
        for (key, want) in [
            ("correlation", ArgKey::Correlation),
            ("External id", ArgKey::ExternalId),
            ("external id", ArgKey::ExternalId),
            ("device", ArgKey::Device),
            ("stream", ArgKey::Stream),
            ("bytes", ArgKey::Bytes),
            ("grid", ArgKey::Grid),
            ("block", ArgKey::Block),
            ("shared memory", ArgKey::SharedMemory),
            ("registers per thread", ArgKey::Registers),
            ("name", ArgKey::Name),
            ("Device Type", ArgKey::DeviceType),
            ("Device Id", ArgKey::DeviceId),
            ("Addr", ArgKey::Addr),
            ("Bytes", ArgKey::MemBytes),
            ("Out msg nelems", ArgKey::OutNelems),
            ("In msg nelems", ArgKey::InNelems),
        ] {
            assert_eq!(ArgKey::of(key.as_bytes()), Some(want), "{key}");
        }
        for other in [
            "correlatioN",
            "Ev Idx",
            "",
            "streams",
            "Device Idx",
            "Device Iz",
            "shared memorx",
            "registers per threax",
            "nam",
            "blocK",
            "Addr ",
        ] {
            assert_eq!(ArgKey::of(other.as_bytes()), None, "{other}");
        }
    }

    fn ev(s: &str) -> Result<RawEvent<'_>, serde_json::Error> {
        serde_json::from_str(s)
    }

    #[test]
    fn reads_kernel_event() {
        let e = ev(r#"{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1.5,"dur":2,
            "args":{"device":0,"stream":7,"correlation":9,"grid":[2,1,1],"block":[128,1,1],"x":{"y":[1]}}}"#)
        .unwrap();
        assert_eq!(e.ts, Some(Nanos(1500)));
        assert_eq!(e.dur, Some(Nanos(2000)));
        assert_eq!(e.args.correlation, Some(9));
        assert_eq!(e.args.grid, Some([2, 1, 1]));
        assert_eq!(e.pid.and_then(|p| p.as_int()), Some(0));
    }

    #[test]
    fn args_of_any_shape() {
        for a in [
            "null",
            "[1,2]",
            "\"s\"",
            "3",
            "true",
            "{}",
            r#"{"stream":"0x0","bytes":"12"}"#,
        ] {
            let s = format!(r#"{{"ph":"X","ts":1,"args":{a}}}"#);
            assert!(ev(&s).is_ok(), "{a}");
        }
        let e = ev(r#"{"args":{"stream":"0x0","bytes":"12","device":[1],"correlation":null}}"#)
            .unwrap();
        assert_eq!(e.args.stream, Some(0));
        assert_eq!(e.args.bytes, Some(12));
        assert_eq!(e.args.device, None);
        assert_eq!(e.args.correlation, None);
    }

    #[test]
    fn quoted_times() {
        let e = ev(r#"{"ts":"12.5","dur":"3"}"#).unwrap();
        assert_eq!((e.ts, e.dur), (Some(Nanos(12_500)), Some(Nanos(3_000))));
    }

    #[test]
    fn string_ids() {
        let e = ev(r#"{"pid":"Spans","tid":"stream 7"}"#).unwrap();
        assert_eq!(e.tid.and_then(|t| t.as_int()), Some(7));
        assert_eq!(e.pid.and_then(|t| t.as_int()), None);
    }

    #[test]
    fn wrong_types_are_errors() {
        assert!(ev(r#"{"ts":"soon"}"#).is_err());
        assert!(ev(r#"{"ts":"1\\2"}"#).is_err());
        assert!(ev(r#"{"dur":[1]}"#).is_err());
        assert!(ev(r#"{"name":5}"#).is_err());
        assert!(ev(r#"{"pid":{}}"#).is_err());
    }
}
