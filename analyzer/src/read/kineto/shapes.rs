//! Property test: on generated traces of every shape the writers produce
//! (Kineto's pretty layout, `json.dump` with and without indent, compact
//! JSON, bare event arrays of autograd-profiler exports, `traceEvents` after
//! other keys, escapes, quoted and float times, string and float ids, nested
//! `args`), every fast path reads exactly what the serde reference reads.

use std::fmt::Write as _;
use std::io::Write as _;

use proptest::prelude::*;

use super::builder::Builder;
use super::{ReadOptions, cuts, document, fast, parallel, source, stream};

/// How the document is laid out.
#[derive(Debug, Clone, Copy)]
enum Layout {
    /// Kineto: `[\n  {\n    "ph": "X", ...`.
    Kineto,
    /// Kineto 0.1 (the TensorBoard plugin's samples): a blank line
    /// between `[` and the first event only.
    Kineto01,
    /// `json.dump(d)`: `[{"ph": "X", ...}, {...}]`.
    PyDefault,
    /// `json.dump(d, indent=4)`.
    PyIndent,
    /// `separators=(",", ":")`.
    Compact,
}

#[derive(Debug, Clone)]
struct Shape {
    layout: Layout,
    /// A bare event array instead of an object.
    bare: bool,
    /// `traceEvents` after the metadata keys instead of before.
    events_last: bool,
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        prop_oneof![
            Just(Layout::Kineto),
            Just(Layout::Kineto01),
            Just(Layout::PyDefault),
            Just(Layout::PyIndent),
            Just(Layout::Compact)
        ],
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(layout, bare, events_last)| Shape {
            layout,
            bare,
            events_last,
        })
}

/// One event as (key, JSON value) pairs, in writing order.
type Fields = Vec<(&'static str, String)>;

fn time() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u64..1 << 52).prop_map(|v| v.to_string()),
        (0u64..1 << 40, 0u32..1000).prop_map(|(a, b)| format!("{a}.{b:03}")),
        (0u64..1 << 40, 0u32..1_000_000).prop_map(|(a, b)| format!("{a}.{b:06}")),
        (1u32..999, 0u32..99).prop_map(|(a, b)| format!("{a}.{b}e3")),
        (0u64..1 << 40, 0u32..1000).prop_map(|(a, b)| format!("\"{a}.{b}\"")),
        Just("null".to_owned()),
    ]
}

fn id() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0i64..70_000).prop_map(|v| v.to_string()),
        1 => (0i64..9).prop_map(|v| format!("{v}.0")),
        1 => Just("\"CPU functions\"".to_owned()),
        1 => (0u32..20).prop_map(|v| format!("\"stream {v}\"")),
        1 => (0u32..99).prop_map(|v| format!("\"{v}\"")),
        1 => Just("-0".to_owned()),
    ]
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\"aten::mm\"".to_owned()),
        Just("\"hipLaunchKernel\"".to_owned()),
        Just("\"cudaLaunchKernel\"".to_owned()),
        Just("\"ProfilerStep#3\"".to_owned()),
        Just("\"void at::native::kernel<float, 4>(int*)\"".to_owned()),
        Just("\"Cijk_Ailk_Bljk_HHS_BH_MT128x128x32\"".to_owned()),
        Just("\"nccl:all_reduce\"".to_owned()),
        Just("\"a \\\"quoted\\\" \\u00e9\\n\\ud83d\\ude00 name\"".to_owned()),
        Just("\"Memcpy HtoD (Pageable -> Device)\"".to_owned()),
        Just("\"caf\u{e9} \u{2192}\"".to_owned()),
    ]
}

fn cat() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\"kernel\""),
        Just("\"Kernel\""),
        Just("\"cpu_op\""),
        Just("\"Operator\""),
        Just("\"cuda_runtime\""),
        Just("\"Runtime\""),
        Just("\"cuda_driver\""),
        Just("\"python_function\""),
        Just("\"user_annotation\""),
        Just("\"gpu_memcpy\""),
        Just("\"Memcpy\""),
        Just("\"gpu_memset\""),
        Just("\"cuda_sync\""),
        Just("\"gpu_user_annotation\""),
        Just("\"ac2g\""),
        Just("\"unknown\""),
    ]
    .prop_map(str::to_owned)
}

/// An `args` value: the keys the reader uses in every type writers use, and
/// nested values it skips.
fn args() -> impl Strategy<Value = String> {
    let int_like = prop_oneof![
        (0i64..1 << 40).prop_map(|v| v.to_string()),
        (0i64..64).prop_map(|v| format!("\"{v}\"")),
        (0u64..1 << 40).prop_map(|v| format!("\"0x{v:x}\"")),
        (0i64..64).prop_map(|v| format!("{v}.0")),
        Just("2.5".to_owned()),
        Just("18446744073709551615".to_owned()),
        Just("-0".to_owned()),
        Just("null".to_owned()),
        Just("[1, 2]".to_owned()),
    ];
    let dim = prop_oneof![
        (1u32..512, 1u32..4, 1u32..2).prop_map(|(a, b, c)| format!("[{a}, {b}, {c}]")),
        Just("[\"64\", 1.0, 1]".to_owned()),
        Just("[]".to_owned()),
        Just("[1, [2], null]".to_owned()),
        Just("[-1, 1, 1]".to_owned()),
        Just("\"[1, 1, 1]\"".to_owned()),
    ];
    let nested = prop_oneof![
        Just("[[64, 64], [], [\"a\", {\"b\": [true, false, null]}]]".to_owned()),
        Just("{\"x\": {\"y\": [1.5e-3, -2, \"\\u0041\"]}}".to_owned()),
        Just("\"\\\"escaped\\\"\"".to_owned()),
    ];
    let keys = prop_oneof![
        Just("correlation"),
        Just("External id"),
        Just("device"),
        Just("stream"),
        Just("bytes"),
        Just("Device Type"),
        Just("Device Id"),
        Just("Addr"),
        Just("Bytes"),
        Just("Out msg nelems"),
        Just("In msg nelems"),
    ];
    (
        proptest::collection::vec((keys, int_like), 0..5),
        proptest::option::of(dim.clone()),
        proptest::option::of(dim),
        proptest::option::of(nested),
        proptest::option::of(name()),
    )
        .prop_map(|(ints, grid, block, nested, nm)| {
            let mut f: Vec<(String, String)> =
                ints.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            if let Some(g) = grid {
                f.push(("grid".into(), g));
            }
            if let Some(b) = block {
                f.push(("block".into(), b));
            }
            if let Some(n) = nested {
                f.push(("Input Dims".into(), n));
            }
            if let Some(n) = nm {
                f.push(("name".into(), n));
            }
            let body: Vec<String> = f.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
            format!("{{{}}}", body.join(", "))
        })
}

fn event() -> impl Strategy<Value = Fields> {
    (
        prop_oneof![
            6 => Just("X"),
            1 => Just("i"),
            1 => Just("s"),
            1 => Just("f"),
            1 => Just("M"),
            1 => Just("C"),
            1 => Just("b"),
        ],
        name(),
        cat(),
        id(),
        id(),
        time(),
        time(),
        prop_oneof![3 => args(), 1 => Just("[1, {\"a\": null}]".to_owned()), 1 => Just("null".to_owned())],
        any::<bool>(),
    )
        .prop_map(|(ph, name, cat, pid, tid, ts, dur, args, ph_first)| {
            let mut f: Fields = vec![
                ("name", name),
                ("cat", cat),
                ("pid", pid),
                ("tid", tid),
                ("ts", ts),
                ("dur", dur),
                ("args", args),
            ];
            let ph = ("ph", format!("\"{ph}\""));
            if ph_first {
                f.insert(0, ph);
            } else {
                f.push(ph);
            }
            f
        })
}

/// Writes the events in `shape`, repeated (with shifted times where plain)
/// until the text passes `min_bytes`.
fn write(shape: &Shape, events: &[Fields], min_bytes: usize) -> Vec<u8> {
    let (nl, ind, colon, comma) = match shape.layout {
        Layout::Kineto | Layout::Kineto01 => ("\n", "  ", ": ", ","),
        Layout::PyDefault => ("", "", ": ", ", "),
        Layout::PyIndent => ("\n", "    ", ": ", ","),
        Layout::Compact => ("", "", ":", ","),
    };
    let depth = if shape.bare { 0 } else { 1 };
    let pad = |d: usize| format!("{nl}{}", ind.repeat(d));
    let mut evs = String::new();
    let mut round = 0u64;
    while evs.len() < min_bytes.max(1) {
        for e in events {
            if !evs.is_empty() {
                evs.push_str(comma);
            } else if matches!(shape.layout, Layout::Kineto01) {
                evs.push_str(&pad(depth + 1));
            }
            evs.push_str(&pad(depth + 1));
            evs.push('{');
            for (k, (key, v)) in e.iter().enumerate() {
                if k > 0 {
                    evs.push_str(comma);
                }
                evs.push_str(&pad(depth + 2));
                let v = match (*key, v.parse::<u64>()) {
                    ("ts", Ok(t)) => (t + round * 1_000_000).to_string(),
                    _ => v.clone(),
                };
                let _ = write!(evs, "\"{key}\"{colon}{v}");
            }
            evs.push_str(&pad(depth + 1));
            evs.push('}');
        }
        round += 1;
        if events.is_empty() {
            break;
        }
    }
    let array = format!("[{evs}{}]", pad(depth));
    if shape.bare {
        return array.into_bytes();
    }
    let meta = [
        format!("\"schemaVersion\"{colon}1"),
        format!(
            "\"deviceProperties\"{colon}[{{\"id\"{colon}0{comma}\"name\"{colon}\"AMD Instinct MI300X\"{comma}\"totalGlobalMem\"{colon}206141652992{comma}\"gcnArchName\"{colon}\"gfx942\"}}]"
        ),
        format!("\"distributedInfo\"{colon}{{\"rank\"{colon}3{comma}\"world_size\"{colon}8}}"),
    ];
    let tail = [
        format!("\"traceName\"{colon}\"x.json\""),
        format!("\"baseTimeNanoseconds\"{colon}1759300074000000000"),
    ];
    let mut keys: Vec<String> = meta.to_vec();
    let ev = format!("\"traceEvents\"{colon}{array}");
    if shape.events_last {
        keys.extend(tail.iter().cloned());
        keys.push(ev);
    } else {
        keys.push(ev);
        keys.extend(tail.iter().cloned());
    }
    let body: Vec<String> = keys.iter().map(|k| format!("{}{k}", pad(1))).collect();
    format!("{{{}{}}}", body.join(comma), pad(0)).into_bytes()
}

fn reference(text: &[u8]) -> String {
    let mut b = Builder::new("t".into());
    let (meta, found) = document::parse(text, &mut b).expect("generated traces are valid JSON");
    assert!(found);
    format!("{:?}", b.finish(meta))
}

fn gz(text: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(text).unwrap();
    e.finish().unwrap()
}

/// Whether the writer's separator between events is found, and cuts with
/// it, so `text` can be cut.
fn cuttable(text: &[u8]) -> bool {
    cuts::events_start(text).is_some_and(|(_, open, _)| {
        cuts::separator(text, open)
            .is_some_and(|sep| cuts::next_cut(text, open + 1, &sep).is_some())
    })
}

/// Every `,` followed by blanks and `{` after `open`: the real cuts between
/// events, and the false ones inside nested values and strings.
fn candidates(text: &[u8], open: usize) -> Vec<cuts::Cut> {
    let mut out = vec![];
    for (comma, _) in text
        .iter()
        .enumerate()
        .skip(open)
        .filter(|(_, b)| **b == b',')
    {
        let n = text[comma + 1..]
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
        if text.get(comma + 1 + n) == Some(&b'{') {
            out.push(cuts::Cut {
                comma,
                brace: comma + 1 + n,
            });
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// One pass: the scanner takes every shape and agrees with serde.
    #[test]
    fn one_pass_agrees(shape in shape(), events in proptest::collection::vec(event(), 0..40)) {
        let text = write(&shape, &events, 0);
        let want = reference(&text);
        let mut b = Builder::new("t".into());
        let (meta, found) = fast::parse_document(&text, &mut b)
            .map_err(|_| TestCaseError::fail(format!("fast path declined {shape:?}")))?;
        prop_assert!(found);
        prop_assert_eq!(format!("{:?}", b.finish(meta)), want);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, ..ProptestConfig::default() })]

    /// Large files: cut and parsed on several threads (memory and gzip
    /// stream), with the same result, in every layout.
    #[test]
    fn pieces_agree(shape in shape(), events in proptest::collection::vec(event(), 1..40)) {
        let text = write(&shape, &events, 5 << 20);
        let want = reference(&text);
        let split = cuttable(&text);
        prop_assert!(split, "{:?}", shape);
        let mut copy = text.clone();
        match parallel::parse(&mut copy, "t", 4) {
            Some((b, meta)) => prop_assert_eq!(format!("{:?}", b.finish(meta)), want.clone()),
            None => prop_assert!(!split, "not split in memory: {:?}", shape),
        }
        let z = gz(&text);
        match stream::parse(&z, "t") {
            Some((b, meta)) => prop_assert_eq!(format!("{:?}", b.finish(meta)), want.clone()),
            None => prop_assert!(!split, "not streamed: {:?}", shape),
        }
        // And the public entry points, whichever path they take.
        let tl = super::read_bytes("t", z).expect("reads");
        prop_assert_eq!(format!("{tl:?}"), want.clone());
        let one = super::read_raw(std::path::Path::new("t"), "t".into(), source::Text::Owned(text), &ReadOptions { threads: 1 }).expect("reads");
        prop_assert_eq!(format!("{one:?}"), want);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Any cuts, real or not (inside strings, nested `args`, anywhere a `,`
    /// precedes a `{`): the pieces read exactly what one pass reads, or
    /// decline with the text restored. Only real cuts, wherever they fall,
    /// are never declined.
    #[test]
    fn any_cut_agrees_or_declines(
        shape in shape(),
        events in proptest::collection::vec(event(), 1..12),
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 1..6),
    ) {
        let text = write(&shape, &events, 4 << 10);
        let want = reference(&text);
        let (_, open, bare) = cuts::events_start(&text).expect("an event array");
        let all = candidates(&text, open);
        prop_assume!(!all.is_empty());
        let mut points: Vec<cuts::Cut> = picks.iter().map(|i| *i.get(&all)).collect();
        points.sort_by_key(|c| c.comma);
        points.dedup_by_key(|c| c.comma);
        let read = |points: &[cuts::Cut]| {
            let mut copy = text.clone();
            let got = parallel::parse_at(&mut copy, "t", open, bare, points).map(|(b, tail)| {
                let mut meta = cuts::events_start(&text).expect("an event array").0;
                meta.overlay(tail);
                format!("{:?}", b.finish(meta))
            });
            (got, copy == text)
        };
        match read(&points) {
            (Some(got), _) => prop_assert_eq!(got, want.clone()),
            (None, restored) => prop_assert!(restored, "text not restored"),
        }
        // The real cuts, as the separator finds them, all parse.
        let sep = cuts::separator(&text, open).expect("a separator");
        let mut real = vec![];
        let mut from = open + 1;
        while let Some(c) = cuts::next_cut(&text, from, &sep) {
            from = c.brace + 1;
            real.push(c);
        }
        prop_assume!(!real.is_empty());
        let mut points: Vec<cuts::Cut> = picks.iter().map(|i| *i.get(&real)).collect();
        points.sort_by_key(|c| c.comma);
        points.dedup_by_key(|c| c.comma);
        let got = read(&points).0.ok_or_else(|| TestCaseError::fail(format!("real cuts declined {shape:?}")))?;
        prop_assert_eq!(got, want);
    }
}
