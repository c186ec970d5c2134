//! Who this member is: its member ID and the cluster's ID.
//!
//! Members of a new cluster derive both from `--initial-cluster` and the
//! token. A member joining a running cluster (`--initial-cluster-state
//! existing`, after `etcdctl member add`) asks the members listed in
//! `--initial-cluster` and finds itself by its peer URLs. Either way the
//! result is saved in the data directory, so a restart uses the saved IDs and
//! ignores the initial-cluster flags, as etcd does.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use rtcd_proto::etcdserverpb::MemberListRequest;
use rtcd_proto::rtcdraftpb::peer_client::PeerClient;
use rtcd_raft::{Dialer, Member};

use crate::header::{self, Identity};
use crate::settings::Settings;

/// The identity file inside `--data-dir`.
const FILE: &str = "member_id";
/// How long a joining member keeps asking the cluster for its membership.
const JOIN_TIMEOUT: Duration = Duration::from_secs(30);
const JOIN_RETRY: Duration = Duration::from_millis(500);

/// Why this member's identity could not be settled.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// Reading or writing the identity file failed.
    #[error("cannot create data dir {0}: {1}")]
    DataDir(String, std::io::Error),
    #[error("cannot join the cluster: {0}")]
    Join(String),
    #[error("damaged member identity file {0}")]
    Damaged(String),
}

/// This member's identity, and the members to initialize a brand-new
/// cluster with (empty when joining: the leader sends the membership).
pub async fn resolve(
    settings: &Settings,
    dir: &Path,
    dialer: &Dialer,
) -> Result<(Identity, BTreeMap<u64, Member>), IdentityError> {
    let initial = initial_members(settings);
    if let Some(saved) = load(dir)? {
        return Ok((saved, initial));
    }
    let (identity, initial) = if settings.joins_existing() {
        (join(settings, dialer).await?, BTreeMap::new())
    } else {
        let token = &settings.cluster_token;
        let identity = Identity {
            member_id: header::member_id(&settings.advertise_peer_urls, token),
            cluster_id: header::cluster_id(initial.keys().copied(), token),
        };
        (identity, initial)
    };
    save(dir, &identity)?;
    Ok((identity, initial))
}

/// `--initial-cluster` by member ID (client URLs known only for this member).
fn initial_members(settings: &Settings) -> BTreeMap<u64, Member> {
    let token = &settings.cluster_token;
    let mut members = BTreeMap::new();
    for initial in &settings.initial_cluster {
        let client_urls =
            if initial.name == settings.name { settings.advertise_client_urls.clone() } else { Vec::new() };
        let member = Member { name: initial.name.clone(), peer_urls: initial.peer_urls.clone(), client_urls };
        members.insert(header::member_id(&initial.peer_urls, token), member);
    }
    members
}

/// Asks the other members of `--initial-cluster` for the membership and
/// finds this member in it by its advertised peer URLs.
async fn join(settings: &Settings, dialer: &Dialer) -> Result<Identity, IdentityError> {
    let mine = sorted(settings.advertise_peer_urls.clone());
    let peers: Vec<&String> = settings
        .initial_cluster
        .iter()
        .filter(|m| m.name != settings.name)
        .flat_map(|m| &m.peer_urls)
        .collect();
    // Peers are reached the way Raft reaches them (the test hook may route
    // a peer URL through a proxy).
    let overrides = &settings.peer_dial_overrides;
    let deadline = Instant::now() + JOIN_TIMEOUT;
    loop {
        for &url in &peers {
            let dialled = rtcd_raft::dial_target(url, overrides);
            match ask_members(&dialled, dialer).await {
                Ok(list) => {
                    let cluster_id = list.header.map_or(0, |h| h.cluster_id);
                    let me = list.members.iter().find(|m| sorted(m.peer_ur_ls.clone()) == mine);
                    return match me {
                        Some(m) => Ok(Identity { member_id: m.id, cluster_id }),
                        None => Err(IdentityError::Join(format!(
                            "the cluster at {url} has no member with peer URLs {mine:?}; add it with \
                             `etcdctl member add` first"
                        ))),
                    };
                }
                Err(e) => tracing::info!(peer = %url, error = %e, "asking for the cluster's members"),
            }
        }
        if Instant::now() >= deadline {
            return Err(IdentityError::Join(format!("no member of --initial-cluster answered: {peers:?}")));
        }
        tokio::time::sleep(JOIN_RETRY).await;
    }
}

async fn ask_members(
    url: &str,
    dialer: &Dialer,
) -> Result<rtcd_proto::etcdserverpb::MemberListResponse, Box<dyn std::error::Error + Send + Sync>> {
    let mut client = PeerClient::new(dialer.dial(url)?);
    let asked = tokio::time::timeout(Duration::from_secs(2), client.members(MemberListRequest::default()));
    Ok(asked.await??.into_inner())
}

fn sorted(mut urls: Vec<String>) -> Vec<String> {
    urls.sort();
    urls
}

fn load(dir: &Path) -> Result<Option<Identity>, IdentityError> {
    let path = dir.join(FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(IdentityError::DataDir(path.display().to_string(), e)),
    };
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
    };
    match (field("member_id"), field("cluster_id")) {
        (Some(member_id), Some(cluster_id)) => Ok(Some(Identity { member_id, cluster_id })),
        _ => Err(IdentityError::Damaged(path.display().to_string())),
    }
}

/// Written to a temporary file, synced, then renamed: never half written.
fn save(dir: &Path, identity: &Identity) -> Result<(), IdentityError> {
    let path = dir.join(FILE);
    let partial = dir.join(format!("{FILE}.partial"));
    let io = |e| IdentityError::DataDir(path.display().to_string(), e);
    let text = format!("member_id={:x}\ncluster_id={:x}\n", identity.member_id, identity.cluster_id);
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::File::create(&partial)?;
        std::io::Write::write_all(&mut file, text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&partial, &path)?;
        std::fs::File::open(dir)?.sync_all()
    };
    write().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_identity_reads_back_and_a_damaged_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(load(dir.path()).unwrap().is_none());
        let identity = Identity { member_id: 0xabc, cluster_id: 0xdef };
        save(dir.path(), &identity).unwrap();
        let back = load(dir.path()).unwrap().unwrap();
        assert_eq!((back.member_id, back.cluster_id), (0xabc, 0xdef));
        std::fs::write(dir.path().join(FILE), "member_id=zz\n").unwrap();
        assert!(matches!(load(dir.path()), Err(IdentityError::Damaged(_))));
    }
}
