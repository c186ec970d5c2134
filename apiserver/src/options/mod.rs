//! Command-line flags, with kube-apiserver's names and defaults where it
//! has them.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser};

use crate::cacher::{CacheConfig, DEFAULT_WINDOW_BYTES, WindowBytes};
use crate::registry::kinds::service::{IpRange, PortRange, Ranges};

mod admission;
mod aggregator;
mod audit;
mod authentication;
mod authorization;

pub use admission::AdmissionOptions;
pub use aggregator::AggregatorOptions;
pub use audit::AuditOptions;
pub use authentication::AuthenticationOptions;
pub use authorization::{AuthorizationMode, AuthorizationOptions};

/// The command line, one group of flags per concern, each parsed into its
/// type as it is read (a bad value is refused before anything starts).
#[derive(Debug, Clone, Parser)]
#[command(
    name = "rtcd-apiserver",
    version,
    about = "A Kubernetes-style API server over etcd v3 (rtcd or etcd)"
)]
pub struct Options {
    #[command(flatten)]
    pub etcd: EtcdOptions,
    #[command(flatten)]
    pub serving: ServingOptions,
    #[command(flatten)]
    pub limits: LimitOptions,
    #[command(flatten)]
    pub authentication: AuthenticationOptions,
    #[command(flatten)]
    pub authorization: AuthorizationOptions,
    #[command(flatten)]
    pub audit: AuditOptions,
    #[command(flatten)]
    pub admission: AdmissionOptions,
    #[command(flatten)]
    pub aggregator: AggregatorOptions,
    /// The IPv4 range Services' cluster IPs come from.
    #[arg(long, default_value = "10.0.0.0/24", value_parser = IpRange::parse)]
    pub service_cluster_ip_range: IpRange,
    /// The ports NodePort and LoadBalancer Services' node ports come from.
    #[arg(long, default_value = "30000-32767", value_parser = PortRange::parse)]
    pub service_node_port_range: PortRange,
    /// The CA that signs approved CertificateSigningRequests for
    /// kubernetes.io/kube-apiserver-client (kube-controller-manager's flag;
    /// without it no request is signed): its certificate, PEM.
    #[arg(long, requires = "cluster_signing_key_file")]
    pub cluster_signing_cert_file: Option<PathBuf>,
    /// That CA's private key, PEM.
    #[arg(long, requires = "cluster_signing_cert_file")]
    pub cluster_signing_key_file: Option<PathBuf>,
    /// The longest validity of a signed certificate (a request's
    /// expirationSeconds may ask for less).
    #[arg(long, default_value = "8760h", value_parser = parse_duration)]
    pub cluster_signing_duration: Duration,
    /// The previous version for which you want to show hidden metrics.
    /// Only the previous minor version is meaningful, other values will
    /// not be allowed. The format is <major>.<minor>, e.g.: '1.36'.
    #[arg(long, default_value = "")]
    pub show_hidden_metrics_for_version: String,
    /// Log verbosity as klog's -v: 0-1 info, 2-4 debug, 5 and up trace.
    #[arg(short = 'v', long = "v", default_value_t = 0)]
    pub verbosity: u8,
}

impl Options {
    /// The watch caches' configuration: kube's, bounded by
    /// `--watch-cache-window-bytes`.
    pub fn cache(&self) -> CacheConfig {
        CacheConfig {
            window_bytes: WindowBytes::new(self.limits.watch_cache_window_bytes),
            ..CacheConfig::default()
        }
    }

    /// The ranges Services' cluster IPs and node ports come from.
    pub fn service_ranges(&self) -> Ranges {
        Ranges { cluster_ips: self.service_cluster_ip_range, node_ports: self.service_node_port_range }
    }
}

/// Where objects are stored.
#[derive(Debug, Clone, Args)]
pub struct EtcdOptions {
    /// etcd client URLs, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "http://127.0.0.1:2379")]
    pub etcd_servers: Vec<String>,
    /// The prefix of every key this server writes.
    #[arg(long, default_value = "/registry")]
    pub etcd_prefix: String,
    /// How often to compact etcd (Go duration: 5m, 30s; 0 disables).
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    pub etcd_compaction_interval: Duration,
    /// The CAs (PEM) that signed the certificates of `https://` etcd
    /// servers.
    #[arg(long)]
    pub etcd_cafile: Option<PathBuf>,
    /// The client certificate (PEM) presented to `https://` etcd servers
    /// (etcd's `--client-cert-auth` asks for one).
    #[arg(long, requires = "etcd_keyfile")]
    pub etcd_certfile: Option<PathBuf>,
    /// The private key (PEM) of `--etcd-certfile`.
    #[arg(long, requires = "etcd_certfile")]
    pub etcd_keyfile: Option<PathBuf>,
}

/// Where and how clients are served.
#[derive(Debug, Clone, Args)]
pub struct ServingOptions {
    /// The address to serve on. Plain HTTP (`--plain-http`) is allowed on
    /// loopback addresses only.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind_address: IpAddr,
    #[arg(long, default_value_t = 6443)]
    pub secure_port: u16,
    /// Serve HTTPS with this certificate (PEM, chain first). Without it, a
    /// self-signed certificate is made in `--cert-dir` (once) and used.
    #[arg(long, requires = "tls_private_key_file")]
    pub tls_cert_file: Option<PathBuf>,
    #[arg(long, requires = "tls_cert_file")]
    pub tls_private_key_file: Option<PathBuf>,
    /// Client certificates signed by these CAs (PEM) are verified and
    /// passed on to authentication; clients without one are still served.
    #[arg(long, conflicts_with = "plain_http")]
    pub client_ca_file: Option<PathBuf>,
    /// Where the self-signed certificate goes when no `--tls-cert-file` is
    /// given (`apiserver.crt`, `apiserver.key`, and the `apiserver-ca.crt`
    /// clients must trust). kube-apiserver's default: a run directory no
    /// checkout holds, so a key made by one run is never committed with it.
    #[arg(long, default_value = "/var/run/kubernetes")]
    pub cert_dir: PathBuf,
    /// rtcd-specific: serve plain HTTP instead of HTTPS, on a loopback
    /// `--bind-address` only (local tools and tests; anyone on the machine
    /// can then read the traffic).
    #[arg(long, conflicts_with = "tls_cert_file")]
    pub plain_http: bool,
    /// The limit the server gives clients on the streams of one HTTP/2
    /// connection; 0 means kube-apiserver's default, 100.
    #[arg(long, default_value_t = 0)]
    pub http2_max_streams_per_connection: u32,
    /// rtcd-specific (kube-apiserver hard-codes 32s): how long a client may
    /// take to send a request's headers, and on a new connection its TLS
    /// handshake and first request, before the connection is closed.
    #[arg(long, default_value = "32s", value_parser = parse_positive_duration)]
    pub read_header_timeout: Duration,
}

/// How much is served at once.
#[derive(Debug, Clone, Args)]
pub struct LimitOptions {
    /// Read-only requests served at once before answering 429.
    #[arg(long, default_value_t = 400)]
    pub max_requests_inflight: usize,
    /// Mutating requests served at once before answering 429.
    #[arg(long, default_value_t = 200)]
    pub max_mutating_requests_inflight: usize,
    /// API Priority and Fairness: requests classified by the FlowSchemas
    /// and given seats by their priority levels (fair queues, 429s); with
    /// false, the two in-flight limits alone.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub enable_priority_and_fairness: bool,
    /// How long a request that is not long-running (watches, proxies) may
    /// take before it is answered 504 and its work dropped; a request's
    /// `timeout` parameter may shorten it.
    #[arg(long, default_value = "1m0s", value_parser = parse_positive_duration)]
    pub request_timeout: Duration,
    /// rtcd-specific (kube-apiserver has it in its configuration only, as
    /// MaxRequestBodyBytes): longer request bodies are answered 413.
    #[arg(long, default_value_t = 3 * 1024 * 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_request_body_bytes: u64,
    /// rtcd-specific: connections open at once; more are closed as soon as
    /// they are accepted. Every watch over HTTP/1.1 holds one.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: u64,
    /// rtcd-specific (kube bounds each cache's window by count only): the
    /// bytes the watch caches' windows of recent events hold together, as
    /// their objects take them in memory. Past it, the resource adding an event drops its oldest
    /// ones; a watch resuming from before them gets 410 Gone and relists.
    /// 0: no bound.
    #[arg(long, default_value_t = DEFAULT_WINDOW_BYTES)]
    pub watch_cache_window_bytes: usize,
}

/// Go's `time.ParseDuration`, as kube-apiserver reads duration flags.
fn parse_duration(text: &str) -> Result<Duration, String> {
    rtcd_duration::parse(text).map_err(|e| e.to_string())
}

/// A Go duration that is not zero (a timeout of nothing is no timeout).
fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    match parse_duration(text)? {
        Duration::ZERO => Err(format!("{text:?} must be longer than zero")),
        d => Ok(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_parse() {
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        // Go accepts fractions too (the old hand-written parser did not).
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(
            parse_duration("5 minutes"),
            Err("time: unknown unit \" minutes\" in duration \"5 minutes\"".to_string())
        );
        assert!(parse_duration("m").is_err());
    }

    #[test]
    fn flags_have_kube_apiserver_names() {
        let options = Options::try_parse_from([
            "rtcd-apiserver",
            "--etcd-servers=http://127.0.0.1:2379,http://127.0.0.1:22379",
            "--secure-port=8080",
            "--etcd-compaction-interval=0",
        ])
        .unwrap();
        assert_eq!(options.etcd.etcd_servers.len(), 2);
        assert_eq!(options.serving.secure_port, 8080);
        assert_eq!(options.etcd.etcd_compaction_interval, Duration::ZERO);
    }

    #[test]
    fn limits_default_to_kube_apiservers() {
        let options = Options::try_parse_from(["rtcd-apiserver"]).unwrap();
        assert_eq!(options.limits.max_request_body_bytes, 3_145_728);
        assert_eq!(options.serving.read_header_timeout, Duration::from_secs(32));
        assert_eq!(options.serving.http2_max_streams_per_connection, 0);
        let short =
            Options::try_parse_from(["rtcd-apiserver", "--read-header-timeout=2s", "--max-connections=5"])
                .unwrap();
        assert_eq!(
            (short.serving.read_header_timeout, short.limits.max_connections),
            (Duration::from_secs(2), 5)
        );
        assert!(Options::try_parse_from(["rtcd-apiserver", "--read-header-timeout=0"]).is_err());
        assert!(Options::try_parse_from(["rtcd-apiserver", "--max-request-body-bytes=0"]).is_err());
    }

    #[test]
    fn security_flags_read_as_kube_apiservers() {
        let defaults = Options::try_parse_from(["rtcd-apiserver"]).unwrap();
        assert!(defaults.authentication.anonymous_auth);
        assert_eq!(defaults.authorization.authorization_mode, [AuthorizationMode::AlwaysAllow]);
        let set = Options::try_parse_from([
            "rtcd-apiserver",
            "--anonymous-auth=false",
            "--authorization-mode=AlwaysDeny,RBAC",
            "--token-auth-file=/tmp/tokens.csv",
        ])
        .unwrap();
        assert!(!set.authentication.anonymous_auth);
        assert_eq!(
            set.authorization.authorization_mode,
            [AuthorizationMode::AlwaysDeny, AuthorizationMode::Rbac]
        );
        assert!(set.authorization.rbac());
        assert!(Options::try_parse_from(["rtcd-apiserver", "--authorization-mode=Node"]).is_err());
    }
}
