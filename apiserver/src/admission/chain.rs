//! The admission chain: every plugin's mutating step, then every plugin's
//! validating step, each in the chain's order; the first refusal ends the
//! write. Each plugin's step is timed for kube's admission metrics.

use std::sync::Arc;
use std::time::Instant;

use super::step_metrics::{Step, StepMetrics};
use super::{Attributes, Plugin};
use crate::errors::ApiError;

#[derive(Debug, Clone, Default)]
pub struct Chain {
    plugins: Vec<Arc<dyn Plugin>>,
    metrics: Arc<StepMetrics>,
}

impl Chain {
    /// The plugins in the order they run (kube's fixed order, whatever the
    /// order of the flags that enabled them).
    pub fn new(plugins: Vec<Arc<dyn Plugin>>) -> Chain {
        Chain { plugins, metrics: Arc::default() }
    }

    /// The step durations, for `/metrics`.
    pub fn metrics(&self) -> Arc<StepMetrics> {
        self.metrics.clone()
    }

    /// The mutating step of every plugin; once more, all of it, when a
    /// webhook asked for reinvocation (kube's reinvoker: never a third
    /// round).
    pub async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        let started = Instant::now();
        let mut result = self.admit_round(attributes).await;
        if result.is_ok() && attributes.reinvocation.requested {
            attributes.reinvocation.round = 1;
            result = self.admit_round(attributes).await;
        }
        self.observe("", "admit", attributes, &result, started);
        result
    }

    async fn admit_round(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        for plugin in &self.plugins {
            let started = Instant::now();
            let result = plugin.admit(attributes).await;
            self.observe(plugin.name(), "admit", attributes, &result, started);
            result?;
        }
        Ok(())
    }

    /// The validating step of every plugin.
    pub async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        let started = Instant::now();
        let result = self.validate_all(attributes).await;
        self.observe("", "validate", attributes, &result, started);
        result
    }

    async fn validate_all(&self, attributes: &Attributes) -> Result<(), ApiError> {
        for plugin in &self.plugins {
            let started = Instant::now();
            let result = plugin.validate(attributes).await;
            self.observe(plugin.name(), "validate", attributes, &result, started);
            result?;
        }
        Ok(())
    }

    fn observe(
        &self,
        plugin: &'static str,
        step: Step,
        attributes: &Attributes,
        result: &Result<(), ApiError>,
        started: Instant,
    ) {
        let operation = attributes.operation.as_str();
        self.metrics.observe(plugin, step, operation, result.is_err(), started.elapsed());
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.plugins.iter().map(|p| p.name()).collect()
    }
}
