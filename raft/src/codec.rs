//! Proposals on the wire and in the log: a store `WriteRequest` plus the
//! proposer's request ID, as an `rtcdraftpb.Proposal`.
//!
//! Every member decodes every committed entry and must decide the same for
//! it, in this version and the next. So decoding may not depend on anything
//! but the bytes: txns are written flat (`FlatTxn`, a list of nodes), because
//! a nested txn would take one decoder recursion level per txn level and the
//! decoder's recursion limit would then decide whether a write applies.

use std::collections::VecDeque;

use prost::Message;
use rtcd_proto::etcdserverpb::{AuthDisableRequest, AuthEnableRequest};
use rtcd_proto::etcdserverpb::{RequestOp, TxnRequest, request_op};
use rtcd_proto::rtcdraftpb::{
    self as pb, FlatOp, FlatTxn, FlatTxnNode, Proposal, flat_op, proposal::Request,
};
use rtcd_store::{AuthRequest, Caller, WriteRequest};

/// Why bytes are not a proposal this version can apply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("not a proposal: {0}")]
    Protobuf(#[from] prost::DecodeError),
    #[error("the proposal carries no request (written by a newer version?)")]
    NoRequest,
    #[error("flat txn: {0}")]
    FlatTxn(&'static str),
}

pub fn encode(id: u64, request: WriteRequest, caller: &Caller) -> Vec<u8> {
    let request = match request {
        WriteRequest::Put(r) => Request::Put(r),
        WriteRequest::DeleteRange(r) => Request::DeleteRange(r),
        WriteRequest::Txn(r) => Request::FlatTxn(flatten(r)),
        WriteRequest::Compact(r) => Request::Compaction(r),
        WriteRequest::LeaseGrant(r) => Request::LeaseGrant(r),
        WriteRequest::LeaseRevoke(r) => Request::LeaseRevoke(r),
        WriteRequest::LeaseCheckpoint(r) => Request::LeaseCheckpoint(r),
        WriteRequest::Alarm(r) => Request::Alarm(r),
        WriteRequest::Auth(r) => encode_auth(r),
    };
    let caller = match caller {
        Caller::Member => None,
        Caller::Client { user, auth_revision } => {
            Some(pb::Caller { user: user.clone(), auth_revision: *auth_revision })
        }
    };
    Proposal { id, request: Some(request), caller }.encode_to_vec()
}

fn encode_auth(request: AuthRequest) -> Request {
    match request {
        AuthRequest::Enable => Request::AuthEnable(AuthEnableRequest {}),
        AuthRequest::Disable => Request::AuthDisable(AuthDisableRequest {}),
        AuthRequest::UserAdd(r) => Request::AuthUserAdd(r),
        AuthRequest::UserDelete(r) => Request::AuthUserDelete(r),
        AuthRequest::UserChangePassword(r) => Request::AuthUserChangePassword(r),
        AuthRequest::UserGrantRole(r) => Request::AuthUserGrantRole(r),
        AuthRequest::UserRevokeRole(r) => Request::AuthUserRevokeRole(r),
        AuthRequest::RoleAdd(r) => Request::AuthRoleAdd(r),
        AuthRequest::RoleDelete(r) => Request::AuthRoleDelete(r),
        AuthRequest::RoleGrantPermission(r) => Request::AuthRoleGrantPermission(r),
        AuthRequest::RoleRevokePermission(r) => Request::AuthRoleRevokePermission(r),
        AuthRequest::Authenticate { name, token, checked_at } => {
            Request::Authenticate(pb::Authenticate { name, token, checked_at })
        }
    }
}

/// A decoded proposal.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The proposing member's ID for it.
    pub id: u64,
    pub request: WriteRequest,
    pub caller: Caller,
}

pub fn decode(bytes: &[u8]) -> Result<Decoded, DecodeError> {
    let proposal = Proposal::decode(bytes)?;
    let request = match proposal.request.ok_or(DecodeError::NoRequest)? {
        Request::Put(r) => WriteRequest::Put(r),
        Request::DeleteRange(r) => WriteRequest::DeleteRange(r),
        Request::Txn(r) => WriteRequest::Txn(r),
        Request::FlatTxn(r) => WriteRequest::Txn(unflatten(r)?),
        Request::Compaction(r) => WriteRequest::Compact(r),
        Request::LeaseGrant(r) => WriteRequest::LeaseGrant(r),
        Request::LeaseRevoke(r) => WriteRequest::LeaseRevoke(r),
        Request::LeaseCheckpoint(r) => WriteRequest::LeaseCheckpoint(r),
        Request::Alarm(r) => WriteRequest::Alarm(r),
        Request::AuthEnable(_) => WriteRequest::Auth(AuthRequest::Enable),
        Request::AuthDisable(_) => WriteRequest::Auth(AuthRequest::Disable),
        Request::AuthUserAdd(r) => WriteRequest::Auth(AuthRequest::UserAdd(r)),
        Request::AuthUserDelete(r) => WriteRequest::Auth(AuthRequest::UserDelete(r)),
        Request::AuthUserChangePassword(r) => WriteRequest::Auth(AuthRequest::UserChangePassword(r)),
        Request::AuthUserGrantRole(r) => WriteRequest::Auth(AuthRequest::UserGrantRole(r)),
        Request::AuthUserRevokeRole(r) => WriteRequest::Auth(AuthRequest::UserRevokeRole(r)),
        Request::AuthRoleAdd(r) => WriteRequest::Auth(AuthRequest::RoleAdd(r)),
        Request::AuthRoleDelete(r) => WriteRequest::Auth(AuthRequest::RoleDelete(r)),
        Request::AuthRoleGrantPermission(r) => WriteRequest::Auth(AuthRequest::RoleGrantPermission(r)),
        Request::AuthRoleRevokePermission(r) => WriteRequest::Auth(AuthRequest::RoleRevokePermission(r)),
        Request::Authenticate(a) => WriteRequest::Auth(AuthRequest::Authenticate {
            name: a.name,
            token: a.token,
            checked_at: a.checked_at,
        }),
    };
    let caller = match proposal.caller {
        None => Caller::Member,
        Some(c) => Caller::Client { user: c.user, auth_revision: c.auth_revision },
    };
    Ok(Decoded { id: proposal.id, request, caller })
}

/// Numbers the txns breadth first, so a nested txn's node always comes after
/// the node that holds it. Iterative: no recursion at any nesting.
fn flatten(root: TxnRequest) -> FlatTxn {
    let mut nodes = Vec::new();
    let mut queue = VecDeque::from([root]);
    while let Some(txn) = queue.pop_front() {
        // The next node pushed takes the index after every node queued.
        let first_free = nodes.len() + 1;
        let mut flat_ops = |ops: Vec<RequestOp>| -> Vec<FlatOp> {
            ops.into_iter()
                .map(|op| {
                    let op = match op.request {
                        Some(request_op::Request::RequestRange(r)) => Some(flat_op::Op::Range(r)),
                        Some(request_op::Request::RequestPut(r)) => Some(flat_op::Op::Put(r)),
                        Some(request_op::Request::RequestDeleteRange(r)) => Some(flat_op::Op::DeleteRange(r)),
                        Some(request_op::Request::RequestTxn(inner)) => {
                            let index = first_free + queue.len();
                            queue.push_back(inner);
                            Some(flat_op::Op::Txn(index as u32))
                        }
                        None => None,
                    };
                    FlatOp { op }
                })
                .collect()
        };
        let success = flat_ops(txn.success);
        let failure = flat_ops(txn.failure);
        nodes.push(FlatTxnNode { compare: txn.compare, success, failure });
    }
    FlatTxn { nodes }
}

/// Rebuilds the nesting from the last node back to the first, so each
/// nested txn is complete before its parent takes it. A node referenced
/// twice, by an earlier node or not at all is refused: `flatten` never
/// writes one.
fn unflatten(flat: FlatTxn) -> Result<TxnRequest, DecodeError> {
    let count = flat.nodes.len();
    if count == 0 {
        return Err(DecodeError::FlatTxn("no nodes"));
    }
    let mut built: Vec<Option<TxnRequest>> = (0..count).map(|_| None).collect();
    for (index, node) in flat.nodes.into_iter().enumerate().rev() {
        let mut ops = |flat_ops: Vec<FlatOp>| -> Result<Vec<RequestOp>, DecodeError> {
            flat_ops
                .into_iter()
                .map(|op| {
                    let request = match op.op {
                        Some(flat_op::Op::Range(r)) => Some(request_op::Request::RequestRange(r)),
                        Some(flat_op::Op::Put(r)) => Some(request_op::Request::RequestPut(r)),
                        Some(flat_op::Op::DeleteRange(r)) => Some(request_op::Request::RequestDeleteRange(r)),
                        Some(flat_op::Op::Txn(child)) => {
                            let child = child as usize;
                            if child <= index {
                                return Err(DecodeError::FlatTxn("a nested txn must come after its parent"));
                            }
                            let inner = built
                                .get_mut(child)
                                .and_then(Option::take)
                                .ok_or(DecodeError::FlatTxn("a nested txn is missing or used twice"))?;
                            Some(request_op::Request::RequestTxn(inner))
                        }
                        None => None,
                    };
                    Ok(RequestOp { request })
                })
                .collect()
        };
        let success = ops(node.success)?;
        let failure = ops(node.failure)?;
        built[index] = Some(TxnRequest { compare: node.compare, success, failure });
    }
    let mut nodes = built.into_iter();
    let root = nodes.next().flatten().ok_or(DecodeError::FlatTxn("no outer txn"))?;
    if nodes.any(|unused| unused.is_some()) {
        return Err(DecodeError::FlatTxn("a nested txn is not used"));
    }
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtcd_proto::etcdserverpb::{
        CompactionRequest, Compare, DeleteRangeRequest, PutRequest, RangeRequest, compare,
    };

    fn put(key: &str) -> RequestOp {
        RequestOp {
            request: Some(request_op::Request::RequestPut(PutRequest {
                key: key.to_owned().into(),
                value: "v".into(),
                ..Default::default()
            })),
        }
    }

    fn member(id: u64, request: WriteRequest) -> Decoded {
        Decoded { id, request, caller: Caller::Member }
    }

    fn nested(txn: TxnRequest) -> RequestOp {
        RequestOp { request: Some(request_op::Request::RequestTxn(txn)) }
    }

    /// `depth` txns, each holding the next in its success branch, the
    /// innermost putting `k`.
    fn chain(depth: usize) -> TxnRequest {
        let mut txn = TxnRequest { success: vec![put("k")], ..Default::default() };
        for _ in 1..depth {
            txn = TxnRequest { success: vec![nested(txn)], ..Default::default() };
        }
        txn
    }

    #[test]
    fn proposals_round_trip() {
        let put = WriteRequest::Put(PutRequest { key: "k".into(), value: "v".into(), ..Default::default() });
        let member = Caller::Member;
        assert_eq!(
            decode(&encode(7, put.clone(), &member)),
            Ok(Decoded { id: 7, request: put, caller: member })
        );
        let compact = WriteRequest::Compact(CompactionRequest { revision: 3, physical: true });
        let alice = Caller::Client { user: "alice".into(), auth_revision: 4 };
        assert_eq!(
            decode(&encode(u64::MAX, compact.clone(), &alice)),
            Ok(Decoded { id: u64::MAX, request: compact, caller: alice })
        );
        assert!(matches!(decode(b"\xff\xff"), Err(DecodeError::Protobuf(_))));
        assert_eq!(
            decode(&Proposal { id: 1, request: None, caller: None }.encode_to_vec()),
            Err(DecodeError::NoRequest)
        );
    }

    #[test]
    fn txns_round_trip_with_branches_and_nesting() {
        let inner = TxnRequest {
            compare: vec![Compare {
                key: "c".into(),
                target: compare::CompareTarget::Version as i32,
                ..Default::default()
            }],
            success: vec![put("a"), nested(chain(3))],
            failure: vec![
                RequestOp {
                    request: Some(request_op::Request::RequestDeleteRange(DeleteRangeRequest {
                        key: "d".into(),
                        ..Default::default()
                    })),
                },
                nested(chain(2)),
                RequestOp { request: None },
            ],
        };
        let txn = TxnRequest {
            compare: vec![],
            success: vec![
                nested(inner.clone()),
                RequestOp {
                    request: Some(request_op::Request::RequestRange(RangeRequest {
                        key: "r".into(),
                        ..Default::default()
                    })),
                },
            ],
            failure: vec![nested(inner), put("f")],
        };
        let request = WriteRequest::Txn(txn);
        assert_eq!(decode(&encode(9, request.clone(), &Caller::Member)), Ok(member(9, request)));
    }

    /// The finding this encoding fixes: a txn nested as deep as etcd allows
    /// (and far deeper) decodes, where the nested encoding stops at prost's
    /// recursion limit.
    #[test]
    fn deep_txns_decode_whatever_their_nesting() {
        for depth in [49, 50, 51, 128, 129, 1_000] {
            let request = WriteRequest::Txn(chain(depth));
            if (50..=129).contains(&depth) {
                let nested_form = Proposal { id: 1, request: Some(Request::Txn(chain(depth))), caller: None }
                    .encode_to_vec();
                assert!(decode(&nested_form).is_err(), "the old form fails at depth {depth}");
            }
            let decoded = decode(&encode(1, request.clone(), &Caller::Member));
            assert!(decoded == Ok(member(1, request)), "depth {depth}");
        }
    }

    #[test]
    fn entries_in_the_nested_form_still_decode() {
        let bytes = Proposal { id: 4, request: Some(Request::Txn(chain(3))), caller: None }.encode_to_vec();
        assert_eq!(decode(&bytes), Ok(member(4, WriteRequest::Txn(chain(3)))));
    }

    #[test]
    fn malformed_flat_txns_are_refused() {
        let op = |child: u32| FlatOp { op: Some(flat_op::Op::Txn(child)) };
        let node = |success: Vec<FlatOp>| FlatTxnNode { success, ..Default::default() };
        let cases = [
            vec![],
            vec![node(vec![op(0)])],
            vec![node(vec![op(1)]), node(vec![op(1)])],
            vec![node(vec![op(1), op(1)]), node(vec![])],
            vec![node(vec![op(7)])],
            vec![node(vec![]), node(vec![])],
        ];
        for nodes in cases {
            let bytes = Proposal {
                id: 1,
                request: Some(Request::FlatTxn(FlatTxn { nodes: nodes.clone() })),
                caller: None,
            }
            .encode_to_vec();
            assert!(matches!(decode(&bytes), Err(DecodeError::FlatTxn(_))), "{nodes:?}");
        }
    }
}
