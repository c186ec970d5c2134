//! etcd's `hasleader` request metadata (clientv3's WithRequireLeader, sent by
//! `etcdctl watch` and kube-apiserver): a stream that asks for it is refused
//! while the member has no leader, and ended with "etcdserver: no leader"
//! once the leader has been gone for three election timeouts (etcd's
//! monitorLeader), so clients move to a member that can serve them.

use std::time::{Duration, Instant};

use tonic::Request;

use crate::errors::EtcdError;
use crate::node::Node;

/// Election timeouts without a leader before such streams end.
const LOST_AFTER_ELECTIONS: u32 = 3;

/// Whether the client asked for streams that end without a leader.
pub fn requested<T>(request: &Request<T>) -> bool {
    request.metadata().get("hasleader").is_some_and(|v| v == "true")
}

impl Node {
    /// Refuses a leader-requiring stream while there is no leader.
    pub fn check_leader(&self, required: bool) -> Result<(), EtcdError> {
        if required && self.raft().leader().is_none() { Err(EtcdError::NoLeader) } else { Ok(()) }
    }

    /// Resolves once this member has had no leader for three election
    /// timeouts in a row.
    pub async fn leader_lost(&self) {
        let election = self.settings().election_timeout.max(Duration::from_millis(1));
        let limit = election * LOST_AFTER_ELECTIONS;
        let mut leaderless_since: Option<Instant> = None;
        loop {
            tokio::time::sleep(election / 4).await;
            if self.raft().leader().is_some() {
                leaderless_since = None;
            } else if leaderless_since.get_or_insert_with(Instant::now).elapsed() >= limit {
                return;
            }
        }
    }
}
