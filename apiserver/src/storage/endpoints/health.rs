//! Whether each etcd member is worth sending to: marked down when a request
//! on it fails or it stops answering the health check, up again once it
//! answers with a leader. The check is etcd's own `Status` call, asked of
//! every member twice a second with a one-second limit, so a member that
//! is stopped or cut off (its sockets open, nothing answered) is found out
//! as surely as one whose process is gone.

use std::future::Future;
use std::sync::Weak;
use std::time::Duration;

use rtcd_proto::etcdserverpb::StatusRequest;
use rtcd_proto::etcdserverpb::maintenance_client::MaintenanceClient;
use tokio::sync::watch;
use tonic::transport::Channel;

use super::Shared;

/// How often every member is checked.
const CHECK_EVERY: Duration = Duration::from_millis(500);
/// How long a member has to answer a check.
const CHECK_TIMEOUT: Duration = Duration::from_secs(1);

/// One member's health: up until something says otherwise.
#[derive(Debug)]
pub(super) struct Health {
    up: watch::Sender<bool>,
}

impl Health {
    pub(super) fn new() -> Self {
        Health { up: watch::channel(true).0 }
    }

    pub(super) fn is_up(&self) -> bool {
        *self.up.borrow()
    }

    /// Records `up`; whether that changed what was known.
    pub(super) fn set(&self, up: bool) -> bool {
        self.up.send_if_modified(|known| std::mem::replace(known, up) != up)
    }

    /// Completes when the member is next marked down (at once if it is).
    pub(super) fn went_down(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut up = self.up.subscribe();
        async move {
            let _ = up.wait_for(|up| !*up).await;
        }
    }
}

/// Checks every member until the endpoints are dropped.
pub(super) async fn check_forever(shared: Weak<Shared>) {
    let mut tick = tokio::time::interval(CHECK_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(shared) = shared.upgrade() else { return };
        let checks = shared.members.iter().map(|member| async {
            let verdict = check(member.channel.clone()).await;
            member.record(verdict);
        });
        futures_util::future::join_all(checks).await;
    }
}

/// Ok when the member answers within the limit and knows a leader; else
/// why not.
async fn check(channel: Channel) -> Result<(), String> {
    let mut client = MaintenanceClient::new(channel);
    match tokio::time::timeout(CHECK_TIMEOUT, client.status(StatusRequest {})).await {
        Err(_) => Err(format!("no answer to a health check within {CHECK_TIMEOUT:?}")),
        Ok(Err(status)) => Err(status.message().to_string()),
        Ok(Ok(answer)) if answer.get_ref().leader == 0 => Err("it has no leader".into()),
        Ok(Ok(_)) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn going_down_is_seen_by_whoever_waits() {
        let health = Health::new();
        assert!(health.is_up());
        let waiting = tokio::spawn(health.went_down());
        assert!(!health.set(true), "already up");
        assert!(health.set(false));
        waiting.await.unwrap();
        assert!(!health.is_up());
        // Down already: the wait ends at once.
        health.went_down().await;
        assert!(health.set(true));
    }
}
