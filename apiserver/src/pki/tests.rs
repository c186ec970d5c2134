use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls::server::WebPkiClientVerifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use x509_parser::prelude::{FromDer, X509Certificate};

use super::*;

fn options() -> InitOptions {
    InitOptions {
        server: "https://127.0.0.1:6443".into(),
        service_ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        extra_sans: vec!["api.example".into()],
    }
}

fn cert(path: &Path) -> CertificateDer<'static> {
    CertificateDer::from_pem_file(path).unwrap()
}

fn roots(dir: &Path) -> Arc<RootCertStore> {
    let mut roots = RootCertStore::empty();
    roots.add(cert(&dir.join("ca.crt"))).unwrap();
    Arc::new(roots)
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

#[test]
fn the_serving_certificate_is_trusted_for_the_cluster_names_only() {
    let dir = tempfile::tempdir().unwrap();
    init(dir.path(), &options()).unwrap();
    let verifier =
        WebPkiServerVerifier::builder_with_provider(roots(dir.path()), provider()).build().unwrap();
    let leaf = cert(&dir.path().join("apiserver.crt"));
    for name in ["127.0.0.1", "localhost", "kubernetes.default.svc", "10.0.0.1", "api.example"] {
        let server = ServerName::try_from(name.to_string()).unwrap();
        verifier
            .verify_server_cert(&leaf, &[], &server, &[], UnixTime::now())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let other = ServerName::try_from("example.com".to_string()).unwrap();
    assert!(verifier.verify_server_cert(&leaf, &[], &other, &[], UnixTime::now()).is_err());
}

#[test]
fn client_certificates_name_the_user_and_groups_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    init(dir.path(), &options()).unwrap();
    add_user(
        dir.path(),
        "jane",
        &["dev".into(), "qa".into()],
        "https://127.0.0.1:6443",
        &dir.path().join("jane.kubeconfig"),
    )
    .unwrap();
    let verifier =
        WebPkiClientVerifier::builder_with_provider(roots(dir.path()), provider()).build().unwrap();
    for (file, user, groups) in
        [("admin", "kubernetes-admin", vec!["system:masters"]), ("jane", "jane", vec!["dev", "qa"])]
    {
        let leaf = cert(&dir.path().join(format!("{file}.crt")));
        verifier.verify_client_cert(&leaf, &[], UnixTime::now()).unwrap();
        let (_, parsed) = X509Certificate::from_der(leaf.as_ref()).unwrap();
        let subject = parsed.subject();
        assert_eq!(subject.iter_common_name().next().unwrap().as_str().unwrap(), user);
        let found: Vec<&str> = subject.iter_organization().map(|o| o.as_str().unwrap()).collect();
        assert_eq!(found, groups);
    }
    let too_many = ["a", "b", "c"].map(String::from);
    assert!(add_user(dir.path(), "x", &too_many, "https://h", &dir.path().join("x.kubeconfig")).is_err());
}

#[test]
fn a_second_init_changes_nothing_and_a_missing_leaf_is_signed_by_the_same_ca() {
    let dir = tempfile::tempdir().unwrap();
    let created = init(dir.path(), &options()).unwrap();
    assert!(created.len() >= 9, "{created:?}");
    for file in ["front-proxy-ca.crt", "front-proxy-client.crt", "front-proxy-client.key"] {
        assert!(dir.path().join(file).exists(), "{file}: the aggregator's front-proxy identity");
    }
    let snapshot = |dir: &Path| -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
            .collect();
        files.sort();
        files
    };
    let before = snapshot(dir.path());
    assert!(init(dir.path(), &options()).unwrap().is_empty());
    assert_eq!(snapshot(dir.path()), before);
    std::fs::remove_file(dir.path().join("apiserver.crt")).unwrap();
    let created = init(dir.path(), &options()).unwrap();
    assert_eq!(created.len(), 2, "{created:?}");
    assert_eq!(
        std::fs::read(dir.path().join("ca.crt")).unwrap(),
        before.iter().find(|f| f.0 == "ca.crt").unwrap().1
    );
    let verifier =
        WebPkiServerVerifier::builder_with_provider(roots(dir.path()), provider()).build().unwrap();
    let server = ServerName::try_from("localhost".to_string()).unwrap();
    verifier
        .verify_server_cert(&cert(&dir.path().join("apiserver.crt")), &[], &server, &[], UnixTime::now())
        .unwrap();
}

#[test]
fn keys_are_private_and_a_corrupt_ca_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    init(dir.path(), &options()).unwrap();
    #[cfg(unix)]
    for file in ["ca.key", "apiserver.key", "admin.key", "sa.key", "admin.kubeconfig"] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join(file)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{file}");
    }
    std::fs::write(dir.path().join("ca.key"), "not a key").unwrap();
    std::fs::remove_file(dir.path().join("admin.crt")).unwrap();
    let err = init(dir.path(), &options()).unwrap_err().to_string();
    assert!(err.contains("ca.key is not a usable private key"), "{err}");
}

#[test]
fn the_kubeconfig_embeds_the_files() {
    let dir = tempfile::tempdir().unwrap();
    init(dir.path(), &options()).unwrap();
    let text = std::fs::read_to_string(dir.path().join("admin.kubeconfig")).unwrap();
    let config: serde_json::Value = serde_norway::from_str(&text).unwrap();
    assert_eq!(config["clusters"][0]["cluster"]["server"], "https://127.0.0.1:6443");
    assert_eq!(config["current-context"], "kubernetes-admin@rtcd");
    let decode = |v: &serde_json::Value| {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.decode(v.as_str().unwrap()).unwrap()
    };
    assert_eq!(
        decode(&config["clusters"][0]["cluster"]["certificate-authority-data"]),
        std::fs::read(dir.path().join("ca.crt")).unwrap()
    );
    assert_eq!(
        decode(&config["users"][0]["user"]["client-key-data"]),
        std::fs::read(dir.path().join("admin.key")).unwrap()
    );
}

#[test]
fn user_names_cannot_take_the_clusters_files_or_another_subject() {
    let dir = tempfile::tempdir().unwrap();
    init(dir.path(), &options()).unwrap();
    let sa_key = std::fs::read(dir.path().join("sa.key")).unwrap();
    for reserved in ["sa", "ca", "admin", "apiserver"] {
        let out = dir.path().join(format!("{reserved}-user.kubeconfig"));
        assert!(add_user(dir.path(), reserved, &[], "https://h", &out).is_err(), "{reserved}");
        assert!(!out.exists());
    }
    assert_eq!(std::fs::read(dir.path().join("sa.key")).unwrap(), sa_key, "the token key is untouched");
    let out = dir.path().join("jane.kubeconfig");
    add_user(dir.path(), "jane", &["dev".into()], "https://h", &out).unwrap();
    assert!(add_user(dir.path(), "jane", &["dev".into()], "https://h", &out).unwrap().is_empty(), "reused");
    let err = add_user(dir.path(), "jane", &["ops".into()], "https://h", &out).unwrap_err().to_string();
    assert!(err.contains("remove it"), "{err}");
}

#[test]
fn a_ca_key_that_is_not_the_certificates_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    init(dir.path(), &options()).unwrap();
    std::fs::remove_file(dir.path().join("ca.key")).unwrap();
    std::fs::write(dir.path().join("ca.key"), rcgen::KeyPair::generate().unwrap().serialize_pem()).unwrap();
    std::fs::remove_file(dir.path().join("admin.crt")).unwrap();
    let err = init(dir.path(), &options()).unwrap_err().to_string();
    assert!(err.contains("is not the key of"), "{err}");
}

/// Replaces `<dir>/<file>.crt` with a certificate `make` builds, signed by
/// the CA in `ca_dir`, for the key already there.
fn resign(dir: &Path, ca_dir: &Path, file: &str, make: impl FnOnce(&mut rcgen::CertificateParams)) {
    let ca_key = rcgen::KeyPair::from_pem(&std::fs::read_to_string(ca_dir.join("ca.key")).unwrap()).unwrap();
    let ca_pem = std::fs::read_to_string(ca_dir.join("ca.crt")).unwrap();
    let issuer = rcgen::Issuer::from_ca_cert_pem(&ca_pem, ca_key).unwrap();
    let key =
        rcgen::KeyPair::from_pem(&std::fs::read_to_string(dir.join(format!("{file}.key"))).unwrap()).unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params.extended_key_usages =
        vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth, rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    make(&mut params);
    let cert = params.signed_by(&key, &issuer).unwrap();
    std::fs::write(dir.join(format!("{file}.crt")), cert.pem()).unwrap();
}

#[test]
fn a_kept_certificate_must_still_be_valid_and_name_every_name_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    init(dir.path(), &options()).unwrap();
    let kept = std::fs::read(dir.path().join("apiserver.crt")).unwrap();

    // A name added later: the old certificate would fail clients using it.
    let mut more = options();
    more.extra_sans.push("new.example".into());
    let err = init(dir.path(), &more).unwrap_err().to_string();
    assert!(err.contains("apiserver.crt cannot be kept"), "{err}");
    assert!(err.contains("new.example"), "{err}");
    assert!(err.ends_with("remove it (and its key) to make a new one"), "{err}");
    assert_eq!(std::fs::read(dir.path().join("apiserver.crt")).unwrap(), kept, "nothing replaced");
    std::fs::remove_file(dir.path().join("apiserver.crt")).unwrap();
    init(dir.path(), &more).unwrap();
    assert!(init(dir.path(), &more).unwrap().is_empty(), "the new one is kept");

    // Expired.
    resign(dir.path(), dir.path(), "admin", |p| {
        p.not_before = time::OffsetDateTime::now_utc() - time::Duration::days(400);
        p.not_after = time::OffsetDateTime::now_utc() - time::Duration::days(35);
    });
    let err = init(dir.path(), &more).unwrap_err().to_string();
    assert!(err.contains("admin.crt cannot be kept") && err.contains("expired"), "{err}");

    // Signed by another cluster's CA.
    let other = tempfile::tempdir().unwrap();
    init(other.path(), &options()).unwrap();
    resign(dir.path(), other.path(), "admin", |_| {});
    let err = init(dir.path(), &more).unwrap_err().to_string();
    assert!(err.contains("admin.crt cannot be kept"), "{err}");

    // A key that is not the certificate's.
    resign(dir.path(), dir.path(), "admin", |_| {});
    init(dir.path(), &more).unwrap();
    std::fs::copy(dir.path().join("apiserver.key"), dir.path().join("admin.key")).unwrap();
    let err = init(dir.path(), &more).unwrap_err().to_string();
    assert!(err.contains("admin.key is not its key"), "{err}");
}

#[test]
fn the_servers_own_certificate_is_made_again_by_its_ca_when_it_lacks_a_name() {
    let dir = tempfile::tempdir().unwrap();
    let names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    let (cert_path, _) = self_signed_serving(dir.path(), &names).unwrap();
    let first = std::fs::read(&cert_path).unwrap();
    let ca = std::fs::read(dir.path().join("apiserver-ca.crt")).unwrap();
    self_signed_serving(dir.path(), &names).unwrap();
    assert_eq!(std::fs::read(&cert_path).unwrap(), first, "kept while valid");

    let wider = [names.clone(), vec!["10.1.2.3".to_string()]].concat();
    self_signed_serving(dir.path(), &wider).unwrap();
    assert_ne!(std::fs::read(&cert_path).unwrap(), first, "made again");
    assert_eq!(std::fs::read(dir.path().join("apiserver-ca.crt")).unwrap(), ca, "by the same CA");
    let mut roots = RootCertStore::empty();
    roots.add(cert(&dir.path().join("apiserver-ca.crt"))).unwrap();
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider()).build().unwrap();
    let server = ServerName::try_from("10.1.2.3".to_string()).unwrap();
    verifier.verify_server_cert(&cert(&cert_path), &[], &server, &[], UnixTime::now()).unwrap();
}
