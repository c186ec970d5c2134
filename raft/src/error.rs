//! Why a proposal, read barrier or membership change did not complete.

/// Why a proposal or read did not complete, in terms etcd clients know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplicationError {
    #[error("no leader")]
    NoLeader,
    #[error("request timed out")]
    Timeout,
    #[error("leader changed")]
    LeaderChanged,
    /// This member does not lead (membership changes run on the leader).
    #[error("not leader")]
    NotLeader,
    /// openraft refused a membership change the server's checks let
    /// through (a concurrent change won the race).
    #[error("membership change rejected: {0}")]
    Rejected(String),
    #[error("raft stopped: {0}")]
    Stopped(String),
}
