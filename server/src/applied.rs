//! What a member does with each batch its Raft applies, before the
//! proposers hear back: events go to its watch hub, lease grants, revokes
//! and checkpoints to its lessor (which keeps timers only while it leads),
//! tokens to its authenticator, and each write is counted for `/metrics`.

use std::sync::Arc;

use rtcd_raft::{AppliedEntry, ApplySink};
use rtcd_store::{AuthRequest, AuthResponse, WriteRequest, WriteResponse};

use crate::auth::Authenticator;

use crate::hub::Hub;
use crate::lessor::Lessor;
use crate::metrics::ServerMetrics;

pub fn sink(
    hub: Hub,
    lessor: Arc<Lessor>,
    authenticator: Arc<Authenticator>,
    metrics: Arc<ServerMetrics>,
) -> ApplySink {
    Arc::new(move |entries: &mut [AppliedEntry]| {
        let mut events = Vec::new();
        for entry in entries.iter_mut() {
            let Ok(applied) = &mut entry.outcome else { continue };
            events.append(&mut applied.events);
            metrics.mvcc.applied(&applied.response);
            match (&entry.request, &applied.response) {
                (_, WriteResponse::LeaseGrant(g)) => {
                    lessor.granted(g.id, g.ttl);
                    metrics.lease.granted(g.ttl);
                }
                (WriteRequest::LeaseRevoke(r), _) => {
                    lessor.revoked(r.id);
                    metrics.lease.revoked();
                }
                (WriteRequest::LeaseCheckpoint(c), _) => {
                    for cp in &c.checkpoints {
                        lessor.checkpointed(cp.id, cp.remaining_ttl);
                    }
                }
                (WriteRequest::Auth(auth), response) => tokens_follow(&authenticator, auth, response),
                _ => {}
            }
        }
        hub.publish(events);
    })
}

/// Tokens change with the auth store: an applied `Authenticate` makes one on
/// every member; a user deleted or given a new password loses theirs; all go
/// when auth is disabled (etcd's simple token provider does the same; JWT
/// tokens are kept nowhere, and the new auth revision retires them).
fn tokens_follow(authenticator: &Authenticator, request: &AuthRequest, response: &WriteResponse) {
    let Some(tokens) = authenticator.tokens().simple() else { return };
    match (request, response) {
        (AuthRequest::Authenticate { name, .. }, WriteResponse::Auth(AuthResponse::Token(token))) => {
            tokens.assign(token.clone(), name.clone())
        }
        (AuthRequest::UserDelete(r), _) => tokens.invalidate_user(&r.name),
        (AuthRequest::UserChangePassword(r), _) => tokens.invalidate_user(&r.name),
        (AuthRequest::Disable, _) => tokens.clear(),
        _ => {}
    }
}
