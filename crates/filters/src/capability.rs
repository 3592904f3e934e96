//! Capabilities beside [`Filter`]: removal ([`Removable`]) and growth ([`Growable`]). A variant
//! implements only what it can, so removing from a layout without counters does not compile, and
//! the registry derives which names have which capability from the list a type is registered in
//! ([`crate::registry::capabilities`]).

use crate::filter::Filter;
use crate::hash::Digest;
use crate::key::Key;

/// A filter keys can be removed from.
///
/// Guarantee of the correct counting layouts ([`crate::Counting4`], [`crate::Counting8`]): after
/// inserting a multiset of keys and removing some of the inserted ones (each at most as many times
/// as it was inserted), every key still inserted more often than removed is found: no false
/// negatives. A saturated counter (one that reached its maximum) sticks and is never decremented,
/// which costs false positives but never a false negative.
///
/// Removing a key that was never inserted is a caller error no filter can detect: if it tests
/// positive (a false positive), its counters are decremented and keys sharing them may be lost.
/// The textbook port ([`crate::TextbookCountingFnv1aI32`]) implements this trait with its flaws, so
/// that the harness can count its false negatives.
pub trait Removable: Filter {
    /// Removes a precomputed digest: decrements its k counters only when all are non-zero (a
    /// saturated counter stays saturated); returns whether it did.
    fn remove_digest(&mut self, d: Digest) -> bool;

    /// Counters at their saturation value (stuck, never decremented again).
    fn saturated_counters(&self) -> u64;

    /// Calls `visit(index, value)` for each of the k counters digest `d` maps to, in probe order
    /// and with repeats: the counters an insert of `d` increments and a remove decrements, with
    /// their current values. For audits (the harness attributes each false negative to the
    /// mechanism that zeroed a member's counter), not for hot paths.
    fn visit_counters(&self, d: Digest, visit: &mut dyn FnMut(u64, u64));

    /// The value at which an increment stops (`2^bits - 1`).
    fn counter_max(&self) -> u64;

    /// Removes the key whose canonical bytes are `bytes`; see [`Removable::remove_digest`].
    #[inline]
    fn remove_bytes(&mut self, bytes: &[u8]) -> bool {
        let d = self.digest(bytes);
        self.remove_digest(d)
    }
}

/// Key-generic removal for every [`Removable`], including `dyn Removable`.
pub trait RemovableExt: Removable {
    /// Removes `key` (see [`crate::key`] for how keys become bytes); returns whether its counters
    /// were decremented.
    #[inline]
    fn remove<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        key.with_bytes(|b| self.remove_bytes(b))
    }
}

impl<F: Removable + ?Sized> RemovableExt for F {}

/// A filter that adds capacity as keys arrive, in stages (see [`crate::Scalable`]).
pub trait Growable: Filter {
    /// The number of stages allocated so far (at least 1).
    fn stages(&self) -> usize;
}

impl std::fmt::Debug for dyn Removable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Removable")
            .field("name", &self.name())
            .field("bits", &self.bits())
            .field("hashes", &self.hashes())
            .finish()
    }
}

impl std::fmt::Debug for dyn Growable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Growable")
            .field("name", &self.name())
            .field("stages", &self.stages())
            .field("bits", &self.bits())
            .finish()
    }
}
