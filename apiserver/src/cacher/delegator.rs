//! Which reads the watch cache serves and which go to storage (kube's
//! `CacheDelegator`): the latest object and paged or exact lists are
//! storage's; "any" or "not older than" reads, consistent lists and watches
//! are the cache's once it has caught up.

use std::sync::Arc;

use serde_json::Value;

use super::object::stamp;
use super::{CachedObject, Cacher, Filter, Watch, WatchSpec};
use crate::errors::ApiError;
use crate::storage::{ContinueToken, ReadView, Storage, StorageError};

/// kube's 410 for a list at a compacted revision.
const LIST_EXPIRED: &str = "The resourceVersion for the provided list is too old.";
/// kube's 410 for a continued list whose revision is compacted.
const CONTINUE_EXPIRED: &str = "The provided continue parameter is too old to display a consistent list \
     result. You can start a new list without the continue parameter, or use the continue token in this \
     response to retrieve the remainder of the results. Continuing with the provided token results in an \
     inconsistent list - objects that were created, modified, or deleted between the time the first chunk \
     was returned and now may show up in the list.";

/// `?resourceVersion=` and `?resourceVersionMatch=` of a read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadAt {
    /// None: the latest (a consistent read).
    pub resource_version: Option<i64>,
    pub exact: bool,
}

#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    pub at: ReadAt,
    pub limit: i64,
    pub continue_token: Option<String>,
    pub filter: Filter,
}

#[derive(Debug, Clone)]
pub struct ListResult {
    pub items: Vec<Value>,
    pub resource_version: i64,
    pub continue_token: Option<String>,
    pub remaining_item_count: Option<i64>,
}

/// A list as read: from the cache, its objects still encoded (a response
/// can be written from their bytes), or decoded from storage.
#[derive(Debug)]
pub enum Listing {
    Cached { objects: Vec<Arc<CachedObject>>, resource_version: i64 },
    Read(ListResult),
}

impl Listing {
    /// The list with its objects decoded.
    pub fn into_result(self) -> ListResult {
        match self {
            Listing::Cached { objects, resource_version } => ListResult {
                items: objects.iter().map(|o| o.value()).collect(),
                resource_version,
                continue_token: None,
                remaining_item_count: None,
            },
            Listing::Read(list) => list,
        }
    }
}

/// The reads of one resource.
#[derive(Debug, Clone)]
pub struct ReadDelegator {
    storage: Arc<dyn Storage>,
    cacher: Cacher,
    /// How errors name the resource (`deployments.apps`).
    qualified: String,
    /// How the resource reads objects (`storage` and the cache's reads
    /// already do; writes' results are passed through it).
    view: ReadView,
}

impl ReadDelegator {
    pub fn new(storage: Arc<dyn Storage>, cacher: Cacher, qualified: String) -> Self {
        ReadDelegator { storage, cacher, qualified, view: ReadView::default() }
    }

    /// Reads through `view` (its storage must be wrapped by it too).
    pub fn with_view(mut self, view: ReadView) -> Self {
        self.view = view;
        self
    }

    /// An object read some other way (a write's result), as this resource
    /// reads it.
    pub async fn present(&self, value: Value) -> Result<Value, ApiError> {
        self.view.present(value).await.map_err(|e| self.error(e, ""))
    }

    /// An object written through this resource, as it is stored.
    pub async fn to_storage(&self, value: Value) -> Result<Value, ApiError> {
        self.view.to_storage(value).await.map_err(|e| self.error(e, ""))
    }

    pub fn cacher(&self) -> &Cacher {
        &self.cacher
    }

    /// The object under `key`: the latest from storage, as kube reads it, or
    /// the cache's when any version at least `at` will do.
    pub async fn get(&self, key: &str, name: &str, at: &ReadAt) -> Result<Value, ApiError> {
        let not_found = || ApiError::NotFound { qualified: self.qualified.clone(), name: name.to_string() };
        if let Some(rv) = at.resource_version
            && self.wait_fresh(rv).await?
        {
            return self.cacher.get(key).0.map(|o| o.value()).ok_or_else(not_found);
        }
        // The latest, or "any version" before the cache is loaded.
        self.get_from_storage(key, name).await?.ok_or_else(not_found)
    }

    /// The latest object under `key`, from storage.
    pub async fn get_from_storage(&self, key: &str, name: &str) -> Result<Option<Value>, ApiError> {
        let object = self.storage.get(key).await.map_err(|e| self.error(e, name))?;
        object.map(|o| to_value(key, &o.value, o.resource_version)).transpose()
    }

    /// The objects under `prefix` (the collection's) that `opts` select.
    pub async fn list(&self, prefix: &str, opts: &ListOptions) -> Result<ListResult, ApiError> {
        Ok(self.listing(prefix, opts).await?.into_result())
    }

    /// The same objects, as the cache holds them where it served them.
    pub async fn listing(&self, prefix: &str, opts: &ListOptions) -> Result<Listing, ApiError> {
        // Pages need storage's revision-pinned ranges: a first page at the
        // latest, a continuation, or an Exact revision (which a limit with a
        // resourceVersion and no match means). NotOlderThan and "0" are the
        // cache's, the limit ignored as kube's cache ignores it.
        let from_storage = opts.continue_token.is_some()
            || (opts.limit > 0 && opts.at.resource_version.is_none())
            || opts.at.exact;
        if from_storage {
            return Ok(Listing::Read(self.list_from_storage(prefix, opts).await?));
        }
        let fresh = match opts.at.resource_version {
            Some(rv) => self.wait_fresh(rv).await?,
            None => {
                let current = self.current_revision(prefix).await?;
                self.cacher.wait_fresh(current).await
            }
        };
        if !fresh {
            // The cache did not catch up in time: read storage instead.
            return Ok(Listing::Read(self.list_from_storage(prefix, opts).await?));
        }
        let (objects, resource_version) = self.cacher.list(&opts.filter);
        Ok(Listing::Cached { objects, resource_version })
    }

    /// A list read from storage itself, never from the cache: of `prefix`,
    /// narrowed to the filter's namespace.
    pub async fn list_from_storage(&self, prefix: &str, opts: &ListOptions) -> Result<ListResult, ApiError> {
        let prefix = match &opts.filter.namespace {
            Some(ns) => format!("{prefix}{ns}/"),
            None => prefix.to_string(),
        };
        let rv = opts.at.resource_version.unwrap_or(0);
        if opts.continue_token.is_some() && rv != 0 {
            // The token pins the revision; kube refuses a second one.
            return Err(ApiError::BadRequest(
                "specifying resource version is not allowed when using continue".into(),
            ));
        }
        let filtered = opts.filter.labels.is_some() || opts.filter.fields.is_some();
        let mut token = opts.continue_token.clone();
        let mut items = Vec::new();
        loop {
            let page = self
                .storage
                .list(&prefix, opts.limit, rv, token.as_deref())
                .await
                .map_err(|e| self.list_error(e, rv, token.as_deref()))?;
            let read = page.items.len();
            for (i, (key, object)) in page.items.iter().enumerate() {
                let key = String::from_utf8_lossy(key).into_owned();
                let value = to_value(&key, &object.value, object.resource_version)?;
                if !opts.filter.matches_value(&value) {
                    continue;
                }
                items.push(value);
                if filtered && opts.limit > 0 && items.len() as i64 == opts.limit {
                    // Full: the next page starts just after this object.
                    let more = i + 1 < read || page.continue_token.is_some();
                    let start = format!("{}\0", key.get(prefix.len()..).unwrap_or_default());
                    let continue_token =
                        more.then(|| ContinueToken::new(page.resource_version, start).encode());
                    let resource_version = page.resource_version;
                    return Ok(ListResult {
                        items,
                        resource_version,
                        continue_token,
                        remaining_item_count: None,
                    });
                }
            }
            // As kube's etcd3 store: with a selector, read on until `limit`
            // objects match or the range ends.
            match page.continue_token {
                Some(next) if filtered => token = Some(next),
                continue_token => {
                    return Ok(ListResult {
                        items,
                        resource_version: page.resource_version,
                        continue_token,
                        // How many more match is unknown when a selector
                        // filters them.
                        remaining_item_count: page.remaining_item_count.filter(|_| !filtered),
                    });
                }
            }
        }
    }

    /// kube's answer to a failed list read at `rv` or continuing `token`
    /// (kube's etcd3 store and watch cache): a revision ahead is the
    /// token's or the request's, a compacted continuation gets a token that
    /// goes on from the same key at the latest revision.
    fn list_error(&self, err: StorageError, rv: i64, token: Option<&str>) -> ApiError {
        let continued = token.and_then(|t| ContinueToken::decode(t).ok());
        match (err, continued) {
            (StorageError::FutureRevision, continued) => ApiError::TooLargeResourceVersion {
                requested: continued.map_or(rv, |t| t.rv),
                current: self.cacher.resource_version(),
            },
            (StorageError::Expired, Some(continued)) => ApiError::ExpiredContinue {
                message: CONTINUE_EXPIRED.into(),
                continue_token: ContinueToken::new(-1, continued.start_key()).encode(),
            },
            (StorageError::Expired, None) => ApiError::Expired(LIST_EXPIRED.into()),
            (e, _) => self.error(e, ""),
        }
    }

    /// Storage's current revision.
    pub async fn current_revision(&self, prefix: &str) -> Result<i64, ApiError> {
        self.storage.current_revision(prefix).await.map_err(|e| self.error(e, ""))
    }

    /// Registers a watch on the cache.
    pub fn watch(&self, spec: WatchSpec) -> Result<Watch, ApiError> {
        self.cacher.watch(spec)
    }

    /// Waits until the cache has seen `rv` (and has loaded at all): true
    /// when it has; false for rv 0 ("any version") while the cache is still
    /// loading, so the caller reads storage; kube's 504 "Too large resource
    /// version" if it does not catch up within a few seconds.
    async fn wait_fresh(&self, rv: i64) -> Result<bool, ApiError> {
        if self.cacher.wait_fresh(rv).await {
            return Ok(true);
        }
        if rv == 0 {
            return Ok(false);
        }
        Err(ApiError::TooLargeResourceVersion { requested: rv, current: self.cacher.resource_version() })
    }

    fn error(&self, err: StorageError, name: &str) -> ApiError {
        ApiError::from_storage(err, &self.qualified, name)
    }
}

/// A stored object as JSON with its resourceVersion.
pub fn to_value(key: &str, value: &[u8], resource_version: i64) -> Result<Value, ApiError> {
    Ok(to_value_at(parse(key, value)?, resource_version))
}

/// An object just written at `resource_version`, as reads would return it.
pub fn to_value_at(mut value: Value, resource_version: i64) -> Value {
    stamp(&mut value, resource_version);
    value
}

fn parse(key: &str, value: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(value).map_err(|e| ApiError::Internal(format!("object at {key} is not JSON: {e}")))
}
