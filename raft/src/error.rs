//! Why a proposal, read barrier or membership change did not complete.

/// Why a proposal or read did not complete, in terms etcd clients know.
/// It is also what a leader answers a follower for each proposal the
/// follower forwarded (typed on the wire, so the follower never decides by
/// a text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
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
    /// The leader could not decode a forwarded proposal (a member of
    /// another version, or a bug): refused before it reached the log.
    #[error("undecodable proposal: {0}")]
    Undecodable(String),
}
