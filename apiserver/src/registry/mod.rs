//! What each verb does to objects (k8s.io/apiserver `pkg/registry`): one
//! generic [`Store`] per served resource, made for a kind from its
//! [`Resource`] description and [`Strategy`]; the set of served resources
//! ([`Resources`]) changes at runtime, built-in kinds registering at startup
//! through the same call CustomResourceDefinitions will use.
//!
//! * `resource`: a kind's names, scope, subresources and storage prefix.
//! * `strategy`: what a kind does differently (and its write hooks).
//! * `codec`: how a kind's objects are decoded and described (OpenAPI).
//! * `metadata`: what the server owns on every object.
//! * `defaults`: kube's defaulting, shared by the kinds.
//! * `store`: the generic store.
//! * `resources`: the served set, with its watch caches.
//! * `kinds`: the built-in kinds, one module each.

mod codec;
pub mod defaults;
pub mod kinds;
pub mod metadata;
mod resource;
mod resources;
pub mod scale;
mod store;
mod strategy;
#[cfg(test)]
pub(crate) mod tests;

pub use codec::Codec;
pub use resource::{
    Action, NAMESPACE_FINALIZE, POD_BINDING, POD_EPHEMERAL_CONTAINERS, POD_EVICTION, POD_RESIZE, Resource,
    SERVICE_ACCOUNT_TOKEN,
};
pub use resources::{Resources, ServedResource};
pub use store::{DeleteOptions, Deleted, Propagation, Store, WriteContext, field_manager};
pub use strategy::{NameRule, Strategy, Undo, WriteHooks};
