//! Little-endian field access at fixed offsets. All multi-byte fields on disk are
//! little-endian; records are 8-byte aligned so u64 fields never straddle a record.

/// A fixed-size on-disk field type.
pub trait Field: Copy + Default {
    const SIZE: usize;
    /// Reads the field at `off`; the caller guarantees `off + SIZE <= buf.len()`.
    fn get(buf: &[u8], off: usize) -> Self;
    fn put(self, buf: &mut [u8], off: usize);
}

macro_rules! impl_field {
    ($($t:ty),*) => {$(
        impl Field for $t {
            const SIZE: usize = size_of::<$t>();
            #[inline(always)]
            fn get(buf: &[u8], off: usize) -> Self {
                let mut raw = [0u8; size_of::<$t>()];
                raw.copy_from_slice(&buf[off..off + size_of::<$t>()]);
                <$t>::from_le_bytes(raw)
            }
            #[inline(always)]
            fn put(self, buf: &mut [u8], off: usize) {
                buf[off..off + size_of::<$t>()].copy_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
impl_field!(u8, u16, u32, u64, i32, i64);

#[inline(always)]
pub fn get<T: Field>(buf: &[u8], off: usize) -> T {
    T::get(buf, off)
}

#[inline(always)]
pub fn put<T: Field>(buf: &mut [u8], off: usize, v: T) {
    v.put(buf, off)
}

/// Rounds `n` up to a multiple of 8, the record alignment.
#[inline(always)]
pub const fn align8(n: usize) -> usize {
    (n + 7) & !7
}
