//! Revisions and their on-disk encoding.
//!
//! Every write transaction takes one *main* revision; each change inside it
//! takes the next *sub* revision, so `(main, sub)` orders every change ever
//! made. In the `kv` table a record's key is its revision, big-endian so that
//! byte order is revision order, followed by a marker byte for deletions.

use crate::error::StoreError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Revision {
    pub main: i64,
    pub sub: i64,
}

/// Length of an encoded revision without the tombstone marker.
pub const REVISION_LEN: usize = 16;
const TOMBSTONE_MARK: u8 = b't';

impl Revision {
    pub const fn new(main: i64, sub: i64) -> Self {
        Self { main, sub }
    }

    /// The first possible record key of revision `main`, for range scans.
    pub fn start_key(main: i64) -> Vec<u8> {
        Revision::new(main, 0).encode(false)
    }

    /// The `kv` table key for a record at this revision.
    pub fn encode(self, tombstone: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(REVISION_LEN + 1);
        out.extend_from_slice(&self.main.to_be_bytes());
        out.extend_from_slice(&self.sub.to_be_bytes());
        if tombstone {
            out.push(TOMBSTONE_MARK);
        }
        out
    }

    /// Parses a `kv` table key into its revision and tombstone flag.
    pub fn decode(key: &[u8]) -> Result<(Revision, bool), StoreError> {
        let tombstone = match key.len() {
            REVISION_LEN => false,
            n if n == REVISION_LEN + 1 && key[REVISION_LEN] == TOMBSTONE_MARK => true,
            _ => return Err(StoreError::Corrupt(format!("bad revision key {key:02x?}"))),
        };
        let (main, sub) = key[..REVISION_LEN].split_at(8);
        let word = |b: &[u8]| i64::from_be_bytes(b.try_into().unwrap_or([0; 8]));
        Ok((Revision::new(word(main), word(sub)), tombstone))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips_and_orders_by_revision() {
        let revs = [Revision::new(1, 0), Revision::new(1, 1), Revision::new(2, 0), Revision::new(300, 7)];
        for (i, r) in revs.iter().enumerate() {
            for tomb in [false, true] {
                assert_eq!(Revision::decode(&r.encode(tomb)).ok(), Some((*r, tomb)));
            }
            if let Some(next) = revs.get(i + 1) {
                assert!(r.encode(true) < next.encode(false), "{r:?} must sort before {next:?}");
            }
        }
    }

    #[test]
    fn malformed_keys_are_corruption_not_panics() {
        for bad in [&b""[..], &[0u8; 15], &[0u8; 18], &[0u8; 17]] {
            assert!(matches!(Revision::decode(bad), Err(StoreError::Corrupt(_))));
        }
    }
}
