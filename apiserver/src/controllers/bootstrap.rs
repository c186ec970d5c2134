//! What every cluster has from its first start: the `default`,
//! `kube-system`, `kube-public` and `kube-node-lease` namespaces and the
//! `default/kubernetes` Service on the range's first address (clients and
//! e2e suites look it up), the system PriorityClasses, and the default
//! ServiceCIDR holding the Service range, ready.

use std::time::Duration;

use serde_json::json;

use crate::cacher::ReadAt;
use crate::errors::ApiError;
use crate::registry::kinds::networking::servicecidr;
use crate::registry::kinds::priorityclass::{SYSTEM as SYSTEM_PRIORITY_CLASSES, system_class};
use crate::registry::kinds::service::IpRange;
use crate::registry::{Resources, WriteContext};

/// Creates what is missing, retrying while storage is unreachable.
pub async fn run(resources: Resources, service_range: IpRange) {
    loop {
        match create_missing(&resources, service_range).await {
            Ok(()) => return,
            Err(e) => {
                tracing::warn!(error = %e, "creating the built-in namespaces; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

async fn create_missing(resources: &Resources, service_range: IpRange) -> Result<(), ApiError> {
    let ctx = WriteContext::server();
    let namespaces = resources.store("", "namespaces")?;
    for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        match namespaces.create(&ctx, None, ns).await {
            Ok(_) | Err(ApiError::AlreadyExists { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    let classes = resources.store("scheduling.k8s.io", "priorityclasses")?;
    for (name, value, description) in SYSTEM_PRIORITY_CLASSES {
        match classes.create(&ctx, None, system_class(name, value, description)).await {
            Ok(_) | Err(ApiError::AlreadyExists { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    default_service_cidr(resources, service_range).await?;
    let service_ip = service_range.first();
    let services = resources.store("", "services")?;
    let kubernetes = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "kubernetes", "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {
            "clusterIP": service_ip.to_string(),
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
        },
    });
    // Its address is taken once it exists: look before creating.
    match services.get(Some("default"), "kubernetes", &ReadAt::default()).await {
        Err(ApiError::NotFound { .. }) => match services.create(&ctx, Some("default"), kubernetes).await {
            Ok(_) | Err(ApiError::AlreadyExists { .. }) => Ok(()),
            Err(e) => Err(e),
        },
        Ok(_) => Ok(()),
        Err(e) => Err(e),
    }
}

/// The `kubernetes` ServiceCIDR, made and marked ready once (kube's
/// default-servicecidr controller); a range changed by flag since is left
/// as stored, as kube leaves it.
async fn default_service_cidr(resources: &Resources, range: IpRange) -> Result<(), ApiError> {
    let ctx = WriteContext::server();
    let cidrs = resources.store("networking.k8s.io", "servicecidrs")?;
    let stored = match cidrs.create(&ctx, None, servicecidr::default_object(&range.to_string())).await {
        Ok(created) => created,
        Err(ApiError::AlreadyExists { .. }) => {
            cidrs.get(None, servicecidr::DEFAULT, &ReadAt::default()).await?
        }
        Err(e) => return Err(e),
    };
    if stored["status"]["conditions"].as_array().is_some_and(|c| !c.is_empty()) {
        return Ok(());
    }
    let mut ready = stored;
    ready["status"] = servicecidr::ready_status(&crate::runtime::meta::now());
    cidrs.update(&ctx, None, servicecidr::DEFAULT, Some("status"), ready).await.map(drop)
}
