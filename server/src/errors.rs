//! The one place where rtcd's errors become what etcd clients see: etcd's
//! gRPC code and its exact message text (clients match on the string).

use rtcd_store::{AuthError, StoreError};
use tonic::{Code, Status};

/// Errors the etcd API can answer with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EtcdError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("request is too large")]
    RequestTooLarge,
    #[error("server stopped")]
    Stopped,
    #[error("not supported: {0}")]
    Unsupported(&'static str),
    /// MoveLeader to a member that cannot lead (unknown, or a learner).
    #[error("bad leader transferee")]
    BadLeaderTransferee,
    #[error("no leader")]
    NoLeader,
    /// A leader-only request reached a follower.
    #[error("not leader")]
    NotLeader,
    #[error("leader changed")]
    LeaderChanged,
    #[error("request timed out")]
    Timeout,
    #[error("member not found")]
    MemberNotFound,
    #[error("member ID already exists")]
    MemberExists,
    #[error("peer URLs already exist")]
    PeerUrlExists,
    #[error("given member URLs are invalid")]
    MemberBadUrls,
    #[error("can only promote a learner member")]
    MemberNotLearner,
    #[error("can only promote a learner member which is in sync with leader")]
    LearnerNotReady,
    #[error("too many learner members in cluster")]
    TooManyLearners,
    /// Strict reconfiguration: too few started voters for the new quorum.
    #[error("re-configuration failed due to not enough started members")]
    NotEnoughStartedMembers,
    /// Strict reconfiguration: removing this voter would leave too few
    /// connected ones.
    #[error("unhealthy cluster")]
    Unhealthy,
    /// A membership change lost a race with another one (etcd serializes
    /// them, so it has no text for this).
    #[error("membership change rejected: {0}")]
    ReconfigRejected(String),
    /// The leader could not decode a request this member forwarded.
    #[error("undecodable request: {0}")]
    Undecodable(String),
    /// A learner was asked what etcd serves only from voters.
    #[error("rpc not supported for learner")]
    NotSupportedForLearner,
    /// Proclaim by a candidate whose key is gone or was re-created.
    #[error("election: not leader")]
    ElectionNotLeader,
    /// Leader of an election no one has campaigned in.
    #[error("election: no leader")]
    ElectionNoLeader,
    /// No token could be made (a member with a JWT public key only);
    /// etcd's token providers answer with a plain Go error.
    #[error("{0}")]
    TokenSigning(String),
    /// Proclaim or Resign without the `leader` field.
    #[error("missing leader key")]
    MissingLeaderKey,
}

impl From<rtcd_raft::ReplicationError> for EtcdError {
    fn from(e: rtcd_raft::ReplicationError) -> Self {
        use rtcd_raft::ReplicationError as R;
        match e {
            R::NoLeader => EtcdError::NoLeader,
            R::LeaderChanged => EtcdError::LeaderChanged,
            R::Timeout => EtcdError::Timeout,
            R::NotLeader => EtcdError::NotLeader,
            R::Rejected(why) => EtcdError::ReconfigRejected(why),
            R::Undecodable(why) => EtcdError::Undecodable(why),
            R::Stopped(why) => {
                tracing::warn!(%why, "replication stopped");
                EtcdError::Stopped
            }
        }
    }
}

impl From<EtcdError> for Status {
    fn from(err: EtcdError) -> Status {
        use StoreError as S;
        let (code, message) = match &err {
            EtcdError::Store(store) => match store {
                S::Compacted => (Code::OutOfRange, "etcdserver: mvcc: required revision has been compacted"),
                S::FutureRev => {
                    (Code::OutOfRange, "etcdserver: mvcc: required revision is a future revision")
                }
                S::EmptyKey => (Code::InvalidArgument, "etcdserver: key is not provided"),
                S::KeyNotFound => (Code::InvalidArgument, "etcdserver: key not found"),
                S::ValueProvided => (Code::InvalidArgument, "etcdserver: value is provided"),
                S::LeaseProvided => (Code::InvalidArgument, "etcdserver: lease is provided"),
                S::TooManyOps => (Code::InvalidArgument, "etcdserver: too many operations in txn request"),
                S::DuplicateKey => (Code::InvalidArgument, "etcdserver: duplicate key given in txn request"),
                S::InvalidSortOption => (Code::InvalidArgument, "etcdserver: invalid sort option"),
                S::LeaseNotFound => (Code::NotFound, "etcdserver: requested lease not found"),
                S::LeaseExists => (Code::FailedPrecondition, "etcdserver: lease already exists"),
                S::NoSpace => (Code::ResourceExhausted, "etcdserver: mvcc: database space exceeded"),
                S::LeaseTtlTooLarge => (Code::OutOfRange, "etcdserver: too large lease TTL"),
                S::Auth(auth) => auth_status(*auth),
                // Storage failures have no etcd counterpart a client could act
                // on; say what happened.
                S::Engine(_) | S::Corrupt(_) | S::Poisoned => {
                    return Status::new(Code::Internal, format!("rtcd: {store}"));
                }
            },
            EtcdError::RequestTooLarge => (Code::InvalidArgument, "etcdserver: request is too large"),
            EtcdError::Stopped => (Code::Unavailable, "etcdserver: server stopped"),
            EtcdError::BadLeaderTransferee => (Code::FailedPrecondition, "etcdserver: bad leader transferee"),
            EtcdError::NoLeader => (Code::Unavailable, "etcdserver: no leader"),
            EtcdError::NotLeader => (Code::FailedPrecondition, "etcdserver: not leader"),
            EtcdError::LeaderChanged => (Code::Unavailable, "etcdserver: leader changed"),
            EtcdError::Timeout => (Code::Unavailable, "etcdserver: request timed out"),
            EtcdError::MemberNotFound => (Code::NotFound, "etcdserver: member not found"),
            EtcdError::MemberExists => (Code::FailedPrecondition, "etcdserver: member ID already exist"),
            EtcdError::PeerUrlExists => (Code::FailedPrecondition, "etcdserver: Peer URLs already exists"),
            EtcdError::MemberBadUrls => (Code::InvalidArgument, "etcdserver: given member URLs are invalid"),
            EtcdError::MemberNotLearner => {
                (Code::FailedPrecondition, "etcdserver: can only promote a learner member")
            }
            EtcdError::LearnerNotReady => (
                Code::FailedPrecondition,
                "etcdserver: can only promote a learner member which is in sync with leader",
            ),
            EtcdError::TooManyLearners => {
                (Code::FailedPrecondition, "etcdserver: too many learner members in cluster")
            }
            EtcdError::NotEnoughStartedMembers => (
                Code::FailedPrecondition,
                "etcdserver: re-configuration failed due to not enough started members",
            ),
            EtcdError::Unhealthy => (Code::Unavailable, "etcdserver: unhealthy cluster"),
            EtcdError::NotSupportedForLearner => {
                (Code::Unavailable, "etcdserver: rpc not supported for learner")
            }
            EtcdError::ReconfigRejected(why) => {
                return Status::new(
                    Code::FailedPrecondition,
                    format!("rtcd: membership change rejected: {why}"),
                );
            }
            EtcdError::Undecodable(why) => {
                return Status::internal(format!("rtcd: the leader could not decode the request: {why}"));
            }
            // etcd's election service returns plain Go errors, which gRPC
            // sends as Unknown with the error's text.
            EtcdError::ElectionNotLeader => (Code::Unknown, "election: not leader"),
            EtcdError::ElectionNoLeader => (Code::Unknown, "election: no leader"),
            EtcdError::MissingLeaderKey => (Code::Unknown, "\"leader\" field must be provided"),
            EtcdError::TokenSigning(why) => return Status::new(Code::Unknown, why),
            EtcdError::Unsupported(what) => {
                return Status::new(Code::Unimplemented, format!("rtcd: {what} is not supported yet"));
            }
        };
        Status::new(code, message)
    }
}

/// etcd's answers to auth failures (`rpctypes`' `ErrGRPC*`). An error etcd
/// has no gRPC form for reaches its clients as Unknown with Go's text.
fn auth_status(e: AuthError) -> (Code, &'static str) {
    use AuthError as A;
    match e {
        A::RootUserNotExist => (Code::FailedPrecondition, "etcdserver: root user does not exist"),
        A::RootRoleNotExist => (Code::FailedPrecondition, "etcdserver: root user does not have root role"),
        A::UserAlreadyExist => (Code::FailedPrecondition, "etcdserver: user name already exists"),
        A::UserEmpty => (Code::InvalidArgument, "etcdserver: user name is empty"),
        A::UserNotFound => (Code::FailedPrecondition, "etcdserver: user name not found"),
        A::RoleAlreadyExist => (Code::FailedPrecondition, "etcdserver: role name already exists"),
        A::RoleNotFound => (Code::FailedPrecondition, "etcdserver: role name not found"),
        A::RoleEmpty => (Code::InvalidArgument, "etcdserver: role name is empty"),
        A::AuthFailed => {
            (Code::InvalidArgument, "etcdserver: authentication failed, invalid user ID or password")
        }
        A::NoPasswordUser => {
            (Code::Unknown, "auth: authentication failed, password was given for no password user")
        }
        A::PermissionDenied => (Code::PermissionDenied, "etcdserver: permission denied"),
        A::RoleNotGranted => (Code::FailedPrecondition, "etcdserver: role is not granted to the user"),
        A::PermissionNotGranted => {
            (Code::FailedPrecondition, "etcdserver: permission is not granted to the role")
        }
        A::NotEnabled => (Code::FailedPrecondition, "etcdserver: authentication is not enabled"),
        A::OldRevision => (Code::InvalidArgument, "etcdserver: revision of auth store is old"),
        A::InvalidToken => (Code::Unauthenticated, "etcdserver: invalid auth token"),
        A::InvalidManagement => (Code::InvalidArgument, "etcdserver: invalid auth management"),
    }
}

/// Whether `status` is etcd's answer for `error` (same code and text).
pub fn answers(status: &Status, error: EtcdError) -> bool {
    let expected = Status::from(error);
    (expected.code(), expected.message()) == (status.code(), status.message())
}

/// An error as the Lock and Election services pass it on from the calls
/// they make: etcd runs them over its in-process client, which turns every
/// etcd error into a plain Go error, so gRPC sends it as Unknown, with the
/// same text.
pub fn through_local_client(status: Status) -> Status {
    Status::new(Code::Unknown, status.message())
}

/// An auth error as etcd's maintenance service returns it: unmapped, so
/// gRPC sends it as Unknown with the auth package's own text ("auth:
/// permission denied"). Other errors map as usual.
pub fn unmapped_auth(err: EtcdError) -> Status {
    match err {
        EtcdError::Store(StoreError::Auth(auth)) => Status::new(Code::Unknown, auth.to_string()),
        other => other.into(),
    }
}

/// Why a watch could not be created: etcd answers these inside the stream,
/// as a `created` + `canceled` response whose `cancel_reason` is this text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchRefusal {
    /// A negative `start_revision`.
    NegativeRevision,
    DuplicateId,
    EmptyRange,
    /// The caller may not read the range, or its credentials are bad.
    Denied(AuthError),
}

impl WatchRefusal {
    pub fn reason(self) -> &'static str {
        match self {
            WatchRefusal::NegativeRevision => "etcdserver: mvcc: required revision has been compacted",
            WatchRefusal::DuplicateId => "mvcc: duplicate watch ID provided on the WatchStream",
            WatchRefusal::EmptyRange => "mvcc: watcher range is empty",
            // etcd sends the gRPC error's Go text here, code included; and
            // only these three auth errors have their own reason.
            WatchRefusal::Denied(AuthError::InvalidToken) => {
                "rpc error: code = Unauthenticated desc = etcdserver: invalid auth token"
            }
            WatchRefusal::Denied(AuthError::OldRevision) => {
                "rpc error: code = InvalidArgument desc = etcdserver: revision of auth store is old"
            }
            WatchRefusal::Denied(AuthError::UserEmpty) => {
                "rpc error: code = InvalidArgument desc = etcdserver: user name is empty"
            }
            WatchRefusal::Denied(_) => {
                "rpc error: code = PermissionDenied desc = etcdserver: permission denied"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_errors_use_etcds_codes_and_texts() {
        let s: Status = EtcdError::from(StoreError::Compacted).into();
        assert_eq!(
            (s.code(), s.message()),
            (Code::OutOfRange, "etcdserver: mvcc: required revision has been compacted")
        );
        let s: Status = EtcdError::from(StoreError::LeaseNotFound).into();
        assert_eq!((s.code(), s.message()), (Code::NotFound, "etcdserver: requested lease not found"));
        let s: Status = EtcdError::RequestTooLarge.into();
        assert_eq!((s.code(), s.message()), (Code::InvalidArgument, "etcdserver: request is too large"));
    }

    /// A txn nested too deep is refused by the gRPC codec, before it reaches
    /// the store's op budget: the client must not tell the two apart.
    #[test]
    fn the_codec_refuses_deep_txns_with_the_budgets_error() {
        let budget: Status = EtcdError::from(StoreError::TooManyOps).into();
        let codec = Status::from(rtcd_proto::codec::TxnDecodeError::TooDeep);
        assert_eq!((codec.code(), codec.message()), (budget.code(), budget.message()));
    }
}
