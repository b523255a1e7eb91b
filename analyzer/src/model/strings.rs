//! Interned strings: names are stored once and referred to by id.

use rustc_hash::FxHashMap;

/// An interned string id; 0 is the empty string.
pub type StrId = u32;

#[derive(Debug, Clone)]
pub struct Strings {
    list: Vec<Box<str>>,
    // Names are hashed per event while reading: FxHash, not SipHash.
    map: FxHashMap<Box<str>, StrId>,
}

impl Default for Strings {
    fn default() -> Self {
        Strings {
            list: vec!["".into()],
            map: FxHashMap::from_iter([("".into(), 0)]),
        }
    }
}

impl Strings {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn intern(&mut self, s: &str) -> StrId {
        if let Some(&id) = self.map.get(s) {
            return id;
        }
        let id = self.list.len() as StrId;
        self.list.push(s.into());
        self.map.insert(s.into(), id);
        id
    }

    /// The string for `id`; unknown ids read as "".
    pub fn get(&self, id: StrId) -> &str {
        self.list.get(id as usize).map(|s| &**s).unwrap_or("")
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.len() <= 1
    }

    /// Interns every string of `other`; returns the id map (other id -> our id).
    pub fn merge(&mut self, other: &Strings) -> Vec<StrId> {
        other.list.iter().map(|s| self.intern(s)).collect()
    }

    pub fn iter(&self) -> impl Iterator<Item = (StrId, &str)> {
        self.list
            .iter()
            .enumerate()
            .map(|(i, s)| (i as StrId, &**s))
    }
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
}
