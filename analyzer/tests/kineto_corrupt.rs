//! Corrupt input: an error naming the file and the byte offset, never a panic.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use stallscope_analyzer::read::kineto::{self, KinetoError};

fn sample() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kineto/new_format.json"))
        .unwrap()
}

fn sample_gz() -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kineto/new_format.json.gz"),
    )
    .unwrap()
}

/// Writes `bytes` to a file in a temp dir and reads it.
fn read_as(name: &str, bytes: &[u8]) -> (PathBuf, Result<(), KinetoError>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let r = kineto::read_file(&path).map(|_| ());
    (path, r, dir)
}

/// Asserts a JSON error for `path` whose offset lies in `range`.
fn assert_json_error(
    r: Result<(), KinetoError>,
    path: &Path,
    range: std::ops::RangeInclusive<u64>,
) {
    let e = r.expect_err("corrupt input must not read");
    let msg = e.to_string();
    assert!(
        msg.contains(&path.display().to_string()),
        "names the file: {msg}"
    );
    match &e {
        KinetoError::Json { offset, .. } => {
            assert!(
                range.contains(offset),
                "offset {offset} not in {range:?}: {msg}"
            );
            assert!(msg.contains(&format!("byte {offset}")), "{msg}");
        }
        other => panic!("expected a JSON error, got {other}"),
    }
    assert_eq!(e.path(), path);
}

#[test]
fn truncated_json() {
    let text = sample();
    for cut in [1, 10, text.len() / 3, text.len() / 2, text.len() - 2] {
        let (path, r, _d) = read_as("trace.json", &text[..cut]);
        // serde_json stops at the end of what is there.
        assert_json_error(r, &path, cut as u64 - 1..=cut as u64);
    }
}

#[test]
fn garbage_in_the_middle() {
    let mut text = sample();
    let at = text.len() / 2;
    let at = at + text[at..].iter().position(|&b| b == b'"').unwrap();
    text.splice(at..at, b"@#!".iter().copied());
    let (path, r, _d) = read_as("trace.json", &text);
    assert_json_error(r, &path, at as u64..=at as u64 + 3);
}

#[test]
fn wrong_types() {
    let text = String::from_utf8(sample()).unwrap();
    let cases = [
        // ts must be a number of microseconds.
        ("\"ts\": 1695835535000010.123", "\"ts\": \"soon\""),
        // name must be a string.
        ("\"name\": \"aten::mm\"", "\"name\": 42"),
        // an event must be an object.
        ("\"traceEvents\": [\n", "\"traceEvents\": [\n 7,\n"),
        // dur must be a number.
        ("\"dur\": 20.456", "\"dur\": [20]"),
    ];
    for (from, to) in cases {
        let at = text.find(from).unwrap_or_else(|| panic!("{from}"));
        let bad = text.replacen(from, to, 1);
        let (path, r, _d) = read_as("trace.json", bad.as_bytes());
        assert_json_error(r, &path, at as u64..=(at + to.len() + 1) as u64);
    }
    let (path, r, _d) = read_as("t.json", b"{\"traceEvents\": 5}");
    assert_json_error(r, &path, 15..=17);
}

#[test]
fn corrupt_gzip() {
    let gz = sample_gz();
    let (path, r, _d) = read_as("trace.json.gz", &gz[..gz.len() / 2]);
    let e = r.expect_err("truncated gzip");
    assert!(
        matches!(e, KinetoError::Gzip { offset, .. } if offset > 0),
        "{e}"
    );
    assert!(e.to_string().contains(&path.display().to_string()));

    let mut bad = gz.clone();
    for b in &mut bad[40..60] {
        *b ^= 0x5a;
    }
    let (_, r, _d) = read_as("trace.json.gz", &bad);
    assert!(
        matches!(
            r,
            Err(KinetoError::Gzip { .. }) | Err(KinetoError::Json { .. })
        ),
        "{r:?}"
    );
}

#[test]
fn not_a_trace_and_empty() {
    let (path, r, _d) = read_as("config.json", b"{\"lr\": 0.1}");
    assert!(matches!(r, Err(KinetoError::NotKineto { .. })), "{r:?}");
    assert!(
        r.unwrap_err()
            .to_string()
            .contains(&path.display().to_string())
    );
    let (path, r, _d) = read_as("empty.json", b"");
    assert_json_error(r, &path, 0..=0);
    let missing = kineto::read_file(Path::new("/nonexistent/x.json")).unwrap_err();
    assert!(matches!(missing, KinetoError::Io { .. }));
}

/// A large file takes the multi-threaded path; corruption found there is
/// still reported at its exact offset.
#[test]
fn corruption_in_a_large_file() {
    let mut text = String::from("{\"schemaVersion\": 1,\n  \"traceEvents\": [\n");
    for i in 0..60_000 {
        text.push_str(&format!(
            "  {{\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::op{}\", \"pid\": 1, \"tid\": 2,\n    \"ts\": {}.5, \"dur\": 3.25,\n    \"args\": {{\"External id\": {i}}}\n  }},\n",
            i % 97,
            1_000_000 + i * 10
        ));
    }
    text.push_str("  {\"ph\": \"i\", \"name\": \"end\", \"pid\": 1, \"tid\": 2, \"ts\": 0}\n  ],\n  \"traceName\": \"big\"\n}\n");
    assert!(text.len() > 5 << 20, "large enough for the parallel path");
    let (_, ok, _d) = read_as("big.json", text.as_bytes());
    ok.expect("the intact large file reads");

    let at = text.len() * 3 / 5;
    let at = at + text[at..].find("\"ts\": ").unwrap() + 6;
    let mut bad = text.into_bytes();
    bad[at] = b'x';
    let (path, r, _d) = read_as("big.json", &bad);
    assert_json_error(r, &path, at as u64..=at as u64 + 1);

    // Gzipped, it is inflated and parsed in a pipeline; the offset is in the
    // decompressed text.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &bad).unwrap();
    let (path, r, _d) = read_as("big.json.gz", &gz.finish().unwrap());
    let msg = r
        .as_ref()
        .map(|_| String::new())
        .unwrap_or_else(|e| e.to_string());
    assert!(msg.contains("of the decompressed JSON"), "{msg}");
    assert_json_error(r, &path, at as u64..=at as u64 + 1);
}

fn json_value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        any::<bool>().prop_map(|b| b.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| f.to_string()),
        "[a-z\"\\\\ é]{0,8}".prop_map(|s| serde_json::to_string(&s).unwrap()),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("ph"),
                        Just("cat"),
                        Just("name"),
                        Just("ts"),
                        Just("dur"),
                        Just("pid"),
                        Just("tid"),
                        Just("args"),
                        Just("stream"),
                        Just("correlation"),
                        Just("x")
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|kv| {
                let body: Vec<String> = kv
                    .into_iter()
                    .map(|(k, v)| format!("\"{k}\":{v}"))
                    .collect();
                format!("{{{}}}", body.join(","))
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn truncation_never_panics(cut in 0usize..7000) {
        let text = sample();
        let cut = cut.min(text.len());
        let r = kineto::read_bytes("t.json", text[..cut].to_vec());
        if cut < text.len() - 1 {
            prop_assert!(r.is_err());
        }
    }

    #[test]
    fn mutation_never_panics(edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let mut text = sample();
        for (i, b) in edits {
            let at = i.index(text.len());
            text[at] = b;
        }
        let _ = kineto::read_bytes("t.json", text);
    }

    #[test]
    fn insertion_never_panics(at in any::<prop::sample::Index>(), junk in "[\\[\\]{}:,\"0-9a-z.eE+-]{1,12}") {
        let mut text = sample();
        let at = at.index(text.len());
        text.splice(at..at, junk.bytes());
        let _ = kineto::read_bytes("t.json", text);
    }

    #[test]
    fn gzip_mutation_never_panics(i in any::<prop::sample::Index>(), b in any::<u8>(), cut in any::<prop::sample::Index>()) {
        let mut gz = sample_gz();
        let at = i.index(gz.len());
        gz[at] = b;
        let cut = cut.index(gz.len() + 1);
        let _ = kineto::read_bytes("t.json.gz", gz[..cut].to_vec());
    }

    #[test]
    fn random_events_never_panic(events in prop::collection::vec(json_value(), 0..12), meta in json_value()) {
        let doc = format!("{{\"distributedInfo\":{meta},\"deviceProperties\":{meta},\"traceEvents\":[{}]}}", events.join(","));
        let _ = kineto::read_bytes("t.json", doc.into_bytes());
        let arr = format!("[{}]", events.join(","));
        let _ = kineto::read_bytes("t.json", arr.into_bytes());
    }
}
