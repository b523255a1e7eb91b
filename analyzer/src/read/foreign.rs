//! Other tools' traces, which stallscope does not read, told apart by their
//! first bytes, so that an error can say what the file is and what to
//! record instead of a bare "not a trace".

use std::path::Path;

use super::kineto::source;

/// What `path` is, when it is a trace or export of a tool we know but do
/// not read, with what to do instead.
pub fn describe(path: &Path) -> Option<&'static str> {
    let kind = std::cell::Cell::new(None);
    // Errors are left to the reader, which names them.
    let _ = source::head_has(path, 4 << 10, |head| {
        kind.set(kind.get().or_else(|| of_head(head)));
        kind.get().is_some()
    });
    kind.get()
}

/// The kind of trace that begins with `head` (possibly inflated).
fn of_head(head: &[u8]) -> Option<&'static str> {
    let text = |needle: &str| head.windows(needle.len()).any(|w| w == needle.as_bytes());
    if head.starts_with(b"SQLite format 3\0") {
        Some(
            "an SQLite database, such as an Nsight Systems export (nsys export --type sqlite), \
             which stallscope does not read: record the job with `stallscope record`, or with \
             torch.profiler",
        )
    } else if text("\"rocprofiler-sdk-tool\"") {
        Some(
            "a rocprofiler-sdk (rocprofv3) JSON trace, which stallscope does not read: record \
             the job with `stallscope record`, or with torch.profiler (it works on ROCm too)",
        )
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_nsys_and_rocprof_exports() {
        assert!(
            of_head(b"SQLite format 3\0\x10\0")
                .unwrap()
                .contains("Nsight Systems")
        );
        let rocprof = br#"{"rocprofiler-sdk-tool":[{"metadata":{"pid":908}}]}"#;
        assert!(of_head(rocprof).unwrap().contains("rocprofv3"));
        assert_eq!(of_head(br#"{"traceEvents": []}"#), None);
        assert_eq!(of_head(b"Start (ns),Duration (ns),Name\n"), None);
    }
}
