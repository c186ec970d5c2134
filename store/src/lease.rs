//! The lease table: which leases exist, their TTLs and the keys attached to
//! them. Expiry timers are the server's business; the store keeps what must
//! be replicated and survive restarts, and deletes a revoked lease's keys.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;

use crate::error::StoreError;

/// etcd's `MaxLeaseTTL`: the largest TTL a lease may be granted.
pub const MAX_LEASE_TTL: i64 = 9_000_000_000;

/// What the store knows of one lease.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LeaseInfo {
    pub id: i64,
    /// Granted TTL in seconds.
    pub ttl: i64,
    /// Remaining TTL at the last checkpoint; 0 if never checkpointed.
    pub remaining_ttl: i64,
    /// Keys attached now, ascending.
    pub keys: BTreeSet<Bytes>,
}

impl LeaseInfo {
    /// The `lease` table key of a lease.
    pub(crate) fn table_key(id: i64) -> [u8; 8] {
        id.to_be_bytes()
    }

    /// The persisted part: TTL and checkpointed remaining TTL.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16);
        out.extend_from_slice(&self.ttl.to_be_bytes());
        out.extend_from_slice(&self.remaining_ttl.to_be_bytes());
        out
    }

    pub(crate) fn decode(key: &[u8], value: &[u8]) -> Result<Self, StoreError> {
        let word = |b: &[u8]| b.try_into().map(i64::from_be_bytes);
        let bad = || StoreError::Corrupt(format!("lease record {key:02x?}"));
        if value.len() != 16 {
            return Err(bad());
        }
        Ok(LeaseInfo {
            id: word(key).map_err(|_| bad())?,
            ttl: word(&value[..8]).map_err(|_| bad())?,
            remaining_ttl: word(&value[8..]).map_err(|_| bad())?,
            keys: BTreeSet::new(),
        })
    }
}

#[derive(Debug, Default)]
pub(crate) struct Leases {
    by_id: BTreeMap<i64, LeaseInfo>,
}

impl Leases {
    pub fn get(&self, id: i64) -> Option<&LeaseInfo> {
        self.by_id.get(&id)
    }

    pub fn get_mut(&mut self, id: i64) -> Option<&mut LeaseInfo> {
        self.by_id.get_mut(&id)
    }

    pub fn contains(&self, id: i64) -> bool {
        self.by_id.contains_key(&id)
    }

    pub fn insert(&mut self, lease: LeaseInfo) {
        self.by_id.insert(lease.id, lease);
    }

    pub fn remove(&mut self, id: i64) -> Option<LeaseInfo> {
        self.by_id.remove(&id)
    }

    pub fn all(&self) -> impl Iterator<Item = &LeaseInfo> {
        self.by_id.values()
    }

    /// Moves `key` from lease `from` to lease `to` (0 = none).
    pub fn reattach(&mut self, key: &Bytes, from: i64, to: i64) {
        if from == to {
            return;
        }
        if let Some(l) = self.by_id.get_mut(&from) {
            l.keys.remove(key);
        }
        if let Some(l) = self.by_id.get_mut(&to) {
            l.keys.insert(key.clone());
        }
    }
}
