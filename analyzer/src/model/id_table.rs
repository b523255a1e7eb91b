//! A table indexed by correlation id, for ids dense enough to beat a sort
//! or a hash map.
//!
//! The table starts at the smallest id seen, not at 0: a Kineto trace of a
//! later step numbers its calls from far above 0 (rank0 of HTA's tests:
//! 41k calls with ids 815k-937k), and a table from 0 would write and fault
//! in megabytes of slots that no call uses.

/// Whether ids spread over `range` slots for `calls` calls go in a table
/// (up to 16 slots a call, plus 64k). A table of 4-8 bytes a slot beats
/// sorting 12 bytes a call even when few ids are calls.
pub(crate) fn fits_a_table(range: u64, calls: usize) -> bool {
    range <= 16 * calls as u64 + (1 << 16)
}

/// Slots for the ids `lo..lo + slots.len()`, each `empty` until written.
#[derive(Debug, Clone, Default)]
pub(crate) struct IdTable<T> {
    lo: u32,
    slots: Vec<T>,
    empty: T,
}

impl<T: Copy + PartialEq> IdTable<T> {
    pub(crate) fn new(empty: T) -> Self {
        IdTable {
            lo: 0,
            slots: Vec::new(),
            empty,
        }
    }

    /// An empty table for the ids `lo..=hi`, with every slot allocated.
    pub(crate) fn with_range(lo: u32, hi: u32, empty: T) -> Self {
        IdTable {
            lo,
            slots: vec![empty; (hi - lo) as usize + 1],
            empty,
        }
    }

    /// The slots an id `id` would make the table span: what
    /// [`fits_a_table`] is asked before [`Self::slot`] grows it.
    pub(crate) fn range_with(&self, id: u32) -> u64 {
        if self.slots.is_empty() {
            return 1;
        }
        let hi = u64::from(self.lo) + self.slots.len() as u64 - 1;
        let (lo, hi) = (u64::from(self.lo).min(u64::from(id)), hi.max(u64::from(id)));
        hi - lo + 1
    }

    /// The slots the table spans.
    pub(crate) fn range(&self) -> u64 {
        self.slots.len() as u64
    }

    /// The slot of `id`, growing the table to hold it.
    #[inline]
    pub(crate) fn slot(&mut self, id: u32) -> &mut T {
        if self.slots.is_empty() {
            self.lo = id;
        }
        if id < self.lo {
            self.grow_down(id);
        }
        let at = (id - self.lo) as usize;
        if at >= self.slots.len() {
            self.slots.resize(at + 1, self.empty);
        }
        &mut self.slots[at]
    }

    /// Room below `lo` for `id`, and as much again, so that ids arriving in
    /// falling order move the slots a logarithmic number of times.
    #[cold]
    fn grow_down(&mut self, id: u32) {
        let lo = id.saturating_sub(self.slots.len().min(u32::MAX as usize) as u32);
        let by = (self.lo - lo) as usize;
        let n = self.slots.len();
        self.slots.resize(n + by, self.empty);
        self.slots.copy_within(0..n, by);
        self.slots[..by].fill(self.empty);
        self.lo = lo;
    }

    /// The value at `id`, if one was written there.
    #[inline]
    pub(crate) fn get(&self, id: u32) -> Option<T> {
        let v = *self.slots.get(id.checked_sub(self.lo)? as usize)?;
        (v != self.empty).then_some(v)
    }

    /// How many slots hold a value.
    pub(crate) fn filled(&self) -> usize {
        self.slots.iter().filter(|&&v| v != self.empty).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn starts_at_the_first_id_and_grows_both_ways() {
        let mut t = IdTable::new(0u32);
        *t.slot(900_000) = 1;
        assert_eq!(t.range(), 1);
        *t.slot(900_010) = 2;
        assert_eq!(t.range(), 11);
        *t.slot(899_990) = 3;
        assert!(t.range() >= 21 && t.range() <= 40, "{}", t.range());
        assert_eq!(t.get(900_000), Some(1));
        assert_eq!(t.get(900_010), Some(2));
        assert_eq!(t.get(899_990), Some(3));
        assert_eq!(t.get(900_005), None);
        assert_eq!(t.get(0), None);
        assert_eq!(t.get(u32::MAX), None);
        assert_eq!(t.filled(), 3);
    }

    #[test]
    fn range_with_counts_the_slots_an_id_would_add() {
        let mut t = IdTable::new(i64::MAX);
        assert_eq!(t.range_with(7), 1);
        *t.slot(100) = 5;
        assert_eq!(t.range_with(100), 1);
        assert_eq!(t.range_with(109), 10);
        assert_eq!(t.range_with(91), 10);
        let full = IdTable::with_range(10, 19, i64::MAX);
        assert_eq!(full.range(), 10);
        assert_eq!(full.get(10), None);
    }

    proptest! {
        /// Whatever order ids come in, each reads back what was last
        /// written to it, and nothing else reads as written.
        #[test]
        fn reads_back_like_a_map(ids in proptest::collection::vec((0u32..5_000, 1u32..1_000), 1..300), base in 0u32..3_000_000) {
            let mut t = IdTable::new(0u32);
            let mut m = std::collections::HashMap::new();
            for &(id, v) in &ids {
                *t.slot(base + id) = v;
                m.insert(base + id, v);
            }
            for id in 0..5_000 {
                prop_assert_eq!(t.get(base + id), m.get(&(base + id)).copied());
            }
            prop_assert_eq!(t.filled(), m.len());
            let (lo, hi) = (m.keys().min().unwrap(), m.keys().max().unwrap());
            prop_assert!(t.range() > u64::from(hi - lo));
            prop_assert!(t.range() <= 2 * (u64::from(hi - lo) + 1), "{} for {}..{}", t.range(), lo, hi);
        }
    }
}
