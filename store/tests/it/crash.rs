//! Durability under `kill -9`: a child process applies batches (each one
//! synced, then acknowledged on stdout) until it is killed at an arbitrary
//! moment. The reopened store must hold exactly the batches up to its
//! applied mark (a prefix), every acknowledged batch among them.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use bytes::Bytes;
use proptest::prelude::RngExt;
use proptest::test_runner::TestRng;
use rtcd_proto::etcdserverpb::{
    CompactionRequest, Compare, DeleteRangeRequest, LeaseGrantRequest, LeaseRevokeRequest, PutRequest,
    RangeRequest, RequestOp, TxnRequest, compare, request_op::Request,
};
use rtcd_store::{AppliedMark, Store, StoreOptions, WriteRequest};

use crate::model::Model;

const CHILD_ENV: &str = "RTCD_CRASH_CHILD_DIR";
const TEST_NAME: &str = "crash::killed_writer_reopens_at_a_batch_boundary";

fn b(s: String) -> Bytes {
    Bytes::from(s)
}

/// Batch `i` of the deterministic workload: puts (some on leases), a
/// compare-and-set txn, range deletes, lease churn and compactions.
fn batch(i: u64) -> Vec<WriteRequest> {
    let key = |n: u64| b(format!("key/{:03}", n % 40));
    let lease = (i / 10 % 3) as i64 + 1;
    let mut reqs = vec![WriteRequest::Put(PutRequest {
        key: key(i),
        value: b(format!("value {i} {}", "x".repeat((i % 7 * 50) as usize))),
        lease: if i.is_multiple_of(5) { lease } else { 0 },
        ..Default::default()
    })];
    reqs.push(WriteRequest::Txn(TxnRequest {
        compare: vec![Compare {
            key: key(i + 3),
            target: compare::CompareTarget::Version as i32,
            result: compare::CompareResult::Greater as i32,
            target_union: Some(compare::TargetUnion::Version(1)),
            ..Default::default()
        }],
        success: vec![RequestOp {
            request: Some(Request::RequestDeleteRange(DeleteRangeRequest {
                key: key(i + 3),
                ..Default::default()
            })),
        }],
        failure: vec![RequestOp {
            request: Some(Request::RequestPut(PutRequest {
                key: key(i + 3),
                value: b(format!("txn {i}")),
                ..Default::default()
            })),
        }],
    }));
    if i.is_multiple_of(10) {
        reqs.push(WriteRequest::LeaseRevoke(LeaseRevokeRequest { id: lease }));
        reqs.push(WriteRequest::LeaseGrant(LeaseGrantRequest { id: lease, ttl: 30 }));
    }
    if i.is_multiple_of(13) {
        reqs.push(WriteRequest::DeleteRange(DeleteRangeRequest {
            key: b("key/01".into()),
            range_end: b("key/02".into()),
            prev_kv: true,
        }));
    }
    if i.is_multiple_of(25) {
        // Revision grows by about three per batch: keep ~30 batches of history.
        reqs.push(WriteRequest::Compact(CompactionRequest {
            revision: (i as i64) * 3 - 90,
            physical: false,
        }));
    }
    reqs
}

fn options() -> StoreOptions {
    StoreOptions { sync: true, ..Default::default() }
}

/// The child: continue the workload after the applied mark, forever.
fn run_child(dir: &str) {
    let store = Store::open(dir, options()).expect("child opens store");
    let mut i = store.applied().expect("applied").index + 1;
    let mut out = std::io::stdout().lock();
    loop {
        store.apply(&batch(i), AppliedMark { index: i, context: vec![] }).expect("apply");
        writeln!(out, "applied {i}").and_then(|_| out.flush()).expect("ack");
        i += 1;
    }
}

/// The model's state after batches `1..=n`.
fn model_after(n: u64) -> Model {
    let mut model = Model::new();
    for i in 1..=n {
        for req in batch(i) {
            // Failed requests (revoking a lease not granted yet, compacting
            // too far back) change nothing in the model or the store.
            let _ = model.apply(&req);
        }
    }
    model
}

#[test]
fn killed_writer_reopens_at_a_batch_boundary() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        run_child(&dir);
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut rng = TestRng::deterministic_rng(proptest::test_runner::RngAlgorithm::ChaCha);
    let mut acknowledged = 0;
    for round in 0..4 {
        let mut child = Command::new(std::env::current_exe().expect("test binary"))
            .args(["--exact", TEST_NAME, "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn writer");
        let stdout = child.stdout.take().expect("child stdout");
        let kill_after: u32 = rng.random_range(20..150);
        let mut seen = 0;
        for line in BufReader::new(stdout).lines() {
            let line = line.expect("read ack");
            if let Some(n) = line.strip_prefix("applied ") {
                acknowledged = n.parse().expect("ack number");
                seen += 1;
                if seen == kill_after {
                    break;
                }
            }
        }
        // SIGKILL lands while the child is in the middle of a later batch.
        child.kill().expect("kill -9");
        child.wait().expect("reap");

        let store = Store::open(dir.path(), options()).expect("reopen after kill");
        let applied = store.applied().expect("applied").index;
        assert!(applied >= acknowledged, "round {round}: acknowledged {acknowledged}, store has {applied}");
        let model = model_after(applied);
        assert_eq!(store.revision().ok(), Some(model.rev()), "round {round}");
        let all = RangeRequest { key: b("\0".into()), range_end: b("\0".into()), ..Default::default() };
        for rev in model.compacted.max(1)..=model.rev() {
            let r = RangeRequest { revision: rev, ..all.clone() };
            assert_eq!(store.range(&r), model.range(&r), "round {round}, revision {rev}");
        }
        let from = model.compacted.max(1);
        assert_eq!(store.history(from, usize::MAX).map(|h| h.events), model.history(from));
        assert_eq!(
            store.leases().expect("leases").into_iter().map(|l| l.id).collect::<Vec<_>>(),
            model.lease_ids(),
            "round {round}"
        );
    }
}
