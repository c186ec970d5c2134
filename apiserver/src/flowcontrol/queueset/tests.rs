use std::time::Duration;

use super::*;

fn request(flow: &str) -> Arc<Described> {
    Arc::new(Described { flow: flow.into(), ..Described::default() })
}

fn soon() -> tokio::time::Instant {
    tokio::time::Instant::now() + Duration::from_secs(5)
}

const ONE: WorkEstimate = WorkEstimate::ONE_SEAT;

fn idle(set: &QueueSet) -> bool {
    let summary = set.summary();
    summary.waiting == 0 && summary.executing == 0
}

/// One queue per flow: a hand of one, dealt from hashes below the deck.
fn queues(limit: u32, queue_length_limit: usize) -> Arc<QueueSet> {
    QueueSet::new(Mode::Queue { queues: 8, hand_size: 1, queue_length_limit }, limit)
}

#[tokio::test]
async fn a_reject_level_runs_what_fits_and_refuses_the_rest() {
    let set = QueueSet::new(Mode::Reject, 2);
    let first = set.start(request("a"), ONE, 0).unwrap().wait(soon()).await.unwrap();
    let _second = set.start(request("a"), ONE, 0).unwrap().wait(soon()).await.unwrap();
    assert_eq!(set.start(request("a"), ONE, 0).unwrap_err(), Rejection::ConcurrencyLimit);
    drop(first);
    let _third = set.start(request("a"), ONE, 0).unwrap().wait(soon()).await.unwrap();
    let totals = set.summary().totals;
    assert_eq!((totals.dispatched, totals.rejected), (3, 1));
}

#[tokio::test]
async fn exempt_requests_never_wait() {
    let set = QueueSet::new(Mode::Exempt, 0);
    let wide = WorkEstimate { initial_seats: 10, ..ONE };
    let mut held = Vec::new();
    for _ in 0..5 {
        held.push(set.start(request("x"), wide, 0).unwrap().wait(soon()).await.unwrap());
    }
    assert_eq!(set.occupancy(), (50, 5, 0));
    drop(held);
    assert!(idle(&set));
}

#[tokio::test]
async fn a_quiet_flow_goes_before_a_busy_flows_backlog() {
    let set = queues(1, 50);
    let running = set.start(request("busy"), ONE, 0).unwrap().wait(soon()).await.unwrap();
    let backlog: Vec<Pending> = (0..5).map(|_| set.start(request("busy"), ONE, 0).unwrap()).collect();
    let quiet = set.start(request("quiet"), ONE, 1).unwrap();
    assert_eq!(set.occupancy(), (1, 1, 6));
    // The busy flow's request has had the seat all along; the quiet one
    // arrived at a virtual time before that service ended.
    tokio::time::sleep(Duration::from_millis(2)).await;
    drop(running);
    // The seat goes to the quiet flow's queue, whose head finishes first.
    let quiet = tokio::time::timeout(Duration::from_secs(1), quiet.wait(soon())).await.unwrap().unwrap();
    assert_eq!(set.occupancy(), (1, 1, 5));
    drop(quiet);
    let mut backlog = backlog.into_iter();
    let next = backlog.next().unwrap().wait(soon()).await.unwrap();
    assert_eq!(set.occupancy(), (1, 1, 4));
    drop(next);
}

#[tokio::test]
async fn a_full_queue_refuses_and_others_still_take_requests() {
    let set = queues(1, 2);
    let _running = set.start(request("a"), ONE, 0).unwrap().wait(soon()).await.unwrap();
    let _waiting: Vec<Pending> = (0..2).map(|_| set.start(request("a"), ONE, 0).unwrap()).collect();
    assert_eq!(set.start(request("a"), ONE, 0).unwrap_err(), Rejection::QueueFull);
    let _other = set.start(request("b"), ONE, 1).expect("another flow's queue has room");
    assert_eq!(set.summary().totals.rejected, 1);
}

#[tokio::test]
async fn waiting_ends_at_the_deadline_or_when_the_client_goes() {
    let set = queues(1, 50);
    let running = set.start(request("a"), ONE, 0).unwrap().wait(soon()).await.unwrap();
    let pending = set.start(request("a"), ONE, 0).unwrap();
    let until = tokio::time::Instant::now() + Duration::from_millis(50);
    assert_eq!(pending.wait(until).await.unwrap_err(), Rejection::TimeOut);
    drop(set.start(request("a"), ONE, 0).unwrap());
    let totals = set.summary().totals;
    assert_eq!((totals.timed_out, totals.cancelled), (1, 1));
    assert_eq!(set.occupancy(), (1, 1, 0), "neither waits any more");
    drop(running);
    assert!(idle(&set));
}

#[tokio::test]
async fn a_request_wider_than_the_level_runs_alone() {
    let set = queues(4, 50);
    let wide = WorkEstimate { initial_seats: 10, ..ONE };
    let small = set.start(request("a"), ONE, 0).unwrap().wait(soon()).await.unwrap();
    let waiting = set.start(request("b"), wide, 1).unwrap();
    assert_eq!(set.occupancy(), (1, 1, 1));
    drop(small);
    let alone = waiting.wait(soon()).await.unwrap();
    assert_eq!(set.occupancy(), (10, 1, 0));
    drop(alone);
}

#[tokio::test]
async fn a_write_keeps_its_final_seats_while_its_events_go_out() {
    let set = QueueSet::new(Mode::Reject, 10);
    let write =
        WorkEstimate { initial_seats: 1, final_seats: 3, additional_latency: Duration::from_millis(20) };
    let ticket = set.start(request("a"), write, 0).unwrap().wait(soon()).await.unwrap();
    drop(ticket);
    assert_eq!(set.occupancy(), (3, 0, 0), "done, its seats still held");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while set.occupancy() != (0, 0, 0) {
        assert!(std::time::Instant::now() < deadline, "never released");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn a_lower_limit_holds_requests_until_seats_free_up() {
    let set = queues(2, 50);
    let first = set.start(request("a"), ONE, 0).unwrap().wait(soon()).await.unwrap();
    let second = set.start(request("b"), ONE, 1).unwrap().wait(soon()).await.unwrap();
    set.set_limit(1);
    let third = set.start(request("c"), ONE, 2).unwrap();
    drop(first);
    assert_eq!(set.occupancy(), (1, 1, 1), "still at the new limit");
    drop(second);
    let third = third.wait(soon()).await.unwrap();
    assert_eq!(set.occupancy(), (1, 1, 0));
    drop(third);
    // Fewer queues: the dump shows what the configuration asks for.
    set.reconfigure(Mode::Queue { queues: 2, hand_size: 1, queue_length_limit: 50 }, 2);
    assert_eq!(set.dump_queues().len(), 2);
}
