//! Who a client request is from, as etcd decides it: the token in the
//! `token` metadata (etcdctl and every client library send it there once
//! they authenticated; `authorization` is read too, as etcd does), else
//! with `--client-cert-auth` the common name of the client's certificate,
//! else nobody. The permission checks themselves belong to the store's auth
//! state, which every member applies alike (`rtcd_store::AuthState`); this
//! module only names the caller.

pub mod jwt;
mod ring_jwt;
pub mod tokens;

use rtcd_store::{AuthError, Caller, Store, StoreError};
use tonic::Request;

use crate::errors::EtcdError;
use crate::listener::TlsInfo;
use jwt::{JwtError, JwtTokens};
use tokens::SimpleTokens;

/// The gRPC metadata key of the auth token (etcd's `rpctypes.TokenFieldNameGRPC`).
pub const TOKEN_METADATA: &str = "token";

/// The other key etcd reads a token from (`rpctypes.TokenFieldNameSwagger`).
pub const AUTHORIZATION_METADATA: &str = "authorization";

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
        let metadata = request.metadata();
        let token = (metadata.get(TOKEN_METADATA).or_else(|| metadata.get(AUTHORIZATION_METADATA)))
            .map(|t| t.to_str().unwrap_or("\u{fffd}").to_owned());
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

/// How this member's tokens are made and read (`--auth-token`).
#[derive(Debug)]
pub enum Tokens {
    Simple(SimpleTokens),
    Jwt(Box<JwtTokens>),
}

/// Why no token could be made.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("rtcd: no randomness for a token")]
    NoRandomness,
    #[error(transparent)]
    Jwt(#[from] JwtError),
}

impl Tokens {
    /// What an `Authenticate` entry carries to every member: a new simple
    /// token (each member learns it as the entry applies); nothing for
    /// JWT, whose tokens are signed by the member answering and so are in
    /// no log (a member that cannot sign refuses here, before proposing).
    /// `suffix` makes a simple token unique on this member.
    pub fn to_replicate(&self, suffix: u64) -> Result<String, TokenError> {
        match self {
            Tokens::Simple(_) => match SimpleTokens::generate(suffix) {
                // Without the OS's randomness no token could be trusted.
                token if token.is_empty() => Err(TokenError::NoRandomness),
                token => Ok(token),
            },
            Tokens::Jwt(jwt) => Ok(jwt.can_sign().map(|()| String::new())?),
        }
    }

    /// The token the client gets once its `Authenticate` entry applied:
    /// the replicated one, or a JWT for the auth revision the password was
    /// checked at (which the entry's apply confirmed still current).
    pub fn issue(&self, user: &str, checked_at: u64, replicated: String) -> Result<String, TokenError> {
        match self {
            Tokens::Simple(_) => Ok(replicated),
            Tokens::Jwt(jwt) => Ok(jwt.sign(user, checked_at)?),
        }
    }

    /// The simple tokens a member keeps, which follow the auth store's
    /// changes (JWT tokens carry all they need and are kept nowhere).
    pub fn simple(&self) -> Option<&SimpleTokens> {
        match self {
            Tokens::Simple(simple) => Some(simple),
            Tokens::Jwt(_) => None,
        }
    }

    /// The user of a token and the auth revision to check them at: now
    /// for a simple token, the one it was made at for a JWT.
    fn identify(&self, token: &str, store: &Store) -> Result<(String, u64), EtcdError> {
        let invalid = || EtcdError::from(StoreError::Auth(AuthError::InvalidToken));
        match self {
            Tokens::Simple(simple) => Ok((simple.user(token).ok_or_else(invalid)?, store.auth()?.revision())),
            Tokens::Jwt(jwt) => jwt.verify(token).ok_or_else(invalid),
        }
    }
}

/// Names the caller of each request.
#[derive(Debug)]
pub struct Authenticator {
    tokens: Tokens,
    /// `--client-cert-auth`: a certificate's common name names its user.
    common_name_is_user: bool,
}

impl Authenticator {
    pub fn new(tokens: Tokens, common_name_is_user: bool) -> Self {
        Self { tokens, common_name_is_user }
    }

    pub fn tokens(&self) -> &Tokens {
        &self.tokens
    }

    /// The caller of a request with these credentials: the user of its
    /// token, or of its certificate, with the auth revision its permissions
    /// are checked at, or an anonymous client. A token this member cannot
    /// read (forged, expired, or made before auth was last disabled) is
    /// refused with etcd's `invalid auth token`, which makes clients
    /// authenticate again.
    pub fn caller(&self, store: &Store, credentials: &Credentials) -> Result<Caller, EtcdError> {
        let (user, auth_revision) = match (&credentials.token, &credentials.common_name) {
            (Some(token), _) => self.tokens.identify(token, store)?,
            (None, Some(name)) if self.common_name_is_user => (name.clone(), store.auth()?.revision()),
            _ => return Ok(Caller::anonymous()),
        };
        Ok(Caller::Client { user, auth_revision })
    }
}
