//! Requests only the leader can answer (lease keep-alives and TTLs,
//! membership changes): served locally while this member leads, otherwise
//! handed to the leader's `rtcdraftpb.Peer` service on its peer URL.

use std::future::Future;
use std::time::{Duration, Instant};

use rtcd_proto::rtcdraftpb::peer_client::PeerClient;
use tonic::Status;
use tonic::transport::Channel;

use crate::errors::EtcdError;
use crate::node::Node;

/// Where a leader-only request runs: here (`None`) or at the leader.
pub type Route = Option<PeerClient<Channel>>;

/// Pause between attempts while leadership moves.
const RETRY_PAUSE: Duration = Duration::from_millis(50);

impl Node {
    /// Runs `call` where the leader is, retrying while there is no leader,
    /// the leader cannot be reached, or the request reached a member that
    /// just stopped leading, until the request timeout. Requests that did
    /// reach a leader are not repeated.
    pub async fn at_leader<T, F, Fut>(&self, mut call: F) -> Result<T, Status>
    where
        F: FnMut(Route) -> Fut,
        Fut: Future<Output = Result<T, Status>>,
    {
        let deadline = Instant::now() + self.settings().request_timeout();
        loop {
            // A leader behind a partition may never answer: bound each try.
            let until = tokio::time::Instant::from_std(deadline);
            let result = match self.raft().leader_channel() {
                Ok(None) => call(None).await,
                Ok(Some(channel)) => {
                    match tokio::time::timeout_at(until, call(Some(PeerClient::new(channel)))).await {
                        Ok(answer) => answer.map_err(from_peer),
                        Err(_) => return Err(EtcdError::Timeout.into()),
                    }
                }
                Err(e) => Err(EtcdError::from(e).into()),
            };
            let error = match result {
                Err(status) if status.message() == UNREACHABLE => EtcdError::Timeout.into(),
                Err(status) if same(&status, EtcdError::NoLeader) || same(&status, EtcdError::NotLeader) => {
                    status
                }
                other => return other,
            };
            if Instant::now() + RETRY_PAUSE >= deadline {
                return Err(error);
            }
            tokio::time::sleep(RETRY_PAUSE).await;
        }
    }
}

fn same(status: &Status, error: EtcdError) -> bool {
    let expected = Status::from(error);
    expected.code() == status.code() && expected.message() == status.message()
}

/// Marks a leader we could not reach (retried; "request timed out" to the
/// client in the end, as in etcd). Never sent to clients.
const UNREACHABLE: &str = "rtcd: leader unreachable";

/// etcd errors from the leader pass through as they are.
fn from_peer(status: Status) -> Status {
    if status.message().starts_with("etcdserver: ") {
        status
    } else {
        tracing::debug!(error = %status, "the leader's peer service is unreachable");
        Status::unavailable(UNREACHABLE)
    }
}
