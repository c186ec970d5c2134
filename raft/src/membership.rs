//! Membership changes, in the terms the server's Cluster API needs: add a
//! voter or a learner, promote, remove, update a member's record. Each runs
//! on the leader as one openraft membership change (joint consensus when
//! voters change) and returns once it is committed.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use openraft::ChangeMembers;
use openraft::async_runtime::watch::WatchReceiver;
use openraft::error::{ChangeMembershipError, ClientWriteError, RaftError};

use crate::error::ReplicationError;
use crate::node::RaftNode;
use crate::types::Member;

/// One change to the cluster's membership.
#[derive(Debug, Clone)]
pub enum MembershipChange {
    AddVoter(u64, Member),
    AddLearner(u64, Member),
    /// A learner becomes a voter.
    Promote(u64),
    Remove(u64),
    /// Replaces a member's record (name, URLs), not its role.
    Update(u64, Member),
}

/// Pause before retrying while another membership change is in flight.
const IN_PROGRESS_PAUSE: Duration = Duration::from_millis(100);

impl RaftNode {
    /// Commits `change` through this member, which must lead. Waits while
    /// another change is in flight (openraft allows one at a time).
    pub async fn change_membership(&self, change: MembershipChange) -> Result<(), ReplicationError> {
        let deadline = Instant::now() + self.request_timeout();
        loop {
            let (changes, retain) = self.openraft_change(&change);
            let outcome =
                tokio::time::timeout_at(deadline.into(), self.raft().change_membership(changes, retain))
                    .await
                    .map_err(|_| ReplicationError::Timeout)?;
            match outcome {
                Ok(_) => return Ok(()),
                Err(RaftError::APIError(ClientWriteError::ChangeMembershipError(
                    ChangeMembershipError::InProgress(_) | ChangeMembershipError::UncommittedLeaderLog(_),
                ))) if Instant::now() + IN_PROGRESS_PAUSE < deadline => {
                    tokio::time::sleep(IN_PROGRESS_PAUSE).await;
                }
                Err(RaftError::APIError(ClientWriteError::ForwardToLeader(_))) => {
                    return Err(ReplicationError::NotLeader);
                }
                Err(RaftError::APIError(ClientWriteError::LogEntryDiscarded(_))) => {
                    return Err(ReplicationError::LeaderChanged);
                }
                Err(RaftError::APIError(e)) => return Err(ReplicationError::Rejected(e.to_string())),
                Err(RaftError::Fatal(e)) => return Err(ReplicationError::Stopped(e.to_string())),
            }
        }
    }

    fn openraft_change(&self, change: &MembershipChange) -> (ChangeMembers<u64, Member>, bool) {
        let one = |id: u64| BTreeSet::from([id]);
        match change.clone() {
            MembershipChange::AddVoter(id, m) => (ChangeMembers::AddVoters(BTreeMap::from([(id, m)])), true),
            MembershipChange::AddLearner(id, m) => (ChangeMembers::AddNodes(BTreeMap::from([(id, m)])), true),
            MembershipChange::Promote(id) => (ChangeMembers::AddVoterIds(one(id)), true),
            // `retain = false` drops a removed voter's record too.
            MembershipChange::Remove(id) if self.is_voter(id) => {
                (ChangeMembers::RemoveVoters(one(id)), false)
            }
            MembershipChange::Remove(id) => (ChangeMembers::RemoveNodes(one(id)), false),
            MembershipChange::Update(id, m) => (ChangeMembers::SetNodes(BTreeMap::from([(id, m)])), true),
        }
    }

    fn is_voter(&self, id: u64) -> bool {
        self.members().iter().any(|(member, _, learner)| *member == id && !learner)
    }

    /// At the leader: the voters that have been answering it for at least
    /// `for_at_least`, itself included (etcd's
    /// numConnectedSince). `None` elsewhere.
    pub fn connected_voters(&self, for_at_least: Duration) -> Option<Vec<u64>> {
        let metrics = self.raft().metrics();
        let m = metrics.borrow_watched();
        if m.current_leader != Some(self.id()) {
            return None;
        }
        let connected = |id: u64| self.network.active_for(id).is_some_and(|d| d >= for_at_least);
        Some(
            m.membership_config
                .membership()
                .voter_ids()
                .filter(|&id| id == self.id() || connected(id))
                .collect(),
        )
    }

    /// Whether peer `id` answers RPCs from here these days.
    pub fn is_peer_active(&self, id: u64) -> bool {
        self.network.active_for(id).is_some()
    }

    /// How far the leader has replicated to `id`, and its own last log
    /// index: `None` unless this member leads.
    pub fn replication_progress(&self, id: u64) -> Option<(u64, u64)> {
        let metrics = self.raft().metrics();
        let m = metrics.borrow_watched();
        let matched = m.replication.as_ref()?.get(&id)?.as_ref().map_or(0, |l| l.index);
        Some((matched, m.last_log_index.unwrap_or(0)))
    }
}
