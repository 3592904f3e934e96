//! How keys become bytes: the role Guava's `Funnel` plays.
//!
//! Every filter hashes bytes. The encodings are fixed and documented, so that a key hashes the same
//! in every filter, in the benches and in other languages:
//! - `[u8]`, `Vec<u8>`: the bytes themselves;
//! - `str`, `String`: the raw UTF-8 bytes, no length prefix or terminator (Guava's
//!   `Funnels.stringFunnel(UTF_8)`);
//! - `u64`, `i64`: 8 little-endian bytes (Guava's `Funnels.longFunnel()`);
//! - `u32`, `i32`: 4 little-endian bytes (Guava's `Funnels.integerFunnel()`).
//!
//! A struct becomes a key by writing its fields into a [`KeyBytes`] buffer, in a fixed order:
//!
//! ```
//! use bloomlab_filters::{Key, KeyBytes};
//! struct Visit { user: u64, url: String }
//! impl Key for Visit {
//!     fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
//!         let mut kb = KeyBytes::new();
//!         kb.put_u64(self.user).put_str_prefixed(&self.url);
//!         f(kb.as_slice())
//!     }
//! }
//! ```

/// A value that can be inserted into or looked up in a filter.
pub trait Key {
    /// Calls `f` with this key's canonical byte encoding (see the module docs).
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R;
}

impl Key for [u8] {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl<const N: usize> Key for [u8; N] {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl Key for Vec<u8> {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl Key for str {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_bytes())
    }
}

impl Key for String {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_bytes())
    }
}

macro_rules! le_key {
    ($($t:ty),*) => {$(
        impl Key for $t {
            #[inline]
            fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
                f(&self.to_le_bytes())
            }
        }
    )*};
}
le_key!(u64, i64, u32, i32);

impl<K: Key + ?Sized> Key for &K {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        (**self).with_bytes(f)
    }
}

/// A byte buffer for composite keys: 64 bytes on the stack, spilling to the heap only when a key is
/// longer, so that typical struct keys cost no allocation.
#[derive(Debug, Clone)]
pub struct KeyBytes {
    inline: [u8; 64],
    len: usize,
    spill: Vec<u8>,
}

impl Default for KeyBytes {
    fn default() -> Self {
        Self::new()
    }
}

impl KeyBytes {
    /// An empty buffer.
    pub fn new() -> Self {
        Self {
            inline: [0; 64],
            len: 0,
            spill: Vec::new(),
        }
    }

    /// Appends raw bytes.
    pub fn put_bytes(&mut self, bytes: &[u8]) -> &mut Self {
        if self.spill.is_empty() && self.len + bytes.len() <= self.inline.len() {
            self.inline[self.len..self.len + bytes.len()].copy_from_slice(bytes);
            self.len += bytes.len();
        } else {
            if self.spill.is_empty() {
                self.spill.extend_from_slice(&self.inline[..self.len]);
            }
            self.spill.extend_from_slice(bytes);
        }
        self
    }

    /// Appends 8 little-endian bytes.
    pub fn put_u64(&mut self, v: u64) -> &mut Self {
        self.put_bytes(&v.to_le_bytes())
    }

    /// Appends 4 little-endian bytes.
    pub fn put_u32(&mut self, v: u32) -> &mut Self {
        self.put_bytes(&v.to_le_bytes())
    }

    /// Appends the raw UTF-8 bytes of `s` (no length: use [`put_str_prefixed`](Self::put_str_prefixed)
    /// when two adjacent string fields could otherwise run together, as "ab"+"c" and "a"+"bc" do).
    pub fn put_str(&mut self, s: &str) -> &mut Self {
        self.put_bytes(s.as_bytes())
    }

    /// Appends the byte length as 8 little-endian bytes, then the UTF-8 bytes.
    pub fn put_str_prefixed(&mut self, s: &str) -> &mut Self {
        self.put_u64(s.len() as u64).put_str(s)
    }

    /// The bytes written so far.
    pub fn as_slice(&self) -> &[u8] {
        if self.spill.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.spill
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_are_documented_ones() {
        assert_eq!(
            7u64.with_bytes(|b| b.to_vec()),
            vec![7, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            (-2i32).with_bytes(|b| b.to_vec()),
            vec![0xfe, 0xff, 0xff, 0xff]
        );
        assert_eq!("hé".with_bytes(|b| b.to_vec()), vec![b'h', 0xc3, 0xa9]);
    }

    #[test]
    fn key_bytes_spills_past_inline_capacity() {
        let mut kb = KeyBytes::new();
        let long: Vec<u8> = (0..100u8).collect();
        kb.put_bytes(&long[..40]).put_bytes(&long[40..]);
        assert_eq!(kb.as_slice(), &long[..]);
        let mut short = KeyBytes::new();
        short.put_u32(1).put_str("ab");
        assert_eq!(short.as_slice(), &[1, 0, 0, 0, b'a', b'b']);
    }
}
