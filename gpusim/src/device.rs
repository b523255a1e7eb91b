//! The simulated device: memory accounting, pinned host memory, and in-order
//! stream timelines. Plain data; the CUDA API layer adds locking and sleeping.

use std::collections::{BTreeMap, HashMap};

/// Device addresses are fake: handed out from here and never dereferenced.
const DEVICE_BASE: u64 = 0x7f00_0000_0000;
/// cudaMalloc returns 256-byte aligned pointers; keep allocations apart.
const DEVICE_ALIGN: u64 = 512;

/// Copy and memset speeds, in bytes per microsecond (= MB/s).
pub const PINNED_BW: u64 = 25_000;
pub const PAGEABLE_BW: u64 = 6_000;
pub const DEVICE_BW: u64 = 1_000_000;
/// Fixed cost of any copy or memset on the device.
pub const COPY_LATENCY_NS: u64 = 1_500;

/// How long moving `bytes` takes at `bw` bytes per microsecond.
pub fn transfer_ns(bytes: u64, bw: u64) -> u64 {
    COPY_LATENCY_NS + (u128::from(bytes) * 1_000 / u128::from(bw)) as u64
}

/// The stream id CUPTI reports for the legacy default stream.
pub const DEFAULT_STREAM_ID: u32 = 7;
/// The stream id of the first created stream.
const FIRST_STREAM_ID: u32 = 13;

#[derive(Debug)]
pub struct Stream {
    pub id: u32,
    /// Simulation time when the last queued operation ends.
    pub busy_until: u64,
}

#[derive(Debug)]
pub struct Device {
    pub name: String,
    pub capacity: u64,
    used: u64,
    next_addr: u64,
    allocs: HashMap<u64, u64>,
    pinned: BTreeMap<usize, usize>,
    /// Index 0 is the legacy default stream.
    streams: Vec<Stream>,
}

impl Device {
    pub fn new(name: &str, capacity: u64) -> Self {
        Device {
            name: name.to_owned(),
            capacity,
            used: 0,
            next_addr: DEVICE_BASE,
            allocs: HashMap::new(),
            pinned: BTreeMap::new(),
            streams: vec![Stream {
                id: DEFAULT_STREAM_ID,
                busy_until: 0,
            }],
        }
    }

    /// A device allocation, or `None` past capacity.
    pub fn alloc(&mut self, bytes: u64) -> Option<u64> {
        if bytes > self.capacity - self.used {
            return None;
        }
        let addr = self.next_addr;
        self.next_addr += bytes.div_ceil(DEVICE_ALIGN).max(1) * DEVICE_ALIGN;
        self.used += bytes;
        self.allocs.insert(addr, bytes);
        Some(addr)
    }

    /// Frees a device allocation; returns its size, or `None` if `addr` is
    /// not one.
    pub fn free(&mut self, addr: u64) -> Option<u64> {
        let bytes = self.allocs.remove(&addr)?;
        self.used -= bytes;
        Some(bytes)
    }

    /// `(free, total)` as cudaMemGetInfo reports them.
    pub fn mem_info(&self) -> (u64, u64) {
        (self.capacity.saturating_sub(self.used), self.capacity)
    }

    pub fn add_pinned(&mut self, addr: usize, bytes: usize) {
        self.pinned.insert(addr, bytes);
    }

    pub fn remove_pinned(&mut self, addr: usize) -> Option<usize> {
        self.pinned.remove(&addr)
    }

    /// Whether host address `p` lies in memory from cudaMallocHost.
    pub fn is_pinned(&self, p: usize) -> bool {
        self.pinned
            .range(..=p)
            .next_back()
            .is_some_and(|(&a, &n)| p < a + n.max(1))
    }

    /// Adds a stream; returns its index.
    pub fn create_stream(&mut self) -> usize {
        let id = FIRST_STREAM_ID + self.streams.len() as u32 - 1;
        self.streams.push(Stream { id, busy_until: 0 });
        self.streams.len() - 1
    }

    pub fn stream(&self, idx: usize) -> Option<&Stream> {
        self.streams.get(idx)
    }

    /// Queues `duration` ns of work on stream `idx` at time `now`, with the
    /// legacy default stream's rules: work on stream 0 waits for every stream,
    /// and work on another stream waits for stream 0. Returns `(start, end)`.
    pub fn schedule(&mut self, idx: usize, now: u64, duration: u64) -> (u64, u64) {
        let after = if idx == 0 {
            self.device_busy_until()
        } else {
            self.streams[idx].busy_until.max(self.streams[0].busy_until)
        };
        let start = now.max(after);
        let end = start + duration;
        self.streams[idx].busy_until = end;
        (start, end)
    }

    /// Holds stream `idx` until `until`: its next work starts no earlier
    /// (a wait for an event).
    pub fn hold(&mut self, idx: usize, until: u64) {
        if let Some(s) = self.streams.get_mut(idx) {
            s.busy_until = s.busy_until.max(until);
        }
    }

    /// When every queued operation on every stream is done.
    pub fn device_busy_until(&self) -> u64 {
        self.streams.iter().map(|s| s.busy_until).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocation_past_capacity_fails_and_free_returns_memory() {
        let mut d = Device::new("t", 1000);
        let a = d.alloc(600).unwrap();
        assert_eq!(d.alloc(500), None);
        assert_eq!(d.mem_info(), (400, 1000));
        let b = d.alloc(400).unwrap();
        assert_ne!(a, b);
        assert_eq!(b % 256, 0);
        assert_eq!(d.mem_info(), (0, 1000));
        assert_eq!(d.free(a), Some(600));
        assert_eq!(d.free(a), None);
        assert_eq!(d.mem_info(), (600, 1000));
    }

    #[test]
    fn pinned_ranges() {
        let mut d = Device::new("t", 1);
        d.add_pinned(1000, 100);
        assert!(d.is_pinned(1000) && d.is_pinned(1099));
        assert!(!d.is_pinned(999) && !d.is_pinned(1100));
        assert_eq!(d.remove_pinned(1000), Some(100));
        assert!(!d.is_pinned(1000));
    }

    #[test]
    fn streams_run_in_order_and_the_default_stream_serializes() {
        let mut d = Device::new("t", 1);
        let s1 = d.create_stream();
        let s2 = d.create_stream();
        assert_eq!(d.stream(s1).unwrap().id, 13);
        assert_eq!(d.stream(s2).unwrap().id, 14);
        assert_eq!(d.schedule(s1, 100, 50), (100, 150));
        assert_eq!(
            d.schedule(s1, 110, 10),
            (150, 160),
            "in order on one stream"
        );
        assert_eq!(d.schedule(s2, 120, 10), (120, 130), "other streams overlap");
        assert_eq!(d.schedule(0, 125, 5), (160, 165), "default waits for all");
        assert_eq!(d.schedule(s2, 126, 1), (165, 166), "and all wait for it");
        assert_eq!(d.device_busy_until(), 166);
        assert_eq!(
            d.schedule(s1, 1000, 1),
            (1000, 1001),
            "idle stream starts now"
        );
    }

    #[test]
    fn transfer_times() {
        assert_eq!(
            transfer_ns(25_000_000, PINNED_BW),
            1_000_000 + COPY_LATENCY_NS
        );
        assert!(transfer_ns(1 << 20, PAGEABLE_BW) > transfer_ns(1 << 20, PINNED_BW));
        assert_eq!(transfer_ns(0, DEVICE_BW), COPY_LATENCY_NS);
    }
}
