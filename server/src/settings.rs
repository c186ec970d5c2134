//! What a member runs with, as typed values: the command line (`config`)
//! checked and converted once at startup by `Config::validate`. The rest of
//! the server reads these and never the raw flags, so no flag is parsed
//! twice and a bad one stops `rtcd` before anything is opened.
//!
//! A leaf: it depends on no other module of the crate, so every module can
//! use it without a cycle.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// gRPC framing etcd allows on top of `--max-request-bytes`.
pub const GRPC_OVERHEAD_BYTES: usize = 512 * 1024;

/// How long a write may wait before "request timed out": etcd's 5 s, plus
/// two election timeouts (see [`Settings::request_timeout`]).
const BASE_REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// The files of one side (client or peer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
    /// CAs client certificates are verified against.
    pub trusted_ca: Option<PathBuf>,
    /// Refuse connections without a certificate those CAs signed.
    pub client_cert_auth: bool,
    /// Peers only: the common name a peer's certificate must carry.
    pub allowed_cn: Option<String>,
    /// `--auto-tls` / `--peer-auto-tls`: `cert` and `key` are made at
    /// startup if missing; as a client (peers) the other side's
    /// certificate is not verified, as etcd's self-signed mode.
    pub self_signed: bool,
    /// What both sides negotiate.
    pub policy: TlsPolicy,
}

/// A TLS protocol version rustls speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsVersion {
    V1_2,
    V1_3,
}

/// `--cipher-suites`, `--tls-min-version`, `--tls-max-version`, for the
/// client and peer sides alike (as etcd).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsPolicy {
    /// Go's names of the TLS 1.2 suites offered, in order; empty: rustls's
    /// defaults. TLS 1.3's suites are always offered (Go's rule too).
    pub cipher_suites: Vec<String>,
    pub min_version: TlsVersion,
    pub max_version: TlsVersion,
}

impl Default for TlsPolicy {
    fn default() -> Self {
        Self { cipher_suites: Vec::new(), min_version: TlsVersion::V1_2, max_version: TlsVersion::V1_3 }
    }
}

/// How auth tokens are made (`--auth-token`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthTokens {
    /// `simple`: random strings each member maps to a user; each lives
    /// `ttl` (`--auth-token-ttl`) after its last use.
    Simple { ttl: Duration },
    /// `jwt,...`: signed tokens any member holding the key checks.
    Jwt(JwtSettings),
}

/// The options of `--auth-token jwt,sign-method=...,priv-key=...,pub-key=...,ttl=...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JwtSettings {
    /// The JWT `alg`: HS256, RS256, ES256, PS256, ... (`sign-method`).
    pub sign_method: String,
    /// `priv-key`: a PEM file (RSA, ECDSA) or the HMAC secret's bytes.
    pub private_key: Option<PathBuf>,
    /// `pub-key`: a PEM file; alone, the member verifies but cannot sign.
    pub public_key: Option<PathBuf>,
    /// `ttl`: how long a token is valid after it is made (etcd's 5 min by default).
    pub ttl: Duration,
}

/// An address to serve, with or without TLS (its URL's scheme).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listen {
    pub addr: SocketAddr,
    pub tls: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// `--name`.
    pub name: String,
    /// `--data-dir`, or `<name>.rtcd`.
    pub data_dir: PathBuf,
    /// `--listen-client-urls`, resolved to the addresses to bind.
    pub listen_client: Vec<Listen>,
    /// `--listen-peer-urls`, resolved to the addresses to bind.
    pub listen_peer: Vec<Listen>,
    /// The client side's certificate files (`--cert-file`, ... or
    /// `--auto-tls`), for https:// client URLs.
    pub client_tls: Option<TlsFiles>,
    /// The peer side's (`--peer-cert-file`, ...), for https:// peer URLs and
    /// for dialing peers.
    pub peer_tls: Option<TlsFiles>,
    /// `--advertise-client-urls`: announced in MemberList, as given.
    pub advertise_client_urls: Vec<String>,
    /// `--initial-advertise-peer-urls`: what defines this member's ID.
    pub advertise_peer_urls: Vec<String>,
    /// `--initial-cluster`, in the order given (just this member when the
    /// flag is absent); this member is always listed.
    pub initial_cluster: Vec<InitialMember>,
    /// `--initial-cluster-state`.
    pub cluster_state: ClusterState,
    /// `--initial-cluster-token`.
    pub cluster_token: String,
    /// `--snapshot-count`.
    pub snapshot_count: u64,
    /// `--experimental-snapshot-catchup-entries`.
    pub snapshot_catchup_entries: u64,
    /// `--strict-reconfig-check`.
    pub strict_reconfig_check: bool,
    /// `--heartbeat-interval` (milliseconds on the command line).
    pub heartbeat_interval: Duration,
    /// `--election-timeout` (milliseconds on the command line).
    pub election_timeout: Duration,
    /// `--quota-backend-bytes`, with etcd's default (2 GiB) for 0.
    pub quota_backend_bytes: u64,
    /// `--metrics=extensive`: gRPC handling times are measured too.
    pub extensive_metrics: bool,
    /// `--max-txn-ops`.
    pub max_txn_ops: usize,
    /// `--auth-token` (with `--auth-token-ttl` for simple tokens).
    pub auth_tokens: AuthTokens,
    /// `--bcrypt-cost` of password hashes.
    pub bcrypt_cost: u32,
    /// The store's RocksDB block cache.
    pub block_cache_bytes: usize,
    /// Applies and reads slower than this are logged and counted.
    pub warning_apply_duration: Duration,
    /// `--max-request-bytes`.
    pub max_request_bytes: usize,
    /// `--max-concurrent-streams`, per client connection.
    pub max_concurrent_streams: u32,
    /// `--grpc-keepalive-interval`: the server pings a connection silent this long.
    pub grpc_keepalive_interval: Duration,
    /// `--grpc-keepalive-timeout`: and closes it when the ping goes unanswered this long.
    pub grpc_keepalive_timeout: Duration,
    /// `--grpc-keepalive-min-time`: how often a client may ping (`proto::pings`).
    pub grpc_keepalive_min_time: Duration,
    /// `--auto-compaction-mode` and `--auto-compaction-retention`.
    pub auto_compaction: AutoCompaction,
    /// `--experimental-watch-progress-notify-interval`, at least 100 ms.
    pub watch_progress_interval: Duration,
    /// `--experimental-lease-checkpoint-interval`.
    pub lease_checkpoint_interval: Duration,
    /// Test hook (`RTCD_PEER_DIAL_OVERRIDES`): peer URL → URL to dial instead.
    pub peer_dial_overrides: HashMap<String, String>,
}

/// One entry of `--initial-cluster` (a name may list several peer URLs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitialMember {
    pub name: String,
    pub peer_urls: Vec<String>,
}

/// `--initial-cluster-state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterState {
    /// Form a new cluster from `--initial-cluster`.
    New,
    /// Join a running cluster this member was added to (`etcdctl member add`).
    Existing,
}

/// Auto-compaction, from `--auto-compaction-mode` and
/// `--auto-compaction-retention` (a zero retention turns it off, as in etcd).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoCompaction {
    Off,
    /// Keep about this much history.
    Periodic(Duration),
    /// Keep this many revisions.
    Revision(i64),
}

/// How `rtcd` logs: `--log-level` and `--logger`. Read before the other
/// flags are validated, so that their errors are logged the way asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logging {
    /// A `tracing` filter: `info`, `debug`, `rtcd_raft=debug,info`...
    pub filter: String,
    pub format: LogFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// One JSON object per line (`--logger zap`, like etcd's zap logger).
    Json,
    Text,
}

impl Settings {
    /// Whether this member joins a running cluster instead of forming one.
    pub fn joins_existing(&self) -> bool {
        self.cluster_state == ClusterState::Existing
    }

    /// How long a request may wait for replication or for a leader.
    pub fn request_timeout(&self) -> Duration {
        BASE_REQUEST_TIMEOUT + 2 * self.election_timeout
    }

    /// The largest gRPC message a client may send, and the size watch
    /// responses are split at: `--max-request-bytes` plus framing, as etcd.
    pub fn max_message_bytes(&self) -> usize {
        self.max_request_bytes + GRPC_OVERHEAD_BYTES
    }
}
