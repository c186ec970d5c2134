//! API Priority and Fairness (kube's `util/flowcontrol`): every request is
//! classified by the FlowSchema of lowest `matchingPrecedence` whose rules
//! match it, which names its priority level and how its flow is told
//! apart. The configuration is a snapshot of the stored FlowSchemas and
//! priority levels, replaced whenever the `flowcontrol` controller reads
//! them.
//!
//! So far requests are classified (the filter answers with kube's
//! `X-Kubernetes-PF-*` headers); seats and queues per priority level are
//! not built yet: `--max-requests-inflight` still bounds the server.

mod classify;

use std::sync::{Arc, RwLock};

use k8s_openapi::api::flowcontrol::v1 as flowcontrol;
use serde_json::Value;

pub use classify::Classification;
use classify::Config;

use crate::request::{RequestInfo, UserInfo};

/// The configuration requests are classified by.
#[derive(Debug, Default)]
pub struct FlowControl {
    config: RwLock<Arc<Config>>,
}

impl FlowControl {
    pub fn new() -> FlowControl {
        FlowControl::default()
    }

    /// Replaces the configuration with the stored `schemas` and `levels`
    /// (JSON as served); objects that do not decode are left out.
    pub fn configure(&self, schemas: &[Value], levels: &[Value]) {
        let schemas =
            schemas.iter().filter_map(|s| serde_json::from_value::<flowcontrol::FlowSchema>(s.clone()).ok());
        let levels = levels.iter().filter_map(|l| {
            serde_json::from_value::<flowcontrol::PriorityLevelConfiguration>(l.clone()).ok()
        });
        let config = Config::new(schemas.collect(), levels.collect());
        if let Ok(mut current) = self.config.write() {
            *current = Arc::new(config);
        }
    }

    /// How `user`'s request is classified; None until a configuration is
    /// read, or when nothing matches and there is no `catch-all`.
    pub fn classify(&self, user: &UserInfo, info: &RequestInfo) -> Option<Classification> {
        let config = self.config.read().ok()?.clone();
        config.classify(user, info)
    }
}
