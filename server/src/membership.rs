//! The Cluster API's membership changes, checked the way etcd checks them
//! and carried out by the leader as Raft membership changes; and each
//! member's duty to publish its name and client URLs (etcd's attributes)
//! into the membership, and to stop once it has been removed.

use std::sync::Arc;
use std::time::Duration;

use rtcd_proto::etcdserverpb::{
    Member, MemberAddRequest, MemberAddResponse, MemberListRequest, MemberListResponse,
    MemberPromoteResponse, MemberRemoveResponse, MemberUpdateRequest, MemberUpdateResponse,
};
use rtcd_raft::MembershipChange;

use crate::errors::EtcdError;
use crate::header;
use crate::node::Node;

/// etcd allows one learner at a time.
const MAX_LEARNERS: usize = 1;
/// etcd's readiness rule for promotion: the learner has 90% of the leader's log.
const READY_PERCENT: f64 = 0.9;
/// How often a member checks its record in the membership.
const PUBLISH_CHECK: Duration = Duration::from_secs(1);
/// How soon a member whose attributes are not in the membership yet first
/// looks again; each failed try (no leader yet, no quorum) waits this much
/// longer, up to `PUBLISH_CHECK`, so a member alone does not spin.
const PUBLISH_RETRY: Duration = Duration::from_millis(50);
/// A voter counts as connected once it has answered the leader without a
/// failure for this long (etcd's HealthInterval).
const HEALTH_INTERVAL: Duration = Duration::from_secs(5);

impl Node {
    /// The members in the replicated configuration, by ID. A member added
    /// but never started has no name (etcdctl shows it "unstarted").
    pub fn member_list(&self) -> Vec<Member> {
        self.raft()
            .members()
            .into_iter()
            .map(|(id, m, is_learner)| Member {
                id,
                name: m.name,
                peer_ur_ls: m.peer_urls,
                client_ur_ls: if id == self.member_id() {
                    self.settings().advertise_client_urls.clone()
                } else {
                    m.client_urls
                },
                is_learner,
            })
            .collect()
    }

    fn find_member(&self, id: u64) -> Result<Member, EtcdError> {
        self.member_list().into_iter().find(|m| m.id == id).ok_or(EtcdError::MemberNotFound)
    }

    /// Peer URLs must be well formed and used by no other member.
    fn check_peer_urls(&self, urls: &[String], except: Option<u64>) -> Result<(), EtcdError> {
        if urls.is_empty() || !urls.iter().all(|u| valid_url(u)) {
            return Err(EtcdError::MemberBadUrls);
        }
        let taken = self
            .member_list()
            .into_iter()
            .filter(|m| Some(m.id) != except)
            .any(|m| m.peer_ur_ls.iter().any(|u| urls.contains(u)));
        if taken { Err(EtcdError::PeerUrlExists) } else { Ok(()) }
    }

    /// At the leader: adds a voter or a learner that has not started yet.
    pub async fn member_add(&self, req: &MemberAddRequest) -> Result<MemberAddResponse, EtcdError> {
        self.check_peer_urls(&req.peer_ur_ls, None)?;
        let members = self.member_list();
        if req.is_learner && members.iter().filter(|m| m.is_learner).count() >= MAX_LEARNERS {
            return Err(EtcdError::TooManyLearners);
        }
        if !req.is_learner {
            self.may_add_voter(&members)?;
        }
        // Like etcd, an added member's ID also depends on when it was added,
        // so re-adding the same URLs later gives a new ID.
        let now =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let salt = format!("{}{now}", self.settings().cluster_token);
        let id = header::member_id(&req.peer_ur_ls, &salt);
        if members.iter().any(|m| m.id == id) {
            return Err(EtcdError::MemberExists);
        }
        let record =
            rtcd_raft::Member { name: String::new(), peer_urls: req.peer_ur_ls.clone(), client_urls: vec![] };
        let change = if req.is_learner {
            MembershipChange::AddLearner(id, record)
        } else {
            MembershipChange::AddVoter(id, record)
        };
        self.raft().change_membership(change).await?;
        let member = Member {
            id,
            peer_ur_ls: req.peer_ur_ls.clone(),
            is_learner: req.is_learner,
            ..Default::default()
        };
        Ok(MemberAddResponse { header: self.header(), member: Some(member), members: self.member_list() })
    }

    /// At the leader: removes a voter or a learner.
    pub async fn member_remove(&self, id: u64) -> Result<MemberRemoveResponse, EtcdError> {
        if !self.find_member(id)?.is_learner {
            self.may_remove_voter(id)?;
        }
        self.raft().change_membership(MembershipChange::Remove(id)).await?;
        Ok(MemberRemoveResponse { header: self.header(), members: self.member_list() })
    }

    /// Strict reconfiguration (etcd's `--strict-reconfig-check`): a new
    /// voter raises the quorum, so enough voters must have started, and all
    /// must have been connected for a while — otherwise the cluster could lose its quorum
    /// before the new member even starts.
    fn may_add_voter(&self, members: &[Member]) -> Result<(), EtcdError> {
        if !self.settings().strict_reconfig_check {
            return Ok(());
        }
        let voters: Vec<&Member> = members.iter().filter(|m| !m.is_learner).collect();
        if !ready_to_add_voter(&voters) {
            return Err(EtcdError::NotEnoughStartedMembers);
        }
        let connected = self.raft().connected_voters(HEALTH_INTERVAL).map_or(voters.len(), |a| a.len());
        if connected < voters.len() {
            return Err(EtcdError::Unhealthy);
        }
        Ok(())
    }

    /// Strict reconfiguration for removing voter `id`: the voters left must
    /// hold a quorum of started and of connected members (a down member may
    /// always go: it is not part of the working quorum).
    fn may_remove_voter(&self, id: u64) -> Result<(), EtcdError> {
        if !self.settings().strict_reconfig_check {
            return Ok(());
        }
        let members = self.member_list();
        let voters: Vec<&Member> = members.iter().filter(|m| !m.is_learner).collect();
        if !ready_to_remove_voter(&voters, id) {
            return Err(EtcdError::NotEnoughStartedMembers);
        }
        if id != self.member_id() && !self.raft().is_peer_active(id) {
            return Ok(());
        }
        let Some(active) = self.raft().connected_voters(HEALTH_INTERVAL) else { return Ok(()) };
        if active.len() - 1 < quorum(voters.len() - 1) {
            return Err(EtcdError::Unhealthy);
        }
        Ok(())
    }

    /// At the leader: changes a member's peer URLs.
    pub async fn member_update(&self, req: &MemberUpdateRequest) -> Result<MemberUpdateResponse, EtcdError> {
        let member = self.find_member(req.id)?;
        self.check_peer_urls(&req.peer_ur_ls, Some(req.id))?;
        let record = rtcd_raft::Member {
            name: member.name,
            peer_urls: req.peer_ur_ls.clone(),
            client_urls: member.client_ur_ls,
        };
        self.raft().change_membership(MembershipChange::Update(req.id, record)).await?;
        Ok(MemberUpdateResponse { header: self.header(), members: self.member_list() })
    }

    /// At the leader: makes a learner that has caught up a voter.
    pub async fn member_promote(&self, id: u64) -> Result<MemberPromoteResponse, EtcdError> {
        if !self.find_member(id)?.is_learner {
            return Err(EtcdError::MemberNotLearner);
        }
        let ready = self
            .raft()
            .replication_progress(id)
            .is_some_and(|(matched, leader)| matched as f64 >= leader as f64 * READY_PERCENT);
        if !ready {
            return Err(EtcdError::LearnerNotReady);
        }
        self.raft().change_membership(MembershipChange::Promote(id)).await?;
        Ok(MemberPromoteResponse { header: self.header(), members: self.member_list() })
    }

    /// At the leader: records a member's name and client URLs.
    pub async fn publish(&self, attributes: &Member) -> Result<MemberListResponse, EtcdError> {
        let member = self.find_member(attributes.id)?;
        let record = rtcd_raft::Member {
            name: attributes.name.clone(),
            peer_urls: member.peer_ur_ls,
            client_urls: attributes.client_ur_ls.clone(),
        };
        self.raft().change_membership(MembershipChange::Update(attributes.id, record)).await?;
        Ok(MemberListResponse { header: self.header(), members: self.member_list() })
    }
}

/// `http(s)://host:port`, as etcd's URL parsing accepts for members.
fn valid_url(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://")) else {
        return false;
    };
    let host_port = rest.strip_suffix('/').unwrap_or(rest);
    match host_port.rsplit_once(':') {
        Some((host, port)) => !host.is_empty() && !host.contains('/') && port.parse::<u16>().is_ok(),
        None => false,
    }
}

/// Publishes this member's name and client URLs once it is in the
/// membership, and ends the process once it has been removed from it (as
/// etcd does: a removed member can never rejoin with its old ID). The
/// receiver turns true once the membership this member applied holds its
/// attributes: client requests are served from then on, as etcd serves
/// them only after its publish, so that every member that answers is
/// listed with its client URLs (clients pick endpoints from the list).
pub fn spawn_publisher(node: Arc<Node>) -> tokio::sync::watch::Receiver<bool> {
    let (published_tx, published) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        let mut was_member = false;
        let mut removed_checked = tokio::time::Instant::now();
        let mut retry = PUBLISH_RETRY;
        loop {
            let me = node.member_id();
            let record = node.raft().members().into_iter().find(|(id, ..)| *id == me).map(|(_, m, _)| m);
            let Some(record) = record else {
                if was_member {
                    stop_removed();
                }
                tokio::time::sleep(retry).await;
                retry = (retry + PUBLISH_RETRY).min(PUBLISH_CHECK);
                continue;
            };
            was_member = true;
            let settings = node.settings();
            let current =
                record.name == settings.name && record.client_urls == settings.advertise_client_urls;
            if current {
                published_tx.send_if_modified(|published| !std::mem::replace(published, true));
            } else {
                publish_attributes(&node).await;
            }
            // Until the attributes are in, retry soon: clients wait for them.
            if *published_tx.borrow() {
                tokio::time::sleep(PUBLISH_CHECK).await;
            } else {
                tokio::time::sleep(retry).await;
                retry = (retry + PUBLISH_RETRY).min(PUBLISH_CHECK);
            }
            // A removed follower may never receive the entry that removes it
            // (the leader stops replicating to it), so now and then it asks
            // the leader it knows whether it is still a member, like etcd's
            // removed-member check. Only the leader's answer counts: a
            // lagging follower may not have applied this member's addition.
            if removed_checked.elapsed() >= REMOVED_CHECK_EVERY {
                removed_checked = tokio::time::Instant::now();
                if removed_says_leader(&node).await {
                    stop_removed();
                }
            }
        }
    });
    published
}

/// How often a member asks the leader whether it was removed.
const REMOVED_CHECK_EVERY: Duration = Duration::from_secs(3);

fn stop_removed() -> ! {
    tracing::error!("this member has been removed from the cluster; stopping");
    std::process::exit(0);
}

/// Whether the leader (as this member knows it) no longer lists this member.
async fn removed_says_leader(node: &Node) -> bool {
    let Ok(Some(channel)) = node.raft().leader_channel() else { return false };
    let mut leader = rtcd_proto::rtcdraftpb::peer_client::PeerClient::new(channel);
    let asked = tokio::time::timeout(PUBLISH_CHECK, leader.members(MemberListRequest::default())).await;
    match asked {
        Ok(Ok(list)) => !list.into_inner().members.iter().any(|m| m.id == node.member_id()),
        _ => false,
    }
}

async fn publish_attributes(node: &Arc<Node>) {
    let attributes = Member {
        id: node.member_id(),
        name: node.settings().name.clone(),
        client_ur_ls: node.settings().advertise_client_urls.clone(),
        ..Default::default()
    };
    let published = node
        .at_leader(|route| {
            let (node, attributes) = (node.clone(), attributes.clone());
            async move {
                match route {
                    None => node.publish(&attributes).await.map_err(tonic::Status::from),
                    Some(mut leader) => Ok(leader.publish(attributes).await?.into_inner()),
                }
            }
        })
        .await;
    match published {
        Ok(_) => tracing::info!(name = %node.settings().name, "published this member's name and client URLs"),
        Err(e) => tracing::warn!(error = %e, "publishing this member's attributes failed; retrying"),
    }
}

/// A majority of `n` voters.
fn quorum(n: usize) -> usize {
    n / 2 + 1
}

/// A member has started once it published its name.
fn started(m: &Member) -> bool {
    !m.name.is_empty()
}

/// etcd's IsReadyToAddVotingMember: the started voters are a quorum of the
/// cluster with one more voter (a lone member may always add a second).
fn ready_to_add_voter(voters: &[&Member]) -> bool {
    let started = voters.iter().filter(|m| started(m)).count();
    let after = voters.len() + 1;
    (started == 1 && after == 2) || started >= quorum(after)
}

/// etcd's IsReadyToRemoveVotingMember: the other started voters are a
/// quorum of the voters left.
fn ready_to_remove_voter(voters: &[&Member], id: u64) -> bool {
    let left: Vec<&&Member> = voters.iter().filter(|m| m.id != id).collect();
    left.iter().filter(|m| started(m)).count() >= quorum(left.len())
}

#[cfg(test)]
mod tests {
    use super::{Member, ready_to_add_voter, ready_to_remove_voter, valid_url};

    fn voters(started: &[bool]) -> Vec<Member> {
        let name = |s: bool| if s { "m".to_string() } else { String::new() };
        started
            .iter()
            .enumerate()
            .map(|(i, &s)| Member { id: i as u64 + 1, name: name(s), ..Default::default() })
            .collect()
    }

    #[test]
    fn a_voter_is_added_only_when_the_started_voters_keep_a_quorum() {
        let check = |s: &[bool]| ready_to_add_voter(&voters(s).iter().collect::<Vec<_>>());
        assert!(check(&[true]), "one member may grow to two");
        assert!(check(&[true, true]));
        assert!(!check(&[true, true, false]), "2 started of 4: not a quorum of 4");
        assert!(!check(&[true, false]), "1 started of 3");
        assert!(check(&[true, true, true]));
        assert!(!check(&[true, true, false, false]));
    }

    #[test]
    fn a_voter_is_removed_only_when_the_started_voters_left_are_a_quorum() {
        let check = |s: &[bool], id| ready_to_remove_voter(&voters(s).iter().collect::<Vec<_>>(), id);
        assert!(check(&[true, true, true], 1));
        // m3 added but never started: removing m2 leaves {m1, m3}, one started.
        assert!(!check(&[true, true, false], 2));
        // Removing the unstarted one is fine.
        assert!(check(&[true, true, false], 3));
    }

    #[test]
    fn member_urls_need_a_scheme_host_and_port() {
        assert!(valid_url("http://127.0.0.1:2380"));
        assert!(valid_url("https://node-4.example:2380/"));
        for bad in [
            "127.0.0.1:2380",
            "http://127.0.0.1",
            "http://:2380",
            "ftp://a:1",
            "http://a:99999",
            "http://a/b:1",
        ] {
            assert!(!valid_url(bad), "{bad}");
        }
    }
}
