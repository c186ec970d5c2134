//! The Lock and Election services through the `etcd-client` crate, against
//! real etcd and rtcd: the same session (keys, revisions, values, who waits
//! for whom, what an observer sees, errors) must give the same answers.

use std::time::Duration;

use etcd_client::{
    Client, GetOptions, LeaderKey, LeaseGrantOptions, LockOptions, ObserveStream, ProclaimOptions,
    ResignOptions,
};
use tokio::task::JoinHandle;

use crate::etcd_client::error;
use crate::harness::{Kind, start};

/// Lease IDs given explicitly, so lock and candidate keys (which carry the
/// lease in hex) are the same on both servers.
const ALICE: i64 = 0x1a11ce;
const BOB: i64 = 0xb0b;

fn rev(header: Option<&etcd_client::ResponseHeader>) -> i64 {
    header.map_or(0, |h| h.revision())
}

fn leader_key(k: &LeaderKey) -> String {
    format!("{}@{} lease {:x}", k.key_str().unwrap(), k.rev(), k.lease())
}

/// Whether `task`, a lock or campaign that must queue behind another, is
/// still waiting once its key is queued (`queued` keys under `prefix`), and
/// a moment later.
async fn still_waiting<T>(c: &mut Client, prefix: &str, queued: i64, task: &JoinHandle<T>) -> bool {
    for _ in 0..200 {
        let count = GetOptions::new().with_prefix().with_count_only();
        if c.get(prefix, Some(count)).await.unwrap().count() >= queued {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    !task.is_finished()
}

/// The observer's next message: the leader's key and value, and the header's revision.
async fn seen(observer: &mut ObserveStream) -> String {
    let next = observer.message();
    let r = tokio::time::timeout(Duration::from_secs(10), next).await.unwrap().unwrap().unwrap();
    let kv = r.kv().unwrap();
    format!("observed {}={} at {}", kv.key_str().unwrap(), kv.value_str().unwrap(), rev(r.header()))
}

async fn lock_session(c: &mut Client) -> Vec<String> {
    let mut out = Vec::new();
    let lock = |lease| Some(LockOptions::new().with_lease(lease));
    let held = c.lock("jobs", lock(ALICE)).await.unwrap();
    let alice_key = held.key().to_vec();
    out.push(format!("alice holds {} at {}", String::from_utf8_lossy(&alice_key), rev(held.header())));
    // The same lease asks again: it holds the lock already.
    let again = c.lock("jobs", lock(ALICE)).await.unwrap();
    out.push(format!("alice again {} at {}", String::from_utf8_lossy(again.key()), rev(again.header())));

    let mut other = c.clone();
    let bob = tokio::spawn(async move { other.lock("jobs", lock(BOB)).await });
    out.push(format!("bob waits while alice holds: {}", still_waiting(c, "jobs/", 2, &bob).await));
    let released = c.unlock(alice_key).await.unwrap();
    out.push(format!("alice unlocked at {}", rev(released.header())));
    let got = bob.await.unwrap().unwrap();
    out.push(format!("bob holds {} at {}", String::from_utf8_lossy(got.key()), rev(got.header())));
    // Revoking bob's lease releases the lock too: the next caller gets it at once.
    c.lease_revoke(BOB).await.unwrap();
    let next = c.lock("jobs", lock(ALICE)).await.unwrap();
    out.push(format!("after bob's lease went, alice holds at {}", rev(next.header())));
    c.unlock(next.key().to_vec()).await.unwrap();

    out.push(c.lock("jobs", lock(0x5eed)).await.map_or_else(error, |_| "locked".into()));
    out.push(c.unlock("").await.map_or_else(error, |_| "unlocked".into()));
    let left = c.get("jobs/", Some(GetOptions::new().with_prefix().with_keys_only())).await.unwrap();
    out.push(format!("lock keys left {}", left.kvs().len()));

    // Without a lease the service grants one of 60 s that nobody keeps alive.
    let orphan = c.lock("once", None).await.unwrap();
    let key = String::from_utf8_lossy(orphan.key()).into_owned();
    let lease = i64::from_str_radix(key.trim_start_matches("once/"), 16).unwrap();
    let ttl = c.lease_time_to_live(lease, None).await.unwrap();
    out.push(format!("lease-less lock: granted ttl {}", ttl.granted_ttl()));
    out
}

async fn election_session(c: &mut Client) -> Vec<String> {
    let mut out = Vec::new();
    out.push(c.leader("pick").await.map_or_else(error, |_| "a leader".into()));
    let won = c.campaign("pick", "alice", ALICE).await.unwrap();
    let alice = won.leader().unwrap().clone();
    out.push(format!("alice leads {} at {}", leader_key(&alice), rev(won.header())));

    let mut observer = c.observe("pick").await.unwrap();
    out.push(seen(&mut observer).await);

    let mut other = c.clone();
    let bob = tokio::spawn(async move { other.campaign("pick", "bob", BOB).await });
    out.push(format!("bob waits while alice leads: {}", still_waiting(c, "pick/", 2, &bob).await));

    let as_alice = || Some(ProclaimOptions::new().with_leader(alice.clone()));
    let said = c.proclaim("alice, again", as_alice()).await.unwrap();
    out.push(format!("alice proclaimed at {}", rev(said.header())));
    out.push(seen(&mut observer).await);
    let leader = c.leader("pick").await.unwrap();
    let kv = leader.kv().unwrap();
    out.push(format!(
        "leader {}={} at {}",
        kv.key_str().unwrap(),
        kv.value_str().unwrap(),
        rev(leader.header())
    ));
    // Campaigning again with the same lease keeps the place, with the new value.
    let again = c.campaign("pick", "alice, third", ALICE).await.unwrap();
    out.push(format!("alice again {} at {}", leader_key(again.leader().unwrap()), rev(again.header())));
    out.push(seen(&mut observer).await);

    let resigned = c.resign(Some(ResignOptions::new().with_leader(alice.clone()))).await.unwrap();
    out.push(format!("alice resigned at {}", rev(resigned.header())));
    let bob_won = bob.await.unwrap().unwrap();
    out.push(format!("bob leads {} at {}", leader_key(bob_won.leader().unwrap()), rev(bob_won.header())));
    out.push(seen(&mut observer).await);

    out.push(c.proclaim("stale", as_alice()).await.map_or_else(error, |_| "proclaimed".into()));
    out.push(c.proclaim("nobody", None).await.map_or_else(error, |_| "proclaimed".into()));
    out.push(c.resign(None).await.map_or_else(error, |_| "resigned".into()));
    // Resigning with a stale key changes nothing: bob still leads.
    let stale = c.resign(Some(ResignOptions::new().with_leader(alice.clone()))).await.unwrap();
    out.push(format!("stale resign at {}", rev(stale.header())));
    let leader = c.leader("pick").await.unwrap();
    out.push(format!("leader {}", leader.kv().unwrap().value_str().unwrap()));

    // Bob's lease ends: no leader until carol campaigns, and the observer
    // sees her.
    c.lease_revoke(BOB).await.unwrap();
    out.push(c.leader("pick").await.map_or_else(error, |_| "a leader".into()));
    let carol = c.lease_grant(30, Some(LeaseGrantOptions::new().with_id(0xca401))).await.unwrap();
    let won = c.campaign("pick", "carol", carol.id()).await.unwrap();
    out.push(format!("carol leads {} at {}", leader_key(won.leader().unwrap()), rev(won.header())));
    out.push(seen(&mut observer).await);
    out
}

async fn session(url: &str) -> Vec<String> {
    let mut c = Client::connect([url], None).await.unwrap();
    for id in [ALICE, BOB] {
        c.lease_grant(30, Some(LeaseGrantOptions::new().with_id(id))).await.unwrap();
    }
    let mut out = lock_session(&mut c).await;
    c.lease_grant(30, Some(LeaseGrantOptions::new().with_id(BOB))).await.unwrap();
    out.extend(election_session(&mut c).await);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lock_and_election_answer_as_etcds() {
    let etcd = start(Kind::Etcd, "recipes");
    let rtcd = start(Kind::Rtcd, "recipes");
    let theirs = session(&etcd.client_url).await;
    let ours = session(&rtcd.client_url).await;
    for (step, (want, got)) in theirs.iter().zip(&ours).enumerate() {
        assert_eq!(got, want, "step {step}");
    }
    assert_eq!(ours.len(), theirs.len());
    // The session exercised what it meant to (the same on both servers).
    for expected in [
        "bob waits while alice holds: true",
        "bob waits while alice leads: true",
        "error Unknown: election: no leader",
        "error Unknown: election: not leader",
        "lease-less lock: granted ttl 60",
    ] {
        assert!(ours.iter().any(|line| line == expected), "{expected:?} not in {ours:#?}");
    }
}

/// A caller that goes away while queued for a lock leaves no key behind
/// (it would hold up every later caller until its lease ended).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_lock_wait_leaves_no_key() {
    let rtcd = start(Kind::Rtcd, "abandon");
    let mut c = Client::connect([rtcd.client_url.as_str()], None).await.unwrap();
    for id in [ALICE, BOB] {
        c.lease_grant(30, Some(LeaseGrantOptions::new().with_id(id))).await.unwrap();
    }
    let held = c.lock("jobs", Some(LockOptions::new().with_lease(ALICE))).await.unwrap();
    let mut other = c.clone();
    let waiting =
        tokio::spawn(async move { other.lock("jobs", Some(LockOptions::new().with_lease(BOB))).await });
    assert!(still_waiting(&mut c, "jobs/", 2, &waiting).await, "bob must queue behind alice");
    let keys = || GetOptions::new().with_prefix().with_keys_only();
    assert_eq!(c.get("jobs/", Some(keys())).await.unwrap().kvs().len(), 2, "bob queued a key");
    waiting.abort();
    let mut left = 2;
    for _ in 0..50 {
        left = c.get("jobs/", Some(keys())).await.unwrap().kvs().len();
        if left == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(left, 1, "bob's key must go when bob does");
    c.unlock(held.key().to_vec()).await.unwrap();
    let next = c.lock("jobs", Some(LockOptions::new().with_lease(BOB))).await.unwrap();
    assert_eq!(next.key(), format!("jobs/{BOB:x}").as_bytes());
}

/// On a three-member cluster a waiter on one member is woken by an unlock
/// made through another (every member applies the delete and wakes its own
/// waiters), and an observer on a third follows the election.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiters_on_any_member_are_woken() {
    let members = crate::harness::start_cluster(Kind::Rtcd, 3);
    let mut clients = Vec::new();
    for m in &members {
        clients.push(Client::connect([m.client_url.as_str()], None).await.unwrap());
    }
    for id in [ALICE, BOB] {
        clients[0].lease_grant(30, Some(LeaseGrantOptions::new().with_id(id))).await.unwrap();
    }
    let held = clients[0].lock("jobs", Some(LockOptions::new().with_lease(ALICE))).await.unwrap();
    let mut second = clients[1].clone();
    let waiting =
        tokio::spawn(async move { second.lock("jobs", Some(LockOptions::new().with_lease(BOB))).await });
    assert!(still_waiting(&mut clients[0], "jobs/", 2, &waiting).await, "bob must queue behind alice");
    let unlocked = clients[2].unlock(held.key().to_vec()).await.unwrap();
    let got = tokio::time::timeout(Duration::from_secs(10), waiting).await.unwrap().unwrap().unwrap();
    assert_eq!(got.key(), format!("jobs/{BOB:x}").as_bytes());
    assert!(rev(got.header()) >= rev(unlocked.header()), "bob's lock is answered after alice's unlock");

    let mut observer = clients[2].observe("pick").await.unwrap();
    let won = clients[1].campaign("pick", "bob", BOB).await.unwrap();
    let seen_bob = seen(&mut observer).await;
    assert_eq!(seen_bob, format!("observed pick/{BOB:x}=bob at {}", rev(won.header())));
    clients[0]
        .proclaim("bob, louder", Some(ProclaimOptions::new().with_leader(won.leader().unwrap().clone())))
        .await
        .unwrap();
    assert!(seen(&mut observer).await.contains("=bob, louder at "));
}

/// The same for a candidate: one that goes away while queued withdraws, and
/// an observer sees the next candidate lead once the leader resigns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_campaign_withdraws() {
    let rtcd = start(Kind::Rtcd, "abandon-campaign");
    let mut c = Client::connect([rtcd.client_url.as_str()], None).await.unwrap();
    for id in [ALICE, BOB, 0xca401] {
        c.lease_grant(30, Some(LeaseGrantOptions::new().with_id(id))).await.unwrap();
    }
    let alice = c.campaign("pick", "alice", ALICE).await.unwrap().leader().unwrap().clone();
    let mut other = c.clone();
    let bob = tokio::spawn(async move { other.campaign("pick", "bob", BOB).await });
    assert!(still_waiting(&mut c, "pick/", 2, &bob).await, "bob must queue behind alice");
    bob.abort();
    let mut carol_client = c.clone();
    let carol = tokio::spawn(async move { carol_client.campaign("pick", "carol", 0xca401).await });
    // Bob's key goes (it may still be there while carol queues: 3, then 2).
    let mut left = 0;
    for _ in 0..50 {
        left = c.get("pick/", Some(GetOptions::new().with_prefix().with_count_only())).await.unwrap().count();
        let bob_key = c.get(format!("pick/{BOB:x}"), None).await.unwrap();
        if left == 2 && bob_key.kvs().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(left, 2, "alice and carol remain");
    let mut observer = c.observe("pick").await.unwrap();
    assert!(seen(&mut observer).await.contains("=alice at "));
    c.resign(Some(ResignOptions::new().with_leader(alice))).await.unwrap();
    let carol = tokio::time::timeout(Duration::from_secs(10), carol).await.unwrap().unwrap().unwrap();
    assert_eq!(carol.leader().unwrap().key(), format!("pick/{:x}", 0xca401).as_bytes());
    assert!(seen(&mut observer).await.contains("=carol at "));
}
