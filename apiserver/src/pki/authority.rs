//! The cluster CA (`ca.crt`, `ca.key`) and the certificates it signs:
//! serving certificates (server auth, the names given) and client
//! certificates (client auth; CN the user, O the groups, as kube reads
//! them). ECDSA P-256 keys; the CA for ten years, the rest for one, as
//! kubeadm does.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
    KeyPair, KeyUsagePurpose, SanType,
};

use rustls::RootCertStore;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls::server::WebPkiClientVerifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use x509_parser::prelude::{FromDer, X509Certificate};

use super::PkiError;
use super::files::{read, write_new};

const CA_DAYS: i64 = 3650;
const LEAF_DAYS: i64 = 365;

/// A CA whose key is at hand.
pub struct Authority {
    cert_pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl std::fmt::Debug for Authority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authority").finish_non_exhaustive()
    }
}

/// A key usage by kube's name (certificates.k8s.io KeyUsage).
fn key_usage(name: &str) -> Option<KeyUsagePurpose> {
    Some(match name {
        "digital signature" | "signing" => KeyUsagePurpose::DigitalSignature,
        "content commitment" => KeyUsagePurpose::ContentCommitment,
        "key encipherment" => KeyUsagePurpose::KeyEncipherment,
        "key agreement" => KeyUsagePurpose::KeyAgreement,
        "data encipherment" => KeyUsagePurpose::DataEncipherment,
        "cert sign" => KeyUsagePurpose::KeyCertSign,
        "crl sign" => KeyUsagePurpose::CrlSign,
        "encipher only" => KeyUsagePurpose::EncipherOnly,
        "decipher only" => KeyUsagePurpose::DecipherOnly,
        _ => return None,
    })
}

/// An extended key usage by kube's name.
fn extended_key_usage(name: &str) -> Option<ExtendedKeyUsagePurpose> {
    Some(match name {
        "any" => ExtendedKeyUsagePurpose::Any,
        "server auth" => ExtendedKeyUsagePurpose::ServerAuth,
        "client auth" => ExtendedKeyUsagePurpose::ClientAuth,
        "code signing" => ExtendedKeyUsagePurpose::CodeSigning,
        "email protection" | "s/mime" => ExtendedKeyUsagePurpose::EmailProtection,
        "timestamping" => ExtendedKeyUsagePurpose::TimeStamping,
        "ocsp signing" => ExtendedKeyUsagePurpose::OcspSigning,
        _ => return None,
    })
}

fn generate_error(e: rcgen::Error) -> PkiError {
    PkiError::Generate(e.to_string())
}

fn validity(params: &mut CertificateParams, days: i64) {
    let now = time::OffsetDateTime::now_utc();
    // A little in the past, for clocks that are slightly behind.
    params.not_before = now - time::Duration::hours(1);
    params.not_after = now + time::Duration::days(days);
}

impl Authority {
    /// The CA `<name>.crt` / `<name>.key` in `dir`.
    pub fn load(dir: &Path, name: &str) -> Result<Authority, PkiError> {
        Authority::load_files(&dir.join(format!("{name}.crt")), &dir.join(format!("{name}.key")))
    }

    /// The CA whose certificate and key are these files.
    pub fn load_files(cert_path: &Path, key_path: &Path) -> Result<Authority, PkiError> {
        let cert_pem = read(cert_path)?;
        let key = KeyPair::from_pem(&read(key_path)?).map_err(|e| PkiError::Corrupt {
            path: key_path.display().to_string(),
            what: "private key",
            why: e.to_string(),
        })?;
        // A key that is not the certificate's would sign leaves no one trusts.
        let (_, cert) =
            x509_parser::pem::parse_x509_pem(cert_pem.as_bytes()).map_err(|e| PkiError::Corrupt {
                path: cert_path.display().to_string(),
                what: "CA certificate",
                why: e.to_string(),
            })?;
        if !cert.parse_x509().is_ok_and(|c| is_key_of(&key, &c)) {
            return Err(PkiError::Corrupt {
                path: key_path.display().to_string(),
                what: "key for its certificate",
                why: format!("it is not the key of {}", cert_path.display()),
            });
        }
        let issuer = Issuer::from_ca_cert_pem(&cert_pem, key).map_err(|e| PkiError::Corrupt {
            path: cert_path.display().to_string(),
            what: "CA certificate",
            why: e.to_string(),
        })?;
        Ok(Authority { cert_pem, issuer })
    }

    /// The CA in `dir`, made (with common name `cn`) when it is not there.
    pub fn load_or_create(
        dir: &Path,
        name: &str,
        cn: &str,
        created: &mut Vec<PathBuf>,
    ) -> Result<Authority, PkiError> {
        let (cert_path, key_path) = (dir.join(format!("{name}.crt")), dir.join(format!("{name}.key")));
        match (cert_path.exists(), key_path.exists()) {
            (true, true) => return Authority::load(dir, name),
            (false, false) => {}
            _ => {
                return Err(PkiError::Corrupt {
                    path: dir.display().to_string(),
                    what: "CA",
                    why: format!("one of {name}.crt and {name}.key is missing (both or neither)"),
                });
            }
        }
        let key = KeyPair::generate().map_err(generate_error)?;
        let mut params = CertificateParams::default();
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, cn);
        params.distinguished_name = dn;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages =
            vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
        validity(&mut params, CA_DAYS);
        let cert = params.self_signed(&key).map_err(generate_error)?;
        write_new(&key_path, key.serialize_pem().as_bytes(), true)?;
        write_new(&cert_path, cert.pem().as_bytes(), false)?;
        created.extend([cert_path, key_path]);
        Authority::load(dir, name)
    }

    /// Signs a certificate request as kube's csrsigning controller does:
    /// the request's subject and names, the key and extended key usages
    /// asked for (by kube's names), valid from five minutes ago (clocks
    /// behind) for `seconds`; the certificate as PEM.
    pub fn sign_request(
        &self,
        mut request: rcgen::CertificateSigningRequestParams,
        usages: &[&str],
        seconds: i64,
    ) -> Result<String, PkiError> {
        let params = &mut request.params;
        params.key_usages = usages.iter().filter_map(|u| key_usage(u)).collect();
        params.extended_key_usages = usages.iter().filter_map(|u| extended_key_usage(u)).collect();
        params.is_ca = IsCa::ExplicitNoCa;
        params.use_authority_key_identifier_extension = true;
        let mut serial = [0u8; 16];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut serial)
            .map_err(|_| PkiError::Generate("no randomness for a serial number".into()))?;
        serial[0] &= 0x7f;
        params.serial_number = Some(rcgen::SerialNumber::from_slice(&serial));
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now - time::Duration::minutes(5);
        params.not_after = now + time::Duration::seconds(seconds);
        let cert = request.signed_by(&self.issuer).map_err(generate_error)?;
        Ok(cert.pem())
    }

    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// `<file>.crt` / `.key`: a serving certificate for `names` (IPs or
    /// DNS names), unless both files are there already.
    pub fn ensure_serving(
        &self,
        dir: &Path,
        file: &str,
        cn: &str,
        names: &[String],
        created: &mut Vec<PathBuf>,
    ) -> Result<(), PkiError> {
        let mut params = CertificateParams::default();
        for name in names {
            params.subject_alt_names.push(match name.parse::<IpAddr>() {
                Ok(ip) => SanType::IpAddress(ip),
                Err(_) => SanType::DnsName(name.clone().try_into().map_err(generate_error)?),
            });
        }
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment];
        params.distinguished_name = subject(cn, &[])?;
        self.ensure_leaf(dir, file, names, params, created)
    }

    /// `<file>.crt` / `.key`: a client certificate for user `cn` in
    /// `groups`, unless both files are there already.
    pub fn ensure_client(
        &self,
        dir: &Path,
        file: &str,
        cn: &str,
        groups: &[String],
        created: &mut Vec<PathBuf>,
    ) -> Result<(), PkiError> {
        let mut params = CertificateParams::default();
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment];
        params.distinguished_name = subject(cn, groups)?;
        self.ensure_leaf(dir, file, &[], params, created)
    }

    fn ensure_leaf(
        &self,
        dir: &Path,
        file: &str,
        names: &[String],
        mut params: CertificateParams,
        created: &mut Vec<PathBuf>,
    ) -> Result<(), PkiError> {
        let (cert_path, key_path) = (dir.join(format!("{file}.crt")), dir.join(format!("{file}.key")));
        if cert_path.exists() && key_path.exists() {
            return self.check_kept(&cert_path, &key_path, names);
        }
        params.use_authority_key_identifier_extension = true;
        validity(&mut params, LEAF_DAYS);
        let key = KeyPair::generate().map_err(generate_error)?;
        let cert = params.signed_by(&key, &self.issuer).map_err(generate_error)?;
        // A stale half is replaced together with its partner.
        let _ = std::fs::remove_file(&cert_path);
        let _ = std::fs::remove_file(&key_path);
        write_new(&key_path, key.serialize_pem().as_bytes(), true)?;
        write_new(&cert_path, cert.pem().as_bytes(), false)?;
        created.extend([cert_path, key_path]);
        Ok(())
    }

    /// A leaf found on disk is kept only while its peers would still accept
    /// it: signed by this CA, within its dates, valid for every name asked
    /// for (a serving certificate), and paired with its own key. Anything
    /// else is refused with the way out, rather than served and then
    /// rejected by every client.
    fn check_kept(&self, cert_path: &Path, key_path: &Path, names: &[String]) -> Result<(), PkiError> {
        let refuse = |why: String| PkiError::Stale { path: cert_path.to_path_buf(), why };
        let pem = read(cert_path)?;
        let corrupt = |why: String| PkiError::Corrupt {
            path: cert_path.display().to_string(),
            what: "certificate",
            why,
        };
        let leaf = CertificateDer::from_pem_slice(pem.as_bytes()).map_err(|e| corrupt(e.to_string()))?;
        let key = KeyPair::from_pem(&read(key_path)?).map_err(|e| PkiError::Corrupt {
            path: key_path.display().to_string(),
            what: "private key",
            why: e.to_string(),
        })?;
        let parsed = X509Certificate::from_der(&leaf).map_err(|e| corrupt(e.to_string()))?.1;
        if !is_key_of(&key, &parsed) {
            return Err(refuse(format!("{} is not its key", key_path.display())));
        }
        // rustls's own checks: what a client or the server will do with it.
        let mut roots = RootCertStore::empty();
        let ca =
            CertificateDer::from_pem_slice(self.cert_pem.as_bytes()).map_err(|e| corrupt(e.to_string()))?;
        roots.add(ca).map_err(|e| refuse(e.to_string()))?;
        let (roots, provider) = (Arc::new(roots), Arc::new(rustls::crypto::ring::default_provider()));
        let now = UnixTime::now();
        if names.is_empty() {
            let verifier = WebPkiClientVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|e| refuse(e.to_string()))?;
            verifier.verify_client_cert(&leaf, &[], now).map_err(|e| refuse(e.to_string()))?;
            return Ok(());
        }
        let verifier = WebPkiServerVerifier::builder_with_provider(roots, provider)
            .build()
            .map_err(|e| refuse(e.to_string()))?;
        for name in names {
            let server = ServerName::try_from(name.as_str()).map_err(|e| refuse(format!("{name:?}: {e}")))?;
            verifier.verify_server_cert(&leaf, &[], &server, &[], now).map_err(|e| refuse(e.to_string()))?;
        }
        Ok(())
    }
}

/// A leaf's subject: CN the user (or server), an O per group.
fn subject(cn: &str, groups: &[String]) -> Result<DistinguishedName, PkiError> {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, cn);
    // rcgen keeps one value per attribute type; a second O goes in under
    // the same object identifier spelled as a custom type.
    match groups {
        [] => {}
        [one] => dn.push(DnType::OrganizationName, one.as_str()),
        [one, two] => {
            dn.push(DnType::OrganizationName, one.as_str());
            dn.push(DnType::CustomDnType(vec![2, 5, 4, 10]), two.as_str());
        }
        _ => {
            return Err(PkiError::Generate(
                "a certificate made here holds at most two groups; bind roles to the user, or use a token"
                    .into(),
            ));
        }
    }
    Ok(dn)
}

/// Whether `key` is the private half of `cert`'s public key.
fn is_key_of(key: &KeyPair, cert: &X509Certificate<'_>) -> bool {
    cert.public_key().raw == rcgen::PublicKeyData::subject_public_key_info(key).as_slice()
}

/// A user's existing certificate at `path` must be for `user` in `groups`
/// (it is reused, not replaced); no certificate there is fine.
pub fn check_subject(path: &Path, user: &str, groups: &[String]) -> Result<(), PkiError> {
    if !path.exists() {
        return Ok(());
    }
    let pem = read(path)?;
    let corrupt =
        |why: String| PkiError::Corrupt { path: path.display().to_string(), what: "certificate", why };
    let (_, parsed) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).map_err(|e| corrupt(e.to_string()))?;
    let cert = parsed.parse_x509().map_err(|e| corrupt(e.to_string()))?;
    let subject = cert.subject();
    let cn: Vec<&str> = subject.iter_common_name().filter_map(|a| a.as_str().ok()).collect();
    let orgs: Vec<&str> = subject.iter_organization().filter_map(|a| a.as_str().ok()).collect();
    if cn != [user] || orgs != groups.iter().map(String::as_str).collect::<Vec<_>>() {
        return Err(PkiError::Generate(format!(
            "{} is a certificate for {cn:?} in {orgs:?}; remove it (and its key) to make one for {user:?} in {groups:?}",
            path.display()
        )));
    }
    Ok(())
}

/// `<name>.key` (PKCS#8) and `<name>.pub` (SPKI): the key pair that signs
/// ServiceAccount tokens (ES256), unless both are there.
pub fn ensure_key_pair(dir: &Path, name: &str, created: &mut Vec<PathBuf>) -> Result<(), PkiError> {
    let (key_path, pub_path) = (dir.join(format!("{name}.key")), dir.join(format!("{name}.pub")));
    if key_path.exists() && pub_path.exists() {
        return Ok(());
    }
    let key = KeyPair::generate().map_err(generate_error)?;
    let _ = std::fs::remove_file(&key_path);
    let _ = std::fs::remove_file(&pub_path);
    write_new(&key_path, key.serialize_pem().as_bytes(), true)?;
    write_new(&pub_path, key.public_key_pem().as_bytes(), false)?;
    created.extend([key_path, pub_path]);
    Ok(())
}
