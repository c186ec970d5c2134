//! AlwaysAdmit and AlwaysDeny: kube keeps both (deprecated) for tests and
//! for locking a cluster's writes.

use async_trait::async_trait;

use super::{Attributes, Plugin};
use crate::errors::ApiError;

#[derive(Debug)]
pub struct AlwaysAdmit;

#[async_trait]
impl Plugin for AlwaysAdmit {
    fn name(&self) -> &'static str {
        "AlwaysAdmit"
    }
}

#[derive(Debug)]
pub struct AlwaysDeny;

const DENIED: &str = "admission control is denying all modifications";

#[async_trait]
impl Plugin for AlwaysDeny {
    fn name(&self) -> &'static str {
        "AlwaysDeny"
    }

    async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        Err(attributes.forbidden(DENIED))
    }

    async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        Err(attributes.forbidden(DENIED))
    }
}
