//! The watch cache and the read delegator against in-memory storage:
//! which reads the cache serves and which go to storage, how fresh they
//! are, and what watchers receive.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use serde_json::{Value, json};

use super::{
    CacheConfig, Cacher, Delivery, Filter, ListOptions, ListResult, ReadAt, ReadDelegator, Watch, WatchSpec,
    WatchStart,
};
use crate::errors::ApiError;
use crate::selector::{FieldSelector, LabelSelector};
use crate::storage::{
    ListPage, MemoryStorage, Object, Preconditions, Storage, StorageError, StorageWatch, Swap,
};

const PREFIX: &str = "/registry/configmaps/";

/// Storage that counts the reads that reach it.
#[derive(Debug)]
struct Counting {
    inner: MemoryStorage,
    lists: AtomicUsize,
    gets: AtomicUsize,
}

#[async_trait]
impl Storage for Counting {
    async fn create(&self, key: &str, value: Bytes, ttl: Option<i64>) -> Result<i64, StorageError> {
        self.inner.create(key, value, ttl).await
    }

    async fn get(&self, key: &str) -> Result<Option<Object>, StorageError> {
        self.gets.fetch_add(1, Ordering::SeqCst);
        self.inner.get(key).await
    }

    async fn current_revision(&self, prefix: &str) -> Result<i64, StorageError> {
        self.inner.current_revision(prefix).await
    }

    async fn put_if(&self, key: &str, value: Bytes, expected: i64) -> Result<Swap, StorageError> {
        self.inner.put_if(key, value, expected).await
    }

    async fn delete(&self, key: &str, preconditions: &Preconditions) -> Result<Object, StorageError> {
        self.inner.delete(key, preconditions).await
    }

    async fn list(
        &self,
        prefix: &str,
        limit: i64,
        resource_version: i64,
        token: Option<&str>,
    ) -> Result<ListPage, StorageError> {
        self.lists.fetch_add(1, Ordering::SeqCst);
        self.inner.list(prefix, limit, resource_version, token).await
    }

    async fn watch(&self, prefix: &str, start: i64) -> Result<Box<dyn StorageWatch>, StorageError> {
        self.inner.watch(prefix, start).await
    }
}

/// The configmaps cache over counted in-memory storage.
struct Setup {
    memory: MemoryStorage,
    counting: Arc<Counting>,
    cacher: Cacher,
    reads: ReadDelegator,
}

impl Setup {
    async fn new() -> Setup {
        Setup::with(CacheConfig { fresh_timeout: Duration::from_millis(500), ..CacheConfig::default() }).await
    }

    async fn with(config: CacheConfig) -> Setup {
        let memory = MemoryStorage::new();
        let counting = Arc::new(Counting {
            inner: memory.clone(),
            lists: AtomicUsize::new(0),
            gets: AtomicUsize::new(0),
        });
        let cacher = Cacher::start(counting.clone(), PREFIX.to_string(), config);
        let reads = ReadDelegator::new(counting.clone(), cacher.clone(), "configmaps".into());
        let setup = Setup { memory, counting, cacher, reads };
        setup.caught_up().await;
        setup
    }

    /// Waits until the cache has seen every write so far.
    async fn caught_up(&self) {
        let revision = self.memory.revision();
        let give_up = Instant::now() + Duration::from_secs(10);
        while !(self.cacher.is_ready() && self.cacher.resource_version() >= revision) {
            assert!(Instant::now() < give_up, "the cache did not reach {revision}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Creates or replaces a ConfigMap directly in storage; the revision.
    async fn put(&self, namespace: &str, name: &str, labels: Value) -> i64 {
        let key = format!("{PREFIX}{namespace}/{name}");
        let object = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
        });
        let expected = self.memory.get(&key).await.unwrap().map_or(0, |o| o.resource_version);
        let value = Bytes::from(serde_json::to_vec(&object).unwrap());
        match self.memory.put_if(&key, value, expected).await.unwrap() {
            Swap::Done(revision) => revision,
            Swap::Changed(_) => panic!("nothing else writes {key}"),
        }
    }

    async fn delete(&self, namespace: &str, name: &str) -> i64 {
        let key = format!("{PREFIX}{namespace}/{name}");
        self.memory.delete(&key, &Preconditions::default()).await.unwrap();
        self.memory.revision()
    }

    async fn list(&self, opts: &ListOptions) -> Result<ListResult, ApiError> {
        self.reads.list(PREFIX, opts).await
    }

    fn storage_lists(&self) -> usize {
        self.counting.lists.load(Ordering::SeqCst)
    }
}

fn names(list: &ListResult) -> Vec<String> {
    list.items
        .iter()
        .map(|i| {
            format!(
                "{}/{}",
                i["metadata"]["namespace"].as_str().unwrap(),
                i["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect()
}

fn at(resource_version: i64, exact: bool) -> ReadAt {
    ReadAt { resource_version: Some(resource_version), exact }
}

fn spec(start: WatchStart, filter: Filter) -> WatchSpec {
    WatchSpec {
        filter,
        start,
        not_older_than: 0,
        bookmarks: false,
        initial_events_end: false,
        deadline: Instant::now() + Duration::from_secs(60),
    }
}

fn labels(selector: &str) -> Filter {
    Filter { labels: Some(LabelSelector::parse(selector).unwrap()), ..Filter::default() }
}

/// `(type, namespace/name, resourceVersion, app label)` of an event.
type Seen = (&'static str, String, i64, Value);

fn seen(delivery: &Delivery) -> Seen {
    let Delivery::Event { kind, object, .. } = delivery else { panic!("an event, not {delivery:?}") };
    let meta = &object.value()["metadata"];
    let name = format!("{}/{}", meta["namespace"].as_str().unwrap(), meta["name"].as_str().unwrap());
    assert_eq!(meta["resourceVersion"], object.resource_version.to_string());
    (kind.as_str(), name, object.resource_version, meta["labels"]["app"].clone())
}

/// The next `n` live deliveries of a watch.
async fn next(watch: &mut Watch, n: usize) -> Vec<Seen> {
    let mut out = Vec::new();
    for _ in 0..n {
        let delivery = tokio::time::timeout(Duration::from_secs(5), watch.live.recv())
            .await
            .expect("a delivery in time")
            .expect("the watch still open");
        out.push(seen(&delivery));
    }
    out
}

/// Whether the watch's stream ends (rather than staying open).
async fn ends(watch: &mut Watch) -> bool {
    matches!(tokio::time::timeout(Duration::from_secs(5), watch.live.recv()).await, Ok(None))
}

#[tokio::test]
async fn a_consistent_list_includes_a_write_made_just_before() {
    let s = Setup::new().await;
    let lists = s.storage_lists();
    for i in 0..20 {
        let revision = s.put("default", &format!("cm-{i:02}"), json!({})).await;
        let list = s.list(&ListOptions::default()).await.unwrap();
        assert_eq!(list.resource_version, revision);
        assert_eq!(names(&list).last().unwrap(), &format!("default/cm-{i:02}"));
        assert_eq!(list.items.len(), i + 1);
        assert_eq!((list.continue_token, list.remaining_item_count), (None, None));
    }
    // All of them from the cache once it had caught up: none read storage.
    assert_eq!(s.storage_lists(), lists);
}

#[tokio::test]
async fn a_consistent_list_catches_up_through_progress_when_other_keys_change() {
    let s = Setup::new().await;
    s.put("default", "a", json!({})).await;
    s.caught_up().await;
    let lists = s.storage_lists();
    // Writes elsewhere move storage's revision; this cache sees no event.
    for i in 0..3 {
        s.memory
            .create(&format!("/registry/pods/default/p{i}"), Bytes::from_static(b"{}"), None)
            .await
            .unwrap();
    }
    let started = Instant::now();
    let list = s.list(&ListOptions::default()).await.unwrap();
    assert_eq!(names(&list), ["default/a"]);
    assert_eq!(list.resource_version, s.memory.revision());
    assert_eq!(s.storage_lists(), lists, "served by the cache once a progress notification came");
    assert!(started.elapsed() < Duration::from_millis(400), "without waiting out the timeout");
}

#[tokio::test]
async fn resource_version_zero_reads_are_the_caches() {
    let s = Setup::new().await;
    for name in ["a", "b", "c"] {
        s.put("default", name, json!({})).await;
    }
    s.caught_up().await;
    let (lists, gets) = (s.storage_lists(), s.counting.gets.load(Ordering::SeqCst));
    // The limit is ignored, as kube's cache ignores it.
    let any = ListOptions { at: at(0, false), limit: 2, ..ListOptions::default() };
    let list = s.list(&any).await.unwrap();
    assert_eq!(names(&list), ["default/a", "default/b", "default/c"]);
    assert_eq!((list.resource_version, list.continue_token), (s.memory.revision(), None));
    // Not older than a revision the cache has: the cache's as well.
    let not_older = ListOptions { at: at(s.memory.revision(), false), ..ListOptions::default() };
    assert_eq!(s.list(&not_older).await.unwrap().items.len(), 3);
    let b = s.reads.get(&format!("{PREFIX}default/b"), "b", &at(0, false)).await.unwrap();
    assert_eq!(b["metadata"]["name"], "b");
    let err = s.reads.get(&format!("{PREFIX}default/x"), "x", &at(0, false)).await.unwrap_err();
    assert_eq!((err.code(), err.to_string()), (404, "configmaps \"x\" not found".to_string()));
    assert_eq!((s.storage_lists(), s.counting.gets.load(Ordering::SeqCst)), (lists, gets));
    // A get of the latest reads storage.
    s.reads.get(&format!("{PREFIX}default/b"), "b", &ReadAt::default()).await.unwrap();
    assert_eq!(s.counting.gets.load(Ordering::SeqCst), gets + 1);
}

#[tokio::test]
async fn a_limit_without_resource_version_pages_through_storage() {
    let s = Setup::new().await;
    for name in ["a", "b", "c", "d", "e"] {
        s.put("default", name, json!({})).await;
    }
    let pinned = s.memory.revision();
    let lists = s.storage_lists();
    let first = s.list(&ListOptions { limit: 2, ..ListOptions::default() }).await.unwrap();
    assert_eq!(names(&first), ["default/a", "default/b"]);
    assert_eq!((first.resource_version, first.remaining_item_count), (pinned, Some(3)));
    assert_eq!(s.storage_lists(), lists + 1);
    // Writes after the first page are not in the next ones.
    s.put("default", "aa", json!({})).await;
    s.delete("default", "e").await;
    let mut all = names(&first);
    let mut token = first.continue_token;
    while let Some(t) = token {
        let page = s
            .list(&ListOptions { limit: 2, continue_token: Some(t), ..ListOptions::default() })
            .await
            .unwrap();
        assert_eq!(page.resource_version, pinned);
        all.extend(names(&page));
        token = page.continue_token;
    }
    assert_eq!(all, ["default/a", "default/b", "default/c", "default/d", "default/e"]);
    let err = s
        .list(&ListOptions { limit: 2, continue_token: Some("bogus".into()), ..ListOptions::default() })
        .await
        .unwrap_err();
    assert_eq!(err.code(), 400);
}

#[tokio::test]
async fn exact_reads_see_an_old_revision_until_it_is_compacted() {
    let s = Setup::new().await;
    s.put("default", "a", json!({"app": "v1"})).await;
    let old = s.put("default", "b", json!({})).await;
    s.put("default", "a", json!({"app": "v2"})).await;
    s.delete("default", "b").await;
    s.put("default", "c", json!({})).await;
    let exact = ListOptions { at: at(old, true), ..ListOptions::default() };
    let list = s.list(&exact).await.unwrap();
    assert_eq!(names(&list), ["default/a", "default/b"]);
    assert_eq!(list.resource_version, old);
    assert_eq!(list.items[0]["metadata"]["labels"]["app"], "v1");
    assert_eq!(list.items[0]["metadata"]["resourceVersion"], "1");
    // A revision etcd does not have yet: kube's 504.
    let future = s.memory.revision() + 10;
    let err = s.list(&ListOptions { at: at(future, true), ..ListOptions::default() }).await.unwrap_err();
    assert_eq!(err.code(), 504);
    assert!(
        err.to_string().starts_with(&format!("Timeout: Too large resource version: {future}, current: ")),
        "{err}"
    );
    // Compacted away: 410.
    s.memory.compact(s.memory.revision()).unwrap();
    let err = s.list(&exact).await.unwrap_err();
    assert_eq!(err.code(), 410);
    assert_eq!(err.to_string(), "The resourceVersion for the provided list is too old.");
}

#[tokio::test]
async fn continued_lists_fail_as_kubes_do() {
    let s = Setup::new().await;
    for name in ["a", "b", "c"] {
        s.put("default", name, json!({})).await;
    }
    let first = s.list(&ListOptions { limit: 1, ..ListOptions::default() }).await.unwrap();
    let token = first.continue_token.clone().unwrap();
    let continued = |token: &str| ListOptions {
        limit: 1,
        continue_token: Some(token.to_string()),
        ..ListOptions::default()
    };
    // A second revision besides the token's: 400.
    let both = ListOptions { at: at(first.resource_version, false), ..continued(&token) };
    let err = s.list(&both).await.unwrap_err();
    assert_eq!(
        (err.code(), err.to_string().as_str()),
        (400, "specifying resource version is not allowed when using continue")
    );
    // A forged revision ahead of etcd: the 504 names the token's revision.
    let ahead = crate::storage::ContinueToken::new(999_999_999, "default/b\u{0}").encode();
    let err = s.list(&continued(&ahead)).await.unwrap_err();
    assert_eq!(err.code(), 504);
    assert!(
        err.to_string().starts_with("Timeout: Too large resource version: 999999999, current: "),
        "{err}"
    );
    // Compacted: 410 with a token that goes on at the latest revision.
    s.put("default", "d", json!({})).await;
    s.memory.compact(s.memory.revision()).unwrap();
    let err = s.list(&continued(&token)).await.unwrap_err();
    let status = err.status();
    assert_eq!((status["code"].as_u64(), status["reason"].as_str()), (Some(410), Some("Expired")));
    assert!(err.to_string().starts_with("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response"));
    let fresh = status["metadata"]["continue"].as_str().unwrap();
    let decoded = crate::storage::ContinueToken::decode(fresh).unwrap();
    assert_eq!(decoded.rv, -1);
    let rest = s.list(&ListOptions { limit: 0, ..continued(fresh) }).await.unwrap();
    assert_eq!(names(&rest), ["default/b", "default/c", "default/d"]);
    // Malformed: 400 with kube's text.
    let err = s.list(&continued("%%%")).await.unwrap_err();
    assert_eq!(
        (err.code(), err.to_string().as_str()),
        (400, "invalid continue token: continue key is not valid: illegal base64 data at input byte 0")
    );
}

#[tokio::test]
async fn a_resource_version_the_cache_never_reaches_is_too_large() {
    let s = Setup::with(CacheConfig { fresh_timeout: Duration::from_millis(200), ..CacheConfig::default() })
        .await;
    s.put("default", "a", json!({})).await;
    let future = s.memory.revision() + 100;
    let err = s.list(&ListOptions { at: at(future, false), ..ListOptions::default() }).await.unwrap_err();
    assert_eq!(err.code(), 504);
    assert_eq!(
        err.to_string(),
        format!("Timeout: Too large resource version: {future}, current: {}", s.memory.revision())
    );
}

#[tokio::test]
async fn a_watch_from_a_revision_in_the_window_replays_what_followed_in_order() {
    let s = Setup::new().await;
    let from = s.put("default", "a", json!({"app": "v1"})).await;
    let modified = s.put("default", "a", json!({"app": "v2"})).await;
    let added = s.put("other", "b", json!({})).await;
    let deleted = s.delete("default", "a").await;
    s.caught_up().await;
    let mut watch = s.cacher.watch(spec(WatchStart::After(from), Filter::default())).unwrap();
    let initial: Vec<Seen> = watch.initial.iter().map(seen).collect();
    assert_eq!(
        initial,
        vec![
            ("MODIFIED", "default/a".into(), modified, json!("v2")),
            ("ADDED", "other/b".into(), added, Value::Null),
            // A deletion carries the last state, at the deletion's revision.
            ("DELETED", "default/a".into(), deleted, json!("v2")),
        ]
    );
    // Then what comes next, once.
    let later = s.put("default", "a", json!({"app": "v3"})).await;
    assert_eq!(next(&mut watch, 1).await, vec![("ADDED", "default/a".into(), later, json!("v3"))]);
    // From the current state: ADDED for each object, then the changes.
    let mut current = s.cacher.watch(spec(WatchStart::CurrentState, Filter::default())).unwrap();
    let initial: Vec<Seen> = current.initial.iter().map(seen).collect();
    assert_eq!(
        initial,
        vec![
            ("ADDED", "default/a".into(), later, json!("v3")),
            ("ADDED", "other/b".into(), added, Value::Null)
        ]
    );
    let gone = s.delete("other", "b").await;
    assert_eq!(next(&mut current, 1).await, vec![("DELETED", "other/b".into(), gone, Value::Null)]);
}

#[tokio::test]
async fn a_watch_from_before_the_window_is_expired() {
    let s = Setup::with(CacheConfig { window: 3, ..CacheConfig::default() }).await;
    let first = s.put("default", "a", json!({})).await;
    for i in 0..10 {
        s.put("default", "a", json!({"n": i.to_string()})).await;
    }
    s.caught_up().await;
    let err = s.cacher.watch(spec(WatchStart::After(first), Filter::default())).unwrap_err();
    assert_eq!(err.code(), 410);
    let latest = s.memory.revision();
    assert_eq!(err.to_string(), format!("too old resource version: {first} ({})", latest - 3));
    // The last three are still there.
    let watch = s.cacher.watch(spec(WatchStart::After(latest - 3), Filter::default())).unwrap();
    let revisions: Vec<i64> = watch.initial.iter().map(|d| seen(d).2).collect();
    assert_eq!(revisions, [latest - 2, latest - 1, latest]);
}

#[tokio::test]
async fn the_cache_relists_when_its_watch_resumes_after_a_compaction() {
    let s = Setup::with(CacheConfig { fresh_timeout: Duration::from_millis(300), ..CacheConfig::default() })
        .await;
    s.put("default", "a", json!({})).await;
    let before = s.put("default", "b", json!({})).await;
    s.caught_up().await;
    let mut watch = s.cacher.watch(spec(WatchStart::Now, Filter::default())).unwrap();
    let lists = s.storage_lists();
    // The cache's watch breaks; meanwhile objects change and the history it
    // would resume from is compacted.
    s.memory.break_watches();
    s.put("default", "c", json!({})).await;
    s.delete("default", "a").await;
    let compacted = s.memory.revision();
    s.memory.compact(compacted).unwrap();
    // A consistent list is right all along (from storage if the cache lags).
    let list = s.list(&ListOptions::default()).await.unwrap();
    assert_eq!(names(&list), ["default/b", "default/c"]);
    assert_eq!(list.resource_version, compacted);
    // The cache relists: the new state, a new window, its watchers ended.
    s.caught_up().await;
    assert!(s.storage_lists() > lists, "relisted");
    assert!(ends(&mut watch).await, "watchers are ended by a relist");
    let cached = s.list(&ListOptions { at: at(0, false), ..ListOptions::default() }).await.unwrap();
    assert_eq!(names(&cached), ["default/b", "default/c"]);
    let err = s.cacher.watch(spec(WatchStart::After(before), Filter::default())).unwrap_err();
    assert_eq!(err.code(), 410);
    // And it follows storage again.
    let mut watch = s.cacher.watch(spec(WatchStart::Now, Filter::default())).unwrap();
    let d = s.put("default", "d", json!({})).await;
    assert_eq!(next(&mut watch, 1).await, vec![("ADDED", "default/d".into(), d, Value::Null)]);
}

#[tokio::test]
async fn selectors_filter_lists_and_watches() {
    let s = Setup::new().await;
    s.put("ns1", "a", json!({"app": "web"})).await;
    s.put("ns1", "b", json!({"app": "db"})).await;
    s.put("ns2", "c", json!({"app": "web"})).await;
    s.caught_up().await;
    let list = |filter: Filter| ListOptions { filter, ..ListOptions::default() };
    assert_eq!(names(&s.list(&list(labels("app=web"))).await.unwrap()), ["ns1/a", "ns2/c"]);
    assert_eq!(names(&s.list(&list(labels("app!=web"))).await.unwrap()), ["ns1/b"]);
    let in_ns1 = Filter { namespace: Some("ns1".into()), ..labels("app=web") };
    assert_eq!(names(&s.list(&list(in_ns1)).await.unwrap()), ["ns1/a"]);
    let by_name =
        Filter { fields: Some(FieldSelector::parse("metadata.name=b").unwrap()), ..Filter::default() };
    assert_eq!(names(&s.list(&list(by_name.clone())).await.unwrap()), ["ns1/b"]);
    let by_ns = Filter {
        fields: Some(FieldSelector::parse("metadata.namespace!=ns1").unwrap()),
        ..Filter::default()
    };
    assert_eq!(names(&s.list(&list(by_ns)).await.unwrap()), ["ns2/c"]);
    // From storage too: pages filtered, with no count of what remains.
    let mut paged = ListOptions { limit: 2, ..list(labels("app=web")) };
    let mut all = Vec::new();
    loop {
        let page = s.list(&paged).await.unwrap();
        assert_eq!(page.remaining_item_count, None);
        all.extend(names(&page));
        match page.continue_token {
            Some(token) => paged.continue_token = Some(token),
            None => break,
        }
    }
    assert_eq!(all, ["ns1/a", "ns2/c"]);

    // A watch sees objects entering and leaving its selector as ADDED and
    // DELETED, and nothing of the others.
    let mut web = s.cacher.watch(spec(WatchStart::Now, labels("app=web"))).unwrap();
    let mut named = s.cacher.watch(spec(WatchStart::Now, by_name)).unwrap();
    let entered = s.put("ns1", "b", json!({"app": "web"})).await;
    let left = s.put("ns1", "a", json!({"app": "db"})).await;
    s.put("ns1", "a", json!({"app": "cache"})).await;
    let changed = s.put("ns2", "c", json!({"app": "web", "tier": "front"})).await;
    let gone = s.delete("ns1", "b").await;
    assert_eq!(
        next(&mut web, 4).await,
        vec![
            ("ADDED", "ns1/b".into(), entered, json!("web")),
            ("DELETED", "ns1/a".into(), left, json!("web")),
            ("MODIFIED", "ns2/c".into(), changed, json!("web")),
            ("DELETED", "ns1/b".into(), gone, json!("web")),
        ]
    );
    assert_eq!(
        next(&mut named, 2).await,
        vec![
            ("MODIFIED", "ns1/b".into(), entered, json!("web")),
            ("DELETED", "ns1/b".into(), gone, json!("web")),
        ]
    );
    // The initial state of a filtered watch is filtered too.
    let current = s.cacher.watch(spec(WatchStart::CurrentState, labels("app=web"))).unwrap();
    let initial: Vec<Seen> = current.initial.iter().map(seen).collect();
    assert_eq!(initial, vec![("ADDED", "ns2/c".into(), changed, json!("web"))]);
}

#[tokio::test]
async fn stopping_the_cache_ends_its_watchers_and_its_reflector() {
    let s = Setup::new().await;
    s.put("default", "a", json!({})).await;
    s.caught_up().await;
    let mut one = s.cacher.watch(spec(WatchStart::Now, Filter::default())).unwrap();
    let mut two = s.cacher.watch(spec(WatchStart::CurrentState, labels("app=web"))).unwrap();
    assert_eq!(s.cacher.watcher_count(), 2);
    s.cacher.stop();
    assert!(ends(&mut one).await && ends(&mut two).await);
    assert_eq!(s.cacher.watcher_count(), 0);
    // It no longer follows storage (once its reflector has run again: the
    // stop is noticed asynchronously).
    tokio::time::sleep(Duration::from_millis(50)).await;
    let seen_up_to = s.cacher.resource_version();
    s.put("default", "b", json!({})).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(s.cacher.resource_version(), seen_up_to);
    // A watcher dropped by its client unregisters itself.
    let s = Setup::new().await;
    let watch = s.cacher.watch(spec(WatchStart::Now, Filter::default())).unwrap();
    assert_eq!(s.cacher.watcher_count(), 1);
    drop(watch);
    assert_eq!(s.cacher.watcher_count(), 0);
}

#[tokio::test]
async fn a_live_watch_gets_every_change_in_revision_order() {
    let s = Setup::new().await;
    let mut watch = s.cacher.watch(spec(WatchStart::Now, Filter::default())).unwrap();
    let mut revisions = Vec::new();
    for i in 0..50 {
        revisions.push(s.put("default", &format!("o{}", i % 5), json!({})).await);
    }
    let got: Vec<i64> = next(&mut watch, 50).await.iter().map(|e| e.2).collect();
    assert_eq!(got, revisions);
    assert!(watch.initial.is_empty());
    assert_eq!(s.cacher.resource_version(), *revisions.last().unwrap());
}

#[tokio::test]
async fn a_selected_page_from_storage_is_filled_up_to_the_limit() {
    let s = Setup::new().await;
    s.put("ns1", "a", json!({"app": "web"})).await;
    s.put("ns1", "b", json!({"app": "db"})).await;
    s.put("ns2", "c", json!({"app": "web"})).await;
    let paged = ListOptions { limit: 2, filter: labels("app=web"), ..ListOptions::default() };
    let page = s.list(&paged).await.unwrap();
    assert_eq!(names(&page), ["ns1/a", "ns2/c"]);
    assert_eq!(page.continue_token, None);
}

#[tokio::test]
async fn a_watch_on_a_stopped_cache_ends_at_once() {
    let s = Setup::new().await;
    s.cacher.stop();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let late = s.cacher.watch(spec(WatchStart::CurrentState, Filter::default()));
    assert_eq!(late.err().map(|e| e.code()), Some(503), "a stopped cache takes no new watch");
}
