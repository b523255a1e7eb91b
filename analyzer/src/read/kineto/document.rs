//! The top level of a Chrome-trace document, walked without building a
//! `serde_json::Value` of it: `traceEvents` is fed to the builder one event at
//! a time, the small metadata keys are read whole, everything else is skipped
//! (but still checked for syntax).

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::builder::Builder;
use super::event::{EventSeed, RawEvent};
use super::meta::Meta;

/// Parses `text` into the builder; returns the metadata and whether a
/// `traceEvents` array (or a top-level event array) was seen.
pub fn parse(text: &[u8], builder: &mut Builder) -> Result<(Meta, bool), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(text);
    let mut meta = Meta::default();
    let found = de.deserialize_any(DocVisitor {
        builder,
        meta: &mut meta,
    })?;
    de.end()?;
    Ok((meta, found))
}

struct DocVisitor<'b> {
    builder: &'b mut Builder,
    meta: &'b mut Meta,
}

impl<'de> Visitor<'de> for DocVisitor<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Chrome trace: an object with `traceEvents`, or an array of events")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut found = false;
        while let Some(key) = map.next_key::<super::event::Str<'de>>()? {
            match &*key {
                "traceEvents" => {
                    map.next_value_seed(Events {
                        builder: self.builder,
                    })?;
                    found = true;
                }
                "deviceProperties" => self.meta.device_properties(&map.next_value::<Value>()?),
                "distributedInfo" => self.meta.distributed_info(&map.next_value::<Value>()?),
                "baseTimeNanoseconds" => self.meta.base_time(&map.next_value::<Value>()?),
                "host_name" => self.meta.host_name(&map.next_value::<Value>()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(found)
    }

    // The Chrome trace "JSON Array Format": the document is the event list.
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<bool, A::Error> {
        EventsVisitor {
            builder: self.builder,
        }
        .visit_seq(seq)?;
        Ok(true)
    }
}

/// Parses a piece of the event array (itself a JSON array, whose `[` is
/// implied unless `opened`) into a new builder: with the fast scanner, or
/// with serde where that declines.
pub fn parse_piece(text: &[u8], name: &str, opened: bool) -> Option<Builder> {
    let mut b = Builder::new(name.to_owned());
    if super::fast::parse_array(text, opened, &mut b).is_ok() {
        return Some(b);
    }
    let mut b = Builder::new(name.to_owned());
    let ok = if opened {
        parse_array(text, &mut b)
    } else {
        // Rare (exotic JSON the scanner declines): a copy with its `[`.
        parse_array(&super::cuts::with_open(text), &mut b)
    };
    ok.ok().map(|_| b)
}

/// Parses `text`, a JSON array of events, into the builder.
pub fn parse_array(text: &[u8], builder: &mut Builder) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(text);
    de.deserialize_seq(EventsVisitor { builder })?;
    de.end()
}

struct Events<'b> {
    builder: &'b mut Builder,
}

impl<'de> DeserializeSeed<'de> for Events<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(EventsVisitor {
            builder: self.builder,
        })
    }
}

pub struct EventsVisitor<'b> {
    pub builder: &'b mut Builder,
}

impl<'de> Visitor<'de> for EventsVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of trace events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut ev = RawEvent::default();
        while seq.next_element_seed(EventSeed { ev: &mut ev })?.is_some() {
            self.builder.add(&ev);
        }
        Ok(())
    }

    // `"traceEvents": null` is an empty trace, not corruption.
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}
