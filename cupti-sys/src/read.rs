//! Bounds-checked reads of record fields at the offsets from [`crate::Layouts`].
//!
//! A consumer never casts a record to a struct: it takes `size` bytes from the
//! layout of the record's kind and reads each field at its offset.

use core::ffi::c_char;

/// The bytes of one activity record.
#[derive(Clone, Copy, Debug)]
pub struct Record<'a>(&'a [u8]);

macro_rules! reader {
    ($name:ident, $t:ty) => {
        #[doc = concat!("The `", stringify!($t), "` at `off`, or `None` past the end.")]
        pub fn $name(&self, off: usize) -> Option<$t> {
            let end = off.checked_add(size_of::<$t>())?;
            let bytes = self.0.get(off..end)?;
            Some(<$t>::from_ne_bytes(bytes.try_into().ok()?))
        }
    };
}

impl<'a> Record<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Record(bytes)
    }

    /// # Safety
    /// `ptr` must be valid for reads of `len` bytes for `'a`.
    pub unsafe fn from_raw(ptr: *const u8, len: usize) -> Self {
        // SAFETY: upheld by the caller.
        Record(unsafe { core::slice::from_raw_parts(ptr, len) })
    }

    pub fn bytes(&self) -> &'a [u8] {
        self.0
    }

    /// The `CUpti_ActivityKind` every record starts with.
    pub fn kind(&self) -> Option<u32> {
        self.u32(0)
    }

    reader!(u8, u8);
    reader!(u16, u16);
    reader!(u32, u32);
    reader!(i32, i32);
    reader!(u64, u64);
    reader!(i64, i64);

    /// The pointer at `off` (e.g. a kernel name), possibly null.
    pub fn ptr(&self, off: usize) -> Option<*const c_char> {
        self.u64(off).map(|p| p as usize as *const c_char)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_native_endian_values_and_refuses_past_the_end() {
        let mut b = [0u8; 16];
        b[0..4].copy_from_slice(&10u32.to_ne_bytes());
        b[4..6].copy_from_slice(&0xBEEFu16.to_ne_bytes());
        b[8..16].copy_from_slice(&0x1122_3344_5566_7788u64.to_ne_bytes());
        let r = Record::new(&b);
        assert_eq!(r.kind(), Some(10));
        assert_eq!(r.u16(4), Some(0xBEEF));
        assert_eq!(r.u64(8), Some(0x1122_3344_5566_7788));
        assert_eq!(r.ptr(8), Some(0x1122_3344_5566_7788usize as *const c_char));
        assert_eq!(r.u8(15), Some(0x11));
        assert_eq!(r.u64(9), None);
        assert_eq!(r.u32(13), None);
        assert_eq!(r.u8(16), None);
        assert_eq!(r.u32(usize::MAX - 1), None);
    }
}
