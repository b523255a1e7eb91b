//! Packet framing, the sequence's clock and flags, and write statistics.
//!
//! Timestamps use a sequence-scoped incremental clock (clock_snapshot.proto:
//! ids 64..127 are per sequence; `is_incremental` makes each packet's timestamp a
//! delta from the previous one). The merge feeds events in time order, so deltas
//! are small varints (1-3 bytes instead of 7-8 for absolute CLOCK_MONOTONIC ns).

use std::io::{self, Write};

use prost::Message;

use super::PerfettoStats;
use super::intern::Interner;
use super::proto::*;
use crate::model::Timeline;

/// Our one trusted_packet_sequence_id (1 is the tracing service's own).
const SEQUENCE_ID: u32 = 0x53;
/// The sequence-scoped incremental clock that every event packet uses.
const DELTA_CLOCK: u32 = 64;
/// Output is handed to the sink in chunks of about this size.
const FLUSH_AT: usize = 256 * 1024;
/// Progress is reported every this many model items.
const PROGRESS_EVERY: u64 = 1 << 16;

pub(super) struct PacketWriter<'a> {
    out: &'a mut dyn Write,
    buf: Vec<u8>,
    last_ts: i64,
    pub intern: Interner,
    /// The event packet being built, kept between events so that the hot loop
    /// neither allocates nor moves it; `emit` writes and resets it.
    event: TracePacket,
    /// Reusable text for names built on the fly ("Memcpy HtoD", "data/cpu").
    pub scratch: String,
    pub stats: PerfettoStats,
    progress: &'a dyn Fn(u64, u64),
    done: u64,
    total: u64,
    next_report: u64,
}

impl<'a> PacketWriter<'a> {
    pub fn new(
        out: &'a mut dyn Write,
        tl: &Timeline,
        progress: &'a dyn Fn(u64, u64),
    ) -> PacketWriter<'a> {
        PacketWriter {
            out,
            buf: Vec::with_capacity(FLUSH_AT + 4096),
            last_ts: 0,
            intern: Interner::new(tl),
            event: TracePacket {
                trusted_packet_sequence_id: Some(SEQUENCE_ID),
                track_event: Some(TrackEvent::default()),
                ..TracePacket::default()
            },
            scratch: String::new(),
            stats: PerfettoStats::default(),
            progress,
            done: 0,
            total: 0,
            next_report: PROGRESS_EVERY,
        }
    }

    /// The first packet: clears the sequence's incremental state, makes the
    /// delta clock the default for its packets, and ties that clock to
    /// CLOCK_MONOTONIC (the trace clock) and, when known, CLOCK_REALTIME.
    /// `origin` (the earliest event) becomes delta-clock 0. Timelines that
    /// start below 0 (possible for imported traces) are shifted to start at 0.
    pub fn header(&mut self, origin: i64, realtime_offset_ns: Option<i64>) -> io::Result<()> {
        let mono = origin.max(0);
        let mut clocks = vec![
            Clock {
                clock_id: Some(DELTA_CLOCK),
                timestamp: Some(0),
                is_incremental: Some(true),
            },
            Clock {
                clock_id: Some(BUILTIN_CLOCK_MONOTONIC),
                timestamp: Some(mono as u64),
                is_incremental: None,
            },
        ];
        let realtime = realtime_offset_ns.and_then(|off| mono.checked_add(off));
        if let Some(rt) = realtime.filter(|&rt| rt >= 0) {
            clocks.push(Clock {
                clock_id: Some(BUILTIN_CLOCK_REALTIME),
                timestamp: Some(rt as u64),
                is_incremental: None,
            });
        }
        self.last_ts = origin;
        self.packet(&TracePacket {
            trusted_packet_sequence_id: Some(SEQUENCE_ID),
            sequence_flags: Some(SEQ_INCREMENTAL_STATE_CLEARED),
            first_packet_on_sequence: Some(true),
            trace_packet_defaults: Some(TracePacketDefaults {
                timestamp_clock_id: Some(DELTA_CLOCK),
            }),
            clock_snapshot: Some(ClockSnapshot {
                clocks,
                primary_trace_clock: Some(BUILTIN_CLOCK_MONOTONIC as i32),
            }),
            ..TracePacket::default()
        })
    }

    pub fn descriptor(&mut self, desc: TrackDescriptor) -> io::Result<()> {
        self.stats.tracks += 1;
        self.packet(&TracePacket {
            trusted_packet_sequence_id: Some(SEQUENCE_ID),
            track_descriptor: Some(desc),
            ..TracePacket::default()
        })
    }

    /// The event being built.
    pub fn te(&mut self) -> &mut TrackEvent {
        self.event.track_event.get_or_insert_default()
    }

    /// Starts a slice or instant; the caller adds args, then `emit`s.
    pub fn start(&mut self, kind: i32, uuid: u64, name_iid: u64, category: &'static str) {
        let cat = self.intern.category(category);
        let te = self.te();
        te.r#type = Some(kind);
        te.track_uuid = Some(uuid);
        te.name_iid = Some(name_iid);
        te.category_iids.push(cat);
    }

    pub fn end(&mut self, ts: i64, uuid: u64) -> io::Result<()> {
        let te = self.te();
        te.r#type = Some(TYPE_SLICE_END);
        te.track_uuid = Some(uuid);
        self.emit(ts)
    }

    pub fn counter_f(&mut self, ts: i64, uuid: u64, value: f64) -> io::Result<()> {
        self.te().double_counter_value = Some(value);
        self.counter(ts, uuid)
    }

    pub fn counter_i(&mut self, ts: i64, uuid: u64, value: i64) -> io::Result<()> {
        self.te().counter_value = Some(value);
        self.counter(ts, uuid)
    }

    fn counter(&mut self, ts: i64, uuid: u64) -> io::Result<()> {
        self.stats.counters += 1;
        let te = self.te();
        te.r#type = Some(TYPE_COUNTER);
        te.track_uuid = Some(uuid);
        self.emit(ts)
    }

    /// Writes the event at `ts` and resets it. Callers emit in time order; a
    /// stray earlier `ts` is written at the previous time (deltas are unsigned).
    /// Only packets that use or define interned ids say
    /// SEQ_NEEDS_INCREMENTAL_STATE (as the interning docs ask); ENDs and
    /// counters save the two bytes.
    pub fn emit(&mut self, ts: i64) -> io::Result<()> {
        let delta = ts.saturating_sub(self.last_ts).max(0);
        self.last_ts = self.last_ts.saturating_add(delta);
        let interned = self.intern.take_pending();
        let uses_iids = interned.is_some() || self.te().name_iid.is_some();
        self.event.timestamp = Some(delta as u64);
        self.event.sequence_flags = uses_iids.then_some(SEQ_NEEDS_INCREMENTAL_STATE);
        self.event.interned_data = interned;
        let res = frame(&mut self.buf, &self.event);
        self.event.interned_data = None;
        self.te().reset();
        self.count(res?)
    }

    fn packet(&mut self, packet: &TracePacket) -> io::Result<()> {
        let len = frame(&mut self.buf, packet)?;
        self.count(len)
    }

    /// Counts a framed packet, handing the buffer to the sink when full.
    fn count(&mut self, len: usize) -> io::Result<()> {
        self.stats.packets += 1;
        self.stats.bytes += len as u64;
        if self.buf.len() >= FLUSH_AT {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    pub fn set_total(&mut self, total: u64) {
        self.total = total;
        (self.progress)(0, total);
    }

    /// Counts model items written, reporting progress now and then.
    pub fn advance(&mut self, items: u64) {
        self.done += items;
        if self.done >= self.next_report {
            self.next_report = self.done + PROGRESS_EVERY;
            (self.progress)(self.done.min(self.total), self.total);
        }
    }

    pub fn finish(self) -> io::Result<PerfettoStats> {
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        (self.progress)(self.total, self.total);
        Ok(self.stats)
    }
}

/// Appends `packet` as one `Trace.packet` record; returns its size.
fn frame(buf: &mut Vec<u8>, packet: &TracePacket) -> io::Result<usize> {
    let start = buf.len();
    buf.push(TRACE_PACKET_KEY);
    packet
        .encode_length_delimited(buf)
        .map_err(io::Error::other)?;
    Ok(buf.len() - start)
}
