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

use super::decode::{Rec, Walk, api_span, host_span, kernel_op, memcpy_op, memset_op, other};
use super::decode::{config_of, sample};
use super::file::Names;
use super::partial::Partial;
use crate::model::{GpuOp, HostSpan, LaunchConfig, Ns, Sample};

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
    /// Per list, which chunk owner's records fill each stretch of it.
    runs: Vec<Runs>,
}

/// Stretches of a final list, in list order: (chunk owner, start, length).
pub(super) type Runs = Vec<(u32, usize, usize)>;

impl<K, T> Default for Finals<K, T> {
    fn default() -> Self {
        Finals {
            index: FxHashMap::default(),
            lists: Vec::new(),
            len: Vec::new(),
            runs: Vec::new(),
        }
    }
}

impl<K: Copy + Eq + std::hash::Hash, T> Finals<K, T> {
    /// Reserves room for a chunk's lists after what is placed so far, and
    /// notes where each goes (as an index and offset, for `addresses`).
    fn place(&mut self, from: &Lists<K, T>, owner: u32, out: &mut Vec<(usize, usize)>) {
        for (k, v) in from.keys.iter().zip(&from.lists) {
            let i = *self.index.entry(*k).or_insert_with(|| {
                self.lists.push((*k, Vec::new()));
                self.len.push(0);
                self.runs.push(Vec::new());
                self.lists.len() - 1
            });
            let at = self.len[i];
            out.push((i, at));
            self.len[i] += v.len();
            match self.runs[i].last_mut() {
                Some(r) if r.0 == owner => r.2 += v.len(),
                _ => self.runs[i].push((owner, at, v.len())),
            }
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
        for ((o, p), c) in outs.iter_mut().zip(&mut places).zip(batch) {
            p.clear();
            let owner = c.tid;
            spans.place(&o.spans, owner, p);
            samples.place(&o.samples, owner, p);
            ops.place(&o.ops, owner, p);
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
    for ((tid, v), runs) in spans.lists.into_iter().zip(spans.runs) {
        let t = part.thread(tid);
        t.spans = v;
        t.owners = runs;
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

/// A span's place in the merge: (start, longest first), then its place in
/// the list as it was.
type Head = ((Ns, Reverse<Ns>), usize);

/// A thread's spans come from its own chunks (hooked calls) and from the
/// CUPTI thread's (API calls, recorded when CUPTI hands its buffers over), so
/// its list is the owners' stretches interleaved, and the timeline would sort
/// it from scratch (a fifth of reading, on 50M events). When each owner's
/// spans are in order, one merge sorts it instead. Ties go in list order, as
/// the timeline's stable sort puts them, so the result is the same.
pub(super) fn merge_owners(v: &mut [HostSpan], runs: &Runs) {
    let key = |s: &HostSpan| (s.ts, Reverse(s.dur));
    let mut owners: Vec<u32> = runs.iter().map(|r| r.0).collect();
    owners.sort_unstable();
    owners.dedup();
    if owners.len() < 2 {
        return;
    }
    // Each owner's stretches, in list order.
    let of: Vec<Vec<(usize, usize)>> = owners
        .iter()
        .map(|o| {
            runs.iter()
                .filter(|r| r.0 == *o)
                .map(|r| (r.1, r.2))
                .collect()
        })
        .collect();
    let in_order = |stretches: &Vec<(usize, usize)>| {
        let mut spans = stretches.iter().flat_map(|&(at, n)| &v[at..at + n]);
        let Some(first) = spans.next() else {
            return true;
        };
        let mut prev = key(first);
        spans.all(|s| {
            let k = key(s);
            let ok = prev <= k;
            prev = k;
            ok
        })
    };
    if !of.par_iter().all(in_order) {
        return;
    }
    // The stretches must tile the list (the merge writes every slot).
    let mut end = 0;
    for &(_, at, n) in runs {
        if at != end {
            return;
        }
        end += n;
    }
    if end != v.len() {
        return;
    }
    // The merge is done in place: a fresh list of this size (22M spans on
    // 50M events) cost more in page faults than the merge itself. The owner
    // with the most spans stays in `v`, its stretches moved together to the
    // end; the others are copied out. Writing from the front then never
    // reaches the big owner's spans not yet read: before them lie as many
    // slots as the others have spans left.
    let sizes: Vec<usize> = of.iter().map(|s| s.iter().map(|x| x.1).sum()).collect();
    let big = (0..of.len())
        .max_by_key(|&o| (sizes[o], Reverse(o)))
        .expect("two owners");
    let out: Vec<Vec<HostSpan>> = of
        .iter()
        .enumerate()
        .map(|(o, st)| {
            if o == big {
                return Vec::new();
            }
            let mut b = Vec::with_capacity(sizes[o]);
            for &(at, n) in st {
                b.extend_from_slice(&v[at..at + n]);
            }
            b
        })
        .collect();
    let moved = v.len() - sizes[big];
    let mut to = v.len();
    for &(at, n) in of[big].iter().rev() {
        // Each stretch moves right (past the others' spans after it), and
        // the later ones have moved already.
        to -= n;
        v.copy_within(at..at + n, to);
    }
    debug_assert_eq!(to, moved);
    // Per owner: (stretch, index in it), and the index of the stretch's
    // first span in the owner's spans (in `out`, or in `v` from `moved`).
    let mut at: Vec<(usize, usize)> = vec![(0, 0); of.len()];
    let mut first: Vec<usize> = vec![0; of.len()];
    // The owner's span at `at[o]`, and its place in the list as it was
    // (which breaks ties, as the stable sort does).
    let head = |o: usize, at: &[(usize, usize)], first: &[usize], v: &[HostSpan]| {
        let (r, i) = at[o];
        let &(start, _) = of[o].get(r)?;
        let k = first[o] + i;
        let s = if o == big { v[moved + k] } else { out[o][k] };
        Some((key(&s), start + i))
    };
    let mut written = 0;
    while written < v.len() {
        // The owner with the first head, and the first head among the others.
        let mut best: Option<(usize, Head)> = None;
        let mut second: Option<Head> = None;
        for o in 0..of.len() {
            let Some(h) = head(o, &at, &first, v) else {
                continue;
            };
            match best {
                Some((_, b)) if h >= b => {
                    if second.is_none_or(|x| h < x) {
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
        // Everything of this stretch before the others' first head goes at
        // once (stretches are long, and owners take turns in long blocks).
        let (r, i) = at[o];
        let (start, len) = of[o][r];
        let k = first[o] + i;
        let src = |j: usize, v: &[HostSpan]| if o == big { v[moved + j] } else { out[o][j] };
        let mut take = len - i;
        if let Some(q) = second {
            let (mut lo, mut hi) = (1, take);
            while lo < hi {
                let mid = (lo + hi) / 2;
                if (key(&src(k + mid, v)), p + mid) < q {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            take = lo;
        }
        debug_assert_eq!(p, start + i);
        if o == big {
            v.copy_within(moved + k..moved + k + take, written);
        } else {
            v[written..written + take].copy_from_slice(&out[o][k..k + take]);
        }
        written += take;
        at[o] = if i + take == len {
            first[o] += len;
            (r + 1, 0)
        } else {
            (r, i + take)
        };
    }
    debug_assert_eq!(written, v.len());
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

    proptest! {
        /// Two or three owners' stretches, each in order, with equal keys
        /// across them: the merge (in place, around the biggest owner) gives
        /// what the timeline's stable sort gives.
        #[test]
        fn merging_owners_is_the_stable_sort(
            // The owners take turns in stretches of 1 to 5 spans of
            // (time step, length draw): each owner's times only grow, and
            // often repeat.
            stretches in prop::collection::vec(
                prop::collection::vec((0..3i64, 0..1_000u64), 1..6),
                2..14,
            ),
            owners in 2usize..4,
        ) {
            // (time, length) of each owner's last span.
            let mut last = [(0i64, 9i64); 3];
            let (mut v, mut runs): (Vec<HostSpan>, Runs) = (Vec::new(), Vec::new());
            for (k, stretch) in stretches.iter().enumerate() {
                let owner = 1 + (k % owners) as u32;
                runs.push((owner, v.len(), stretch.len()));
                for &(step, draw) in stretch {
                    let (t, d) = &mut last[owner as usize - 1];
                    *t += step;
                    // Longest first among equal starts.
                    *d = if step == 0 {
                        (draw % (*d as u64 + 1)) as i64
                    } else {
                        (draw % 3) as i64
                    };
                    v.push(span(*t, *d, v.len() as u32));
                }
            }
            let mut want = v.clone();
            want.sort_by_key(|s| (s.ts, Reverse(s.dur)));
            merge_owners(&mut v, &runs);
            prop_assert_eq!(v, want);
        }
    }
}
