//! The bounded pool of activity buffers handed to CUPTI.
//!
//! Buffers are reused once their records are read, and never freed. When
//! every buffer is out, the request is declined (a NULL buffer: CUPTI then
//! drops records and counts them) where the library supports that, API
//! version 27 and later (issue 3); older libraries get one shared discard
//! buffer whose records are counted and thrown away.

use std::alloc::{Layout, alloc};
use std::sync::Mutex;

/// Bytes per buffer.
pub const BUFFER_BYTES: usize = 8 << 20;
/// Buffers out at once, at most (128 MiB).
pub const MAX_BUFFERS: usize = 16;
/// CUPTI requires 8-byte aligned buffers.
const ALIGN: usize = 8;
/// First API version that accepts a declined request.
pub const DECLINE_SINCE: u32 = 27;

/// What a buffer request gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    Buffer(usize),
    Discard(usize),
    Declined,
}

struct Inner {
    free: Vec<usize>,
    allocated: usize,
    discard: usize,
}

pub struct Pool {
    inner: Mutex<Inner>,
    size: usize,
    max: usize,
    can_decline: bool,
}

fn new_buffer(size: usize) -> usize {
    match Layout::from_size_align(size, ALIGN) {
        // SAFETY: a non-zero size.
        Ok(l) if size > 0 => unsafe { alloc(l) as usize },
        _ => 0,
    }
}

impl Pool {
    pub fn new(api_version: u32) -> Self {
        Self::with_limits(api_version, BUFFER_BYTES, MAX_BUFFERS)
    }

    pub fn with_limits(api_version: u32, size: usize, max: usize) -> Self {
        Pool {
            inner: Mutex::new(Inner {
                free: Vec::with_capacity(max),
                allocated: 0,
                discard: 0,
            }),
            size,
            max,
            can_decline: api_version >= DECLINE_SINCE,
        }
    }

    pub fn buffer_size(&self) -> usize {
        self.size
    }

    /// A buffer for CUPTI. `refuse` forces the exhausted path (a forked
    /// child, or after another client took CUPTI over).
    pub fn request(&self, refuse: bool) -> Grant {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if !refuse {
            if let Some(b) = g.free.pop() {
                return Grant::Buffer(b);
            }
            if g.allocated < self.max {
                let b = new_buffer(self.size);
                if b != 0 {
                    g.allocated += 1;
                    return Grant::Buffer(b);
                }
            }
        }
        if self.can_decline {
            return Grant::Declined;
        }
        if g.discard == 0 {
            g.discard = new_buffer(self.size);
        }
        match g.discard {
            0 => Grant::Declined,
            d => Grant::Discard(d),
        }
    }

    /// Whether `buf` is the discard buffer.
    pub fn is_discard(&self, buf: usize) -> bool {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.discard != 0 && g.discard == buf
    }

    /// Takes a read buffer back.
    pub fn give_back(&self, buf: usize) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if buf != 0 && buf != g.discard && g.free.len() < self.max {
            g.free.push(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_then_declined_from_27() {
        let p = Pool::with_limits(28, 4096, 2);
        let a = p.request(false);
        let b = p.request(false);
        assert!(matches!(a, Grant::Buffer(x) if x % ALIGN == 0));
        assert!(matches!(b, Grant::Buffer(_)) && a != b);
        assert_eq!(p.request(false), Grant::Declined);
        if let Grant::Buffer(x) = a {
            p.give_back(x);
            assert_eq!(p.request(false), Grant::Buffer(x), "reused");
        }
        assert_eq!(p.request(true), Grant::Declined);
    }

    #[test]
    fn discard_buffer_before_27() {
        let p = Pool::with_limits(24, 4096, 1);
        assert!(matches!(p.request(false), Grant::Buffer(_)));
        let Grant::Discard(d) = p.request(false) else {
            panic!("expected the discard buffer")
        };
        assert!(p.is_discard(d));
        assert_eq!(p.request(false), Grant::Discard(d), "one shared buffer");
        p.give_back(d);
        assert_eq!(p.request(true), Grant::Discard(d), "never pooled");
    }
}
