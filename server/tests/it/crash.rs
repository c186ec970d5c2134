//! An acknowledged write survives `kill -9`: concurrent writers put keys, the
//! server is SIGKILLed while writes are in flight, restarted on the same data,
//! and every acknowledged key must be there with its value.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use rtcd_proto::etcdserverpb::{PutRequest, RangeRequest, kv_client::KvClient};
use tonic::transport::Channel;

use crate::harness::{Kind, start};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_puts_survive_sigkill() {
    let mut member = start(Kind::Rtcd, "crash");
    let channel = Channel::from_shared(member.client_url.clone()).unwrap().connect().await.unwrap();
    let acked: Arc<Mutex<Vec<u32>>> = Arc::default();
    // Set before the kill so no writer starts a new put against the restarted server.
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = tokio::task::JoinSet::new();
    for w in 0..16u32 {
        let (mut kv, acked, stop) = (KvClient::new(channel.clone()), acked.clone(), stop.clone());
        writers.spawn(async move {
            for i in 0..10_000u32 {
                let n = w * 10_000 + i;
                let put = PutRequest {
                    key: Bytes::from(format!("crash/{n:06}")),
                    value: Bytes::from(format!("v{n}")),
                    ..Default::default()
                };
                if stop.load(Ordering::SeqCst) || kv.put(put).await.is_err() {
                    return; // the server is gone
                }
                acked.lock().unwrap().push(n);
            }
        });
    }
    // Let a few hundred writes land, then kill with writes in flight.
    while acked.lock().unwrap().len() < 300 {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    stop.store(true, Ordering::SeqCst);
    tokio::task::block_in_place(|| member.kill_and_restart());
    while writers.join_next().await.is_some() {}
    let acked = acked.lock().unwrap().clone();

    let channel = Channel::from_shared(member.client_url.clone()).unwrap().connect().await.unwrap();
    let all =
        RangeRequest { key: Bytes::from("crash/"), range_end: Bytes::from("crash0"), ..Default::default() };
    let stored = KvClient::new(channel).range(all).await.unwrap().into_inner();
    let found: std::collections::HashMap<Bytes, Bytes> =
        stored.kvs.into_iter().map(|kv| (kv.key, kv.value)).collect();
    assert!(acked.len() >= 300);
    for n in &acked {
        let key = Bytes::from(format!("crash/{n:06}"));
        assert_eq!(found.get(&key), Some(&Bytes::from(format!("v{n}"))), "acknowledged put {n} lost");
    }
    // The one put each writer had in flight at the kill may or may not have
    // landed; nothing else can exist.
    assert!(
        found.len() >= acked.len() && found.len() <= acked.len() + 16,
        "{} vs {}",
        found.len(),
        acked.len()
    );
}
