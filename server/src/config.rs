//! `rtcd`'s command line: etcd's flag names, defaults and `ETCD_*`
//! environment variables, so scripts written for etcd start rtcd unchanged.
//! [`Config`] is the command line as given; [`Config::validate`] checks it
//! once and turns it into the typed [`Settings`] the server runs with.

use std::collections::HashMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::settings::{
    AuthTokens, AutoCompaction, ClusterState, InitialMember, JwtSettings, Listen, LogFormat, Logging,
    Settings, TlsFiles, TlsPolicy, TlsVersion,
};

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
    /// Applied entries between snapshots (at least: a snapshot dumps the
    /// store, so a large store also waits for half its size in entries).
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
    /// rtcd's own: the store's RocksDB block cache, shared by its tables
    /// (etcd's bbolt relies on the page cache instead).
    #[arg(long, env = "RTCD_BLOCK_CACHE_BYTES", default_value_t = rtcd_store::DEFAULT_BLOCK_CACHE_BYTES)]
    pub block_cache_bytes: usize,
    #[arg(long, env = "ETCD_MAX_TXN_OPS", default_value_t = 128)]
    pub max_txn_ops: usize,
    #[arg(long, env = "ETCD_MAX_REQUEST_BYTES", default_value_t = 1_572_864)]
    pub max_request_bytes: usize,
    /// Streams one client connection may have open at once. etcd's default
    /// is unbounded (4294967295); rtcd bounds it, since every stream holds
    /// server memory, and gRPC clients wait for a free stream at the bound.
    #[arg(long, env = "ETCD_MAX_CONCURRENT_STREAMS", default_value_t = 1000)]
    pub max_concurrent_streams: u32,
    /// How long a client connection may stay silent before the server pings it.
    #[arg(long, env = "ETCD_GRPC_KEEPALIVE_INTERVAL", default_value = "2h")]
    pub grpc_keepalive_interval: String,
    /// How long the server waits for the answer to that ping before closing the connection.
    #[arg(long, env = "ETCD_GRPC_KEEPALIVE_TIMEOUT", default_value = "20s")]
    pub grpc_keepalive_timeout: String,
    /// How often a client may ping while the server sends it nothing; more
    /// often, thrice, ends its connection (GOAWAY `too_many_pings`).
    #[arg(long, env = "ETCD_GRPC_KEEPALIVE_MIN_TIME", default_value = "5s")]
    pub grpc_keepalive_min_time: String,
    /// etcd's level of detail for `/metrics`: `extensive` adds gRPC
    /// handling-time histograms (`grpc_server_handling_seconds`).
    #[arg(long, env = "ETCD_METRICS", default_value = "basic")]
    pub metrics: String,
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
    /// An applied request or a read taking longer is logged (`apply request
    /// took too long`) and counted in `etcd_server_slow_apply_total`.
    #[arg(long, env = "ETCD_EXPERIMENTAL_WARNING_APPLY_DURATION", default_value = "100ms")]
    pub experimental_warning_apply_duration: String,
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
    /// Serve https:// client URLs with a self-signed certificate made in
    /// the data dir, when no --cert-file is given.
    #[arg(long, env = "ETCD_AUTO_TLS", default_value_t = false)]
    pub auto_tls: bool,
    /// The same for peer URLs, when no --peer-cert-file is given: peer
    /// links are encrypted, and peers' certificates are not verified.
    #[arg(long, env = "ETCD_PEER_AUTO_TLS", default_value_t = false)]
    pub peer_auto_tls: bool,
    /// Peers' certificates must carry this common name.
    #[arg(long, env = "ETCD_PEER_CERT_ALLOWED_CN")]
    pub peer_cert_allowed_cn: Option<String>,
    /// Comma-separated TLS 1.2 cipher suites (Go's names) for client and
    /// peer connections; empty: rustls's defaults. TLS 1.3's are always on.
    #[arg(long, env = "ETCD_CIPHER_SUITES")]
    pub cipher_suites: Option<String>,
    /// The lowest TLS version accepted: TLS1.2 (default) or TLS1.3.
    #[arg(long, env = "ETCD_TLS_MIN_VERSION", default_value = "")]
    pub tls_min_version: String,
    /// The highest TLS version accepted: TLS1.2 or TLS1.3 (default).
    #[arg(long, env = "ETCD_TLS_MAX_VERSION", default_value = "")]
    pub tls_max_version: String,
    /// How auth tokens are made: `simple` (random strings each member maps
    /// to a user) or `jwt,sign-method=<alg>,priv-key=<file>,pub-key=<file>,ttl=<duration>`
    /// (signed tokens, etcd's options).
    #[arg(long, env = "ETCD_AUTH_TOKEN", default_value = "simple")]
    pub auth_token: String,
    /// Seconds a simple token lives after its last use.
    #[arg(long, env = "ETCD_AUTH_TOKEN_TTL", default_value_t = 300)]
    pub auth_token_ttl: u64,
    /// bcrypt's cost for password hashes (4 to 31).
    #[arg(long, env = "ETCD_BCRYPT_COST", default_value_t = 10)]
    pub bcrypt_cost: u32,
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
    #[error("{0} and {1} go together")]
    TlsPair(&'static str, &'static str),
    #[error("{0} needs {1}")]
    NoTrustedCa(&'static str, &'static str),
    /// etcd's text.
    #[error("TLS key/cert ({0}) must be provided for {1} url {2} with HTTPS scheme")]
    HttpsWithoutTls(&'static str, &'static str, String),
    /// etcd's text ("auth: invalid auth options"), with the reason.
    #[error("invalid --auth-token {0:?}: auth: invalid auth options ({1})")]
    BadAuthToken(String, String),
    #[error("{0}")]
    Tls(String),
    #[error("invalid --bcrypt-cost {0} (4 to 31)")]
    BadBcryptCost(u32),
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
    #[error("invalid --{0} {1:?}")]
    BadDuration(&'static str, String),
    #[error("--max-concurrent-streams must be at least 1")]
    NoStreams,
    #[error("invalid --initial-cluster {0:?}: expected name=peerURL,...")]
    BadInitialCluster(String),
    #[error("--initial-cluster has no entry for this member ({0}) with its --initial-advertise-peer-urls")]
    NotInInitialCluster(String),
}

/// A duration flag that must be above zero.
fn positive(flag: &'static str, raw: &str) -> Result<Duration, ConfigError> {
    match rtcd_duration::parse(raw) {
        Ok(d) if !d.is_zero() => Ok(d),
        _ => Err(ConfigError::BadDuration(flag, raw.to_owned())),
    }
}

/// The space quota when `--quota-backend-bytes` is 0 (etcd's default).
const DEFAULT_QUOTA_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// etcd's progress notification interval, kept when the flag is 0.
const DEFAULT_WATCH_PROGRESS_INTERVAL: Duration = Duration::from_secs(600);
/// etcd never notifies progress more often than this.
const MIN_WATCH_PROGRESS_INTERVAL: Duration = Duration::from_millis(100);
/// etcd's lessor checkpoints this often when the interval is 0.
const DEFAULT_LEASE_CHECKPOINT_INTERVAL: Duration = Duration::from_secs(300);
/// etcd's JWT `ttl` when none is given.
const DEFAULT_JWT_TTL: Duration = Duration::from_secs(300);

impl Config {
    /// `--log-level` and `--logger`; never fails (an unknown logger logs
    /// text, a bad level is the caller's to replace).
    pub fn logging(&self) -> Logging {
        let json = self.logger == "zap" || self.logger == "json";
        Logging {
            filter: self.log_level.clone(),
            format: if json { LogFormat::Json } else { LogFormat::Text },
        }
    }

    /// Checks every flag and returns the typed settings, or the first
    /// problem. Settings rtcd cannot honour yet are refused instead of
    /// silently ignored (serving plain text when TLS was asked for, say).
    pub fn validate(&self) -> Result<Settings, ConfigError> {
        let auth_tokens = self.auth_tokens()?;
        if !(4..=31).contains(&self.bcrypt_cost) {
            return Err(ConfigError::BadBcryptCost(self.bcrypt_cost));
        }
        let data_dir = self.data_dir.clone().unwrap_or_else(|| PathBuf::from(format!("{}.rtcd", self.name)));
        let policy = self.tls_policy()?;
        let client_tls = self.client_tls(&data_dir, &policy)?;
        let peer_tls = self.peer_tls(&data_dir, &policy)?;
        let cluster_state = match self.initial_cluster_state.as_str() {
            "new" => ClusterState::New,
            "existing" => ClusterState::Existing,
            other => return Err(ConfigError::BadClusterState(other.to_string())),
        };
        // Checked in the order written; the first problem is the one reported.
        Ok(Settings {
            name: self.name.clone(),
            data_dir,
            watch_progress_interval: self.watch_progress_interval()?,
            lease_checkpoint_interval: self.lease_checkpoint_interval()?,
            initial_cluster: self.initial_cluster()?,
            auto_compaction: auto_compaction(&self.auto_compaction_mode, &self.auto_compaction_retention)?,
            peer_dial_overrides: self.peer_dial_overrides()?,
            listen_client: self.listen_urls(&self.listen_client_urls, &client_tls, "client")?,
            listen_peer: self.listen_urls(&self.listen_peer_urls, &peer_tls, "peer")?,
            client_tls,
            peer_tls,
            advertise_client_urls: split_urls(&self.advertise_client_urls),
            advertise_peer_urls: split_urls(&self.initial_advertise_peer_urls),
            cluster_state,
            cluster_token: self.initial_cluster_token.clone(),
            snapshot_count: self.snapshot_count,
            snapshot_catchup_entries: self.experimental_snapshot_catchup_entries,
            strict_reconfig_check: self.strict_reconfig_check,
            heartbeat_interval: Duration::from_millis(self.heartbeat_interval),
            election_timeout: Duration::from_millis(self.election_timeout),
            quota_backend_bytes: match self.quota_backend_bytes {
                0 => DEFAULT_QUOTA_BYTES,
                q => q,
            },
            max_txn_ops: self.max_txn_ops,
            block_cache_bytes: self.block_cache_bytes,
            warning_apply_duration: positive(
                "experimental-warning-apply-duration",
                &self.experimental_warning_apply_duration,
            )?,
            max_request_bytes: self.max_request_bytes,
            max_concurrent_streams: match self.max_concurrent_streams {
                0 => return Err(ConfigError::NoStreams),
                n => n,
            },
            grpc_keepalive_interval: positive("grpc-keepalive-interval", &self.grpc_keepalive_interval)?,
            grpc_keepalive_timeout: positive("grpc-keepalive-timeout", &self.grpc_keepalive_timeout)?,
            grpc_keepalive_min_time: positive("grpc-keepalive-min-time", &self.grpc_keepalive_min_time)?,
            auth_tokens,
            bcrypt_cost: self.bcrypt_cost,
            // etcd checks for this one value and takes anything else as basic.
            extensive_metrics: self.metrics == "extensive",
        })
    }

    /// `--auth-token` as etcd reads it: a type, then `name=value` options,
    /// comma-separated; a pair without `=` or a name given twice is refused,
    /// unknown names are ignored with a warning.
    fn auth_tokens(&self) -> Result<AuthTokens, ConfigError> {
        let bad = |why: String| ConfigError::BadAuthToken(self.auth_token.clone(), why);
        let mut parts = self.auth_token.split(',');
        let kind = parts.next().unwrap_or_default();
        let mut options = HashMap::new();
        for part in parts {
            let Some((name, value)) = part.split_once('=').filter(|(_, v)| !v.contains('=')) else {
                return Err(bad(format!("{part:?} is not name=value")));
            };
            if options.insert(name, value).is_some() {
                return Err(bad(format!("{name} given twice")));
            }
        }
        match kind {
            "simple" => Ok(AuthTokens::Simple { ttl: Duration::from_secs(self.auth_token_ttl) }),
            "jwt" => {
                let mut take = |name| options.remove(name).filter(|v: &&str| !v.is_empty());
                let ttl = match take("ttl") {
                    Some(ttl) => rtcd_duration::parse(ttl).map_err(|e| bad(format!("ttl: {e}")))?,
                    None => DEFAULT_JWT_TTL,
                };
                let settings = JwtSettings {
                    sign_method: take("sign-method").unwrap_or_default().to_owned(),
                    private_key: take("priv-key").map(PathBuf::from),
                    public_key: take("pub-key").map(PathBuf::from),
                    ttl,
                };
                if !options.is_empty() {
                    tracing::warn!(options = ?options.keys().collect::<Vec<_>>(), "unknown JWT options");
                }
                Ok(AuthTokens::Jwt(settings))
            }
            other => Err(bad(format!("unknown token type {other:?}; simple or jwt"))),
        }
    }

    /// The client side's TLS files: given, or with `--auto-tls` the
    /// self-signed pair in `<data-dir>/fixtures/client` (made at startup).
    fn client_tls(
        &self,
        data_dir: &std::path::Path,
        policy: &TlsPolicy,
    ) -> Result<Option<TlsFiles>, ConfigError> {
        let (cert, key, self_signed) = match (&self.cert_file, &self.key_file) {
            (Some(cert), Some(key)) => (cert.clone(), key.clone(), false),
            (None, None) if self.auto_tls => {
                let dir = data_dir.join("fixtures").join("client");
                (dir.join("cert.pem"), dir.join("key.pem"), true)
            }
            (None, None) => return Ok(None),
            _ => return Err(ConfigError::TlsPair("--cert-file", "--key-file")),
        };
        if self.client_cert_auth && self.trusted_ca_file.is_none() {
            return Err(ConfigError::NoTrustedCa("--client-cert-auth", "--trusted-ca-file"));
        }
        Ok(Some(TlsFiles {
            cert,
            key,
            trusted_ca: self.trusted_ca_file.clone(),
            client_cert_auth: self.client_cert_auth,
            allowed_cn: None,
            self_signed,
            policy: policy.clone(),
        }))
    }

    /// The peer side's TLS files: given, or with `--peer-auto-tls` the
    /// self-signed pair in `<data-dir>/fixtures/peer`, which (as etcd's)
    /// drops the peer CA and client certificate checks.
    fn peer_tls(
        &self,
        data_dir: &std::path::Path,
        policy: &TlsPolicy,
    ) -> Result<Option<TlsFiles>, ConfigError> {
        let (cert, key) = match (&self.peer_cert_file, &self.peer_key_file) {
            (Some(cert), Some(key)) => (cert.clone(), key.clone()),
            (None, None) if self.peer_auto_tls => {
                let dir = data_dir.join("fixtures").join("peer");
                return Ok(Some(TlsFiles {
                    cert: dir.join("cert.pem"),
                    key: dir.join("key.pem"),
                    trusted_ca: None,
                    client_cert_auth: false,
                    allowed_cn: None,
                    self_signed: true,
                    policy: policy.clone(),
                }));
            }
            (None, None) => return Ok(None),
            _ => return Err(ConfigError::TlsPair("--peer-cert-file", "--peer-key-file")),
        };
        if self.peer_client_cert_auth && self.peer_trusted_ca_file.is_none() {
            return Err(ConfigError::NoTrustedCa("--peer-client-cert-auth", "--peer-trusted-ca-file"));
        }
        Ok(Some(TlsFiles {
            cert,
            key,
            trusted_ca: self.peer_trusted_ca_file.clone(),
            client_cert_auth: self.peer_client_cert_auth,
            allowed_cn: self.peer_cert_allowed_cn.clone(),
            self_signed: false,
            policy: policy.clone(),
        }))
    }

    /// `--cipher-suites` and the TLS versions, checked as etcd checks them:
    /// an unknown suite name, an unknown version, min above max, or suites
    /// with TLS 1.3 alone are refused.
    fn tls_policy(&self) -> Result<TlsPolicy, ConfigError> {
        let version = |flag: &'static str, value: &str, default: TlsVersion| match value {
            "" => Ok(default),
            "TLS1.2" => Ok(TlsVersion::V1_2),
            "TLS1.3" => Ok(TlsVersion::V1_3),
            "TLS1.0" | "TLS1.1" => {
                Err(ConfigError::Tls(format!("{flag} {value}: rustls speaks TLS1.2 and TLS1.3 only")))
            }
            other => Err(ConfigError::Tls(format!(
                "unexpected TLS version {other:?} (must be one of: TLS1.0, TLS1.1, TLS1.2, TLS1.3)"
            ))),
        };
        let min_version = version("--tls-min-version", &self.tls_min_version, TlsVersion::V1_2)?;
        let max_version = version("--tls-max-version", &self.tls_max_version, TlsVersion::V1_3)?;
        if min_version > max_version {
            return Err(ConfigError::Tls(format!(
                "min version ({}) is greater than max version ({})",
                self.tls_min_version, self.tls_max_version
            )));
        }
        let cipher_suites = split_list(self.cipher_suites.as_deref().unwrap_or_default());
        for name in &cipher_suites {
            crate::tls::cipher_suite(name).map_err(ConfigError::Tls)?;
        }
        if !cipher_suites.is_empty() && min_version == TlsVersion::V1_3 {
            return Err(ConfigError::Tls(
                "cipher suites cannot be configured when only TLS1.3 is enabled".into(),
            ));
        }
        Ok(TlsPolicy { cipher_suites, min_version, max_version })
    }

    /// The addresses to bind and whether each serves TLS: an https:// URL
    /// needs the side's certificate (etcd refuses to start without); with
    /// certificates an http:// URL is still served plain, as etcd does.
    fn listen_urls(
        &self,
        list: &str,
        tls: &Option<TlsFiles>,
        side: &'static str,
    ) -> Result<Vec<Listen>, ConfigError> {
        split_urls(list)
            .iter()
            .map(|url| {
                let secure = url.starts_with("https://");
                let flags = if side == "peer" { "--peer-cert-file, --peer-key-file" } else { "--cert-file, --key-file" };
                if secure && tls.is_none() {
                    return Err(ConfigError::HttpsWithoutTls(flags, side, url.clone()));
                }
                if !secure && tls.is_some() {
                    tracing::warn!(%url, "scheme is HTTP while key and cert files are present; ignoring key and cert files");
                }
                Ok(Listen { addr: socket_addr(url)?, tls: secure })
            })
            .collect()
    }

    /// How often idle `progress_notify` watchers hear the current revision.
    /// Like etcd: 0 keeps the default, and never more often than 100 ms.
    fn watch_progress_interval(&self) -> Result<Duration, ConfigError> {
        let raw = &self.experimental_watch_progress_notify_interval;
        let interval =
            rtcd_duration::parse(raw).map_err(|_| ConfigError::BadProgressInterval(raw.clone()))?;
        Ok(match interval {
            Duration::ZERO => DEFAULT_WATCH_PROGRESS_INTERVAL,
            interval => interval.max(MIN_WATCH_PROGRESS_INTERVAL),
        })
    }

    /// Like etcd's lessor, 0 means the default.
    fn lease_checkpoint_interval(&self) -> Result<Duration, ConfigError> {
        let raw = &self.experimental_lease_checkpoint_interval;
        let interval =
            rtcd_duration::parse(raw).map_err(|_| ConfigError::BadCheckpointInterval(raw.clone()))?;
        Ok(if interval.is_zero() { DEFAULT_LEASE_CHECKPOINT_INTERVAL } else { interval })
    }

    /// The initial members in the order given; just this member when
    /// `--initial-cluster` is absent. Its peer URLs must be usable, and this
    /// member must be listed with its advertised peer URLs.
    fn initial_cluster(&self) -> Result<Vec<InitialMember>, ConfigError> {
        let mine = split_urls(&self.initial_advertise_peer_urls);
        let Some(list) = &self.initial_cluster else {
            return Ok(vec![InitialMember { name: self.name.clone(), peer_urls: mine }]);
        };
        let mut members: Vec<InitialMember> = Vec::new();
        for entry in split_urls(list) {
            let (name, url) =
                entry.split_once('=').ok_or_else(|| ConfigError::BadInitialCluster(list.clone()))?;
            socket_addr(url)?;
            match members.iter_mut().find(|m| m.name == name) {
                Some(member) => member.peer_urls.push(url.to_string()),
                None => {
                    members.push(InitialMember { name: name.to_string(), peer_urls: vec![url.to_string()] })
                }
            }
        }
        let listed =
            members.iter().any(|m| m.name == self.name && m.peer_urls.iter().all(|u| mine.contains(u)));
        if !listed {
            return Err(ConfigError::NotInInitialCluster(self.name.clone()));
        }
        Ok(members)
    }

    fn peer_dial_overrides(&self) -> Result<HashMap<String, String>, ConfigError> {
        let Some(list) = &self.peer_dial_overrides else { return Ok(HashMap::new()) };
        split_urls(list)
            .into_iter()
            .map(|pair| match pair.split_once('=') {
                Some((from, to)) => Ok((from.to_string(), to.to_string())),
                None => Err(ConfigError::BadUrl(pair.clone(), "expected peerURL=dialURL".into())),
            })
            .collect()
    }
}

/// etcd's reading of the retention (embed's parseCompactionRetention): a
/// bare whole number is hours in periodic mode and revisions in revision
/// mode; otherwise periodic mode takes a Go duration. Zero turns
/// compaction off however it is written ("0", "0s", "0h").
fn auto_compaction(mode: &str, retention: &str) -> Result<AutoCompaction, ConfigError> {
    let bad = || ConfigError::BadRetention(retention.to_string());
    match mode {
        "periodic" => {
            let keep = match retention.parse::<u64>() {
                Ok(hours) => Duration::from_secs(hours.checked_mul(3600).ok_or_else(bad)?),
                Err(_) => rtcd_duration::parse(retention).map_err(|_| bad())?,
            };
            Ok(if keep.is_zero() { AutoCompaction::Off } else { AutoCompaction::Periodic(keep) })
        }
        "revision" => match retention.parse::<i64>() {
            Ok(0) => Ok(AutoCompaction::Off),
            Ok(n) if n > 0 => Ok(AutoCompaction::Revision(n)),
            _ => Err(bad()),
        },
        other => Err(ConfigError::BadCompactionMode(other.to_string())),
    }
}

fn split_urls(list: &str) -> Vec<String> {
    split_list(list)
}

/// A comma-separated list, blanks trimmed, empty items dropped.
fn split_list(list: &str) -> Vec<String> {
    list.split(',').map(str::trim).filter(|u| !u.is_empty()).map(String::from).collect()
}

/// `http://host:port` or `https://host:port` → the address to bind.
fn socket_addr(url: &str) -> Result<SocketAddr, ConfigError> {
    let bad = |why: &str| ConfigError::BadUrl(url.to_string(), why.to_string());
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .ok_or_else(|| bad("expected http://host:port or https://host:port"))?;
    let host_port = rest.trim_end_matches('/');
    let addrs: Vec<SocketAddr> = host_port.to_socket_addrs().map_err(|e| bad(&e.to_string()))?.collect();
    // "localhost" may resolve to both families; etcd users mean IPv4 loopback.
    addrs.iter().find(|a| a.is_ipv4()).or(addrs.first()).copied().ok_or_else(|| bad("no address"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(args: &[&str]) -> Result<Settings, ConfigError> {
        Config::parse_from(std::iter::once("rtcd").chain(args.iter().copied())).validate()
    }

    #[test]
    fn auth_token_options_are_read_as_etcd_reads_them() {
        let tokens = |value: &str| settings(&["--auth-token", value]).map(|s| s.auth_tokens);
        assert_eq!(tokens("simple").unwrap(), AuthTokens::Simple { ttl: Duration::from_secs(300) });
        let jwt = tokens("jwt,sign-method=RS256,priv-key=/k,pub-key=/p,ttl=10m,future=1").unwrap();
        let expected = JwtSettings {
            sign_method: "RS256".into(),
            private_key: Some("/k".into()),
            public_key: Some("/p".into()),
            ttl: Duration::from_secs(600),
        };
        assert_eq!(jwt, AuthTokens::Jwt(expected));
        let AuthTokens::Jwt(defaults) = tokens("jwt,sign-method=HS256").unwrap() else { panic!() };
        assert_eq!((defaults.ttl, defaults.private_key), (DEFAULT_JWT_TTL, None));
        for bad in ["jwt,sign-method", "jwt,ttl=1m,ttl=2m", "jwt,a=b=c", "jwt,ttl=soon", "jwt,", "opaque"] {
            let err = tokens(bad).unwrap_err().to_string();
            assert!(err.contains("auth: invalid auth options"), "{bad}: {err}");
        }
    }

    #[test]
    fn defaults_are_a_local_single_member() {
        let s = settings(&[]).unwrap();
        assert_eq!(s.data_dir, PathBuf::from("default.rtcd"));
        assert_eq!(s.listen_client, vec![Listen { addr: "127.0.0.1:2379".parse().unwrap(), tls: false }]);
        assert_eq!(s.listen_peer, vec![Listen { addr: "127.0.0.1:2380".parse().unwrap(), tls: false }]);
        assert_eq!(s.advertise_client_urls, vec!["http://127.0.0.1:2379"]);
        let me = InitialMember { name: "default".into(), peer_urls: vec!["http://127.0.0.1:2380".into()] };
        assert_eq!(s.initial_cluster, vec![me]);
        assert_eq!(s.cluster_state, ClusterState::New);
        assert_eq!(s.max_txn_ops, 128);
        assert_eq!(s.max_request_bytes, 1_572_864);
        assert_eq!(s.max_concurrent_streams, 1000);
        assert_eq!(
            (s.grpc_keepalive_interval, s.grpc_keepalive_timeout),
            (Duration::from_secs(7200), Duration::from_secs(20))
        );
        assert_eq!(s.grpc_keepalive_min_time, Duration::from_secs(5));
        assert!(settings(&["--grpc-keepalive-min-time", "0s"]).is_err());
        assert_eq!(s.quota_backend_bytes, DEFAULT_QUOTA_BYTES);
        assert!(!s.extensive_metrics);
        assert!(settings(&["--metrics", "extensive"]).unwrap().extensive_metrics);
        assert!(!settings(&["--metrics", "basic"]).unwrap().extensive_metrics);
        assert_eq!(s.block_cache_bytes, 64 << 20);
        assert_eq!(settings(&["--block-cache-bytes", "1048576"]).unwrap().block_cache_bytes, 1 << 20);
        assert_eq!(
            (s.heartbeat_interval, s.election_timeout),
            (Duration::from_millis(100), Duration::from_secs(1))
        );
        assert_eq!(s.request_timeout(), Duration::from_secs(7));
        assert_eq!(s.auto_compaction, AutoCompaction::Off);
        assert_eq!(s.watch_progress_interval, Duration::from_secs(600));
        assert_eq!(s.lease_checkpoint_interval, Duration::from_secs(300));
        assert!(s.peer_dial_overrides.is_empty());
        assert!(s.strict_reconfig_check);
    }

    #[test]
    fn urls_are_validated() {
        let bad = settings(&["--listen-client-urls", "http://127.0.0.1:1,tcp://x"]);
        assert!(matches!(bad, Err(ConfigError::BadUrl(..))));
        let https = settings(&["--listen-client-urls", "https://127.0.0.1:2379"]).unwrap_err();
        assert_eq!(
            https.to_string(),
            "TLS key/cert (--cert-file, --key-file) must be provided for client url https://127.0.0.1:2379 \
             with HTTPS scheme"
        );
        let half = settings(&["--cert-file", "c.pem"]).unwrap_err();
        assert_eq!(half.to_string(), "--cert-file and --key-file go together");
        let no_ca =
            settings(&["--cert-file", "c.pem", "--key-file", "k.pem", "--client-cert-auth"]).unwrap_err();
        assert_eq!(no_ca.to_string(), "--client-cert-auth needs --trusted-ca-file");
        let urls = ["--listen-client-urls", "https://127.0.0.1:2379,http://127.0.0.1:2381"];
        let auto = settings(&[&urls[..], &["--auto-tls", "--data-dir", "/d"]].concat()).unwrap();
        assert_eq!(auto.listen_client.iter().map(|l| l.tls).collect::<Vec<_>>(), [true, false]);
        let files = auto.client_tls.unwrap();
        assert!(files.self_signed && files.cert == std::path::Path::new("/d/fixtures/client/cert.pem"));
    }

    #[test]
    fn the_initial_cluster_must_list_this_member() {
        let peers = "a=http://127.0.0.1:2380,a=http://127.0.0.1:2381,b=http://127.0.0.1:2480";
        let mine = "http://127.0.0.1:2380,http://127.0.0.1:2381";
        let s = settings(&["--name", "a", "--initial-advertise-peer-urls", mine, "--initial-cluster", peers])
            .unwrap();
        let names: Vec<(&str, usize)> =
            s.initial_cluster.iter().map(|m| (&*m.name, m.peer_urls.len())).collect();
        assert_eq!(names, vec![("a", 2), ("b", 1)]);
        let partly = settings(&["--name", "a", "--initial-cluster", peers]);
        assert!(
            matches!(partly, Err(ConfigError::NotInInitialCluster(_))),
            "all its URLs must be this member's"
        );
        let missing = settings(&["--name", "c", "--initial-cluster", peers]).unwrap_err();
        assert_eq!(
            missing.to_string(),
            "--initial-cluster has no entry for this member (c) with its --initial-advertise-peer-urls"
        );
        assert!(matches!(
            settings(&["--initial-cluster", "nonsense"]),
            Err(ConfigError::BadInitialCluster(_))
        ));
    }

    #[test]
    fn cluster_state_is_new_or_existing() {
        assert!(settings(&["--initial-cluster-state", "existing"]).unwrap().joins_existing());
        let bad = settings(&["--initial-cluster-state", "old"]).unwrap_err();
        assert_eq!(bad.to_string(), r#"invalid --initial-cluster-state "old" (new or existing)"#);
    }

    #[test]
    fn retention_parses_like_etcd() {
        let policy = |mode, retention| auto_compaction(mode, retention);
        assert_eq!(policy("periodic", "0").unwrap(), AutoCompaction::Off);
        assert_eq!(policy("periodic", "0s").unwrap(), AutoCompaction::Off, "zero however written");
        assert_eq!(policy("periodic", "2").unwrap(), AutoCompaction::Periodic(Duration::from_secs(7200)));
        assert_eq!(policy("periodic", "1h30m").unwrap(), AutoCompaction::Periodic(Duration::from_secs(5400)));
        assert_eq!(policy("periodic", "1.5h").unwrap(), AutoCompaction::Periodic(Duration::from_secs(5400)));
        assert_eq!(
            policy("periodic", "500ms").unwrap(),
            AutoCompaction::Periodic(Duration::from_millis(500))
        );
        assert_eq!(policy("revision", "1000").unwrap(), AutoCompaction::Revision(1000));
        assert_eq!(policy("revision", "0").unwrap(), AutoCompaction::Off);
        assert!(policy("revision", "1h").is_err());
        assert!(policy("revision", "-5").is_err());
        assert!(policy("periodic", "-1h").is_err(), "a negative retention means nothing");
        assert!(policy("periodic", "1.5").is_err(), "a fraction needs a unit, as in etcd");
        assert!(policy("periodic", "18446744073709551615").is_err());
        let soon = policy("periodic", "soon").unwrap_err();
        assert_eq!(soon.to_string(), r#"invalid --auto-compaction-retention "soon""#);
        let daily = policy("daily", "1").unwrap_err();
        assert_eq!(daily.to_string(), r#"invalid --auto-compaction-mode "daily" (periodic or revision)"#);
    }

    #[test]
    fn intervals_take_go_durations_and_zero_means_etcds_default() {
        let s = settings(&[
            "--experimental-watch-progress-notify-interval",
            "1.5s",
            "--experimental-lease-checkpoint-interval",
            "90s",
        ])
        .unwrap();
        assert_eq!(
            (s.watch_progress_interval, s.lease_checkpoint_interval),
            (Duration::from_millis(1500), Duration::from_secs(90))
        );
        let zero = settings(&[
            "--experimental-watch-progress-notify-interval",
            "0",
            "--experimental-lease-checkpoint-interval",
            "0s",
        ])
        .unwrap();
        assert_eq!(
            (zero.watch_progress_interval, zero.lease_checkpoint_interval),
            (Duration::from_secs(600), Duration::from_secs(300))
        );
        let fast = settings(&["--experimental-watch-progress-notify-interval", "1ms"]).unwrap();
        assert_eq!(fast.watch_progress_interval, Duration::from_millis(100), "never below etcd's minimum");
        let bad = settings(&["--experimental-watch-progress-notify-interval", "10"]).unwrap_err();
        assert_eq!(bad.to_string(), r#"invalid --experimental-watch-progress-notify-interval "10""#);
        let bad = settings(&["--experimental-lease-checkpoint-interval=-1m"]).unwrap_err();
        assert_eq!(bad.to_string(), r#"invalid --experimental-lease-checkpoint-interval "-1m""#);
    }

    #[test]
    fn slow_applies_are_those_over_the_warning_duration() {
        assert_eq!(
            settings(&[]).unwrap().warning_apply_duration,
            Duration::from_millis(100),
            "etcd's default"
        );
        let set = settings(&["--experimental-warning-apply-duration", "2s"]).unwrap();
        assert_eq!(set.warning_apply_duration, Duration::from_secs(2));
        let bad = settings(&["--experimental-warning-apply-duration", "0"]).unwrap_err();
        assert_eq!(bad.to_string(), r#"invalid --experimental-warning-apply-duration "0""#);
    }

    #[test]
    fn logging_reads_logger_and_level() {
        let zap = Config::parse_from(["rtcd", "--logger", "zap", "--log-level", "debug"]).logging();
        assert_eq!(zap, Logging { filter: "debug".into(), format: LogFormat::Json });
        assert_eq!(Config::parse_from(["rtcd"]).logging().format, LogFormat::Text);
    }
}
