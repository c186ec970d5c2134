//! The cluster's certificates and kubeconfigs, as kubeadm's `init phase
//! certs` and `kubeconfig` make them (and with its file names), for
//! `rtcd-pki` (what `scripts/up.sh` runs) and for the API server's own
//! self-signed certificate when it is given none.
//!
//! Every file is created only when missing: a second run reuses what is
//! there, so certificates survive restarts and clients stay trusted.
//!
//! * `authority`: the CA, and the certificates it signs.
//! * `files`: create-if-missing, private keys readable by their owner only.
//! * `kubeconfig`: client configurations with everything embedded.

pub mod authority;
pub mod files;
pub mod kubeconfig;

use std::net::IpAddr;
use std::path::{Path, PathBuf};

pub use authority::Authority;

#[derive(Debug, thiserror::Error)]
pub enum PkiError {
    #[error("cannot read {path}: {why}")]
    Read { path: String, why: String },
    #[error("cannot write {path}: {why}")]
    Write { path: String, why: String },
    #[error("{path} is not a usable {what}: {why}")]
    Corrupt { path: String, what: &'static str, why: String },
    /// A certificate on disk that its peers would no longer accept.
    #[error("{path} cannot be kept: {why}; remove it (and its key) to make a new one")]
    Stale { path: PathBuf, why: String },
    #[error("cannot make a certificate: {0}")]
    Generate(String),
}

/// What `init` makes.
#[derive(Debug, Clone)]
pub struct InitOptions {
    pub server: String,
    pub service_ip: IpAddr,
    pub extra_sans: Vec<String>,
}

/// The names every API server certificate carries (kubeadm's list).
pub fn serving_names(service_ip: IpAddr, extra: &[String]) -> Vec<String> {
    let mut names: Vec<String> = [
        "localhost",
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        "kubernetes.default.svc.cluster.local",
        "127.0.0.1",
        "::1",
    ]
    .iter()
    .map(|n| n.to_string())
    .collect();
    names.push(service_ip.to_string());
    for name in extra {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
}

/// The cluster's files in `dir`: the CA, the API server's certificate, the
/// administrator's certificate and kubeconfig, the ServiceAccount token key
/// pair, and kubeadm's front-proxy CA with the aggregator's client
/// certificate (`front-proxy-client`). Returns what was created (empty:
/// all reused).
pub fn init(dir: &Path, options: &InitOptions) -> Result<Vec<PathBuf>, PkiError> {
    files::ensure_dir(dir)?;
    let mut created = Vec::new();
    let ca = Authority::load_or_create(dir, "ca", "rtcd-ca", &mut created)?;
    let names = serving_names(options.service_ip, &options.extra_sans);
    ca.ensure_serving(dir, "apiserver", "kube-apiserver", &names, &mut created)?;
    ca.ensure_client(dir, "admin", "kubernetes-admin", &["system:masters".to_string()], &mut created)?;
    authority::ensure_key_pair(dir, "sa", &mut created)?;
    let front_proxy = Authority::load_or_create(dir, "front-proxy-ca", "front-proxy-ca", &mut created)?;
    front_proxy.ensure_client(dir, "front-proxy-client", "front-proxy-client", &[], &mut created)?;
    let admin_config = dir.join("admin.kubeconfig");
    if !admin_config.exists() {
        kubeconfig::write(&admin_config, &options.server, &ca, dir, "admin", "kubernetes-admin")?;
        created.push(admin_config);
    }
    Ok(created)
}

/// File names `init` and the server use.
const RESERVED: &[&str] =
    &["ca", "sa", "apiserver", "apiserver-ca", "admin", "front-proxy-ca", "front-proxy-client"];

/// A client certificate for `name` in `groups`, and its kubeconfig at `out`.
pub fn add_user(
    dir: &Path,
    name: &str,
    groups: &[String],
    server: &str,
    out: &Path,
) -> Result<Vec<PathBuf>, PkiError> {
    let mut created = Vec::new();
    let ca = Authority::load(dir, "ca")?;
    let file = files::safe_name(name);
    // The cluster's own files must never be handed out or replaced as a
    // user's (`sa` is the token signing key, `admin` a system:masters one).
    if RESERVED.contains(&file.as_str()) {
        return Err(PkiError::Generate(format!(
            "{name:?} names one of the cluster's own files; pick another name"
        )));
    }
    authority::check_subject(&dir.join(format!("{file}.crt")), name, groups)?;
    ca.ensure_client(dir, &file, name, groups, &mut created)?;
    if !out.exists() {
        kubeconfig::write(out, server, &ca, dir, &file, name)?;
        created.push(out.to_path_buf());
    }
    Ok(created)
}

/// A self-signed serving certificate in `dir` (`apiserver.crt`, `.key`),
/// made once, as kube-apiserver makes one in `--cert-dir` when it is given
/// no certificate.
pub fn self_signed_serving(dir: &Path, names: &[String]) -> Result<(PathBuf, PathBuf), PkiError> {
    files::ensure_dir(dir)?;
    let (cert, key) = (dir.join("apiserver.crt"), dir.join("apiserver.key"));
    let mut created = Vec::new();
    let ca = Authority::load_or_create(dir, "apiserver-ca", "rtcd-apiserver-ca", &mut created)?;
    match ca.ensure_serving(dir, "apiserver", "kube-apiserver", names, &mut created) {
        // Our own certificate, signed by our own CA: when it has expired or
        // lacks a name it is made again, and clients trusting the CA follow.
        Err(PkiError::Stale { path, why }) => {
            tracing::warn!(path = %path.display(), %why, "making the self-signed serving certificate again");
            std::fs::remove_file(&cert)
                .map_err(|e| PkiError::Write { path: path.display().to_string(), why: e.to_string() })?;
            ca.ensure_serving(dir, "apiserver", "kube-apiserver", names, &mut created)?;
        }
        other => other?,
    }
    Ok((cert, key))
}

#[cfg(test)]
mod tests;
