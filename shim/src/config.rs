//! Configuration, parsed once from the environment at start-up.

use std::ffi::OsString;

/// Environment variables the shim reads.
pub mod env {
    pub const OUT: &str = "STALLSCOPE_OUT";
    pub const MIN_SPAN_US: &str = "STALLSCOPE_MIN_SPAN_US";
    pub const SAMPLE_HZ: &str = "STALLSCOPE_SAMPLE_HZ";
    pub const MAX_MB: &str = "STALLSCOPE_MAX_MB";
    pub const FLIGHT: &str = "STALLSCOPE_FLIGHT";
    pub const GPU: &str = "STALLSCOPE_GPU";
    pub const CUPTI: &str = "STALLSCOPE_CUPTI";
    pub const QUIET: &str = "STALLSCOPE_QUIET";
    pub const ALL_API: &str = "STALLSCOPE_ALL_API";
}

pub const DEFAULT_MIN_SPAN_US: u64 = 20;
pub const DEFAULT_SAMPLE_HZ: u32 = 100;
pub const DEFAULT_MAX_MB: u64 = 256;
/// Thread slots per file; threads past this still record spans but not counters.
pub const THREAD_SLOTS: u32 = 256;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Output directory; recording is off without it.
    pub out: Option<OsString>,
    pub min_span_ns: u64,
    pub sample_hz: u32,
    pub max_bytes: u64,
    pub flight: bool,
    pub gpu: bool,
    /// Explicit libcupti (or gpusim) path.
    pub cupti: Option<OsString>,
    /// Suppress the `stallscope:` lines.
    pub quiet: bool,
    /// API records of every CUDA function, not only those the analysis
    /// keeps (`gpu::api_select`).
    pub all_api: bool,
}

impl Config {
    /// Reads the configuration through `get` (the environment in production).
    /// Malformed numbers fall back to defaults and are reported in `problems`.
    pub fn parse(get: impl Fn(&str) -> Option<OsString>, problems: &mut Vec<String>) -> Config {
        let mut num = |name: &str, default: u64, max: u64| -> u64 {
            match get(name) {
                None => default,
                Some(v) => match v.to_str().and_then(|s| s.trim().parse::<u64>().ok()) {
                    Some(n) if n <= max => n,
                    _ => {
                        problems.push(format!(
                            "{name}={} is not a number from 0 to {max}; using {default}",
                            v.to_string_lossy()
                        ));
                        default
                    }
                },
            }
        };
        let min_span_us = num(env::MIN_SPAN_US, DEFAULT_MIN_SPAN_US, 3_600_000_000);
        let sample_hz = num(env::SAMPLE_HZ, DEFAULT_SAMPLE_HZ as u64, 10_000) as u32;
        let max_mb = num(env::MAX_MB, DEFAULT_MAX_MB, 1 << 20).max(4);
        let flag = |name: &str, default: bool| match get(name) {
            None => default,
            Some(v) => flag_value(v.as_encoded_bytes()),
        };
        Config {
            out: get(env::OUT).filter(|v| !v.is_empty()),
            min_span_ns: min_span_us * 1000,
            sample_hz,
            max_bytes: max_mb << 20,
            flight: flag(env::FLIGHT, false),
            gpu: flag(env::GPU, true),
            cupti: get(env::CUPTI).filter(|v| !v.is_empty()),
            quiet: flag(env::QUIET, false),
            all_api: flag(env::ALL_API, false),
        }
    }

    pub fn from_env(problems: &mut Vec<String>) -> Config {
        Config::parse(getenv, problems)
    }
}

/// The value of `name` in libc's environment, without copying it: for the
/// constructor, which allocates nothing. Valid until the program changes
/// that variable. None when unset or empty.
pub fn raw_now(name: &str) -> Option<&'static [u8]> {
    set_now(name).filter(|v| !v.is_empty())
}

/// A boolean variable read as [`Config::parse`] reads it, without allocating:
/// set but empty reads as false.
#[unsafe(link_section = ".text.startup.stallscope")] // see lifecycle::on_load
pub fn flag_now(name: &str, default: bool) -> bool {
    set_now(name).map_or(default, flag_value)
}

/// The value of `name` in libc's environment, empty or not.
fn set_now(name: &str) -> Option<&'static [u8]> {
    // SAFETY: the constructor runs before the program has threads that
    // could change the environment.
    unsafe { crate::early::env(name.as_bytes()) }
}

fn flag_value(v: &[u8]) -> bool {
    !matches!(v.trim_ascii(), b"0" | b"" | b"false" | b"no" | b"off")
}

/// The variable `name` from libc's environment. std::env::var_os takes a
/// lock and more code paths; this runs when each process image begins
/// recording.
fn getenv(name: &str) -> Option<OsString> {
    use std::os::unix::ffi::OsStrExt;
    set_now(name).map(|v| std::ffi::OsStr::from_bytes(v).to_os_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(pairs: &[(&str, &str)]) -> (Config, Vec<String>) {
        let m: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        let mut problems = vec![];
        let c = Config::parse(|k| m.get(k).cloned(), &mut problems);
        (c, problems)
    }

    #[test]
    fn defaults() {
        let (c, p) = parse(&[]);
        assert!(p.is_empty());
        assert_eq!(c.out, None);
        assert_eq!(c.min_span_ns, 20_000);
        assert_eq!(c.sample_hz, 100);
        assert_eq!(c.max_bytes, 256 << 20);
        assert!(!c.flight);
        assert!(c.gpu);
    }

    /// The constructor's readers agree with `Config::parse` and copy nothing.
    #[test]
    fn constructor_reads_without_copying() {
        // SAFETY: a variable no other test reads or writes.
        unsafe { std::env::set_var("STALLSCOPE_TEST_CTOR_READ", " off ") };
        assert!(!flag_now("STALLSCOPE_TEST_CTOR_READ", true));
        assert_eq!(raw_now("STALLSCOPE_TEST_CTOR_READ"), Some(&b" off "[..]));
        unsafe { std::env::set_var("STALLSCOPE_TEST_CTOR_READ", "1") };
        assert!(flag_now("STALLSCOPE_TEST_CTOR_READ", false));
        unsafe { std::env::set_var("STALLSCOPE_TEST_CTOR_READ", "") };
        assert_eq!(raw_now("STALLSCOPE_TEST_CTOR_READ"), None, "empty is unset");
        assert!(
            !flag_now("STALLSCOPE_TEST_CTOR_READ", true),
            "as parse reads it"
        );
        assert!(flag_now("STALLSCOPE_TEST_CTOR_UNSET", true));
        assert_eq!(raw_now("STALLSCOPE_TEST_CTOR_UNSET"), None);
    }

    #[test]
    fn values_and_bad_values() {
        let (c, p) = parse(&[
            (env::OUT, "/tmp/run"),
            (env::MIN_SPAN_US, "0"),
            (env::SAMPLE_HZ, "fast"),
            (env::FLIGHT, "1"),
            (env::GPU, "0"),
            (env::MAX_MB, "1"),
        ]);
        assert_eq!(c.out.as_deref(), Some(std::ffi::OsStr::new("/tmp/run")));
        assert_eq!(c.min_span_ns, 0);
        assert_eq!(c.sample_hz, 100);
        assert!(c.flight);
        assert!(!c.gpu);
        assert_eq!(c.max_bytes, 4 << 20, "cap has a floor");
        assert_eq!(p.len(), 1);
        assert!(p[0].contains("STALLSCOPE_SAMPLE_HZ=fast"));
    }
}
