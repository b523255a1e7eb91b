//! Decoding thread chunks into the final per-thread and per-stream lists.
//!
//! The lists are large (tens of millions of events), and writing them is most
//! of the cost of reading: first-touch page faults and memory bandwidth. So
//! each event is decoded once and copied once, and each chunk's pages are read
//! once. Chunks are decoded in batches, in parallel, each into small lists of
//! its own; those are reused from batch to batch, so they stay in cache and
//! their pages are faulted in once. Then the chunks' places in the final lists
//! follow from the chunks before them, and the small lists are copied there,
//! in parallel. Only a batch's worth of decoded events exists twice.

use std::path::Path;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use stallscope_format::Record;
use stallscope_format::TraceFile;
use stallscope_format::reader::Chunk;

use super::decode::{Rec, Walk, api_span, host_span, kernel_op, memcpy_op, memset_op, other};
use super::decode::{config_of, sample};
use super::file::Names;
use super::partial::Partial;
use crate::model::{GpuOp, HostSpan, LaunchConfig, Sample};

/// Chunks decoded between two placements. A chunk is about 1 MiB of records,
/// so a batch's small lists are a few tens of MiB: the copy reads them back
/// from cache.
const BATCH: usize = 32;

/// Lists keyed by destination, with a last-hit cache (a chunk feeds a few
/// destinations, mostly one at a time). Emptied lists are kept for reuse.
struct Lists<K, T> {
    keys: Vec<K>,
    lists: Vec<Vec<T>>,
    spare: Vec<Vec<T>>,
    last: usize,
}

impl<K, T> Default for Lists<K, T> {
    fn default() -> Self {
        Lists {
            keys: Vec::new(),
            lists: Vec::new(),
            spare: Vec::new(),
            last: 0,
        }
    }
}

impl<K: Copy + Eq, T> Lists<K, T> {
    #[inline(always)]
    fn get(&mut self, k: K) -> &mut Vec<T> {
        if self.keys.get(self.last) != Some(&k) {
            self.last = match self.keys.iter().position(|x| *x == k) {
                Some(i) => i,
                None => {
                    self.keys.push(k);
                    self.lists.push(self.spare.pop().unwrap_or_default());
                    self.keys.len() - 1
                }
            };
        }
        &mut self.lists[self.last]
    }

    fn reset(&mut self) {
        self.keys.clear();
        self.last = 0;
        for mut v in self.lists.drain(..) {
            v.clear();
            self.spare.push(v);
        }
    }
}

/// Launch configurations of one chunk's kernels, numbered locally; the
/// placement maps the local numbers to the device's.
#[derive(Default)]
struct Configs {
    list: Vec<(u32, LaunchConfig)>,
    ids: FxHashMap<(u32, LaunchConfig), u32>,
    last: Option<(u32, LaunchConfig, u32)>,
}

impl Configs {
    #[inline]
    fn id(&mut self, device: u32, c: LaunchConfig) -> u32 {
        match self.last {
            Some((d, x, i)) if d == device && x == c => i,
            _ => {
                let next = self.list.len() as u32;
                let i = *self.ids.entry((device, c)).or_insert(next);
                if i == next {
                    self.list.push((device, c));
                }
                self.last = Some((device, c, i));
                i
            }
        }
    }

    fn reset(&mut self) {
        self.list.clear();
        self.ids.clear();
        self.last = None;
    }
}

/// One chunk's decoded events, and where they go.
#[derive(Default)]
struct ChunkOut {
    spans: Lists<u32, HostSpan>,
    samples: Lists<u32, Sample>,
    ops: Lists<(u32, u32), GpuOp>,
    configs: Configs,
    /// Local launch id -> the device's, set by the placement.
    remap: Vec<u32>,
    /// Addresses of each list's first slot in its final list, set by the
    /// placement, in the order spans, samples, ops.
    dst: Vec<usize>,
    /// Everything else (small lists, thread names, errors).
    rest: Partial,
}

impl ChunkOut {
    fn reset(&mut self) {
        self.spans.reset();
        self.samples.reset();
        self.ops.reset();
        self.configs.reset();
        self.remap.clear();
        self.dst.clear();
    }

    fn decode(&mut self, c: &Chunk, names: &Names, path: &Path) {
        let mut last = None;
        let mut w = Walk::new(c);
        while let Some(r) = w.next() {
            match r {
                Rec::Span(s) => {
                    if let Some(span) = host_span(&s) {
                        last = last.max(Some(span.end()));
                        self.spans.get(c.tid).push(span);
                    }
                }
                Rec::Api(a) => {
                    let span = api_span(&a);
                    last = last.max(Some(span.end()));
                    self.spans.get(a.tid).push(span);
                }
                Rec::Sample(s) => self.samples.get(s.tid).push(sample(&s)),
                Rec::Kernel(k) => {
                    let launch = self.configs.id(k.device, config_of(&k));
                    let op = kernel_op(&k, launch, names);
                    self.ops.get((k.device, k.stream)).push(op);
                }
                Rec::Other(Record::Memcpy(m)) => {
                    self.ops
                        .get((m.device, m.stream))
                        .push(memcpy_op(&m, names));
                }
                Rec::Other(Record::Memset(m)) => {
                    self.ops
                        .get((m.device, m.stream))
                        .push(memset_op(&m, names));
                }
                Rec::Other(r) => other(r, names, &mut self.rest),
            }
        }
        if let Some(e) = w.error {
            self.rest.errors.push(format!(
                "skipped the rest of a damaged chunk: {}",
                e.in_file(path)
            ));
        }
        self.rest.last = last;
    }

    /// Copies the lists to the addresses the placement chose.
    ///
    /// # Safety
    /// Each address in `dst` must have room for its list, inside a final
    /// list's capacity, in a range no other chunk writes.
    unsafe fn copy_out(&self) {
        let mut dst = self.dst.iter();
        let mut next = || *dst.next().expect("one address per list");
        for v in &self.spans.lists {
            let to = populated::<HostSpan>(next(), v.len());
            // SAFETY: the caller's promise.
            unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), to, v.len()) };
        }
        for v in &self.samples.lists {
            let to = populated::<Sample>(next(), v.len());
            // SAFETY: as above.
            unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), to, v.len()) };
        }
        let identity = self.remap.iter().enumerate().all(|(i, &g)| g as usize == i);
        for v in &self.ops.lists {
            let to = populated::<GpuOp>(next(), v.len());
            if identity {
                // SAFETY: as above.
                unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), to, v.len()) };
                continue;
            }
            for (i, op) in v.iter().enumerate() {
                let mut op = *op;
                if op.launch() != u32::MAX {
                    op.set_launch(self.remap[op.launch() as usize]);
                }
                // SAFETY: as above; `i` is below the list's length.
                unsafe { to.add(i).write(op) };
            }
        }
    }
}

/// `addr` as a pointer to `n` values of `T`, with the pages under them mapped
/// in. The final lists are fresh memory: faulting it in page by page was a
/// third of the reading time (2 cores, a VM), and one MADV_POPULATE_WRITE call
/// per range costs about half as much. It only maps pages (zero-filled, as a
/// fault would), so on kernels before 5.14, where it fails, nothing changes.
fn populated<T>(addr: usize, n: usize) -> *mut T {
    const PAGE: usize = 4096;
    let (lo, hi) = (
        addr / PAGE * PAGE,
        (addr + n * size_of::<T>()).div_ceil(PAGE) * PAGE,
    );
    if n > 0 {
        // SAFETY: the range is reserved capacity of one list (rounded out to
        // pages of the same mapping); populating writes nothing visible.
        unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_POPULATE_WRITE) };
    }
    addr as *mut T
}

/// The final lists of one kind, in order of first appearance.
struct Finals<K, T> {
    index: FxHashMap<K, usize>,
    lists: Vec<(K, Vec<T>)>,
    /// Length of each list once the current batch is copied in.
    len: Vec<usize>,
}

impl<K, T> Default for Finals<K, T> {
    fn default() -> Self {
        Finals {
            index: FxHashMap::default(),
            lists: Vec::new(),
            len: Vec::new(),
        }
    }
}

impl<K: Copy + Eq + std::hash::Hash, T> Finals<K, T> {
    /// Reserves room for a chunk's lists after what is placed so far, and
    /// notes where each goes (as an index and offset, for `addresses`).
    fn place(&mut self, from: &Lists<K, T>, out: &mut Vec<(usize, usize)>) {
        for (k, v) in from.keys.iter().zip(&from.lists) {
            let i = *self.index.entry(*k).or_insert_with(|| {
                self.lists.push((*k, Vec::new()));
                self.len.push(0);
                self.lists.len() - 1
            });
            out.push((i, self.len[i]));
            self.len[i] += v.len();
        }
    }

    /// Grows every list to hold what is placed (amortized: the allocator
    /// moves large blocks by remapping, and untouched capacity costs no RSS).
    fn reserve(&mut self) {
        for ((_, v), &n) in self.lists.iter_mut().zip(&self.len) {
            v.reserve(n - v.len());
        }
    }

    fn address(&mut self, (i, offset): (usize, usize)) -> usize {
        debug_assert!(offset <= self.lists[i].1.capacity());
        // wrapping_add: the address is only formed here, and written through
        // by `copy_out` inside the reserved capacity.
        self.lists[i].1.as_mut_ptr().wrapping_add(offset) as usize
    }

    /// Marks the placed slots as written.
    ///
    /// # Safety
    /// Every slot up to `len` must have been written.
    unsafe fn commit(&mut self) {
        for ((_, v), &n) in self.lists.iter_mut().zip(&self.len) {
            debug_assert!(n <= v.capacity());
            // SAFETY: the caller's promise; `reserve` made the room.
            unsafe { v.set_len(n) };
        }
    }
}

/// Decodes the chunks (in file order) into one partial whose threads and
/// streams hold the full lists.
pub(super) fn decode_batched(
    chunks: &[&Chunk],
    names: &Names,
    file: &TraceFile,
    chunk_size: u64,
    path: &Path,
) -> Partial {
    let mut outs: Vec<ChunkOut> = Vec::new();
    outs.resize_with(BATCH.min(chunks.len()), ChunkOut::default);
    let mut spans: Finals<u32, HostSpan> = Finals::default();
    let mut samples: Finals<u32, Sample> = Finals::default();
    let mut ops: Finals<(u32, u32), GpuOp> = Finals::default();
    let mut configs: FxHashMap<u32, (Vec<LaunchConfig>, FxHashMap<LaunchConfig, u32>)> =
        FxHashMap::default();
    let mut rests: Vec<Partial> = Vec::with_capacity(chunks.len());
    let mut places: Vec<Vec<(usize, usize)>> = vec![Vec::new(); outs.len()];

    for batch in chunks.chunks(BATCH) {
        let outs = &mut outs[..batch.len()];
        outs.par_iter_mut().zip(batch).for_each(|(o, c)| {
            o.reset();
            o.decode(c, names, path);
            file.release(c.offset, chunk_size);
        });

        // Places, in chunk order; then room for them.
        for (o, p) in outs.iter_mut().zip(&mut places) {
            p.clear();
            spans.place(&o.spans, p);
            samples.place(&o.samples, p);
            ops.place(&o.ops, p);
            for &(dev, c) in &o.configs.list {
                let (list, ids) = configs.entry(dev).or_default();
                let id = *ids.entry(c).or_insert_with(|| {
                    list.push(c);
                    list.len() as u32 - 1
                });
                o.remap.push(id);
            }
        }
        spans.reserve();
        samples.reserve();
        ops.reserve();
        for (o, p) in outs.iter_mut().zip(&places) {
            let (ns, nm) = (o.spans.keys.len(), o.samples.keys.len());
            for (j, &at) in p.iter().enumerate() {
                let a = if j < ns {
                    spans.address(at)
                } else if j < ns + nm {
                    samples.address(at)
                } else {
                    ops.address(at)
                };
                o.dst.push(a);
            }
        }
        // SAFETY: `place` gave each list a range of its own after everything
        // placed before, and `reserve` made room for all of them.
        outs.par_iter().for_each(|o| unsafe { o.copy_out() });
        // SAFETY: every chunk of the batch copied all of its lists, which
        // tile the ranges from the old lengths to the new ones.
        unsafe {
            spans.commit();
            samples.commit();
            ops.commit();
        }
        rests.extend(outs.iter_mut().map(|o| std::mem::take(&mut o.rest)));
    }
    drop(outs);

    let mut part = Partial::concat(rests);
    for (tid, v) in spans.lists {
        part.thread(tid).spans = v;
    }
    for (tid, v) in samples.lists {
        part.thread(tid).samples = v;
    }
    for ((dev, stream), v) in ops.lists {
        let g = part.gpu(dev);
        let s = g.stream(stream);
        g.streams[s].1 = v;
    }
    for (dev, (list, _)) in configs {
        part.gpu(dev).set_configs(list);
    }
    part
}
