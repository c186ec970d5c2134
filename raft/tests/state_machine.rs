//! The state machine over the real store: proposals applied in one batch
//! reach the listener with their IDs and revisions, the applied position
//! survives a reopen, and a snapshot moves the whole store to another member.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use openraft::entry::RaftEntry;
use openraft::storage::{RaftSnapshotBuilder, RaftStateMachine};
use openraft::testing::{blank_ent, log_id, membership_ent};
use rtcd_proto::etcdserverpb::{PutRequest, RangeRequest};
use rtcd_raft::state_machine::{AppliedEntry, ApplyListener, StoreStateMachine};
use rtcd_raft::types::Entry;
use rtcd_raft::{Command, TypeConfig, codec};
use rtcd_store::{Store, StoreOptions, WriteRequest};

#[derive(Default)]
struct Outcomes(Mutex<Vec<(u64, i64)>>);

impl ApplyListener for Outcomes {
    fn applied(&self, entries: Vec<AppliedEntry>) {
        let mut seen = self.0.lock().unwrap();
        seen.extend(entries.into_iter().map(|e| (e.proposal, e.outcome.unwrap().revision)));
    }
}

fn put(index: u64, id: u64, key: &str) -> Entry {
    let req = WriteRequest::Put(PutRequest {
        key: Bytes::from(key.to_string()),
        value: "v".into(),
        ..Default::default()
    });
    Entry::new_normal(
        log_id::<TypeConfig>(1, 1, index),
        Command { proposal: codec::encode(id, req, &rtcd_store::Caller::Member) },
    )
}

fn open(dir: &std::path::Path, listener: Arc<dyn ApplyListener>) -> (Arc<Store>, StoreStateMachine) {
    let store =
        Arc::new(Store::open(dir.join("store"), StoreOptions { sync: false, ..Default::default() }).unwrap());
    let sm = StoreStateMachine::new(store.clone(), dir.join("snapshots"), listener).unwrap();
    (store, sm)
}

async fn apply(sm: &mut StoreStateMachine, entries: Vec<Entry>) {
    let items = entries.into_iter().map(|e| Ok((e, None)));
    sm.apply(futures_util::stream::iter(items)).await.unwrap();
}

fn keys(store: &Store) -> Vec<Bytes> {
    let all = RangeRequest {
        key: Bytes::from_static(b"\0"),
        range_end: Bytes::from_static(b"\0"),
        ..Default::default()
    };
    store.range(&all).unwrap().kvs.into_iter().map(|kv| kv.key).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn applies_in_batches_resumes_and_ships_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let outcomes = Arc::new(Outcomes::default());
    let voters = vec![BTreeSet::from([1, 2, 3])];
    {
        let (_, mut sm) = open(&dir.path().join("a"), outcomes.clone());
        let entries = vec![
            blank_ent::<TypeConfig>(1, 1, 1),
            put(2, 10, "a"),
            put(3, 11, "b"),
            membership_ent::<TypeConfig>(1, 1, 4, voters.clone()),
        ];
        apply(&mut sm, entries).await;
        assert_eq!(*outcomes.0.lock().unwrap(), vec![(10, 2), (11, 3)], "proposal IDs with their revisions");
    }
    // Reopened: the applied position and membership come back from the store.
    let (store_a, mut sm_a) = open(&dir.path().join("a"), Arc::new(()));
    let (last, membership) = sm_a.applied_state().await.unwrap();
    assert_eq!(last, Some(log_id::<TypeConfig>(1, 1, 4)));
    assert_eq!(membership.log_id(), &Some(log_id::<TypeConfig>(1, 1, 4)));
    apply(&mut sm_a, vec![put(5, 12, "c")]).await;

    let snapshot = sm_a.get_snapshot_builder().await.build_snapshot().await.unwrap();
    assert_eq!(snapshot.meta.last_log_id, Some(log_id::<TypeConfig>(1, 1, 5)));
    let (store_b, mut sm_b) = open(&dir.path().join("b"), Arc::new(()));
    apply(&mut sm_b, vec![put(1, 1, "stale")]).await;
    sm_b.install_snapshot(&snapshot.meta, snapshot.snapshot).await.unwrap();
    assert_eq!(keys(&store_b), keys(&store_a), "the follower's old state is gone");
    assert_eq!(store_b.revision().unwrap(), store_a.revision().unwrap());
    assert_eq!(sm_b.applied_state().await.unwrap(), sm_a.applied_state().await.unwrap());
    let current = sm_b.get_current_snapshot().await.unwrap().unwrap();
    assert_eq!(current.meta, snapshot.meta);
}

/// A committed entry this version cannot decode stops the state machine
/// (openraft then stops the member) instead of being skipped: nothing of
/// the batch is applied and the applied position does not move past it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undecodable_committed_entry_stops_the_state_machine() {
    let dir = tempfile::tempdir().unwrap();
    let (store, mut sm) = open(dir.path(), Arc::new(()));
    apply(&mut sm, vec![put(1, 1, "before")]).await;
    let garbage = Entry::new_normal(log_id::<TypeConfig>(1, 1, 3), Command { proposal: vec![0xff, 0xff] });
    let items = vec![put(2, 2, "same-batch"), garbage, put(4, 4, "after")].into_iter().map(|e| Ok((e, None)));
    let error = sm.apply(futures_util::stream::iter(items)).await.unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
    assert!(error.to_string().contains("cannot be decoded"), "{error}");
    assert_eq!(keys(&store), vec![Bytes::from("before")]);
    assert_eq!(sm.applied_state().await.unwrap().0, Some(log_id::<TypeConfig>(1, 1, 1)));
}
