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
//!
//! A thread's spans can come from several chunk owners (its own chunks, and
//! the CUPTI thread's for its API calls); which owner filled each stretch is
//! kept (`ThreadAcc::owners`), so that the stretches can be merged rather
//! than sorted, once the file's NVTX ranges are added (`merge_owners`).

use std::cmp::Reverse;
use std::path::Path;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use stallscope_format::reader::Chunk;
use stallscope_format::{Record, TraceFile};

use super::decode::{
    Rec, Walk, burst_span, host_span, kernel_op, memcpy_op, memset_op, named_api_span, other,
};
use super::decode::{UNNAMED, config_of, sample};
use super::file::Names;
use super::partial::Partial;
use crate::model::{GpuOp, HostSpan, LaunchConfig, Ns, Sample, sort_stable, span_order};

/// Chunks decoded between two placements. A chunk is about 1 MiB of records,
/// so a batch's small lists are a few MiB per core: the copy reads them back
/// from the core's own cache, and the next batch writes them there again.
/// On 2 cores (a loaded VM), 8 read the 50M-event recording a few percent
/// faster than 32 (10 of 12 interleaved pairs); 2, a placement per 2
/// chunks, was slower again.
const BATCH: usize = 8;

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
    /// Per list of `spans`: its spans are in order (checked while they are in
    /// the core's cache, so the merge need not read them all again).
    span_sorted: Vec<bool>,
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
        self.span_sorted.clear();
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
                Rec::Other(Record::Burst(b)) => {
                    let runs = &mut self.rest.thread(c.tid).runs;
                    if let Some(span) = burst_span(&b, runs) {
                        last = last.max(Some(span.end()));
                        self.spans.get(c.tid).push(span);
                    }
                }
                Rec::Api(a) => {
                    // Named here, not in a pass over the final lists.
                    let span = named_api_span(&a, &names.api);
                    self.rest.unnamed |= span.arg & UNNAMED != 0;
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
        self.check_order();
    }

    /// Notes which span lists are in order.
    fn check_order(&mut self) {
        self.span_sorted
            .extend(self.spans.lists.iter().map(|v| v.is_sorted_by_key(key)));
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
    // SAFETY: the range is reserved capacity of one list (rounded out to
    // pages of the same mapping); populating writes nothing visible.
    unsafe { populate(addr, n * size_of::<T>(), libc::MADV_POPULATE_WRITE) };
    addr as *mut T
}

/// Maps a chunk's pages in one call rather than a fault per 64 KiB.
fn prefault(b: &[u8]) {
    // SAFETY: the range lies within the file's read-only mapping (rounded
    // out to its pages); populating reads nothing visible.
    unsafe { populate(b.as_ptr() as usize, b.len(), libc::MADV_POPULATE_READ) };
}

/// `madvise(advice)` over the pages under `len` bytes at `addr`; a failure
/// (kernels before 5.14) leaves the pages to be faulted in as before.
///
/// # Safety
/// The pages must belong to one mapping that `advice` may populate.
unsafe fn populate(addr: usize, len: usize, advice: libc::c_int) {
    const PAGE: usize = 4096;
    let (lo, hi) = (addr / PAGE * PAGE, (addr + len).div_ceil(PAGE) * PAGE);
    if len > 0 {
        // SAFETY: the caller's promise.
        unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, advice) };
    }
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
    /// The index of list `k`, added if new.
    fn slot(&mut self, k: K) -> usize {
        *self.index.entry(k).or_insert_with(|| {
            self.lists.push((k, Vec::new()));
            self.len.push(0);
            self.lists.len() - 1
        })
    }

    /// Reserves room for `n` values after what list `i` has placed so far,
    /// and notes where they go (as an index and offset, for `address`).
    fn place_one(&mut self, i: usize, n: usize, out: &mut Vec<(usize, usize)>) -> usize {
        let at = self.len[i];
        out.push((i, at));
        self.len[i] += n;
        at
    }

    /// `place_one` for each of a chunk's lists.
    fn place(&mut self, from: &Lists<K, T>, out: &mut Vec<(usize, usize)>) {
        for (k, v) in from.keys.iter().zip(&from.lists) {
            let i = self.slot(*k);
            self.place_one(i, v.len(), out);
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

/// A span's order in a thread's list: the timeline's.
type Key = (Ns, Reverse<Ns>);

#[inline(always)]
fn key(s: &HostSpan) -> Key {
    span_order(s)
}

/// The final span lists: one per thread and chunk owner, so that a thread's
/// owners are merged from lists of their own at the end (see `OwnedSpans`).
#[derive(Default)]
struct SpanFinals {
    lists: Finals<(u32, u32), HostSpan>,
    /// Per list: its spans are in order so far, and the last one's key.
    order: Vec<(bool, Option<Key>)>,
    /// Per list: its index among its thread's lists.
    local: Vec<usize>,
    /// Per thread, in order of first appearance.
    threads: Vec<ThreadLists>,
    thread_index: FxHashMap<u32, usize>,
}

/// Where one thread's spans are, among the `SpanFinals` lists.
struct ThreadLists {
    tid: u32,
    /// Its lists (indices into `SpanFinals::lists`).
    lists: Vec<usize>,
    /// Its stretches in file order: (list, as a local index; start; length).
    runs: Runs,
    len: usize,
}

impl SpanFinals {
    fn place(&mut self, o: &ChunkOut, owner: u32, out: &mut Vec<(usize, usize)>) {
        let from = &o.spans;
        for ((&tid, v), &sorted) in from.keys.iter().zip(&from.lists).zip(&o.span_sorted) {
            let th = *self.thread_index.entry(tid).or_insert_with(|| {
                self.threads.push(ThreadLists {
                    tid,
                    lists: Vec::new(),
                    runs: Vec::new(),
                    len: 0,
                });
                self.threads.len() - 1
            });
            let th = &mut self.threads[th];
            let i = self.lists.slot((tid, owner));
            if i == self.order.len() {
                self.order.push((true, None));
                self.local.push(th.lists.len());
                th.lists.push(i);
            }
            self.lists.place_one(i, v.len(), out);
            if let (Some(first), Some(last)) = (v.first(), v.last()) {
                let (ok, prev) = &mut self.order[i];
                *ok &= sorted && prev.is_none_or(|p| p <= key(first));
                *prev = Some(key(last));
            }
            let local = self.local[i];
            match th.runs.last_mut() {
                Some(r) if r.0 == local => r.2 += v.len(),
                _ => th.runs.push((local, th.len, v.len())),
            }
            th.len += v.len();
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
    let mut spans = SpanFinals::default();
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
            prefault(c.payload);
            o.decode(c, names, path);
            file.release(c.offset, chunk_size);
        });

        // Places, in chunk order; then room for them.
        for ((o, p), c) in outs.iter_mut().zip(&mut places).zip(batch) {
            p.clear();
            spans.place(o, c.tid, p);
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
        spans.lists.reserve();
        samples.reserve();
        ops.reserve();
        for (o, p) in outs.iter_mut().zip(&places) {
            let (ns, nm) = (o.spans.keys.len(), o.samples.keys.len());
            for (j, &at) in p.iter().enumerate() {
                let a = if j < ns {
                    spans.lists.address(at)
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
            spans.lists.commit();
            samples.commit();
            ops.commit();
        }
        rests.extend(outs.iter_mut().map(|o| std::mem::take(&mut o.rest)));
    }
    drop(outs);

    let mut part = Partial::concat(rests);
    let mut lists: Vec<Option<Vec<HostSpan>>> = spans
        .lists
        .lists
        .into_iter()
        .map(|(_, v)| Some(v))
        .collect();
    for th in spans.threads {
        let owned = OwnedSpans {
            lists: th
                .lists
                .iter()
                .map(|&i| (lists[i].take().unwrap_or_default(), spans.order[i].0))
                .collect(),
            runs: th.runs,
        };
        part.thread(th.tid).owned = owned;
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

/// Stretches of a thread's span list in file order: (list, start, length).
pub(super) type Runs = Vec<(usize, usize, usize)>;

/// A thread's spans, one list per chunk owner, each with whether it is in
/// order. They come from the thread's own chunks (hooked calls) and from the
/// CUPTI thread's (API calls, recorded when CUPTI hands its buffers over), so
/// in the file the owners' stretches interleave, and sorting the joined list
/// from scratch was a fifth of reading (50M events). When each owner's spans
/// are in order, one merge sorts them instead, into the longest list (which
/// then never moves as a whole, and no list is split apart first).
#[derive(Default)]
pub(super) struct OwnedSpans {
    pub(super) lists: Vec<(Vec<HostSpan>, bool)>,
    /// The stretches as the file lays them out.
    pub(super) runs: Runs,
}

impl OwnedSpans {
    pub(super) fn len(&self) -> usize {
        self.lists.iter().map(|l| l.0.len()).sum()
    }

    /// Calls `f` on each span, in file order.
    pub(super) fn for_each_in_file_order(&mut self, mut f: impl FnMut(&mut HostSpan)) {
        let mut at = vec![0; self.lists.len()];
        for &(o, _, n) in &self.runs {
            self.lists[o].0[at[o]..at[o] + n]
                .iter_mut()
                .for_each(&mut f);
            at[o] += n;
        }
    }

    /// The thread's list, with `extra` spans (NVTX ranges, in the order they
    /// ended) after the decoded ones, in the timeline's order
    /// (`model::span_order`, ties in file order, as its stable sort puts
    /// them): merged in order when every owner's spans are in order, or
    /// else joined in file order and sorted.
    pub(super) fn assemble(mut self, mut extra: Vec<HostSpan>) -> Vec<HostSpan> {
        if self.lists.is_empty() {
            extra.sort_by_key(key);
            return extra;
        }
        if !extra.is_empty() {
            // A stable sort keeps the order of equal spans, as the timeline's
            // sort would.
            extra.sort_by_key(key);
            self.runs.push((self.lists.len(), self.len(), extra.len()));
            self.lists.push((extra, true));
        }
        if self.lists.len() == 1 {
            let (mut v, sorted) = self.lists.pop().unwrap_or_default();
            if !sorted {
                sort_stable(&mut v, key);
            }
            return v;
        }
        let total = self.len();
        let big = (0..self.lists.len())
            .max_by_key(|&o| (self.lists[o].0.len(), Reverse(o)))
            .expect("two lists");
        let sorted = self.lists.iter().all(|l| l.1);
        let mut v = std::mem::take(&mut self.lists[big].0);
        let n = v.len();
        v.reserve_exact(total - n);
        // The room after the longest list is fresh memory (see `populated`).
        populated::<HostSpan>(v.as_mut_ptr().wrapping_add(n) as usize, total - n);
        // Each list's stretches, in file order: (start, length).
        let mut of: Vec<Vec<(usize, usize)>> = vec![Vec::new(); self.lists.len()];
        for &(o, at, len) in &self.runs {
            of[o].push((at, len));
        }
        debug_assert!(
            of.iter().zip(&self.lists).enumerate().all(|(o, (st, l))| st
                .iter()
                .map(|x| x.1)
                .sum::<usize>()
                == if o == big { n } else { l.0.len() })
        );
        let base = v.as_mut_ptr();
        let src: Vec<*const HostSpan> = (0..self.lists.len())
            .map(|o| {
                if o == big {
                    base.cast_const()
                } else {
                    self.lists[o].0.as_ptr()
                }
            })
            .collect();
        // SAFETY: `v` has room for `total` spans, and the others hold the
        // rest; both fills write each slot once, from the back, never over a
        // span of `v` not yet moved (see theirs).
        unsafe {
            if sorted {
                merge_back(base, &src, &of, total);
            } else {
                join_back(base, &src, &self.runs, &of);
            }
            v.set_len(total);
        }
        if !sorted {
            sort_stable(&mut v, key);
        }
        v
    }
}

/// Merges the lists `src` (each in order, with its stretches' places in the
/// file `of`) into `dst`, from the back: each step takes, from the list with
/// the last (key, place in the file), everything of its current stretch
/// after the others' last. One of the lists may be `dst` itself, at its
/// start: writing from the back never reaches its spans not yet read, as
/// after them lie as many slots as the other lists have spans left.
///
/// # Safety
/// `dst` has room for `total` spans, the sum of the lists' lengths; each
/// `src[o]` holds the spans of the stretches `of[o]`.
unsafe fn merge_back(
    dst: *mut HostSpan,
    src: &[*const HostSpan],
    of: &[Vec<(usize, usize)>],
    total: usize,
) {
    let lists = src.len();
    // Per list: spans left, its current stretch, spans left in it.
    let mut left: Vec<usize> = of.iter().map(|st| st.iter().map(|x| x.1).sum()).collect();
    let mut stretch: Vec<usize> = of.iter().map(|st| st.len().saturating_sub(1)).collect();
    let mut in_stretch: Vec<usize> = of.iter().map(|st| st.last().map_or(0, |x| x.1)).collect();
    // SAFETY (all reads below): index `j` is below `left[o]`, within `src[o]`.
    let at = |o: usize, j: usize| unsafe { *src[o].add(j) };
    let mut w = total;
    while w > 0 {
        // The list with the last head, and the last head among the others.
        let mut best: Option<(usize, (Key, usize))> = None;
        let mut second: Option<(Key, usize)> = None;
        for o in 0..lists {
            if left[o] == 0 {
                continue;
            }
            let h = (
                key(&at(o, left[o] - 1)),
                of[o][stretch[o]].0 + in_stretch[o] - 1,
            );
            match best {
                Some((_, b)) if h < b => {
                    if second.is_none_or(|x| h > x) {
                        second = Some(h);
                    }
                }
                _ => {
                    second = best.map(|(_, b)| b);
                    best = Some((o, h));
                }
            }
        }
        let Some((o, (_, p))) = best else { break };
        let (k, i) = (left[o], in_stretch[o]);
        let mut take = i;
        if let Some(q) = second {
            // The first step back whose span goes before the others' last.
            let (mut lo, mut hi) = (1, i);
            while lo < hi {
                let mid = (lo + hi) / 2;
                if (key(&at(o, k - 1 - mid)), p - mid) > q {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            take = lo;
        }
        // SAFETY: the caller's promise; `ptr::copy`, as the source may be
        // `dst` itself, a little before.
        unsafe { std::ptr::copy(src[o].add(k - take), dst.add(w - take), take) };
        w -= take;
        left[o] -= take;
        in_stretch[o] -= take;
        while in_stretch[o] == 0 && stretch[o] > 0 {
            stretch[o] -= 1;
            in_stretch[o] = of[o][stretch[o]].1;
        }
    }
    debug_assert_eq!(w, 0);
}

/// Joins the lists `src` into `dst` in file order (`runs`), from the back;
/// as in `merge_back`, one of them may be `dst` itself.
///
/// # Safety
/// As for `merge_back`.
unsafe fn join_back(
    dst: *mut HostSpan,
    src: &[*const HostSpan],
    runs: &Runs,
    of: &[Vec<(usize, usize)>],
) {
    let mut left: Vec<usize> = of.iter().map(|st| st.iter().map(|x| x.1).sum()).collect();
    for &(o, at, n) in runs.iter().rev() {
        left[o] -= n;
        // SAFETY: the caller's promise; a stretch of `dst`'s own list moves
        // right (past the others' spans before it), or stays.
        unsafe { std::ptr::copy(src[o].add(left[o]), dst.add(at), n) };
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::model::SpanKind;

    fn span(ts: i64, dur: i64, id: u32) -> HostSpan {
        HostSpan {
            ts,
            dur,
            arg: 0,
            id,
            kind: SpanKind::CudaRuntime,
        }
    }

    /// The order is checked within each chunk's list and across chunks of
    /// the same owner; a list out of order either way is joined in file
    /// order, not merged.
    #[test]
    fn an_owner_out_of_order_within_or_across_chunks_is_not_merged() {
        // Chunks of (owner, start times of thread 5's spans).
        let read = |chunks: &[(u32, &[i64])]| {
            let mut f = SpanFinals::default();
            let mut places = Vec::new();
            for &(owner, times) in chunks {
                let mut o = ChunkOut::default();
                for &t in times {
                    o.spans.get(5).push(span(t, 1, t as u32));
                }
                o.check_order();
                f.place(&o, owner, &mut places);
            }
            f.order.iter().map(|x| x.0).collect::<Vec<bool>>()
        };
        assert_eq!(read(&[(1, &[1, 3]), (2, &[2]), (1, &[3, 4])]), [true, true]);
        assert_eq!(
            read(&[(1, &[1, 3]), (2, &[2]), (1, &[2, 4])]),
            [false, true]
        );
        assert_eq!(
            read(&[(1, &[1, 3]), (2, &[2]), (1, &[5, 4])]),
            [false, true]
        );

        // Out of order: joined in file order, then sorted stably (the 2 of
        // the first owner, later in the file, after the second owner's).
        let spans = |times: &[i64], owner: u32| -> Vec<HostSpan> {
            times
                .iter()
                .map(|&t| span(t, 1, t as u32 * 10 + owner))
                .collect()
        };
        let owned = OwnedSpans {
            lists: vec![(spans(&[1, 3, 2], 0), false), (spans(&[2], 1), true)],
            runs: vec![(0, 0, 2), (1, 2, 1), (0, 3, 1)],
        };
        let got: Vec<(i64, u32)> = owned
            .assemble(Vec::new())
            .iter()
            .map(|s| (s.ts, s.id))
            .collect();
        assert_eq!(got, [(1, 10), (2, 21), (2, 20), (3, 30)]);
    }

    proptest! {
        /// One to three owners' stretches, each owner's in order (or one
        /// of them not, with `disorder`), with equal keys across them, and
        /// NVTX ranges after them: assembling gives the timeline's stable
        /// sort of the spans in file order, merged in place around the
        /// longest list, or (when an owner's spans are out of order) joined
        /// in file order and sorted.
        #[test]
        fn assembling_owners_is_the_stable_sort(
            // The owners take turns in stretches of 1 to 5 spans of
            // (time step, length draw): each owner's times only grow, and
            // often repeat.
            stretches in prop::collection::vec(
                prop::collection::vec((0..3i64, 0..1_000u64), 1..6),
                1..14,
            ),
            owners in 1usize..4,
            extra in prop::collection::vec((0..40i64, 0..3i64), 0..6),
            disorder in any::<bool>(),
        ) {
            // (time, length) of each owner's last span.
            let mut last = [(0i64, 9i64); 3];
            let (mut file, mut runs): (Vec<HostSpan>, Runs) = (Vec::new(), Vec::new());
            let mut lists: Vec<Vec<HostSpan>> = vec![Vec::new(); owners.min(stretches.len())];
            for (k, stretch) in stretches.iter().enumerate() {
                let owner = k % owners;
                runs.push((owner, file.len(), stretch.len()));
                for &(step, draw) in stretch {
                    let (t, d) = &mut last[owner];
                    *t += step;
                    // Longest first among equal starts.
                    *d = if step == 0 {
                        (draw % (*d as u64 + 1)) as i64
                    } else {
                        (draw % 3) as i64
                    };
                    let s = span(*t, *d, file.len() as u32);
                    file.push(s);
                    lists[owner].push(s);
                }
            }
            if disorder {
                // The first owner's first span, late.
                lists[0][0].ts = 100;
                file[0].ts = 100;
            }
            let extra: Vec<HostSpan> = extra
                .iter()
                .enumerate()
                .map(|(i, &(t, d))| span(t, d, (file.len() + i) as u32))
                .collect();
            let owned = OwnedSpans {
                lists: lists.into_iter().map(|l| {
                    let sorted = l.is_sorted_by_key(key);
                    (l, sorted)
                }).collect(),
                runs,
            };
            let got = owned.assemble(extra.clone());
            let mut want = file.clone();
            want.extend(&extra);
            want.sort_by_key(key);
            prop_assert_eq!(got, want);
        }
    }
}
