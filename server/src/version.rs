//! What rtcd tells clients about itself. Constants only: the HTTP
//! `/version` endpoint and `Maintenance.Status` read them, `--version`
//! (in `config`) prints the same API version.

/// The etcd API version rtcd implements, reported by `--version`.
pub const ETCD_API_VERSION: &str = "3.5";
/// What `Maintenance.Status` and `/version` report: a 3.5 release
/// kube-apiserver trusts with watch progress requests (>= 3.5.13).
pub const ETCD_COMPAT_VERSION: &str = "3.5.17";
