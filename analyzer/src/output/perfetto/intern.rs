//! Interning of event names, categories, debug-annotation names and string
//! values. Each string is sent once, in the `interned_data` of the first packet
//! that uses it; later packets refer to it by iid. Memory grows with distinct
//! strings only.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::proto::{InternedData, InternedName, InternedString};
use crate::model::{LaunchConfig, StrId, Strings, Timeline};

/// FNV-1a: every arg and category name is looked up once per event, and
/// SipHash on those short keys showed up as a tenth of the write time.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
        self.0 = h;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type Map<K> = HashMap<K, u64, BuildHasherDefault<Fnv>>;

#[derive(Default)]
pub(super) struct Interner {
    /// Event-name iid per model string id (0 = not sent yet): the hot path for
    /// kernel and op names needs no hashing.
    name_by_str: Vec<u64>,
    name_by_text: Map<Box<str>>,
    last_name: u64,
    value_by_str: Vec<u64>,
    value_by_text: Map<Box<str>>,
    last_value: u64,
    arg_names: Map<&'static str>,
    categories: Map<&'static str>,
    /// Grid and block string iids per GPU, per launch config (0 = not yet):
    /// formatting them per kernel would cost more than the rest of the event.
    launches: Vec<Vec<[u64; 2]>>,
    pending: InternedData,
}

impl Interner {
    pub fn new(tl: &Timeline) -> Interner {
        Interner {
            name_by_str: vec![0; tl.strings.len()],
            value_by_str: vec![0; tl.strings.len()],
            launches: tl
                .gpus
                .iter()
                .map(|g| vec![[0; 2]; g.launch_configs.len()])
                .collect(),
            ..Interner::default()
        }
    }

    /// "XxYxZ" string iids of launch config `i` of GPU `g`: [grid, block].
    pub fn launch(&mut self, g: usize, i: u32, lc: &LaunchConfig) -> [u64; 2] {
        let cached = self
            .launches
            .get(g)
            .and_then(|v| v.get(i as usize))
            .copied();
        if let Some(iids) = cached.filter(|c| c[0] != 0) {
            return iids;
        }
        let fmt = |v: [u32; 3]| format!("{}x{}x{}", v[0], v[1], v[2]);
        let iids = [
            self.value_text(&fmt(lc.grid)),
            self.value_text(&fmt(lc.block)),
        ];
        if let Some(slot) = self.launches.get_mut(g).and_then(|v| v.get_mut(i as usize)) {
            *slot = iids;
        }
        iids
    }

    /// The new entries since the last call, to attach to the packet being written.
    pub fn take_pending(&mut self) -> Option<InternedData> {
        (!self.pending.is_empty()).then(|| std::mem::take(&mut self.pending))
    }

    pub fn name_str(&mut self, id: StrId, strings: &Strings) -> u64 {
        match self.name_by_str.get(id as usize) {
            Some(&0) => {
                let iid = self.name_text(strings.get(id));
                self.name_by_str[id as usize] = iid;
                iid
            }
            Some(&iid) => iid,
            // Unknown ids read as "" (Strings::get); never grow the table for them.
            None => self.name_text(""),
        }
    }

    pub fn name_text(&mut self, text: &str) -> u64 {
        if let Some(&iid) = self.name_by_text.get(text) {
            return iid;
        }
        self.last_name += 1;
        let iid = self.last_name;
        self.name_by_text.insert(text.into(), iid);
        self.pending.event_names.push(InternedName {
            iid: Some(iid),
            name: Some(text.to_string()),
        });
        iid
    }

    pub fn value_str(&mut self, id: StrId, strings: &Strings) -> u64 {
        match self.value_by_str.get(id as usize) {
            Some(&0) => {
                let iid = self.value_text(strings.get(id));
                self.value_by_str[id as usize] = iid;
                iid
            }
            Some(&iid) => iid,
            None => self.value_text(""),
        }
    }

    pub fn value_text(&mut self, text: &str) -> u64 {
        if let Some(&iid) = self.value_by_text.get(text) {
            return iid;
        }
        self.last_value += 1;
        let iid = self.last_value;
        self.value_by_text.insert(text.into(), iid);
        self.pending
            .debug_annotation_string_values
            .push(InternedString {
                iid: Some(iid),
                str: Some(text.as_bytes().to_vec()),
            });
        iid
    }

    pub fn arg_name(&mut self, name: &'static str) -> u64 {
        if let Some(&iid) = self.arg_names.get(name) {
            return iid;
        }
        let iid = self.arg_names.len() as u64 + 1;
        self.arg_names.insert(name, iid);
        self.pending.debug_annotation_names.push(InternedName {
            iid: Some(iid),
            name: Some(name.to_string()),
        });
        iid
    }

    pub fn category(&mut self, name: &'static str) -> u64 {
        if let Some(&iid) = self.categories.get(name) {
            return iid;
        }
        let iid = self.categories.len() as u64 + 1;
        self.categories.insert(name, iid);
        self.pending.event_categories.push(InternedName {
            iid: Some(iid),
            name: Some(name.to_string()),
        });
        iid
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_each_string_once() {
        let mut tl = Timeline::new(crate::model::Source::Native, "t");
        let k = tl.strings.intern("sgemm");
        let strings = tl.strings.clone();
        let mut i = Interner::new(&tl);
        let a = i.name_str(k, &strings);
        assert_eq!(i.name_str(k, &strings), a);
        assert_eq!(i.name_text("sgemm"), a);
        let b = i.name_text("read");
        assert_ne!(a, b);
        let unknown = i.name_str(9999, &strings);
        assert_eq!(i.name_text(""), unknown);
        let p = i.take_pending().expect("new names pending");
        let names: Vec<_> = p
            .event_names
            .iter()
            .map(|n| n.name.clone().unwrap())
            .collect();
        assert_eq!(names, ["sgemm", "read", ""]);
        assert!(i.take_pending().is_none());
        assert_eq!(i.arg_name("bytes"), 1);
        assert_eq!(i.arg_name("path"), 2);
        assert_eq!(i.arg_name("bytes"), 1);
        assert_eq!(i.take_pending().unwrap().debug_annotation_names.len(), 2);
    }
}
