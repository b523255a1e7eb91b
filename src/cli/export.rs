//! `stallscope export --metrics ADDR DIR`: serves a recording in progress as
//! Prometheus metrics (idle time by cause, busy time, steps, I/O wait), for
//! the monitoring stack a fleet already runs. `record --metrics` starts it
//! beside the job. The counters are rebuilt from the recording, so an
//! exporter restarted on the same recording starts from the same totals.

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use stallscope_analyzer::live::Monitor;
use stallscope_analyzer::output::metrics::{MetricsInput, render};

use super::metrics_http;

/// Serve a recording in progress as Prometheus metrics on GET /metrics.
///
/// Metrics: stallscope_gpu_busy_seconds_total{gpu},
/// stallscope_gpu_idle_seconds_total{gpu,cause}, stallscope_steps_total,
/// stallscope_step_seconds (histogram), stallscope_dataloader_wait_seconds_total,
/// stallscope_io_wait_seconds_total{fs}, stallscope_dropped_records_total.
/// It stops a while after every process of the recording has ended.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Where to listen: HOST:PORT, or a port alone for 127.0.0.1
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9464")]
    pub metrics: String,

    /// A label added to every metric (repeat for several): --label job=llama-ft
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,

    /// Seconds between two reads of the recording
    #[arg(long, value_name = "SECS", default_value_t = 1.0)]
    pub interval: f64,

    /// Seconds of recent timeline that each diagnosis looks at
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub window: u64,

    /// Keep serving this many seconds after the job has ended (for the last scrape)
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub linger: u64,

    /// The job's pid: stop once it has ended (set by `record --metrics`)
    #[arg(long, hide = true)]
    pub pid: Option<u32>,

    /// The recording directory (it may still be empty)
    pub dir: PathBuf,
}

/// `key=value`, with a Prometheus label name that is none of ours.
pub fn parse_label(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?} is not KEY=VALUE"))?;
    let ok = k
        .chars()
        .enumerate()
        .all(|(i, c)| c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit()));
    if k.is_empty() || !ok || k.starts_with("__") {
        return Err(format!("{k:?} is not a valid Prometheus label name"));
    }
    if matches!(k, "gpu" | "cause" | "fs" | "le") {
        return Err(format!("label {k:?} is one of stallscope's own"));
    }
    Ok((k.to_string(), v.to_string()))
}

/// HOST:PORT, or a bare port on 127.0.0.1.
pub fn parse_addr(s: &str) -> anyhow::Result<SocketAddr> {
    let s = s.trim();
    let full = if s.parse::<u16>().is_ok() {
        format!("127.0.0.1:{s}")
    } else if let Some(port) = s.strip_prefix(':') {
        format!("127.0.0.1:{port}")
    } else {
        s.to_string()
    };
    full.to_socket_addrs()
        .with_context(|| format!("bad --metrics address {s:?}"))?
        .next()
        .with_context(|| format!("--metrics address {s:?} resolves to nothing"))
}

/// True while process `pid` exists.
pub fn pid_alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid as i32, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

pub fn run(a: ExportArgs) -> anyhow::Result<ExitCode> {
    if !(a.interval > 0.0 && a.interval <= 3600.0) {
        bail!("--interval must be between 0 and 3600 seconds");
    }
    let addr = parse_addr(&a.metrics)?;
    let listener =
        TcpListener::bind(addr).with_context(|| format!("cannot listen on {addr} for metrics"))?;
    let body = Arc::new(Mutex::new(String::new()));
    let mut monitor = Monitor::new(&a.dir, a.window.max(1) as i64 * 1_000_000_000);
    publish(&mut monitor, &body, &a.labels);
    {
        let body = body.clone();
        std::thread::spawn(move || metrics_http::serve(listener, body));
    }
    if a.pid.is_some() {
        // Started by `record`: nothing holds the job's output open while we
        // linger after it.
        detach_stdio();
    } else {
        eprintln!(
            "stallscope: serving metrics of {} on http://{addr}/metrics",
            a.dir.display()
        );
    }
    let interval = Duration::from_secs_f64(a.interval);
    let mut ended: Option<Instant> = None;
    loop {
        std::thread::sleep(interval);
        publish(&mut monitor, &body, &a.labels);
        let done = match a.pid {
            Some(pid) => !pid_alive(pid) || monitor.reader().all_exited(),
            None => monitor.reader().all_exited(),
        };
        match (done, ended) {
            (true, None) => ended = Some(Instant::now()),
            (true, Some(t)) if t.elapsed() >= Duration::from_secs(a.linger) => break,
            (false, _) => ended = None,
            _ => {}
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Points stdin, stdout and stderr at /dev/null.
pub fn detach_stdio() {
    // SAFETY: plain fd plumbing on the standard fds.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            if null > 2 {
                libc::close(null);
            }
        }
    }
}

/// One tick: read, diagnose, render.
fn publish(monitor: &mut Monitor, body: &Mutex<String>, labels: &[(String, String)]) {
    monitor.tick();
    let io = monitor.reader().io_totals();
    let text = render(&MetricsInput {
        totals: monitor.totals(),
        io_by_fs: io.by_fs.iter().map(|(k, v)| (*k, *v)).collect(),
        dropped_records: monitor.reader().lost_records(),
        labels,
    });
    if let Ok(mut b) = body.lock() {
        *b = text;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_addresses() {
        assert_eq!(
            parse_label("job=llama ft").unwrap(),
            ("job".into(), "llama ft".into())
        );
        for bad in ["job", "1x=a", "a-b=c", "cause=x", "__name__=x", "=x"] {
            assert!(parse_label(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_addr("9464").unwrap(),
            "127.0.0.1:9464".parse().unwrap()
        );
        assert_eq!(parse_addr(":9").unwrap(), "127.0.0.1:9".parse().unwrap());
        assert_eq!(
            parse_addr("0.0.0.0:80").unwrap(),
            "0.0.0.0:80".parse().unwrap()
        );
    }
}
