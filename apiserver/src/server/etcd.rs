//! The connection to etcd: a gRPC channel per `--etcd-servers` URL, made
//! one service by `storage::Endpoints` (health checks, failover). `https://` URLs are reached over TLS, trusting the
//! CAs of `--etcd-cafile` and presenting the client certificate of
//! `--etcd-certfile`/`--etcd-keyfile` (kube-apiserver's flags), which an
//! etcd started with `--client-cert-auth` asks for. The files are read and
//! checked here, at startup, so a wrong path or a file that holds no
//! certificate stops the server with the flag's name rather than failing
//! every request later.

use std::path::Path;
use std::time::Duration;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};

use crate::options::EtcdOptions;
use crate::storage::Endpoints;

#[derive(Debug, thiserror::Error)]
pub enum EtcdError {
    #[error("invalid --etcd-servers URL {url:?}: {why}")]
    Url { url: String, why: String },
    #[error(
        "--etcd-servers URL {url:?} is https: --etcd-cafile must name the CA that signed the etcd server's certificate"
    )]
    NoCa { url: String },
    #[error("cannot use {flag} {path}: {why}")]
    File { flag: &'static str, path: String, why: String },
    #[error("cannot reach {url:?} over TLS with these files: {why}")]
    Tls { url: String, why: String },
}

/// Every etcd member of the flags, each reached through a channel that
/// connects lazily (and reconnects), so etcd need not be up yet.
pub fn channel(options: &EtcdOptions) -> Result<Endpoints, EtcdError> {
    let tls = client_tls(options)?;
    let mut members = Vec::with_capacity(options.etcd_servers.len());
    for url in &options.etcd_servers {
        let mut endpoint = Endpoint::from_shared(url.clone())
            .map_err(|e| EtcdError::Url { url: url.clone(), why: e.to_string() })?
            .connect_timeout(Duration::from_secs(5))
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(30))
            .keep_alive_while_idle(true);
        match url.split_once("://").map(|(scheme, _)| scheme) {
            Some("https") => {
                let config = tls.clone().ok_or_else(|| EtcdError::NoCa { url: url.clone() })?;
                endpoint = endpoint
                    .tls_config(config)
                    .map_err(|e| EtcdError::Tls { url: url.clone(), why: error_chain(&e) })?;
            }
            Some("http" | "unix") => {}
            _ => {
                let why = "the scheme must be http, https or unix".into();
                return Err(EtcdError::Url { url: url.clone(), why });
            }
        }
        members.push((url.clone(), endpoint.connect_lazy()));
    }
    Ok(Endpoints::new(members))
}

/// The TLS configuration of the flags: `None` without `--etcd-cafile`
/// (then only `http://` servers can be reached).
fn client_tls(options: &EtcdOptions) -> Result<Option<ClientTlsConfig>, EtcdError> {
    let Some(ca_file) = &options.etcd_cafile else {
        if options.etcd_certfile.is_some() {
            tracing::warn!("--etcd-certfile is used only with --etcd-cafile and https:// etcd servers");
        }
        return Ok(None);
    };
    let mut config = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(read_cas(ca_file)?));
    if let (Some(cert_file), Some(key_file)) = (&options.etcd_certfile, &options.etcd_keyfile) {
        config = config.identity(Identity::from_pem(read_certificate(cert_file)?, read_key(key_file)?));
    }
    if !options.etcd_servers.iter().any(|url| url.starts_with("https://")) {
        tracing::warn!(
            "--etcd-cafile is given but no --etcd-servers URL is https://: etcd is reached without TLS"
        );
    }
    Ok(Some(config))
}

/// The PEM text of `--etcd-cafile`, once every certificate in it is known
/// to be one a TLS client can trust.
fn read_cas(path: &Path) -> Result<Vec<u8>, EtcdError> {
    let error = file_error("--etcd-cafile", path);
    let (pem, certs) = read_certificates("--etcd-cafile", path)?;
    let mut roots = rustls::RootCertStore::empty();
    for cert in certs {
        roots.add(cert).map_err(|e| error(e.to_string()))?;
    }
    Ok(pem)
}

/// The PEM text of `--etcd-certfile`, once it is known to hold a
/// certificate.
fn read_certificate(path: &Path) -> Result<Vec<u8>, EtcdError> {
    Ok(read_certificates("--etcd-certfile", path)?.0)
}

/// The PEM text of the file of `flag` and the certificates in it (one at
/// least).
fn read_certificates(
    flag: &'static str,
    path: &Path,
) -> Result<(Vec<u8>, Vec<CertificateDer<'static>>), EtcdError> {
    let error = file_error(flag, path);
    let pem = std::fs::read(path).map_err(|e| error(e.to_string()))?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| error(e.to_string()))?;
    if certs.is_empty() {
        return Err(error("no certificate in the file".into()));
    }
    Ok((pem, certs))
}

/// The PEM text of `--etcd-keyfile`, once it is known to hold a key.
fn read_key(path: &Path) -> Result<Vec<u8>, EtcdError> {
    let error = file_error("--etcd-keyfile", path);
    let pem = std::fs::read(path).map_err(|e| error(e.to_string()))?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| error(e.to_string()))?;
    Ok(pem)
}

fn file_error(flag: &'static str, path: &Path) -> impl Fn(String) -> EtcdError {
    let path = path.display().to_string();
    move |why| EtcdError::File { flag, path: path.clone(), why }
}

/// An error with its causes ("transport error: ..." alone says little).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn options(args: &[&str]) -> EtcdOptions {
        let mut argv = vec!["rtcd-apiserver"];
        argv.extend_from_slice(args);
        crate::options::Options::try_parse_from(argv).unwrap().etcd
    }

    /// A CA (ca.crt) and a client certificate (client.crt, client.key)
    /// in `dir`, and an empty file.
    fn write_files(dir: &Path) {
        let mut created = Vec::new();
        let ca = crate::pki::Authority::load_or_create(dir, "ca", "etcd-ca", &mut created).unwrap();
        ca.ensure_client(dir, "client", "kube-apiserver-etcd-client", &[], &mut created).unwrap();
        std::fs::write(dir.join("empty.pem"), "").unwrap();
    }

    fn message(result: Result<Endpoints, EtcdError>) -> String {
        result.err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[tokio::test]
    async fn https_servers_are_reached_with_the_files_of_the_flags() {
        let dir = tempfile::tempdir().unwrap();
        write_files(dir.path());
        let d = dir.path().display();
        let flags = [
            "--etcd-servers=https://127.0.0.1:2379,https://localhost:2380".to_string(),
            format!("--etcd-cafile={d}/ca.crt"),
            format!("--etcd-certfile={d}/client.crt"),
            format!("--etcd-keyfile={d}/client.key"),
        ];
        let args: Vec<&str> = flags.iter().map(String::as_str).collect();
        assert!(channel(&options(&args)).is_ok());
        // The CA alone is enough for an etcd that asks no certificate.
        assert!(channel(&options(&args[..2])).is_ok());
        // As etcd's own client: a member on a unix socket.
        assert!(channel(&options(&["--etcd-servers=unix:///run/etcd.sock"])).is_ok());
    }

    #[tokio::test]
    async fn wrong_files_and_urls_are_refused_naming_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        write_files(dir.path());
        let d = dir.path().display();
        assert_eq!(
            message(channel(&options(&["--etcd-servers=https://127.0.0.1:2379"]))),
            "--etcd-servers URL \"https://127.0.0.1:2379\" is https: --etcd-cafile must name the CA that signed the \
             etcd server's certificate"
        );
        let missing = message(channel(&options(&[
            "--etcd-servers=https://127.0.0.1:2379",
            &format!("--etcd-cafile={d}/nothing.crt"),
        ])));
        assert!(missing.starts_with(&format!("cannot use --etcd-cafile {d}/nothing.crt: ")), "{missing}");
        let empty = message(channel(&options(&[&format!("--etcd-cafile={d}/empty.pem")])));
        assert_eq!(empty, format!("cannot use --etcd-cafile {d}/empty.pem: no certificate in the file"));
        let key_as_cert = message(channel(&options(&[
            &format!("--etcd-cafile={d}/ca.crt"),
            &format!("--etcd-certfile={d}/client.key"),
            &format!("--etcd-keyfile={d}/client.key"),
        ])));
        assert_eq!(
            key_as_cert,
            format!("cannot use --etcd-certfile {d}/client.key: no certificate in the file")
        );
        let cert_as_key = message(channel(&options(&[
            &format!("--etcd-cafile={d}/ca.crt"),
            &format!("--etcd-certfile={d}/client.crt"),
            &format!("--etcd-keyfile={d}/client.crt"),
        ])));
        assert!(
            cert_as_key.starts_with(&format!("cannot use --etcd-keyfile {d}/client.crt: ")),
            "{cert_as_key}"
        );
        assert_eq!(
            message(channel(&options(&["--etcd-servers=ftp://127.0.0.1:2379"]))),
            "invalid --etcd-servers URL \"ftp://127.0.0.1:2379\": the scheme must be http, https or unix"
        );
    }

    #[test]
    fn a_certificate_needs_its_key() {
        let refused = crate::options::Options::try_parse_from(["rtcd-apiserver", "--etcd-certfile=c.pem"]);
        assert!(refused.unwrap_err().to_string().contains("--etcd-keyfile"));
    }
}
