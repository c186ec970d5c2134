//! `rtcd`'s command line: etcd's flag names, defaults and `ETCD_*`
//! environment variables, so scripts written for etcd start rtcd unchanged.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

/// The etcd API version rtcd implements, reported by `--version`.
pub const ETCD_API_VERSION: &str = "3.5";
/// What `Maintenance.Status` reports: a 3.5 release kube-apiserver trusts with
/// watch progress requests (>= 3.5.13).
pub const ETCD_COMPAT_VERSION: &str = "3.5.17";

#[derive(Debug, Clone, Parser)]
#[command(
    name = "rtcd",
    about = "rtcd: an etcd v3 compatible, revisioned key-value store",
    version = concat!(env!("CARGO_PKG_VERSION"), " (etcd API 3.5)"),
)]
pub struct Config {
    /// Human-readable name of this member.
    #[arg(long, env = "ETCD_NAME", default_value = "default")]
    pub name: String,
    /// Where data lives; defaults to `<name>.rtcd`.
    #[arg(long, env = "ETCD_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// URLs to serve clients on, comma-separated.
    #[arg(long, env = "ETCD_LISTEN_CLIENT_URLS", default_value = "http://127.0.0.1:2379")]
    pub listen_client_urls: String,
    /// Client URLs announced to the cluster and in MemberList.
    #[arg(long, env = "ETCD_ADVERTISE_CLIENT_URLS", default_value = "http://127.0.0.1:2379")]
    pub advertise_client_urls: String,
    #[arg(long, env = "ETCD_LISTEN_PEER_URLS", default_value = "http://127.0.0.1:2380")]
    pub listen_peer_urls: String,
    #[arg(long, env = "ETCD_INITIAL_ADVERTISE_PEER_URLS", default_value = "http://127.0.0.1:2380")]
    pub initial_advertise_peer_urls: String,
    /// `name=peerURL,...` for every initial member.
    #[arg(long, env = "ETCD_INITIAL_CLUSTER")]
    pub initial_cluster: Option<String>,
    #[arg(long, env = "ETCD_INITIAL_CLUSTER_STATE", default_value = "new")]
    pub initial_cluster_state: String,
    #[arg(long, env = "ETCD_INITIAL_CLUSTER_TOKEN", default_value = "etcd-cluster")]
    pub initial_cluster_token: String,
    #[arg(long, env = "ETCD_SNAPSHOT_COUNT", default_value_t = 100_000)]
    pub snapshot_count: u64,
    /// Log entries kept behind a snapshot for slightly lagging followers;
    /// members further behind get the snapshot.
    #[arg(long, env = "ETCD_EXPERIMENTAL_SNAPSHOT_CATCHUP_ENTRIES", default_value_t = 5000)]
    pub experimental_snapshot_catchup_entries: u64,
    /// Refuse membership changes that would leave the cluster without a
    /// quorum of started, connected voters (etcd's default, true).
    #[arg(long, env = "ETCD_STRICT_RECONFIG_CHECK", default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub strict_reconfig_check: bool,
    /// Milliseconds.
    #[arg(long, env = "ETCD_HEARTBEAT_INTERVAL", default_value_t = 100)]
    pub heartbeat_interval: u64,
    /// Milliseconds.
    #[arg(long, env = "ETCD_ELECTION_TIMEOUT", default_value_t = 1000)]
    pub election_timeout: u64,
    /// 0 means etcd's default of 2 GiB.
    #[arg(long, env = "ETCD_QUOTA_BACKEND_BYTES", default_value_t = 0)]
    pub quota_backend_bytes: u64,
    #[arg(long, env = "ETCD_MAX_TXN_OPS", default_value_t = 128)]
    pub max_txn_ops: usize,
    #[arg(long, env = "ETCD_MAX_REQUEST_BYTES", default_value_t = 1_572_864)]
    pub max_request_bytes: usize,
    #[arg(long, env = "ETCD_AUTO_COMPACTION_MODE", default_value = "periodic")]
    pub auto_compaction_mode: String,
    #[arg(long, env = "ETCD_AUTO_COMPACTION_RETENTION", default_value = "0")]
    pub auto_compaction_retention: String,
    #[arg(long, env = "ETCD_EXPERIMENTAL_WATCH_PROGRESS_NOTIFY_INTERVAL", default_value = "10m")]
    pub experimental_watch_progress_notify_interval: String,
    /// How often the leader records remaining lease TTLs in the log, so a
    /// new leader neither expires kept-alive leases nor extends idle ones by
    /// more than this plus an election timeout (etcd's LeaseCheckpointInterval).
    #[arg(long, env = "ETCD_EXPERIMENTAL_LEASE_CHECKPOINT_INTERVAL", default_value = "5m")]
    pub experimental_lease_checkpoint_interval: String,
    /// Test hook: `peerURL=dialURL,...` makes this member reach a peer
    /// through another address (a fault-injecting proxy, see rtcd-jepsen).
    #[arg(long, env = "RTCD_PEER_DIAL_OVERRIDES", hide = true)]
    pub peer_dial_overrides: Option<String>,
    #[arg(long, env = "ETCD_CERT_FILE")]
    pub cert_file: Option<PathBuf>,
    #[arg(long, env = "ETCD_KEY_FILE")]
    pub key_file: Option<PathBuf>,
    #[arg(long, env = "ETCD_TRUSTED_CA_FILE")]
    pub trusted_ca_file: Option<PathBuf>,
    #[arg(long, env = "ETCD_CLIENT_CERT_AUTH", default_value_t = false)]
    pub client_cert_auth: bool,
    #[arg(long, env = "ETCD_PEER_CERT_FILE")]
    pub peer_cert_file: Option<PathBuf>,
    #[arg(long, env = "ETCD_PEER_KEY_FILE")]
    pub peer_key_file: Option<PathBuf>,
    #[arg(long, env = "ETCD_PEER_TRUSTED_CA_FILE")]
    pub peer_trusted_ca_file: Option<PathBuf>,
    #[arg(long, env = "ETCD_PEER_CLIENT_CERT_AUTH", default_value_t = false)]
    pub peer_client_cert_auth: bool,
    /// error, warn, info, debug.
    #[arg(long, env = "ETCD_LOG_LEVEL", default_value = "info")]
    pub log_level: String,
    /// `zap` (JSON lines, like etcd's zap logger) or `text`.
    #[arg(long, env = "ETCD_LOGGER", default_value = "text")]
    pub logger: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("invalid URL {0:?}: {1}")]
    BadUrl(String, String),
    #[error("{0} is not supported yet")]
    Unsupported(&'static str),
    #[error("invalid --auto-compaction-retention {0:?}")]
    BadRetention(String),
    #[error("invalid --auto-compaction-mode {0:?} (periodic or revision)")]
    BadCompactionMode(String),
    #[error("invalid --experimental-watch-progress-notify-interval {0:?}")]
    BadProgressInterval(String),
    #[error("invalid --initial-cluster-state {0:?} (new or existing)")]
    BadClusterState(String),
    #[error("invalid --experimental-lease-checkpoint-interval {0:?}")]
    BadCheckpointInterval(String),
    #[error("invalid --initial-cluster {0:?}: expected name=peerURL,...")]
    BadInitialCluster(String),
    #[error("--initial-cluster has no entry for this member ({0}) with its --initial-advertise-peer-urls")]
    NotInInitialCluster(String),
}

impl Config {
    pub fn data_dir(&self) -> PathBuf {
        self.data_dir.clone().unwrap_or_else(|| PathBuf::from(format!("{}.rtcd", self.name)))
    }

    /// Refuses settings rtcd cannot honour yet instead of silently ignoring
    /// them (serving plain text when TLS was asked for, say).
    pub fn check_supported(&self) -> Result<(), ConfigError> {
        if self.cert_file.is_some() || self.key_file.is_some() || self.client_cert_auth {
            return Err(ConfigError::Unsupported("client TLS (--cert-file/--key-file)"));
        }
        if !["new", "existing"].contains(&self.initial_cluster_state.as_str()) {
            return Err(ConfigError::BadClusterState(self.initial_cluster_state.clone()));
        }
        self.watch_progress_interval()?;
        self.lease_checkpoint_interval()?;
        self.initial_members()?;
        self.compaction_policy().map(|_| ())
    }

    /// How often idle `progress_notify` watchers hear the current revision;
    /// like etcd, never more often than every 100 ms.
    pub fn watch_progress_interval(&self) -> Result<Duration, ConfigError> {
        let raw = &self.experimental_watch_progress_notify_interval;
        let interval =
            crate::duration::parse(raw).ok_or_else(|| ConfigError::BadProgressInterval(raw.clone()))?;
        Ok(interval.max(Duration::from_millis(100)))
    }

    pub fn lease_checkpoint_interval(&self) -> Result<Duration, ConfigError> {
        let raw = &self.experimental_lease_checkpoint_interval;
        crate::duration::parse(raw).ok_or_else(|| ConfigError::BadCheckpointInterval(raw.clone()))
    }

    pub fn compaction_policy(&self) -> Result<crate::compactor::Policy, ConfigError> {
        crate::compactor::Policy::parse(&self.auto_compaction_mode, &self.auto_compaction_retention)
    }

    pub fn client_listen_addrs(&self) -> Result<Vec<SocketAddr>, ConfigError> {
        split_urls(&self.listen_client_urls).iter().map(|u| socket_addr(u)).collect()
    }

    pub fn peer_listen_addrs(&self) -> Result<Vec<SocketAddr>, ConfigError> {
        split_urls(&self.listen_peer_urls).iter().map(|u| socket_addr(u)).collect()
    }

    pub fn advertise_client_urls(&self) -> Vec<String> {
        split_urls(&self.advertise_client_urls)
    }

    /// The initial members as (name, peer URLs), in the order given; just
    /// this member when `--initial-cluster` is absent.
    pub fn initial_members(&self) -> Result<Vec<(String, Vec<String>)>, ConfigError> {
        let Some(list) = &self.initial_cluster else {
            return Ok(vec![(self.name.clone(), self.advertise_peer_urls())]);
        };
        let mut members: Vec<(String, Vec<String>)> = Vec::new();
        for entry in split_urls(list) {
            let (name, url) =
                entry.split_once('=').ok_or_else(|| ConfigError::BadInitialCluster(list.clone()))?;
            socket_addr(url)?;
            match members.iter_mut().find(|(n, _)| n == name) {
                Some((_, urls)) => urls.push(url.to_string()),
                None => members.push((name.to_string(), vec![url.to_string()])),
            }
        }
        let mine = self.advertise_peer_urls();
        let listed =
            members.iter().any(|(name, urls)| name == &self.name && urls.iter().all(|u| mine.contains(u)));
        if !listed {
            return Err(ConfigError::NotInInitialCluster(self.name.clone()));
        }
        Ok(members)
    }

    pub fn peer_dial_overrides(&self) -> Result<std::collections::HashMap<String, String>, ConfigError> {
        let Some(list) = &self.peer_dial_overrides else { return Ok(Default::default()) };
        split_urls(list)
            .into_iter()
            .map(|pair| match pair.split_once('=') {
                Some((from, to)) => Ok((from.to_string(), to.to_string())),
                None => Err(ConfigError::BadUrl(pair.clone(), "expected peerURL=dialURL".into())),
            })
            .collect()
    }

    /// Whether this member joins a running cluster instead of forming one.
    pub fn joins_existing(&self) -> bool {
        self.initial_cluster_state == "existing"
    }

    pub fn advertise_peer_urls(&self) -> Vec<String> {
        split_urls(&self.initial_advertise_peer_urls)
    }
}

fn split_urls(list: &str) -> Vec<String> {
    list.split(',').map(str::trim).filter(|u| !u.is_empty()).map(String::from).collect()
}

/// `http://host:port` → the address to bind.
fn socket_addr(url: &str) -> Result<SocketAddr, ConfigError> {
    let bad = |why: &str| ConfigError::BadUrl(url.to_string(), why.to_string());
    let rest = url.strip_prefix("http://").ok_or_else(|| {
        if url.starts_with("https://") {
            bad("https needs TLS, not supported yet")
        } else {
            bad("expected http://host:port")
        }
    })?;
    let host_port = rest.trim_end_matches('/');
    let addrs: Vec<SocketAddr> = host_port.to_socket_addrs().map_err(|e| bad(&e.to_string()))?.collect();
    // "localhost" may resolve to both families; etcd users mean IPv4 loopback.
    addrs.iter().find(|a| a.is_ipv4()).or(addrs.first()).copied().ok_or_else(|| bad("no address"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_a_local_single_member() {
        let c = Config::parse_from(["rtcd"]);
        assert_eq!(c.data_dir(), PathBuf::from("default.rtcd"));
        assert_eq!(c.client_listen_addrs().unwrap(), vec!["127.0.0.1:2379".parse().unwrap()]);
        assert_eq!(c.max_txn_ops, 128);
        assert_eq!(c.max_request_bytes, 1_572_864);
        assert!(c.check_supported().is_ok());
    }

    #[test]
    fn urls_are_validated() {
        let c = Config::parse_from(["rtcd", "--listen-client-urls", "http://127.0.0.1:1,tcp://x"]);
        assert!(matches!(c.client_listen_addrs(), Err(ConfigError::BadUrl(..))));
        let tls = Config::parse_from(["rtcd", "--cert-file", "c.pem"]);
        assert!(tls.check_supported().is_err());
    }
}
