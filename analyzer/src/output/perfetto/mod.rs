//! Perfetto trace (protobuf TracePacket/TrackEvent) writer.
