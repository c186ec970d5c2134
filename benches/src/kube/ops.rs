//! The four operations, as kube-apiserver's etcd3 store sends them, and
//! what they measured.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use super::stats::Stats;
use crate::Target;
use crate::load;
use etcd_client::{Client, Compare, CompareOp, Error, GetOptions, Txn, TxnOp, TxnOpResponse, TxnResponse};

/// A request unanswered this long is an error, not a hang.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// GuaranteedUpdate retries for as long as its context allows; this bounds
/// a pathological conflict storm instead.
const MAX_ATTEMPTS: u32 = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Create,
    Update,
    List,
    Get,
}

impl Op {
    /// `--mix`'s order.
    pub const ALL: [Op; 4] = [Op::Create, Op::Update, Op::List, Op::Get];

    pub fn name(self) -> &'static str {
        match self {
            Op::Create => "create",
            Op::Update => "update",
            Op::List => "list",
            Op::Get => "get",
        }
    }
}

/// What every operation needs to know: the keys, the values, and the
/// revision each seeded object was last seen at.
#[derive(Debug)]
pub struct Plan {
    /// The resource prefix, with its trailing `/` (kube-apiserver lists and
    /// watches `/registry/<resource>/`).
    pub prefix: String,
    pub objects: u64,
    pub namespaces: u64,
    /// Tags the names of the objects this run creates.
    pub run: u32,
    pub val_size: usize,
    pub page_size: u64,
    pub update_get: bool,
    /// Per seeded object, the highest mod revision seen (0: unknown): the
    /// stand-in for the watch cache's copy that GuaranteedUpdate starts from.
    pub cache: Vec<AtomicI64>,
}

impl Plan {
    /// Seeded object `i`, in namespace `i mod namespaces`.
    pub fn object_key(&self, i: u64) -> String {
        format!("{}ns-{:04}/pod-{i:08}", self.prefix, i % self.namespaces.max(1))
    }

    /// The object request `n` creates.
    fn new_key(&self, n: u64) -> String {
        let namespace = crate::mix(n ^ 0x5555_5555_5555_5555) % self.namespaces.max(1);
        format!("{}ns-{namespace:04}/new-{:08x}-{n:08}", self.prefix, self.run)
    }

    /// The seeded object request `n` updates or reads (a different hash of
    /// `n` from the one that chose the operation).
    fn target(&self, n: u64) -> u64 {
        crate::mix(!n) % self.objects.max(1)
    }

    /// A JSON-ish object of at least `val_size` bytes; `generation` makes
    /// every update's value differ from the last (an identical value is no
    /// write for GuaranteedUpdate).
    fn value(&self, key: &str, generation: u64) -> Vec<u8> {
        let mut value = format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"key":"{key}","generation":{generation}}},"spec":{{"padding":""#
        )
        .into_bytes();
        let tail = br#""}}"#;
        let padding = self.val_size.saturating_sub(value.len() + tail.len());
        value.resize(value.len() + padding, b'x');
        value.extend_from_slice(tail);
        value
    }

    fn cached(&self, i: u64) -> Result<&AtomicI64, Error> {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.cache.get(i))
            .ok_or_else(|| fail(format!("object {i} is not one of the {}", self.objects)))
    }
}

/// Request `n`: `op`, timed whole (a list's pages, an update's retries).
pub async fn execute(client: Client, plan: &Plan, stats: &Stats, op: Op, n: u64) -> Result<(), Error> {
    let began = Instant::now();
    match op {
        Op::Create => create(client, plan, stats, n).await?,
        Op::Update => update(client, plan, stats, n).await?,
        Op::List => list(client, plan, stats).await?,
        Op::Get => {
            let key = plan.object_key(plan.target(n));
            read(client, &key).await?;
        }
    }
    stats.record(op, began.elapsed());
    Ok(())
}

/// Creates every seeded object (concurrently, untimed) with kube's Create
/// plus an else branch, so that objects an earlier run left are read
/// instead; either way the cache learns their revisions.
pub async fn seed(target: &Target, plan: &Arc<Plan>) -> Result<(), String> {
    let request = {
        let plan = plan.clone();
        move |client, i| {
            let plan = plan.clone();
            async move { seed_one(client, &plan, i).await }
        }
    };
    let outcome =
        load::run(&target.shape(plan.objects, 0), request, |_| {}).await.map_err(|e| e.to_string())?;
    if outcome.errors > 0 {
        return Err(format!(
            "seeding: {} of {} creates failed: {:?}",
            outcome.errors, plan.objects, outcome.error_samples
        ));
    }
    Ok(())
}

async fn seed_one(mut client: Client, plan: &Plan, i: u64) -> Result<(), Error> {
    let key = plan.object_key(i);
    let value = plan.value(&key, 0);
    let txn = Txn::new()
        .when([Compare::mod_revision(key.clone(), CompareOp::Equal, 0)])
        .and_then([TxnOp::put(key.clone(), value, None)])
        .or_else([TxnOp::get(key, None)]);
    let response = timed(client.txn(txn)).await?;
    let revision = if response.succeeded() {
        response.header().map_or(0, |h| h.revision())
    } else {
        else_range(&response)?.unwrap_or(0)
    };
    plan.cached(i)?.fetch_max(revision, Ordering::Relaxed);
    Ok(())
}

/// The revision now, as kube-apiserver's GetCurrentResourceVersion reads it:
/// a linearizable `Range(prefix, limit 1)`.
pub async fn current_revision(mut client: Client, prefix: &str) -> Result<i64, String> {
    let options = GetOptions::new().with_prefix().with_limit(1).with_keys_only();
    let response =
        timed(client.get(prefix, Some(options))).await.map_err(|e| format!("reading the revision: {e}"))?;
    response.header().map(|h| h.revision()).ok_or_else(|| "a Range response without a header".into())
}

/// kube's Create: `Txn{MOD(key) == 0 → Put key}`, nothing else. A failed
/// compare is AlreadyExists, an answer rather than an error.
async fn create(mut client: Client, plan: &Plan, stats: &Stats, n: u64) -> Result<(), Error> {
    let key = plan.new_key(n);
    let value = plan.value(&key, 0);
    let txn = Txn::new()
        .when([Compare::mod_revision(key.clone(), CompareOp::Equal, 0)])
        .and_then([TxnOp::put(key, value, None)]);
    let counter =
        if timed(client.txn(txn)).await?.succeeded() { &stats.created } else { &stats.already_existed };
    counter.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// GuaranteedUpdate: from the cached revision (or a Get), `Txn{MOD(key) ==
/// rev → Put new} else {Range key}`; a failed compare retries from the
/// value the else branch returned.
async fn update(mut client: Client, plan: &Plan, stats: &Stats, n: u64) -> Result<(), Error> {
    let i = plan.target(n);
    let key = plan.object_key(i);
    let cached = plan.cached(i)?;
    let mut revision = match cached.load(Ordering::Relaxed) {
        known if known > 0 && !plan.update_get => known,
        _ => read(client.clone(), &key).await?,
    };
    let value = plan.value(&key, n + 1);
    for _ in 0..MAX_ATTEMPTS {
        let txn = Txn::new()
            .when([Compare::mod_revision(key.clone(), CompareOp::Equal, revision)])
            .and_then([TxnOp::put(key.clone(), value.clone(), None)])
            .or_else([TxnOp::get(key.clone(), None)]);
        let response = timed(client.txn(txn)).await?;
        if response.succeeded() {
            stats.updated.fetch_add(1, Ordering::Relaxed);
            if let Some(header) = response.header() {
                cached.fetch_max(header.revision(), Ordering::Relaxed);
            }
            return Ok(());
        }
        stats.conflicts.fetch_add(1, Ordering::Relaxed);
        revision = else_range(&response)?.ok_or_else(|| fail(format!("update: {key} not found")))?;
        cached.fetch_max(revision, Ordering::Relaxed);
    }
    Err(fail(format!("update: {key} conflicted {MAX_ATTEMPTS} times in a row")))
}

/// kube's Get: `Range(key, limit 1)` at the current revision; the object's
/// mod revision.
async fn read(mut client: Client, key: &str) -> Result<i64, Error> {
    let response = timed(client.get(key, Some(GetOptions::new().with_limit(1)))).await?;
    response.kvs().first().map(|kv| kv.mod_revision()).ok_or_else(|| fail(format!("get: {key} not found")))
}

/// kube's GetList over the resource prefix: `Range[prefix, prefix end)` with
/// a limit; the next page from the last key + `\0` at the first page's
/// revision, until `more` is false. All the pages must add up to the first
/// page's `count`, or the pages were not one consistent snapshot.
async fn list(mut client: Client, plan: &Plan, stats: &Stats) -> Result<(), Error> {
    let end = prefix_end(plan.prefix.as_bytes());
    let limit = i64::try_from(plan.page_size).unwrap_or(i64::MAX);
    let mut key = plan.prefix.as_bytes().to_vec();
    let mut snapshot: Option<(i64, i64)> = None; // (revision, count)
    let (mut pages, mut listed) = (0u64, 0i64);
    loop {
        let mut options = GetOptions::new().with_range(end.clone()).with_limit(limit);
        if let Some((revision, _)) = snapshot {
            options = options.with_revision(revision);
        }
        let response = timed(client.get(key.clone(), Some(options))).await?;
        pages += 1;
        listed += response.kvs().len() as i64;
        if snapshot.is_none() {
            let revision = response.header().map(|h| h.revision()).ok_or_else(|| fail("list: no header"))?;
            snapshot = Some((revision, response.count()));
        }
        if !response.more() {
            break;
        }
        // A page that says there is more must end somewhere to go on from.
        let last = response.kvs().last().ok_or_else(|| fail("list: an empty page with more"))?;
        key = last.key().to_vec();
        key.push(0);
    }
    let count = snapshot.map_or(0, |(_, count)| count);
    if listed != count {
        return Err(fail(format!(
            "list: {listed} keys in {pages} pages, where the first page counted {count}"
        )));
    }
    stats.pages.fetch_add(pages, Ordering::Relaxed);
    stats.listed.fetch_add(listed as u64, Ordering::Relaxed);
    Ok(())
}

/// The end of the range of keys that start with `prefix`.
fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0] // all keys
}

/// The mod revision in a failed Txn's else branch (one Range); `None` if
/// the key is gone.
fn else_range(response: &TxnResponse) -> Result<Option<i64>, Error> {
    // etcd-client's `op_responses` unwraps each op's response: a server
    // that sends an empty one must not bring the whole benchmark down.
    let ops = std::panic::catch_unwind(AssertUnwindSafe(|| response.op_responses()))
        .map_err(|_| fail("a Txn response op without its response"))?;
    match ops.first() {
        Some(TxnOpResponse::Get(range)) => Ok(range.kvs().first().map(|kv| kv.mod_revision())),
        _ => Err(fail("a failed Txn without its else branch's Range response")),
    }
}

async fn timed<T>(request: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
    tokio::time::timeout(REQUEST_TIMEOUT, request)
        .await
        .map_err(|_| fail(format!("no response within {REQUEST_TIMEOUT:?}")))?
}

fn fail(text: impl Into<String>) -> Error {
    Error::Internal(text.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        Plan {
            prefix: "/registry/pods/".into(),
            objects: 10,
            namespaces: 3,
            run: 0xabc,
            val_size: 300,
            page_size: 500,
            update_get: false,
            cache: (0..10).map(|_| AtomicI64::new(0)).collect(),
        }
    }

    #[test]
    fn keys_follow_kube_apiservers_layout() {
        let plan = plan();
        assert_eq!(plan.object_key(4), "/registry/pods/ns-0001/pod-00000004");
        assert!(plan.new_key(7).starts_with("/registry/pods/ns-000"));
        assert!(plan.new_key(7).ends_with("/new-00000abc-00000007"));
        assert!(plan.target(12345) < 10);
        assert!(plan.cached(10).is_err());
        assert_eq!(prefix_end(b"/registry/pods/"), b"/registry/pods0");
        assert_eq!(prefix_end(b"a\xff"), b"b");
    }

    #[test]
    fn values_are_padded_json() {
        let plan = plan();
        let value = plan.value("/registry/pods/ns-0000/pod-00000000", 7);
        assert_eq!(value.len(), 300);
        let parsed: Result<serde_json::Value, _> = serde_json::from_slice(&value);
        assert!(parsed.is_ok_and(|v| v["metadata"]["generation"] == 7));
    }
}
