//! How objects of a kind are decoded and described: built-in kinds through
//! their k8s-openapi type (typed decoding that drops unknown fields, and the
//! type's OpenAPI schema); kinds without a type (custom resources until
//! CRDs bring schemas) keep objects as sent.

use std::sync::Arc;

use k8s_openapi::schemars::JsonSchema;
use k8s_openapi::{ListableResource, Resource as KubeResource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Resource;
use crate::openapi::OpenApiResource;

type Roundtrip = dyn Fn(Value) -> Result<Value, String> + Send + Sync;

#[derive(Clone)]
pub struct Codec {
    roundtrip: Arc<Roundtrip>,
    openapi: Option<OpenApiResource>,
}

impl std::fmt::Debug for Codec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Codec").field("openapi", &self.openapi.as_ref().map(|o| o.kind.as_str())).finish()
    }
}

impl Codec {
    /// Through the k8s-openapi type `T`, described with the subresources
    /// `resource` serves.
    pub fn typed<T>(resource: &Resource) -> Codec
    where
        T: KubeResource + ListableResource + JsonSchema + DeserializeOwned + Serialize + 'static,
    {
        let openapi = OpenApiResource::of::<T>(resource.subresources());
        Codec { roundtrip: Arc::new(roundtrip::<T>), openapi: Some(openapi) }
    }

    /// Objects kept as sent; no OpenAPI description.
    pub fn untyped() -> Codec {
        Codec { roundtrip: Arc::new(Ok), openapi: None }
    }

    /// Objects decoded by `roundtrip` (a custom resource's pruning), with
    /// no OpenAPI description yet.
    pub fn with_roundtrip(
        roundtrip: impl Fn(Value) -> Result<Value, String> + Send + Sync + 'static,
    ) -> Codec {
        Codec { roundtrip: Arc::new(roundtrip), openapi: None }
    }

    /// With this OpenAPI description.
    pub fn described_by(mut self, openapi: OpenApiResource) -> Codec {
        self.openapi = Some(openapi);
        self
    }

    /// Decodes JSON into the kind's type and back: the typed object's JSON
    /// (unknown fields dropped) or the decoder's message.
    pub fn roundtrip(&self, object: Value) -> Result<Value, String> {
        (self.roundtrip)(object)
    }

    /// The kind's OpenAPI description; None leaves it out of `/openapi/v3`.
    pub fn openapi(&self) -> Option<OpenApiResource> {
        self.openapi.clone()
    }
}

/// The typed decode both ways: what kube's strict decoder and its
/// re-encoding do to a body.
fn roundtrip<T: DeserializeOwned + Serialize>(value: Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(value).map_err(|e| e.to_string())?;
    serde_json::to_value(typed).map_err(|e| e.to_string())
}
