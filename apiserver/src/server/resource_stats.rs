//! What API Priority and Fairness's work estimates read of the served
//! resources: each resource's objects and watchers, from its watch cache.

use crate::flowcontrol::ResourceStats;
use crate::registry::Resources;

#[derive(Debug)]
pub struct ServedStats(pub Resources);

impl ResourceStats for ServedStats {
    fn objects(&self, group: &str, resource: &str) -> Option<(u64, u64)> {
        let store = self.0.store(group, resource).ok()?;
        let (count, bytes) = store.reads().cacher().stats();
        Some((count as u64, bytes as u64))
    }

    fn watchers(&self, group: &str, resource: &str) -> usize {
        self.0.store(group, resource).map_or(0, |store| store.reads().cacher().watcher_count())
    }
}
