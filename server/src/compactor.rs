//! Auto-compaction (`--auto-compaction-mode`, `--auto-compaction-retention`),
//! proposing ordinary Compact requests like a client would.
//!
//! * `periodic`: keep about `retention` of history. The current revision is
//!   sampled every tenth of the retention; the newest sample at least
//!   `retention` old is the compaction point.
//! * `revision`: keep the last `retention` revisions, checked every 5 minutes.
//!
//! The flags are read in `config` (a bare number is hours in periodic mode).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rtcd_proto::etcdserverpb::CompactionRequest;
use rtcd_store::{StoreError, WriteRequest};

use crate::errors::EtcdError;
use crate::node::Node;
use crate::settings::AutoCompaction;

/// How often revision mode looks (etcd's interval).
const REVISION_MODE_INTERVAL: Duration = Duration::from_secs(300);

/// Runs auto-compaction until the process ends (idle on followers).
pub fn spawn(node: Arc<Node>, policy: AutoCompaction) {
    let (interval, keep) = match policy {
        AutoCompaction::Off => return,
        AutoCompaction::Periodic(retention) => ((retention / 10).max(Duration::from_millis(100)), retention),
        AutoCompaction::Revision(_) => (REVISION_MODE_INTERVAL, Duration::ZERO),
    };
    tokio::spawn(async move {
        let mut samples: VecDeque<(Instant, i64)> = VecDeque::new();
        let mut tick = tokio::time::interval(interval);
        loop {
            tick.tick().await;
            let Ok(current) = node.store().revision() else { continue };
            let target = match policy {
                AutoCompaction::Revision(n) => current - n,
                _ => {
                    samples.push_back((Instant::now(), current));
                    // The newest sample old enough; older ones are no longer needed.
                    let mut point = None;
                    while samples.front().is_some_and(|(at, _)| at.elapsed() >= keep) {
                        point = samples.pop_front().map(|(_, rev)| rev);
                    }
                    let Some(rev) = point else { continue };
                    rev
                }
            };
            // Only the leader compacts; the Compact request replicates.
            if target <= node.store().compacted_revision().unwrap_or(0) || !node.is_leader() {
                continue;
            }
            let req = WriteRequest::Compact(CompactionRequest { revision: target, physical: false });
            match node.propose(req).await {
                Ok(_) => tracing::info!(revision = target, "auto-compacted"),
                Err(EtcdError::Store(StoreError::Compacted)) => {}
                Err(e) => tracing::warn!(revision = target, error = %e, "auto-compaction failed"),
            }
        }
    });
}
