//! A tiny HTTP/1.1 server for the metrics endpoint: GET /metrics gets the
//! latest text, everything else a 404. One connection at a time, with short
//! timeouts, so a slow client cannot hold it; Prometheus scrapes once per
//! interval, which this serves easily.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The Prometheus text format's content type.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Serves `body` on `listener` until the process exits.
pub fn serve(listener: TcpListener, body: Arc<Mutex<String>>) {
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let _ = handle(conn, &body);
    }
}

fn handle(conn: TcpStream, body: &Mutex<String>) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(2)))?;
    conn.set_write_timeout(Some(Duration::from_secs(2)))?;
    let mut r = BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    r.read_line(&mut line)?;
    // Headers are read and ignored, up to a bound.
    let mut hdr = String::new();
    for _ in 0..100 {
        hdr.clear();
        if r.read_line(&mut hdr)? == 0 || hdr == "\r\n" || hdr == "\n" {
            break;
        }
    }
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let mut w = conn;
    if (method == "GET" || method == "HEAD") && path == "/metrics" {
        let text = body.lock().map(|b| b.clone()).unwrap_or_default();
        write!(
            w,
            "HTTP/1.1 200 OK\r\nContent-Type: {CONTENT_TYPE}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            text.len()
        )?;
        if method == "GET" {
            w.write_all(text.as_bytes())?;
        }
    } else {
        let text = "only GET /metrics is served here\n";
        write!(
            w,
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
            text.len()
        )?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn get(addr: std::net::SocketAddr, req: &str) -> String {
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(req.as_bytes()).unwrap();
        let mut out = String::new();
        c.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_metrics_and_nothing_else() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let body = Arc::new(Mutex::new("m 1\n".to_string()));
        std::thread::spawn(move || serve(l, body));
        let ok = get(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(
            ok.contains("version=0.0.4") && ok.ends_with("\r\n\r\nm 1\n"),
            "{ok}"
        );
        for req in [
            "GET / HTTP/1.1\r\n\r\n",
            "GET /metricsx HTTP/1.1\r\n\r\n",
            "POST /metrics HTTP/1.1\r\n\r\n",
            "GET /../etc/passwd HTTP/1.1\r\n\r\n",
        ] {
            let r = get(addr, req);
            assert!(r.starts_with("HTTP/1.1 404"), "{req:?}: {r}");
        }
    }
}
