//! Fills every response header in one place, as etcd's `header.go` does.

use rtcd_proto::etcdserverpb::ResponseHeader;
use sha2::{Digest, Sha256};

#[derive(Debug, Clone)]
pub struct Identity {
    pub cluster_id: u64,
    pub member_id: u64,
}

/// A member's stable ID, derived from what defines it: its peer URLs and the
/// cluster token (etcd derives its IDs the same way, with SHA-1).
pub fn member_id(peer_urls: &[String], cluster_token: &str) -> u64 {
    let mut urls = peer_urls.to_vec();
    urls.sort();
    id_from(&[urls.join("").as_bytes(), cluster_token.as_bytes()])
}

/// The cluster's ID, the same on every member: from all initial member IDs.
pub fn cluster_id(member_ids: impl IntoIterator<Item = u64>, cluster_token: &str) -> u64 {
    let mut ids: Vec<u64> = member_ids.into_iter().collect();
    ids.sort_unstable();
    let bytes: Vec<u8> = ids.iter().flat_map(|id| id.to_be_bytes()).collect();
    id_from(&[&bytes, cluster_token.as_bytes()])
}

impl Identity {
    /// Sets the IDs and term, and the revision when the handler left it unset.
    pub fn fill(&self, header: &mut Option<ResponseHeader>, revision: i64, raft_term: u64) {
        let h = header.get_or_insert_with(ResponseHeader::default);
        h.cluster_id = self.cluster_id;
        h.member_id = self.member_id;
        h.raft_term = raft_term;
        if h.revision == 0 {
            h.revision = revision;
        }
    }
}

fn id_from(parts: &[&[u8]]) -> u64 {
    let mut hasher = Sha256::new();
    for p in parts {
        hasher.update(p);
    }
    let digest = hasher.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    // Zero means "no member" in etcd's API.
    u64::from_be_bytes(first).max(1)
}

/// Responses whose header the server completes.
pub trait WithHeader {
    fn header_mut(&mut self) -> &mut Option<ResponseHeader>;
}

macro_rules! with_header {
    ($($t:ty),* $(,)?) => {
        $(impl WithHeader for $t {
            fn header_mut(&mut self) -> &mut Option<ResponseHeader> {
                &mut self.header
            }
        })*
    };
}

with_header!(
    rtcd_proto::etcdserverpb::PutResponse,
    rtcd_proto::etcdserverpb::DeleteRangeResponse,
    rtcd_proto::etcdserverpb::TxnResponse,
    rtcd_proto::etcdserverpb::CompactionResponse,
    rtcd_proto::etcdserverpb::LeaseGrantResponse,
    rtcd_proto::etcdserverpb::LeaseRevokeResponse,
    rtcd_proto::etcdserverpb::AlarmResponse,
    rtcd_proto::etcdserverpb::MemberAddResponse,
    rtcd_proto::etcdserverpb::MemberRemoveResponse,
    rtcd_proto::etcdserverpb::MemberUpdateResponse,
    rtcd_proto::etcdserverpb::MemberPromoteResponse,
);
