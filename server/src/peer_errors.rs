//! The errors of the peer protocol (`rtcdraftpb.Peer`): a leader's refusal
//! of a request a follower handed it carries its kind as metadata beside
//! etcd's status, so the follower decides by type whether to ask again
//! (the leader moved) or to answer its client (the leader refused). The
//! status itself is what the client gets, as `errors` maps it.

use tonic::Status;
use tonic::metadata::MetadataValue;

use crate::errors::EtcdError;

/// The metadata key the kind travels under.
const KEY: &str = "rtcd-peer-refusal";

/// Why the leader refused a request a follower handed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerRefusal {
    /// The member asked does not lead (any more): ask the leader.
    NotLeader,
    /// The member asked knows no leader: ask again once there is one.
    NoLeader,
    /// The member asked is stopping: ask the next leader.
    Stopped,
    /// Leadership moved or time ran out with the request in the leader's
    /// hands: it may yet take effect, so it is not repeated.
    LeaderChanged,
    /// The leader refused the request itself (a lease not found, a
    /// membership change it rejects): the client's answer.
    Rejected,
    /// The leader could not decode the request.
    Undecodable,
}

impl PeerRefusal {
    const ALL: [PeerRefusal; 6] = [
        PeerRefusal::NotLeader,
        PeerRefusal::NoLeader,
        PeerRefusal::Stopped,
        PeerRefusal::LeaderChanged,
        PeerRefusal::Rejected,
        PeerRefusal::Undecodable,
    ];

    fn of(error: &EtcdError) -> PeerRefusal {
        match error {
            EtcdError::NotLeader => PeerRefusal::NotLeader,
            EtcdError::NoLeader => PeerRefusal::NoLeader,
            EtcdError::Stopped => PeerRefusal::Stopped,
            EtcdError::LeaderChanged | EtcdError::Timeout => PeerRefusal::LeaderChanged,
            EtcdError::Undecodable(_) => PeerRefusal::Undecodable,
            _ => PeerRefusal::Rejected,
        }
    }

    fn token(self) -> &'static str {
        match self {
            PeerRefusal::NotLeader => "not-leader",
            PeerRefusal::NoLeader => "no-leader",
            PeerRefusal::Stopped => "stopped",
            PeerRefusal::LeaderChanged => "leader-changed",
            PeerRefusal::Rejected => "rejected",
            PeerRefusal::Undecodable => "undecodable",
        }
    }

    /// Whether the follower asks the leader again (the request never took
    /// effect, and another leader may take it).
    pub fn is_retried(self) -> bool {
        matches!(self, PeerRefusal::NotLeader | PeerRefusal::NoLeader | PeerRefusal::Stopped)
    }
}

/// A leader's refusal as it goes to the follower: etcd's status, and the
/// kind.
pub fn refusal(error: EtcdError) -> Status {
    let kind = PeerRefusal::of(&error);
    let mut status = Status::from(error);
    status.metadata_mut().insert(KEY, MetadataValue::from_static(kind.token()));
    status
}

/// The kind a leader's answer carries; None when it carries none: the
/// request failed on the way (the leader was not reached, or its answer
/// was lost), or the leader is of a version before this protocol.
pub fn refusal_of(status: &Status) -> Option<PeerRefusal> {
    let token = status.metadata().get(KEY)?.to_str().ok()?;
    PeerRefusal::ALL.into_iter().find(|kind| kind.token() == token)
}

/// The status as the client gets it: etcd's code and text, without the
/// peer protocol's metadata.
pub fn for_client(status: &Status) -> Status {
    Status::new(status.code(), status.message())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_refusal_carries_its_kind_and_etcds_status() {
        let cases = [
            (EtcdError::NotLeader, PeerRefusal::NotLeader, true),
            (EtcdError::NoLeader, PeerRefusal::NoLeader, true),
            (EtcdError::Stopped, PeerRefusal::Stopped, true),
            (EtcdError::LeaderChanged, PeerRefusal::LeaderChanged, false),
            (EtcdError::Timeout, PeerRefusal::LeaderChanged, false),
            (EtcdError::ReconfigRejected("in progress".into()), PeerRefusal::Rejected, false),
            (EtcdError::MemberNotFound, PeerRefusal::Rejected, false),
            (EtcdError::Undecodable("bad".into()), PeerRefusal::Undecodable, false),
        ];
        for (error, kind, retried) in cases {
            let expected = Status::from(error.clone());
            let status = refusal(error);
            assert_eq!(refusal_of(&status), Some(kind));
            assert_eq!(kind.is_retried(), retried, "{kind:?}");
            let client = for_client(&status);
            assert_eq!((client.code(), client.message()), (expected.code(), expected.message()));
            assert!(client.metadata().get(KEY).is_none());
        }
    }

    #[test]
    fn an_untagged_status_has_no_kind() {
        assert_eq!(refusal_of(&Status::unavailable("tcp connect error")), None);
        let mut odd = Status::internal("x");
        odd.metadata_mut().insert(KEY, MetadataValue::from_static("something-else"));
        assert_eq!(refusal_of(&odd), None);
    }
}
