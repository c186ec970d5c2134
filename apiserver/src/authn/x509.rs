//! Client certificates: the TLS listener has verified the chain against
//! `--client-ca-file` (client-auth usage included); the leaf's subject
//! names the user: CN the name, each O a group, the UID attribute the uid.

use std::collections::BTreeMap;

use x509_parser::prelude::{FromDer, X509Certificate};

use crate::request::{ClientCertificates, UserInfo};

/// X.500 `UID` (0.9.2342.19200300.100.1.1).
const UID_OID: &str = "0.9.2342.19200300.100.1.1";

/// The user the verified chain's leaf names; None when it names nobody
/// (no CN, several UIDs, or a certificate that does not parse).
pub fn user_of(chain: &ClientCertificates) -> Option<UserInfo> {
    let leaf = chain.0.first()?;
    let (_, cert) = X509Certificate::from_der(leaf.as_ref()).ok()?;
    let subject = cert.subject();
    let name = subject.iter_common_name().next()?.as_str().ok()?.to_string();
    if name.is_empty() {
        return None;
    }
    let groups = subject.iter_organization().filter_map(|o| o.as_str().ok()).map(str::to_string).collect();
    let uids: Vec<&str> = subject
        .iter_attributes()
        .filter(|a| a.attr_type().to_id_string() == UID_OID)
        .filter_map(|a| a.as_str().ok())
        .collect();
    let uid = match uids.as_slice() {
        [] => String::new(),
        [one] => one.to_string(),
        _ => return None,
    };
    let digest = ring::digest::digest(&ring::digest::SHA256, leaf.as_ref());
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    let extra = BTreeMap::from([(
        "authentication.kubernetes.io/credential-id".to_string(),
        vec![format!("X509SHA256={hex}")],
    )]);
    Some(UserInfo { name, uid, groups, extra })
}

/// How long the leaf certificate stays valid from now, in seconds
/// (negative once it has expired); None if it does not parse.
pub fn remaining_seconds(chain: &ClientCertificates) -> Option<f64> {
    let leaf = chain.0.first()?;
    let (_, cert) = X509Certificate::from_der(leaf.as_ref()).ok()?;
    let not_after = cert.validity().not_after.timestamp();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).ok()?.as_secs_f64();
    Some(not_after as f64 - now)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};

    use super::*;

    fn chain_for(subject: &[(DnType, &str)]) -> ClientCertificates {
        let mut params = CertificateParams::default();
        let mut dn = DistinguishedName::new();
        for (kind, value) in subject {
            dn.push(kind.clone(), *value);
        }
        params.distinguished_name = dn;
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        ClientCertificates(Arc::new(vec![cert.der().clone()]))
    }

    #[test]
    fn common_name_is_the_user_and_organizations_the_groups() {
        // (rcgen writes one value per attribute type; the end-to-end tests
        // sign certificates with several O values with openssl.)
        let chain = chain_for(&[(DnType::CommonName, "jane"), (DnType::OrganizationName, "system:masters")]);
        let user = user_of(&chain).unwrap();
        assert_eq!(user.name, "jane");
        assert_eq!(user.groups, ["system:masters"]);
        let id = &user.extra["authentication.kubernetes.io/credential-id"][0];
        assert!(id.starts_with("X509SHA256=") && id.len() == "X509SHA256=".len() + 64, "{id}");
    }

    #[test]
    fn the_remaining_lifetime_is_read_off_the_leaf() {
        let mut params = CertificateParams::default();
        params.not_after = time::OffsetDateTime::now_utc() + time::Duration::hours(2);
        let key = KeyPair::generate().unwrap();
        let chain = ClientCertificates(Arc::new(vec![params.self_signed(&key).unwrap().der().clone()]));
        let remaining = remaining_seconds(&chain).unwrap();
        assert!((7190.0..=7200.0).contains(&remaining), "{remaining}");
        assert_eq!(remaining_seconds(&ClientCertificates(Arc::new(vec![vec![1u8, 2].into()]))), None);
    }

    #[test]
    fn a_certificate_without_a_common_name_names_nobody() {
        assert_eq!(user_of(&chain_for(&[(DnType::OrganizationName, "dev")])), None);
        assert_eq!(user_of(&ClientCertificates(Arc::new(vec![vec![1u8, 2, 3].into()]))), None);
    }
}
