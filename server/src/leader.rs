//! Requests only the leader can answer (lease keep-alives and TTLs,
//! membership changes): served locally while this member leads, otherwise
//! handed to the leader's `rtcdraftpb.Peer` service on its peer URL.

use std::future::Future;
use std::time::{Duration, Instant};

use rtcd_proto::rtcdraftpb::peer_client::PeerClient;
use tonic::Status;
use tonic::transport::Channel;

use crate::errors::{EtcdError, answers};
use crate::node::Node;
use crate::peer_errors;

/// Where a leader-only request runs: here (`None`) or at the leader.
pub type Route = Option<PeerClient<Channel>>;

/// Pause between attempts while leadership moves.
const RETRY_PAUSE: Duration = Duration::from_millis(50);

impl Node {
    /// Runs `call` where the leader is, retrying while there is no leader,
    /// the leader cannot be reached, or the request reached a member that
    /// just stopped leading, until the request timeout. Requests the leader
    /// refused or may have carried out are answered, not repeated.
    pub async fn at_leader<T, F, Fut>(&self, mut call: F) -> Result<T, Status>
    where
        F: FnMut(Route) -> Fut,
        Fut: Future<Output = Result<T, Status>>,
    {
        let deadline = Instant::now() + self.settings().request_timeout();
        loop {
            // A leader behind a partition may never answer: bound each try.
            let until = tokio::time::Instant::from_std(deadline);
            let next = match self.raft().leader_channel() {
                Ok(None) => match call(None).await {
                    Ok(answer) => return Ok(answer),
                    Err(status) => after_local(status),
                },
                Ok(Some(channel)) => {
                    match tokio::time::timeout_at(until, call(Some(PeerClient::new(channel)))).await {
                        Ok(Ok(answer)) => return Ok(answer),
                        Ok(Err(status)) => after_peer(status),
                        Err(_) => return Err(EtcdError::Timeout.into()),
                    }
                }
                Err(e) => after_local(EtcdError::from(e).into()),
            };
            let error = match next {
                Next::Answer(status) => return Err(status),
                Next::AskAgain(status) => status,
            };
            if Instant::now() + RETRY_PAUSE >= deadline {
                return Err(error);
            }
            tokio::time::sleep(RETRY_PAUSE).await;
        }
    }
}

/// What to do after a failed try.
enum Next {
    /// Answer the client with this.
    Answer(Status),
    /// Ask the leader again; this is the answer if time runs out first.
    AskAgain(Status),
}

/// After this member's own attempt as leader: leadership may have just
/// moved (ask again), else the answer stands.
fn after_local(status: Status) -> Next {
    if answers(&status, EtcdError::NoLeader) || answers(&status, EtcdError::NotLeader) {
        Next::AskAgain(status)
    } else {
        Next::Answer(status)
    }
}

/// After the leader's peer service answered with an error: decided by the
/// kind the refusal carries. A status without one failed on the way (the
/// leader was not reached): asked again, and "request timed out" in the
/// end, as etcd says; an older leader's etcd answers pass through.
fn after_peer(status: Status) -> Next {
    match peer_errors::refusal_of(&status) {
        Some(kind) if kind.is_retried() => Next::AskAgain(peer_errors::for_client(&status)),
        Some(_) => Next::Answer(peer_errors::for_client(&status)),
        // A leader from before typed refusals: it leads no more, or its
        // etcd answer stands.
        None if answers(&status, EtcdError::NotLeader) || answers(&status, EtcdError::NoLeader) => {
            Next::AskAgain(status)
        }
        None if status.message().starts_with("etcdserver: ") => Next::Answer(status),
        None => {
            tracing::debug!(error = %status, "the leader's peer service is unreachable");
            Next::AskAgain(EtcdError::Timeout.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peer_errors::refusal;

    fn answered(next: Next) -> Option<Status> {
        match next {
            Next::Answer(status) => Some(status),
            Next::AskAgain(_) => None,
        }
    }

    #[test]
    fn a_refusal_by_the_leader_is_answered_at_once() {
        let rejected =
            answered(after_peer(refusal(EtcdError::ReconfigRejected("a change is in flight".into()))));
        let rejected = rejected.expect("answered, not asked again");
        assert_eq!(rejected.message(), "rtcd: membership change rejected: a change is in flight");
        assert!(rejected.metadata().is_empty(), "the peer protocol's metadata stays between members");
        assert!(answered(after_peer(refusal(EtcdError::MemberNotFound))).is_some());
        assert!(answered(after_peer(refusal(EtcdError::LeaderChanged))).is_some());
    }

    #[test]
    fn a_moved_leader_or_a_lost_request_is_asked_again() {
        for error in [EtcdError::NotLeader, EtcdError::NoLeader, EtcdError::Stopped] {
            assert!(answered(after_peer(refusal(error))).is_none());
        }
        let Next::AskAgain(last) = after_peer(Status::unavailable("tcp connect error")) else {
            panic!("an unreachable leader is asked again");
        };
        assert_eq!(last.message(), "etcdserver: request timed out");
        // A leader from before typed refusals: its etcd answers stand.
        assert!(answered(after_peer(Status::not_found("etcdserver: member not found"))).is_some());
    }
}
