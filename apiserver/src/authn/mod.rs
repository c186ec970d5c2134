//! Authentication (kube's authenticator union): who sent a request.
//!
//! In kube's order: a front proxy's word (`request_header`), the client
//! certificate (`x509`), then a bearer token against the token file
//! (`token_file`), ServiceAccount tokens (`service_account`) and, in an
//! extension server, the main server's TokenReviews (`token_review`). The first that recognizes the request wins; a
//! credential that is presented but not recognized fails the request (401)
//! even when anonymous requests are allowed; a request with no credential at
//! all is `system:anonymous` when `--anonymous-auth` allows it.
//! Authenticated users get the `system:authenticated` group.

pub mod bearer;
pub mod client_ca;
pub mod request_header;
pub mod service_account;
pub mod token_file;
pub mod token_review;
pub mod x509;

use std::sync::Arc;

use axum::http::request::Parts;

use crate::metrics::AuthnMetrics;
use crate::request::{ClientCertificates, UserInfo};
pub use service_account::ServiceAccountTokens;
pub use token_file::TokenFile;

pub const ANONYMOUS: &str = "system:anonymous";
pub const UNAUTHENTICATED: &str = "system:unauthenticated";
pub const AUTHENTICATED: &str = "system:authenticated";

/// Why a request was not authenticated; it answers 401 and its audit
/// event says which methods were tried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// `bearer`: the credentials presented and not accepted; empty when
    /// none was presented.
    pub attempted: Vec<&'static str>,
}

impl Failure {
    /// kube's failed-authentication audit message.
    pub fn audit_message(&self) -> String {
        if self.attempted.is_empty() {
            "Authentication failed, no credentials provided".to_string()
        } else {
            format!("Authentication failed, attempted: {}", self.attempted.join(", "))
        }
    }
}

/// The configured authenticators.
#[derive(Debug, Default)]
pub struct Authenticator {
    /// Client certificates verified by the TLS listener (`--client-ca-file`).
    pub client_certificates: bool,
    /// `--client-ca-file` itself, when the listener also trusts front
    /// proxies' CA and a chain must be checked against the users' again.
    pub client_ca: Option<client_ca::ClientCa>,
    /// Front proxies (`--requestheader-client-ca-file`).
    pub request_header: Option<request_header::RequestHeader>,
    pub token_file: Option<TokenFile>,
    pub service_accounts: Option<ServiceAccountTokens>,
    /// `--authentication-kubeconfig`.
    pub token_review: Option<token_review::TokenReviewer>,
    /// `--anonymous-auth`.
    pub anonymous: bool,
    /// Where the remaining lifetime of the client certificates the x509
    /// authenticator reads is observed (kube's
    /// `apiserver_client_certificate_expiration_seconds`).
    pub metrics: Option<Arc<AuthnMetrics>>,
}

impl Authenticator {
    /// Every request is anonymous (no authenticators, `--anonymous-auth`).
    pub fn anonymous_only() -> Authenticator {
        Authenticator { anonymous: true, ..Authenticator::default() }
    }

    /// The user who sent the request, or why there is none.
    pub async fn authenticate(&self, parts: &Parts) -> Result<Arc<UserInfo>, Failure> {
        let mut attempted = Vec::new();
        match self.request_header.as_ref().map(|proxy| proxy.authenticate(parts)) {
            Some(request_header::Outcome::User(user)) => return Ok(with_authenticated_group(user)),
            Some(request_header::Outcome::Refused(why)) => {
                tracing::debug!(%why, "not a front proxy");
                attempted.push("x509");
            }
            _ => {}
        }
        // The TLS listener has verified the chain; a certificate that names
        // no one (no CN) is no credential, as in kube, and the request goes
        // on to the other methods.
        let chain = parts.extensions.get::<ClientCertificates>().filter(|_| self.client_certificates);
        if let Some(chain) = chain {
            // As kube's x509 authenticator: before the chain is checked.
            if let (Some(metrics), Some(seconds)) = (&self.metrics, x509::remaining_seconds(chain)) {
                metrics.client_certificate(seconds);
            }
            match self.client_ca.as_ref().map(|ca| ca.verify(chain)) {
                Some(Err(why)) => {
                    tracing::debug!(%why, "a client certificate not of the client CA");
                    if !attempted.contains(&"x509") {
                        attempted.push("x509");
                    }
                }
                _ => {
                    if let Some(user) = x509::user_of(chain) {
                        return Ok(with_authenticated_group(user));
                    }
                }
            }
        }
        match bearer::token_of(&parts.headers) {
            bearer::Token::Absent => {}
            bearer::Token::Present(token) => {
                if let Some(user) = self.authenticate_token(&token, &[]).await {
                    return Ok(with_authenticated_group(user));
                }
                attempted.push("bearer");
            }
        }
        if attempted.is_empty() && self.anonymous {
            return Ok(anonymous());
        }
        Err(Failure { attempted })
    }

    /// The user a bearer token stands for (also TokenReview's question),
    /// with `audiences` it must be meant for (empty: the server's own).
    pub async fn authenticate_token(&self, token: &str, audiences: &[String]) -> Option<UserInfo> {
        if let Some(user) = self.token_file.as_ref().and_then(|file| file.user_of(token)) {
            return Some(user);
        }
        if let Some(accounts) = &self.service_accounts
            && let Some(user) = accounts.user_of(token, audiences).await
        {
            return Some(user);
        }
        match &self.token_review {
            Some(reviewer) => reviewer.user_of(token).await,
            None => None,
        }
    }
}

/// kube's authenticated-group adder.
pub fn with_authenticated_group(mut user: UserInfo) -> Arc<UserInfo> {
    add_authenticated_group(&mut user);
    Arc::new(user)
}

/// Adds `system:authenticated` unless the user is anonymous or already
/// says whether it is authenticated (impersonation uses it too).
pub fn add_authenticated_group(user: &mut UserInfo) {
    let says = user.groups.iter().any(|g| g == AUTHENTICATED || g == UNAUTHENTICATED);
    if user.name == ANONYMOUS {
        if !says {
            user.groups.push(UNAUTHENTICATED.to_string());
        }
    } else if !says {
        user.groups.push(AUTHENTICATED.to_string());
    }
}

/// `system:anonymous` in `system:unauthenticated`.
pub fn anonymous() -> Arc<UserInfo> {
    Arc::new(UserInfo {
        name: ANONYMOUS.to_string(),
        uid: String::new(),
        groups: vec![UNAUTHENTICATED.to_string()],
        extra: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Request;

    fn parts(authorization: Option<&str>) -> Parts {
        let mut builder = Request::builder().uri("/api");
        if let Some(value) = authorization {
            builder = builder.header("authorization", value);
        }
        builder.body(()).unwrap().into_parts().0
    }

    fn with_tokens() -> Authenticator {
        Authenticator {
            token_file: Some(TokenFile::parse("secret,jane,42,\"dev,ops\"\n").unwrap()),
            anonymous: true,
            ..Authenticator::default()
        }
    }

    #[tokio::test]
    async fn a_known_token_is_its_user_with_the_authenticated_group() {
        let user = with_tokens().authenticate(&parts(Some("Bearer secret"))).await.unwrap();
        assert_eq!(user.name, "jane");
        assert_eq!(user.uid, "42");
        assert_eq!(user.groups, ["dev", "ops", "system:authenticated"]);
    }

    #[tokio::test]
    async fn an_unknown_token_fails_even_with_anonymous_allowed() {
        let failure = with_tokens().authenticate(&parts(Some("Bearer nope"))).await.unwrap_err();
        assert_eq!(failure.audit_message(), "Authentication failed, attempted: bearer");
    }

    #[tokio::test]
    async fn no_credentials_is_anonymous_only_when_allowed() {
        let user = with_tokens().authenticate(&parts(None)).await.unwrap();
        assert_eq!(
            (user.name.as_str(), user.groups.as_slice()),
            ("system:anonymous", &[UNAUTHENTICATED.into()][..])
        );
        let closed = Authenticator { anonymous: false, ..with_tokens() };
        let failure = closed.authenticate(&parts(None)).await.unwrap_err();
        assert_eq!(failure.audit_message(), "Authentication failed, no credentials provided");
    }

    #[tokio::test]
    async fn a_certificate_naming_no_one_is_no_credential() {
        let mut params = rcgen::CertificateParams::default();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params.distinguished_name.push(rcgen::DnType::OrganizationName, "dev");
        let cert = params.self_signed(&rcgen::KeyPair::generate().unwrap()).unwrap();
        let mut request = parts(None);
        request.extensions.insert(ClientCertificates(Arc::new(vec![cert.der().clone()])));
        let authenticator = Authenticator { client_certificates: true, ..with_tokens() };
        assert_eq!(authenticator.authenticate(&request).await.unwrap().name, ANONYMOUS);
    }

    #[test]
    fn the_group_adder_respects_what_the_user_already_says() {
        let mut user =
            UserInfo { name: "a".into(), groups: vec![UNAUTHENTICATED.into()], ..UserInfo::default() };
        add_authenticated_group(&mut user);
        assert_eq!(user.groups, [UNAUTHENTICATED]);
        let mut anon = UserInfo { name: ANONYMOUS.into(), ..UserInfo::default() };
        add_authenticated_group(&mut anon);
        assert_eq!(anon.groups, [UNAUTHENTICATED]);
    }
}
