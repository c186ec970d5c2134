//! What a member does with each batch its Raft applies, before the
//! proposers hear back: events go to its watch hub, lease grants, revokes
//! and checkpoints to its lessor (which keeps timers only while it leads).

use std::sync::Arc;

use rtcd_raft::{AppliedEntry, ApplySink};
use rtcd_store::{WriteRequest, WriteResponse};

use crate::hub::Hub;
use crate::lessor::Lessor;

pub fn sink(hub: Hub, lessor: Arc<Lessor>) -> ApplySink {
    Arc::new(move |entries: &mut [AppliedEntry]| {
        let mut events = Vec::new();
        for entry in entries.iter_mut() {
            let Ok(applied) = &mut entry.outcome else { continue };
            events.append(&mut applied.events);
            match (&entry.request, &applied.response) {
                (_, WriteResponse::LeaseGrant(g)) => lessor.granted(g.id, g.ttl),
                (WriteRequest::LeaseRevoke(r), _) => lessor.revoked(r.id),
                (WriteRequest::LeaseCheckpoint(c), _) => {
                    for cp in &c.checkpoints {
                        lessor.checkpointed(cp.id, cp.remaining_ttl);
                    }
                }
                _ => {}
            }
        }
        hub.publish(events);
    })
}
