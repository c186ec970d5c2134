//! kube-aggregator's availability families (`controllers/status/metrics`),
//! which the kubernetes-mixin's KubeAggregatedAPIDown and
//! KubeAggregatedAPIErrors alerts read: per APIService whether it is
//! unavailable now, and how often it became so, by reason.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use super::family::{Kind, Meta, Stability};

const UNAVAILABLE: Meta = Meta::new(
    "aggregator_unavailable_apiservice",
    Kind::Gauge,
    Stability::Alpha,
    "Gauge of APIServices which are marked as unavailable broken down by APIService name.",
);
const UNAVAILABLE_TOTAL: Meta = Meta::new(
    "aggregator_unavailable_apiservice_total",
    Kind::Counter,
    Stability::Alpha,
    "Counter of APIServices which are marked as unavailable broken down by APIService name and reason.",
);

#[derive(Debug, Default)]
pub struct AggregatorMetrics {
    /// Whether each APIService is available, by name.
    available: Mutex<BTreeMap<String, bool>>,
    /// Times each became unavailable, by name and reason.
    became_unavailable: Mutex<BTreeMap<(String, String), u64>>,
}

impl AggregatorMetrics {
    /// The availability an APIService's check just found (kube's
    /// SetUnavailableGauge, on every check): available only when its
    /// Available condition is True.
    pub fn checked(&self, name: &str, available: bool) {
        let mut all = self.available.lock().unwrap_or_else(|p| p.into_inner());
        match all.get_mut(name) {
            Some(known) => *known = available,
            None => {
                all.insert(name.to_string(), available);
            }
        }
    }

    /// An APIService's Available condition was written (kube's
    /// SetUnavailableCounter): counted when it went from True to anything
    /// else, under the new condition's reason.
    pub fn changed(&self, name: &str, was_available: bool, available: bool, reason: Option<&str>) {
        if was_available && !available {
            let reason = reason.unwrap_or("UnknownReason");
            let mut counts = self.became_unavailable.lock().unwrap_or_else(|p| p.into_inner());
            *counts.entry((name.to_string(), reason.to_string())).or_default() += 1;
        }
    }

    /// Forgets the APIServices that are gone (kube's ForgetAPIService).
    pub fn retain(&self, names: &BTreeSet<String>) {
        self.available.lock().unwrap_or_else(|p| p.into_inner()).retain(|name, _| names.contains(name));
    }

    pub fn write(&self, out: &mut String) {
        let available = self.available.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let gauge = available.iter().map(|(name, up)| ([name.as_str()], if *up { 0.0 } else { 1.0 }));
        UNAVAILABLE.write(out, ["name"], gauge);
        let counts = self.became_unavailable.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let counts = counts.iter().map(|((name, reason), n)| ([name.as_str(), reason.as_str()], *n as f64));
        UNAVAILABLE_TOTAL.write(out, ["name", "reason"], counts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unavailability_is_a_gauge_and_its_transitions_a_counter() {
        let metrics = AggregatorMetrics::default();
        metrics.checked("v1.", true);
        metrics.checked("v1beta1.metrics.k8s.io", false);
        // First condition False: not a transition from available.
        metrics.changed("v1beta1.metrics.k8s.io", false, false, Some("ServiceNotFound"));
        metrics.changed("v1.", true, false, Some("FailedDiscoveryCheck"));
        metrics.changed("v1.", false, true, Some("Passed"));
        let mut out = String::new();
        metrics.write(&mut out);
        assert!(out.contains("aggregator_unavailable_apiservice{name=\"v1.\"} 0\n"), "{out}");
        assert!(out.contains("aggregator_unavailable_apiservice{name=\"v1beta1.metrics.k8s.io\"} 1\n"));
        assert!(out.contains(
            "aggregator_unavailable_apiservice_total{name=\"v1.\",reason=\"FailedDiscoveryCheck\"} 1\n"
        ));
        assert!(!out.contains("reason=\"ServiceNotFound\""));
        metrics.retain(&BTreeSet::from(["v1.".to_string()]));
        let mut out = String::new();
        metrics.write(&mut out);
        assert!(!out.contains("v1beta1.metrics.k8s.io\"} 1"));
    }
}
