//! The admission chain: every plugin's mutating step, then every plugin's
//! validating step, each in the chain's order; the first refusal ends the
//! write.

use std::sync::Arc;

use super::{Attributes, Plugin};
use crate::errors::ApiError;

#[derive(Debug, Clone, Default)]
pub struct Chain {
    plugins: Vec<Arc<dyn Plugin>>,
}

impl Chain {
    /// The plugins in the order they run (kube's fixed order, whatever the
    /// order of the flags that enabled them).
    pub fn new(plugins: Vec<Arc<dyn Plugin>>) -> Chain {
        Chain { plugins }
    }

    /// The mutating step of every plugin; once more, all of it, when a
    /// webhook asked for reinvocation (kube's reinvoker: never a third
    /// round).
    pub async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        for plugin in &self.plugins {
            plugin.admit(attributes).await?;
        }
        if attributes.reinvocation.requested {
            attributes.reinvocation.round = 1;
            for plugin in &self.plugins {
                plugin.admit(attributes).await?;
            }
        }
        Ok(())
    }

    /// The validating step of every plugin.
    pub async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        for plugin in &self.plugins {
            plugin.validate(attributes).await?;
        }
        Ok(())
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.plugins.iter().map(|p| p.name()).collect()
    }
}
