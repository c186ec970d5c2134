//! Who a client request is from, as etcd decides it: the simple token in
//! the `token` metadata (etcdctl and every client library send it there
//! once they authenticated), else nobody. The permission checks themselves
//! belong to the store's auth state, which every member applies alike
//! (`rtcd_store::AuthState`); this module only names the caller.

pub mod tokens;

use rtcd_store::{AuthError, Caller, Store, StoreError};
use tonic::metadata::MetadataMap;

use crate::errors::EtcdError;
use tokens::SimpleTokens;

/// The gRPC metadata key of the auth token (etcd's `rpctypes.TokenFieldNameGRPC`).
pub const TOKEN_METADATA: &str = "token";

/// Names the caller of each request.
#[derive(Debug)]
pub struct Authenticator {
    tokens: SimpleTokens,
}

impl Authenticator {
    pub fn new(tokens: SimpleTokens) -> Self {
        Self { tokens }
    }

    pub fn tokens(&self) -> &SimpleTokens {
        &self.tokens
    }

    /// The caller of a request with this metadata: the user of its token,
    /// with the auth revision now (what its permissions are checked
    /// against), or an anonymous client. A token this member does not know
    /// (forged, expired, or made before auth was last disabled) is refused
    /// with etcd's `invalid auth token`, which makes clients authenticate
    /// again.
    pub fn caller(&self, store: &Store, metadata: &MetadataMap) -> Result<Caller, EtcdError> {
        let Some(token) = metadata.get(TOKEN_METADATA) else { return Ok(Caller::anonymous()) };
        let invalid = || EtcdError::from(StoreError::Auth(AuthError::InvalidToken));
        let token = token.to_str().map_err(|_| invalid())?;
        let user = self.tokens.user(token).ok_or_else(invalid)?;
        let auth_revision = store.auth()?.revision();
        Ok(Caller::Client { user, auth_revision })
    }
}
