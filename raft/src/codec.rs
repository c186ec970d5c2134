//! Proposals on the wire and in the log: a store `WriteRequest` plus the
//! proposer's request ID, as an `rtcdraftpb.Proposal`.

use prost::Message;
use rtcd_proto::rtcdraftpb::{Proposal, proposal::Request};
use rtcd_store::WriteRequest;

pub fn encode(id: u64, request: WriteRequest) -> Vec<u8> {
    let request = match request {
        WriteRequest::Put(r) => Request::Put(r),
        WriteRequest::DeleteRange(r) => Request::DeleteRange(r),
        WriteRequest::Txn(r) => Request::Txn(r),
        WriteRequest::Compact(r) => Request::Compaction(r),
        WriteRequest::LeaseGrant(r) => Request::LeaseGrant(r),
        WriteRequest::LeaseRevoke(r) => Request::LeaseRevoke(r),
        WriteRequest::LeaseCheckpoint(r) => Request::LeaseCheckpoint(r),
        WriteRequest::Alarm(r) => Request::Alarm(r),
    };
    Proposal { id, request: Some(request) }.encode_to_vec()
}

/// The proposer's ID and the request; `None` for bytes that are not a
/// proposal this version understands (the entry then changes nothing).
pub fn decode(bytes: &[u8]) -> Option<(u64, WriteRequest)> {
    let proposal = Proposal::decode(bytes).ok()?;
    let request = match proposal.request? {
        Request::Put(r) => WriteRequest::Put(r),
        Request::DeleteRange(r) => WriteRequest::DeleteRange(r),
        Request::Txn(r) => WriteRequest::Txn(r),
        Request::Compaction(r) => WriteRequest::Compact(r),
        Request::LeaseGrant(r) => WriteRequest::LeaseGrant(r),
        Request::LeaseRevoke(r) => WriteRequest::LeaseRevoke(r),
        Request::LeaseCheckpoint(r) => WriteRequest::LeaseCheckpoint(r),
        Request::Alarm(r) => WriteRequest::Alarm(r),
    };
    Some((proposal.id, request))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtcd_proto::etcdserverpb::{CompactionRequest, PutRequest};

    #[test]
    fn proposals_round_trip() {
        let put = WriteRequest::Put(PutRequest { key: "k".into(), value: "v".into(), ..Default::default() });
        assert_eq!(decode(&encode(7, put.clone())), Some((7, put)));
        let compact = WriteRequest::Compact(CompactionRequest { revision: 3, physical: true });
        assert_eq!(decode(&encode(u64::MAX, compact.clone())), Some((u64::MAX, compact)));
        assert_eq!(decode(b"\xff\xff"), None);
    }
}
