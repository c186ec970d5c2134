//! openraft's storage conformance suite against rtcd's RocksDB log and the
//! state machine over the real MVCC store.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use openraft::StorageError;
use openraft::testing::log::{StoreBuilder, Suite};
use rtcd_raft::TypeConfig;
use rtcd_raft::log_store::RocksLogStore;
use rtcd_raft::state_machine::StoreStateMachine;
use rtcd_store::{Store, StoreOptions};
use tempfile::TempDir;

struct Builder;

impl StoreBuilder<TypeConfig, RocksLogStore, StoreStateMachine, TempDir> for Builder {
    async fn build(&self) -> Result<(TempDir, RocksLogStore, StoreStateMachine), StorageError<TypeConfig>> {
        let dir = tempfile::tempdir().unwrap();
        let log = RocksLogStore::open(dir.path().join("log"), 1).unwrap();
        let options = StoreOptions { sync: false, ..Default::default() };
        let store = Arc::new(Store::open(dir.path().join("store"), options).unwrap());
        let sm = StoreStateMachine::new(store, dir.path().join("snapshots"), Arc::new(())).unwrap();
        Ok((dir, log, sm))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rocks_log_and_store_state_machine_pass_openraft_suite() {
    Suite::test_all(Builder).await.unwrap();
}
