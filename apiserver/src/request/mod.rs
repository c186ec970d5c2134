//! What every request carries past the filters: what it is about
//! ([`RequestInfo`]) and who sent it ([`UserInfo`]). Filters put them in the
//! request's extensions; handlers, admission and (later) audit read them.
//! [`deadline`] says when the request must be done by, [`ClientPresence`]
//! whether its client is still there.

pub mod deadline;
mod info;
pub mod presence;
mod user;

pub use info::{RequestInfo, ResourceRequest};
pub use presence::ClientPresence;
pub use user::UserInfo;

use std::sync::Arc;

use rustls_pki_types::CertificateDer;

/// The client's certificate chain (leaf first), verified against
/// `--client-ca-file` by the TLS listener, in the extensions of every request
/// on that connection; absent on plain HTTP or when the client sent none.
#[derive(Debug, Clone)]
pub struct ClientCertificates(pub Arc<Vec<CertificateDer<'static>>>);
