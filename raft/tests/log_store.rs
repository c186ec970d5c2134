//! The RocksDB log beyond openraft's suite: group commit of a leader's own
//! entries (many appends, fewer WAL syncs, every callback answered), a
//! follower's appends durable before their callback, and durability across
//! reopen of entries, vote, truncation and purge.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use openraft::entry::RaftEntry;
use openraft::storage::{IOFlushed, RaftLogReader, RaftLogStorage};
use openraft::testing::log_id;
use openraft::type_config::TypeConfigExt;
use rtcd_raft::log_store::RocksLogStore;
use rtcd_raft::types::{Entry, Vote};
use rtcd_raft::{Command, TypeConfig};

/// The member whose log these tests write, leading term 1...
const LEADER: u64 = 1;
/// ...and another member, as a follower of `LEADER` opens its log.
const FOLLOWER: u64 = 2;

fn entry(index: u64) -> Entry {
    Entry::new_normal(
        log_id::<TypeConfig>(1, LEADER, index),
        Command { proposal: index.to_be_bytes().to_vec() },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_share_syncs_and_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    const APPENDS: u64 = 300;
    {
        let mut log = RocksLogStore::open(dir.path(), LEADER).unwrap();
        let mut flushed = Vec::new();
        for index in 1..=APPENDS {
            let (tx, rx) = TypeConfig::oneshot();
            log.append([entry(index)], IOFlushed::signal(tx)).await.unwrap();
            flushed.push(rx);
        }
        for rx in flushed {
            rx.await.unwrap().unwrap();
        }
        let syncs = log.append_syncs();
        assert!((1..APPENDS).contains(&syncs), "{syncs} syncs for {APPENDS} appends: no grouping");

        log.save_vote(&Vote::new(3, 2)).await.unwrap();
        log.truncate_after(Some(log_id::<TypeConfig>(1, 1, 250))).await.unwrap();
        log.purge(log_id::<TypeConfig>(1, 1, 10)).await.unwrap();
    }
    let mut log = RocksLogStore::open(dir.path(), LEADER).unwrap();
    let state = log.get_log_state().await.unwrap();
    assert_eq!(state.last_log_id, Some(log_id::<TypeConfig>(1, 1, 250)));
    assert_eq!(state.last_purged_log_id, Some(log_id::<TypeConfig>(1, 1, 10)));
    assert_eq!(log.read_vote().await.unwrap(), Some(Vote::new(3, 2)));
    let entries = log.try_get_log_entries(0..=u64::MAX - 1).await.unwrap();
    assert_eq!(entries.len(), 240, "11..=250 remain");
    assert_eq!(entries.first().unwrap(), &entry(11));
    assert_eq!(entries.last().unwrap(), &entry(250));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_followers_appends_are_durable_when_answered() {
    let dir = tempfile::tempdir().unwrap();
    const APPENDS: u64 = 50;
    {
        let mut log = RocksLogStore::open(dir.path(), FOLLOWER).unwrap();
        for index in 1..=APPENDS {
            let (tx, mut rx) = TypeConfig::oneshot();
            log.append([entry(index)], IOFlushed::signal(tx)).await.unwrap();
            // Nothing else is queued, so the append synced before returning.
            let answered = rx.try_recv().expect("answered before append returned");
            answered.unwrap();
        }
        assert_eq!(log.append_syncs(), APPENDS, "one sync per append, none left to the syncer");
    }
    let mut log = RocksLogStore::open(dir.path(), FOLLOWER).unwrap();
    let state = log.get_log_state().await.unwrap();
    assert_eq!(state.last_log_id, Some(log_id::<TypeConfig>(1, LEADER, APPENDS)));
    let entries = log.try_get_log_entries(1..=APPENDS).await.unwrap();
    assert_eq!(entries, (1..=APPENDS).map(entry).collect::<Vec<_>>());
}
