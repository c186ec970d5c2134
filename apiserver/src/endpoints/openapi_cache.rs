//! The OpenAPI documents of the resources served now: built on first use
//! and again after a resource is added or removed (building them takes a
//! while, so not per request).

use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use crate::openapi::{OpenApiDocs, OpenApiResource};
use crate::registry::Resources;

#[derive(Debug)]
pub(super) struct OpenApiCache {
    resources: Resources,
    generation: watch::Receiver<u64>,
    /// The documents, and the generation of the resources they describe.
    built: Mutex<Option<(u64, Arc<OpenApiDocs>)>>,
}

impl OpenApiCache {
    pub(super) fn new(resources: Resources) -> Self {
        let generation = resources.generation();
        OpenApiCache { resources, generation, built: Mutex::new(None) }
    }

    /// The documents for the resources served now.
    pub(super) fn docs(&self) -> Arc<OpenApiDocs> {
        let mut built = self.built.lock().unwrap_or_else(|p| p.into_inner());
        // Read the generation before the resources: a change in between
        // makes the next call rebuild.
        let generation = *self.generation.borrow();
        if let Some((_, docs)) = built.as_ref().filter(|(seen, _)| *seen == generation) {
            return docs.clone();
        }
        let described: Vec<OpenApiResource> =
            self.resources.all().iter().filter_map(|served| served.store.codec().openapi()).collect();
        let docs = Arc::new(OpenApiDocs::build(&described));
        *built = Some((generation, docs.clone()));
        docs
    }
}
