#!/usr/bin/env python3
"""Checks a stallscope .pftrace by decoding it with Perfetto's official schema.

usage: check_trace.py TRACE [EXPECTED.json] [--dump OUT.txt] [--trace-processor]

Checks: the first packet clears incremental state and carries the clock
snapshot; one trusted_packet_sequence_id; timestamps (through the sequence's
incremental clock) never go back; interned ids are defined before use, never
redefined differently, and packets using them say SEQ_NEEDS_INCREMENTAL_STATE;
every track_uuid used is described first (parents too); every slice BEGIN has
its END on the same track; counter events sit on counter tracks; every flow id
leaves exactly one slice and ends at exactly one. EXPECTED.json (written by the
Rust tests from the timeline model) gives counts and total durations per
category, flows, track/process/thread names, names and args that must appear,
and counter bounds.

--dump writes a readable listing of every packet (used for golden files).
--trace-processor additionally loads the file with perfetto's TraceProcessor
(it downloads trace_processor_shell once; needs network) and fails on import
errors in its `stats` table.

Exit status: 0 ok, 1 check failed, 2 usage, 3 missing dependency.
"""

import json
import sys

try:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
except ImportError as e:  # CI installs them; never pass silently without them.
    sys.stderr.write(
        "check_trace.py: cannot import perfetto's trace schema (%s).\n"
        "Run: pip install perfetto protobuf\n" % e
    )
    sys.exit(3)

TP = pb.TracePacket
TE = pb.TrackEvent
CLEARED = TP.SEQ_INCREMENTAL_STATE_CLEARED
NEEDS = TP.SEQ_NEEDS_INCREMENTAL_STATE
MONOTONIC = pb.BUILTIN_CLOCK_MONOTONIC


class Checker:
    def __init__(self):
        self.errors = []
        self.dump = []
        self.seq = None
        self.clocks = {}  # clock id -> [is_incremental, snapshot value, running value]
        self.default_clock = None
        self.last_ts = None
        self.interned = {k: {} for k in ("name", "cat", "arg", "str")}
        self.tracks = {}  # uuid -> dict
        self.stacks = {}  # uuid -> [(ts, name, cat, args)]
        self.by_cat = {}  # category -> [count, total dur]
        self.names = set()
        self.args_by_name = {}  # slice name -> set of arg names
        self.flow_starts = {}
        self.flow_ends = {}
        self.counters = {}  # uuid -> [values]
        self.instants = 0

    def err(self, msg):
        if len(self.errors) < 50:
            self.errors.append(msg)

    # ---- clock ----
    def snapshot(self, i, p):
        cs = p.clock_snapshot
        if cs.primary_trace_clock != MONOTONIC:
            self.err("packet %d: primary_trace_clock %d, want MONOTONIC" % (i, cs.primary_trace_clock))
        for c in cs.clocks:
            self.clocks[c.clock_id] = [c.is_incremental, c.timestamp, c.timestamp]
            if c.is_incremental and not 64 <= c.clock_id <= 127:
                self.err("packet %d: incremental clock %d is not sequence-scoped" % (i, c.clock_id))
        if MONOTONIC not in self.clocks:
            self.err("packet %d: clock snapshot lacks MONOTONIC" % i)
        desc = ", ".join(
            "%d=%d%s" % (c.clock_id, c.timestamp, " incremental" if c.is_incremental else "")
            for c in cs.clocks
        )
        self.dump.append("clock_snapshot primary=%d clocks: %s" % (cs.primary_trace_clock, desc))

    def time(self, i, p):
        clock = p.timestamp_clock_id if p.HasField("timestamp_clock_id") else self.default_clock
        if clock is None or clock not in self.clocks:
            self.err("packet %d: timestamp on clock %s without a snapshot" % (i, clock))
            return 0
        c = self.clocks[clock]
        value = c[2] + p.timestamp if c[0] else p.timestamp
        c[2] = value
        ts = self.clocks[MONOTONIC][1] + (value - c[1])
        if self.last_ts is not None and ts < self.last_ts:
            self.err("packet %d: time goes back (%d < %d)" % (i, ts, self.last_ts))
        self.last_ts = ts
        return ts

    # ---- interning ----
    def intern(self, i, p):
        d = p.interned_data
        for kind, entries in (
            ("name", d.event_names),
            ("cat", d.event_categories),
            ("arg", d.debug_annotation_names),
        ):
            for e in entries:
                self.define(i, kind, e.iid, e.name)
        for e in d.debug_annotation_string_values:
            self.define(i, "str", e.iid, e.str.decode("utf-8", "replace"))

    def define(self, i, kind, iid, value):
        if iid == 0:
            self.err("packet %d: interned %s with iid 0" % (i, kind))
        old = self.interned[kind].get(iid)
        if old is not None and old != value:
            self.err("packet %d: %s iid %d redefined (%r -> %r)" % (i, kind, iid, old, value))
        self.interned[kind][iid] = value

    def lookup(self, i, kind, iid, uses):
        uses[0] = True
        v = self.interned[kind].get(iid)
        if v is None:
            self.err("packet %d: %s iid %d not defined" % (i, kind, iid))
            return "?"
        return v

    # ---- tracks ----
    def describe(self, i, p):
        d = p.track_descriptor
        if d.uuid in self.tracks:
            self.err("packet %d: track %d described twice" % (i, d.uuid))
        if d.HasField("parent_uuid") and d.parent_uuid not in self.tracks:
            self.err("packet %d: track %d has undescribed parent %d" % (i, d.uuid, d.parent_uuid))
        t = {"name": d.name, "counter": d.HasField("counter"), "parent": d.parent_uuid}
        if d.HasField("process"):
            t["name"] = d.process.process_name
            t["pid"] = d.process.pid
            kind = "process pid=%d" % d.process.pid
        elif d.HasField("thread"):
            t["name"] = d.thread.thread_name
            t["tid"] = d.thread.tid
            kind = "thread pid=%d tid=%d" % (d.thread.pid, d.thread.tid)
        elif d.HasField("counter"):
            kind = "counter unit=%d unit_name=%r" % (d.counter.unit, d.counter.unit_name)
        else:
            kind = "track"
        self.tracks[d.uuid] = t
        self.dump.append(
            "track %d %s name=%r parent=%d rank=%d"
            % (d.uuid, kind, t["name"], d.parent_uuid, d.sibling_order_rank)
        )

    # ---- events ----
    def event(self, i, p, ts):
        e = p.track_event
        uses = [False]
        uuid = e.track_uuid
        track = self.tracks.get(uuid)
        if track is None:
            self.err("packet %d: track_uuid %d not described" % (i, uuid))
            track = {"name": "?", "counter": False}
        if e.type == TE.TYPE_COUNTER:
            if not track["counter"]:
                self.err("packet %d: counter event on non-counter track %d" % (i, uuid))
            v = e.double_counter_value if e.HasField("double_counter_value") else e.counter_value
            self.counters.setdefault(uuid, []).append(v)
            self.dump.append("@%d C track=%d %r" % (ts, uuid, v))
            return uses[0]
        if track["counter"]:
            self.err("packet %d: slice event on counter track %d" % (i, uuid))
        if e.type == TE.TYPE_SLICE_END:
            stack = self.stacks.get(uuid)
            if not stack:
                self.err("packet %d: END without BEGIN on track %d" % (i, uuid))
            else:
                t0, name, cat = stack.pop()
                if ts < t0:
                    self.err("packet %d: %r ends before it begins" % (i, name))
                c = self.by_cat.setdefault(cat, [0, 0])
                c[0] += 1
                c[1] += ts - t0
            self.dump.append("@%d E track=%d" % (ts, uuid))
            return uses[0]
        if e.type not in (TE.TYPE_SLICE_BEGIN, TE.TYPE_INSTANT):
            self.err("packet %d: unexpected event type %d" % (i, e.type))
            return uses[0]
        name = self.lookup(i, "name", e.name_iid, uses) if e.HasField("name_iid") else e.name
        cats = [self.lookup(i, "cat", c, uses) for c in e.category_iids] + list(e.categories)
        cat = ",".join(cats)
        args = []
        for a in e.debug_annotations:
            an = self.lookup(i, "arg", a.name_iid, uses) if a.HasField("name_iid") else a.name
            which = a.WhichOneof("value")
            if which == "string_value_iid":
                v = repr(self.lookup(i, "str", a.string_value_iid, uses))
            elif which == "pointer_value":
                v = hex(a.pointer_value)
            else:
                v = repr(getattr(a, which)) if which else "None"
            args.append((an, v))
        self.names.add(name)
        self.args_by_name.setdefault(name, set()).update(a for a, _ in args)
        for f in e.flow_ids:
            self.flow_starts[f] = self.flow_starts.get(f, 0) + 1
        for f in e.terminating_flow_ids:
            self.flow_ends[f] = self.flow_ends.get(f, 0) + 1
        if e.type == TE.TYPE_SLICE_BEGIN:
            self.stacks.setdefault(uuid, []).append((ts, name, cat))
            tag = "B"
        else:
            self.instants += 1
            tag = "I"
        line = "@%d %s track=%d %r cat=%s" % (ts, tag, uuid, name, cat)
        if args:
            line += " {" + ", ".join("%s: %s" % a for a in args) + "}"
        if e.flow_ids:
            line += " flows_out=%s" % list(e.flow_ids)
        if e.terminating_flow_ids:
            line += " flows_in=%s" % list(e.terminating_flow_ids)
        self.dump.append(line)
        return uses[0]

    def run(self, data):
        trace = pb.Trace()
        try:
            trace.ParseFromString(data)
        except Exception as e:  # noqa: BLE001 - any decode failure is a finding
            self.err("not a valid Trace: %s" % e)
            return
        if not trace.packet:
            self.err("no packets")
            return
        for i, p in enumerate(trace.packet):
            if self.seq is None:
                self.seq = p.trusted_packet_sequence_id
                if not self.seq:
                    self.err("packet 0: no trusted_packet_sequence_id")
                if not p.sequence_flags & CLEARED:
                    self.err("packet 0: SEQ_INCREMENTAL_STATE_CLEARED not set")
                if not p.HasField("clock_snapshot"):
                    self.err("packet 0: no clock snapshot")
            elif p.trusted_packet_sequence_id != self.seq:
                self.err("packet %d: sequence %d, want %d" % (i, p.trusted_packet_sequence_id, self.seq))
            if p.HasField("trace_packet_defaults"):
                if not p.sequence_flags & CLEARED:
                    self.err("packet %d: defaults without clearing incremental state" % i)
                self.default_clock = p.trace_packet_defaults.timestamp_clock_id
            uses = False
            if p.HasField("interned_data"):
                uses = True
                self.intern(i, p)
            if p.HasField("clock_snapshot"):
                self.snapshot(i, p)
            if p.HasField("track_descriptor"):
                self.describe(i, p)
            if p.HasField("track_event"):
                if not p.HasField("timestamp"):
                    self.err("packet %d: track event without timestamp" % i)
                ts = self.time(i, p)
                uses = self.event(i, p, ts) or uses
            if uses and not p.sequence_flags & (NEEDS | CLEARED):
                self.err("packet %d: uses interned data without SEQ_NEEDS_INCREMENTAL_STATE" % i)
        for uuid, stack in self.stacks.items():
            for ts, name, _ in stack:
                self.err("track %d: %r (at %d) never ends" % (uuid, name, ts))
        for f in set(self.flow_starts) | set(self.flow_ends):
            s, e = self.flow_starts.get(f, 0), self.flow_ends.get(f, 0)
            if (s, e) != (1, 1):
                self.err("flow %d: %d starts and %d ends, want 1 and 1" % (f, s, e))

    # ---- expectations from the Rust side ----
    def expect(self, exp):
        for cat, want in sorted(exp.get("categories", {}).items()):
            got = self.by_cat.get(cat, [0, 0])
            if got != [want["count"], want["dur_ns"]]:
                self.err(
                    "category %s: %d slices, %d ns; want %d, %d ns"
                    % (cat, got[0], got[1], want["count"], want["dur_ns"])
                )
        extra = set(self.by_cat) - set(exp.get("categories", {}))
        if "categories" in exp and extra:
            self.err("unexpected categories: %s" % sorted(extra))
        if "flows" in exp:
            connected = sum(1 for f in self.flow_ends if self.flow_starts.get(f) == 1)
            if connected != exp["flows"]:
                self.err("flows: %d connected, want %d" % (connected, exp["flows"]))
        if "instants" in exp and self.instants != exp["instants"]:
            self.err("instants: %d, want %d" % (self.instants, exp["instants"]))
        names = [t["name"] for t in self.tracks.values()]
        for n in exp.get("tracks", []):
            if n not in names:
                self.err("no track named %r (have %s)" % (n, sorted(set(names))))
        lanes = sum(1 for n in names if "(overlap " in n)
        if "lanes" in exp and lanes != exp["lanes"]:
            self.err("overlap lanes: %d, want %d" % (lanes, exp["lanes"]))
        pids = {t["pid"]: t["name"] for t in self.tracks.values() if "pid" in t}
        for pid, name in exp.get("processes", {}).items():
            if pids.get(int(pid)) != name:
                self.err("process %s named %r, want %r" % (pid, pids.get(int(pid)), name))
        tids = {t["tid"]: t["name"] for t in self.tracks.values() if "tid" in t}
        for tid, name in exp.get("threads", {}).items():
            if tids.get(int(tid)) != name:
                self.err("thread %s named %r, want %r" % (tid, tids.get(int(tid)), name))
        for n in exp.get("names", []):
            if n not in self.names:
                self.err("no slice named %r" % n)
        for n, want in exp.get("args", {}).items():
            missing = set(want) - self.args_by_name.get(n, set())
            if missing:
                self.err("slice %r lacks args %s" % (n, sorted(missing)))
        by_name = {}
        for uuid, values in self.counters.items():
            by_name.setdefault(self.tracks[uuid]["name"], []).extend(values)
        for n in exp.get("counters", []):
            if not by_name.get(n):
                self.err("no points on counter %r (have %s)" % (n, sorted(by_name)))
        for n, (lo, hi) in exp.get("counter_range", {}).items():
            vs = by_name.get(n, [])
            if vs and not (lo <= min(vs) and max(vs) <= hi):
                self.err("counter %r spans [%r, %r], want within [%r, %r]" % (n, min(vs), max(vs), lo, hi))
        for n, want in exp.get("counter_max", {}).items():
            vs = by_name.get(n, [])
            if not vs or max(vs) != want:
                self.err("counter %r max %r, want %r" % (n, max(vs) if vs else None, want))


def trace_processor_check(path, c):
    try:
        from perfetto.trace_processor import TraceProcessor
    except ImportError as e:
        c.err("--trace-processor: %s" % e)
        return
    tp = TraceProcessor(trace=path)
    try:
        bad = list(
            tp.query(
                "select name, idx, value from stats"
                " where severity in ('error', 'data_loss') and value > 0"
            )
        )
        for r in bad:
            c.err("trace_processor stat %s[%s] = %s" % (r.name, r.idx, r.value))
        n = list(tp.query("select count(*) as n from slice"))[0].n
        want = sum(v[0] for v in c.by_cat.values()) + c.instants
        if n != want:
            c.err("trace_processor sees %d slices, want %d" % (n, want))
        flows = list(tp.query("select count(*) as n from flow"))[0].n
        if flows != len(c.flow_ends):
            c.err("trace_processor sees %d flows, want %d" % (flows, len(c.flow_ends)))
        print("trace_processor: %d slices, %d flows, no import errors" % (n, flows))
    finally:
        tp.close()


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    dump_out = None
    if "--dump" in argv:
        k = argv.index("--dump")
        if k + 1 >= len(argv):
            sys.stderr.write(__doc__)
            return 2
        dump_out = argv[k + 1]
        args.remove(dump_out)
    if len(args) not in (1, 2):
        sys.stderr.write(__doc__)
        return 2
    c = Checker()
    with open(args[0], "rb") as f:
        c.run(f.read())
    if len(args) == 2:
        with open(args[1]) as f:
            c.expect(json.load(f))
    if "--trace-processor" in argv:
        trace_processor_check(args[0], c)
    if dump_out:
        with open(dump_out, "w") as f:
            f.write("\n".join(c.dump) + "\n")
    cats = ", ".join("%s %d" % (k, v[0]) for k, v in sorted(c.by_cat.items()))
    print(
        "%s: %d tracks, slices by category: %s; %d flows, %d counter points"
        % (args[0], len(c.tracks), cats or "none", len(c.flow_ends), sum(map(len, c.counters.values())))
    )
    if c.errors:
        sys.stderr.write("FAILED:\n  " + "\n  ".join(c.errors) + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
