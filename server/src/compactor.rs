//! Auto-compaction (`--auto-compaction-mode`, `--auto-compaction-retention`),
//! proposing ordinary Compact requests like a client would.
//!
//! * `periodic`: keep about `retention` of history. The current revision is
//!   sampled every tenth of the retention; the newest sample at least
//!   `retention` old is the compaction point. A bare number means hours.
//! * `revision`: keep the last `retention` revisions, checked every 5 minutes.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rtcd_proto::etcdserverpb::CompactionRequest;
use rtcd_store::{StoreError, WriteRequest};

use crate::config::ConfigError;
use crate::errors::EtcdError;
use crate::node::Node;

/// How often revision mode looks (etcd's interval).
const REVISION_MODE_INTERVAL: Duration = Duration::from_secs(300);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Off,
    Periodic(Duration),
    Revision(i64),
}

impl Policy {
    pub fn parse(mode: &str, retention: &str) -> Result<Policy, ConfigError> {
        let bad = || ConfigError::BadRetention(retention.to_string());
        match mode {
            "periodic" => match retention.parse::<u64>() {
                Ok(0) => Ok(Policy::Off),
                Ok(hours) => Ok(Policy::Periodic(Duration::from_secs(hours * 3600))),
                Err(_) => crate::duration::parse(retention).map(Policy::Periodic).ok_or_else(bad),
            },
            "revision" => match retention.parse::<i64>() {
                Ok(0) => Ok(Policy::Off),
                Ok(n) if n > 0 => Ok(Policy::Revision(n)),
                _ => Err(bad()),
            },
            other => Err(ConfigError::BadCompactionMode(other.to_string())),
        }
    }
}

pub fn spawn(node: Arc<Node>, policy: Policy) {
    let (interval, keep) = match policy {
        Policy::Off => return,
        Policy::Periodic(retention) => ((retention / 10).max(Duration::from_millis(100)), retention),
        Policy::Revision(_) => (REVISION_MODE_INTERVAL, Duration::ZERO),
    };
    tokio::spawn(async move {
        let mut samples: VecDeque<(Instant, i64)> = VecDeque::new();
        let mut tick = tokio::time::interval(interval);
        loop {
            tick.tick().await;
            let Ok(current) = node.store.revision() else { continue };
            let target = match policy {
                Policy::Revision(n) => current - n,
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
            if target <= node.store.compacted_revision().unwrap_or(0) || !node.is_leader() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_parses_like_etcd() {
        assert_eq!(Policy::parse("periodic", "0").unwrap(), Policy::Off);
        assert_eq!(Policy::parse("periodic", "2").unwrap(), Policy::Periodic(Duration::from_secs(7200)));
        assert_eq!(Policy::parse("periodic", "1h30m").unwrap(), Policy::Periodic(Duration::from_secs(5400)));
        assert_eq!(Policy::parse("periodic", "500ms").unwrap(), Policy::Periodic(Duration::from_millis(500)));
        assert_eq!(Policy::parse("revision", "1000").unwrap(), Policy::Revision(1000));
        assert!(Policy::parse("revision", "1h").is_err());
        assert!(Policy::parse("periodic", "soon").is_err());
        assert!(Policy::parse("daily", "1").is_err());
    }
}
