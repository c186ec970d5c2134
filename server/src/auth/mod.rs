//! Who a client request is from, as etcd decides it: the simple token in
//! the `token` metadata (etcdctl and every client library send it there
//! once they authenticated), else with `--client-cert-auth` the common name
//! of the client's certificate, else nobody. The permission checks themselves
//! belong to the store's auth state, which every member applies alike
//! (`rtcd_store::AuthState`); this module only names the caller.

pub mod tokens;

use rtcd_store::{AuthError, Caller, Store, StoreError};
use tonic::Request;

use crate::errors::EtcdError;
use crate::listener::TlsInfo;
use tokens::SimpleTokens;

/// The gRPC metadata key of the auth token (etcd's `rpctypes.TokenFieldNameGRPC`).
pub const TOKEN_METADATA: &str = "token";

/// What a request carries to say who sends it.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    token: Option<String>,
    /// The common name of the client's verified certificate.
    common_name: Option<String>,
}

impl Credentials {
    /// A request's credentials: those a member's own recipe passed on
    /// (`attach`), else its token and TLS connection's.
    pub fn of<T>(request: &Request<T>) -> Self {
        if let Some(passed) = request.extensions().get::<Credentials>() {
            return passed.clone();
        }
        // A token that is not text cannot be one this member made.
        let token =
            request.metadata().get(TOKEN_METADATA).map(|t| t.to_str().unwrap_or("\u{fffd}").to_owned());
        // etcd ignores the certificate of its JSON gateway's own
        // connections, marked by this header.
        let from_gateway = request.metadata().contains_key("grpcgateway-accept");
        let common_name = match from_gateway {
            true => None,
            false => request.extensions().get::<TlsInfo>().and_then(|i| i.common_name.clone()),
        };
        Self { token, common_name }
    }

    /// A token alone (the JSON gateway's `Authorization` header).
    pub fn with_token(token: Option<String>) -> Self {
        Self { token, common_name: None }
    }

    /// Makes `request` carry these credentials (a recipe's calls).
    pub fn attach<T>(&self, request: &mut Request<T>) {
        request.extensions_mut().insert(self.clone());
    }
}

/// Names the caller of each request.
#[derive(Debug)]
pub struct Authenticator {
    tokens: SimpleTokens,
    /// `--client-cert-auth`: a certificate's common name names its user.
    common_name_is_user: bool,
}

impl Authenticator {
    pub fn new(tokens: SimpleTokens, common_name_is_user: bool) -> Self {
        Self { tokens, common_name_is_user }
    }

    pub fn tokens(&self) -> &SimpleTokens {
        &self.tokens
    }

    /// The caller of a request with these credentials: the user of its
    /// token, or of its certificate, with the auth revision now (what its
    /// permissions are checked against), or an anonymous client. A token
    /// this member does not know (forged, expired, or made before auth was
    /// last disabled) is refused with etcd's `invalid auth token`, which
    /// makes clients authenticate again.
    pub fn caller(&self, store: &Store, credentials: &Credentials) -> Result<Caller, EtcdError> {
        let user = match (&credentials.token, &credentials.common_name) {
            (Some(token), _) => self
                .tokens
                .user(token)
                .ok_or_else(|| EtcdError::from(StoreError::Auth(AuthError::InvalidToken)))?,
            (None, Some(name)) if self.common_name_is_user => name.clone(),
            _ => return Ok(Caller::anonymous()),
        };
        let auth_revision = store.auth()?.revision();
        Ok(Caller::Client { user, auth_revision })
    }
}
