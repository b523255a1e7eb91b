//! Interned strings: names are stored once and referred to by id.
//!
//! The strings live end to end in one buffer, and the table holds ids only:
//! a Kineto piece interns thousands of names (ROCm kernel names run to
//! kilobytes), and with a box per string (two, with the map's key) their
//! allocation, and their freeing on another thread once merged, cost more
//! than the lookups. Each string's hash is kept, so that a merge or a
//! growing table never hashes a string again.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// An interned string id; 0 is the empty string.
pub type StrId = u32;

#[derive(Clone)]
pub struct Strings {
    /// Every string, end to end.
    text: String,
    /// Where string `id` ends in `text`; it starts where `id - 1` ends.
    ends: Vec<usize>,
    /// Each string's hash (names are hashed per event while reading:
    /// FxHash, not SipHash).
    hashes: Vec<u64>,
    /// The ids, found by hash.
    table: HashTable<StrId>,
}

impl Default for Strings {
    fn default() -> Self {
        let mut s = Strings {
            text: String::new(),
            ends: Vec::new(),
            hashes: Vec::new(),
            table: HashTable::new(),
        };
        s.push("", hash(""));
        s
    }
}

impl std::fmt::Debug for Strings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter().map(|(_, s)| s)).finish()
    }
}

#[inline]
fn hash(s: &str) -> u64 {
    FxBuildHasher.hash_one(s)
}

impl Strings {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn intern(&mut self, s: &str) -> StrId {
        self.intern_hashed(s, hash(s))
    }

    /// `intern` with the string's hash already known.
    #[inline]
    fn intern_hashed(&mut self, s: &str, h: u64) -> StrId {
        let (text, ends) = (&self.text, &self.ends);
        if let Some(&id) = self.table.find(h, |&id| slice(text, ends, id) == s) {
            return id;
        }
        self.push(s, h)
    }

    fn push(&mut self, s: &str, h: u64) -> StrId {
        let id = self.ends.len() as StrId;
        self.text.push_str(s);
        self.ends.push(self.text.len());
        self.hashes.push(h);
        let hashes = &self.hashes;
        self.table.insert_unique(h, id, |&id| hashes[id as usize]);
        id
    }

    /// The string for `id`; unknown ids read as "".
    pub fn get(&self, id: StrId) -> &str {
        if (id as usize) < self.ends.len() {
            slice(&self.text, &self.ends, id)
        } else {
            ""
        }
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.len() <= 1
    }

    /// Interns every string of `other`; returns the id map (other id -> our id).
    pub fn merge(&mut self, other: &Strings) -> Vec<StrId> {
        other
            .iter()
            .zip(&other.hashes)
            .map(|((_, s), &h)| self.intern_hashed(s, h))
            .collect()
    }

    pub fn iter(&self) -> impl Iterator<Item = (StrId, &str)> {
        (0..self.ends.len() as StrId).map(|id| (id, slice(&self.text, &self.ends, id)))
    }
}

/// String `id` of `text` (`id` is known).
#[inline]
fn slice<'a>(text: &'a str, ends: &[usize], id: StrId) -> &'a str {
    let i = id as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] };
    &text[start..ends[i]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intern_and_merge() {
        let mut a = Strings::new();
        assert_eq!(a.intern(""), 0);
        let x = a.intern("aten::mm");
        assert_eq!(a.intern("aten::mm"), x);
        let mut b = Strings::new();
        let y = b.intern("read");
        let z = b.intern("aten::mm");
        let map = a.merge(&b);
        assert_eq!(a.get(map[y as usize]), "read");
        assert_eq!(map[z as usize], x);
        assert_eq!(a.get(999), "");
    }

    proptest::proptest! {
        /// Ids are handed out in first-seen order, every id reads back its
        /// string, and a merge maps each id of the other table to the same
        /// text here: checked against a plain list, with names that share
        /// prefixes, run into each other end to end, or are empty.
        #[test]
        fn agrees_with_a_list(
            a in proptest::collection::vec("[ab:]{0,6}", 0..80),
            b in proptest::collection::vec("[ab:]{0,6}", 0..80),
        ) {
            let mut s = Strings::new();
            let mut model: Vec<String> = vec![String::new()];
            for name in &a {
                let id = s.intern(name) as usize;
                let want = model.iter().position(|m| m == name).unwrap_or_else(|| {
                    model.push(name.clone());
                    model.len() - 1
                });
                proptest::prop_assert_eq!(id, want);
            }
            proptest::prop_assert_eq!(s.len(), model.len());
            for (id, text) in s.iter() {
                proptest::prop_assert_eq!(text, model[id as usize].as_str());
            }
            let mut other = Strings::new();
            let ids: Vec<StrId> = b.iter().map(|n| other.intern(n)).collect();
            let map = s.merge(&other);
            for (name, id) in b.iter().zip(ids) {
                proptest::prop_assert_eq!(s.get(map[id as usize]), name.as_str());
                proptest::prop_assert_eq!(s.intern(name), map[id as usize]);
            }
            proptest::prop_assert_eq!(s.get(s.len() as StrId), "");
        }
    }
}
