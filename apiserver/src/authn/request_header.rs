//! kube's request-header authenticator (`--requestheader-*`): a front proxy
//! (the aggregator in front of an extension server, an authenticating
//! proxy) proves itself with a client certificate from
//! `--requestheader-client-ca-file` whose common name is one of
//! `--requestheader-allowed-names` (any, when none are given), and says in
//! headers who the request is for: the first of the username headers that
//! is set, the first uid header, every value of the group headers, and
//! each header under an extra prefix as an extra (its name after the
//! prefix, lowercased and %-decoded).

use std::collections::BTreeMap;

use axum::http::HeaderMap;
use axum::http::request::Parts;
use x509_parser::prelude::{FromDer, X509Certificate};

use super::client_ca::ClientCa;
use crate::request::{ClientCertificates, UserInfo, unescape_extra_key};

#[derive(Debug)]
pub struct RequestHeader {
    pub ca: ClientCa,
    pub allowed_names: Vec<String>,
    pub username_headers: Vec<String>,
    pub uid_headers: Vec<String>,
    pub group_headers: Vec<String>,
    pub extra_prefixes: Vec<String>,
}

/// What the request's front proxy says, if it is one.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// No front proxy's certificate, or no user named: other methods go on.
    NotAttempted,
    User(UserInfo),
    /// A certificate that is not a front proxy's, or a proxy not allowed.
    Refused(String),
}

impl RequestHeader {
    pub fn authenticate(&self, parts: &Parts) -> Outcome {
        let Some(chain) = parts.extensions.get::<ClientCertificates>() else { return Outcome::NotAttempted };
        if let Err(why) = self.ca.verify(chain) {
            return Outcome::Refused(format!("verifying certificate failed: {why}"));
        }
        if !self.allowed_names.is_empty() {
            let name = common_name(chain).unwrap_or_default();
            if !self.allowed_names.contains(&name) {
                return Outcome::Refused(format!("x509: subject with cn={name} is not in the allowed list"));
            }
        }
        match self.user(&parts.headers) {
            Some(user) => Outcome::User(user),
            None => Outcome::NotAttempted,
        }
    }

    fn user(&self, headers: &HeaderMap) -> Option<UserInfo> {
        let first = |names: &[String]| {
            names.iter().find_map(|name| {
                let value = headers.get(name.as_str())?.to_str().ok()?;
                (!value.is_empty()).then(|| value.to_string())
            })
        };
        let name = first(&self.username_headers)?;
        let groups = self
            .group_headers
            .iter()
            .flat_map(|name| headers.get_all(name.as_str()).iter())
            .filter_map(|v| v.to_str().ok())
            .filter(|v| !v.is_empty())
            .map(str::to_string)
            .collect();
        Some(UserInfo {
            name,
            uid: first(&self.uid_headers).unwrap_or_default(),
            groups,
            extra: self.extra(headers),
        })
    }

    fn extra(&self, headers: &HeaderMap) -> BTreeMap<String, Vec<String>> {
        let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for prefix in &self.extra_prefixes {
            let prefix = prefix.to_ascii_lowercase();
            for (name, value) in headers {
                // hyper keeps header names lowercased.
                let Some(key) = name.as_str().strip_prefix(prefix.as_str()) else { continue };
                let Ok(value) = value.to_str() else { continue };
                extra.entry(unescape_extra_key(key)).or_default().push(value.to_string());
            }
        }
        extra
    }
}

fn common_name(chain: &ClientCertificates) -> Option<String> {
    let (_, cert) = X509Certificate::from_der(chain.0.first()?.as_ref()).ok()?;
    Some(cert.subject().iter_common_name().next()?.as_str().ok()?.to_string())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use axum::http::Request;
    use rcgen::{CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair};

    use super::*;

    struct Pki {
        ca_pem: String,
        issuer: rcgen::Issuer<'static, KeyPair>,
    }

    fn pki() -> Pki {
        let mut params = CertificateParams::default();
        params.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, "front-proxy-ca");
        let ca_key = KeyPair::generate().unwrap();
        let ca_pem = params.self_signed(&ca_key).unwrap().pem();
        let issuer = rcgen::Issuer::from_ca_cert_pem(&ca_pem, ca_key).unwrap();
        Pki { ca_pem, issuer }
    }

    fn client(pki: &Pki, cn: &str) -> ClientCertificates {
        let mut params = CertificateParams::default();
        params.distinguished_name = DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, cn);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &pki.issuer).unwrap();
        ClientCertificates(Arc::new(vec![cert.der().clone()]))
    }

    fn authenticator(pki: &Pki, allowed: &[&str]) -> RequestHeader {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.pem");
        std::fs::write(&path, &pki.ca_pem).unwrap();
        let list = |names: &[&str]| names.iter().map(|n| n.to_string()).collect();
        RequestHeader {
            ca: ClientCa::read(&path).unwrap(),
            allowed_names: list(allowed),
            username_headers: list(&["X-Remote-User"]),
            uid_headers: list(&["X-Remote-Uid"]),
            group_headers: list(&["X-Remote-Group"]),
            extra_prefixes: list(&["X-Remote-Extra-"]),
        }
    }

    fn parts(chain: Option<ClientCertificates>, headers: &[(&str, &str)]) -> Parts {
        let mut builder = Request::builder().uri("/api");
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let mut parts = builder.body(()).unwrap().into_parts().0;
        if let Some(chain) = chain {
            parts.extensions.insert(chain);
        }
        parts
    }

    #[test]
    fn an_allowed_proxy_names_the_user_in_headers() {
        let pki = pki();
        let headers = [
            ("X-Remote-User", "alice"),
            ("X-Remote-Uid", "a-1"),
            ("X-Remote-Group", "dev"),
            ("X-Remote-Group", "ops"),
            ("X-Remote-Extra-Scopes", "read"),
            ("X-Remote-Extra-Acme.com%2Fproject", "p1"),
        ];
        let outcome = authenticator(&pki, &["front-proxy-client"])
            .authenticate(&parts(Some(client(&pki, "front-proxy-client")), &headers));
        let Outcome::User(user) = outcome else { panic!("{outcome:?}") };
        assert_eq!((user.name.as_str(), user.uid.as_str()), ("alice", "a-1"));
        assert_eq!(user.groups, ["dev", "ops"]);
        assert_eq!(
            user.extra,
            BTreeMap::from([
                ("acme.com/project".to_string(), vec!["p1".to_string()]),
                ("scopes".into(), vec!["read".into()])
            ])
        );
    }

    #[test]
    fn other_certificates_and_names_are_refused_and_no_header_is_no_attempt() {
        let pki = pki();
        let other = self::pki();
        let auth = authenticator(&pki, &["front-proxy-client"]);
        let user = [("X-Remote-User", "alice")];
        let Outcome::Refused(why) = auth.authenticate(&parts(Some(client(&pki, "mallory")), &user)) else {
            panic!()
        };
        assert_eq!(why, "x509: subject with cn=mallory is not in the allowed list");
        let outcome = auth.authenticate(&parts(Some(client(&other, "front-proxy-client")), &user));
        assert!(matches!(outcome, Outcome::Refused(why) if why.starts_with("verifying certificate failed")));
        assert_eq!(
            auth.authenticate(&parts(Some(client(&pki, "front-proxy-client")), &[])),
            Outcome::NotAttempted
        );
        assert_eq!(auth.authenticate(&parts(None, &user)), Outcome::NotAttempted);
        // No allowed names: any certificate of the CA.
        let open = authenticator(&pki, &[]);
        assert!(matches!(open.authenticate(&parts(Some(client(&pki, "anyone")), &user)), Outcome::User(_)));
    }
}
