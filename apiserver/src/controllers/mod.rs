//! Controllers the API server runs itself, each driven by a watch on the
//! watch cache, never spawned from request handlers:
//!
//! * `namespace`: deletes the contents of a Terminating namespace, then the
//!   namespace (kube's namespace controller);
//! * `bootstrap`: the namespaces and the `kubernetes` Service every cluster
//!   has;
//! * `service_account`: a `default` ServiceAccount in every namespace;
//! * `resource_quota`: quotas' status, recounted from what they count;
//! * `customresourcedefinitions`: CRDs' names accepted, their versions
//!   served, their objects deleted with them;
//! * `garbage_collector`: dependents follow their owners' deletion
//!   (`ownerReferences`, `propagationPolicy`);
//! * `storage_protection`: claims, volumes and their attribute classes
//!   deleted only once nothing uses them;
//! * `flowcontrol`: kube's API Priority and Fairness configuration made
//!   and kept up to date, FlowSchemas marked `Dangling`;
//! * `apiservices`: an APIService for every group version served here
//!   (kube's autoregistration), local ones marked `Available`;
//! * `authentication_trust`: `kube-system/extension-apiserver-authentication`,
//!   how clients and front proxies are trusted, for extension servers.

pub mod apiservices;
pub mod authentication_trust;
pub mod bootstrap;
pub mod csr_signing;
pub mod customresourcedefinitions;
pub mod flowcontrol;
pub mod garbage_collector;
pub mod namespace;
pub mod resource_quota;
pub mod service_account;
pub mod storage_protection;
