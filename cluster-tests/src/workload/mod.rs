//! Workloads: concurrent clients that record what they did.

pub mod append;
pub mod lease;
pub mod register;
pub mod watch;

use std::time::Duration;

use etcd_client::Client;

use crate::cluster::connect;
use crate::history::Outcome;

/// Pause after an error before the next operation: a member that is down
/// answers at once, and a client must not spin.
pub const ERROR_PAUSE: Duration = Duration::from_millis(100);

/// One client's connection to its member, made (again) when needed.
pub struct Connection {
    endpoint: String,
    client: Option<Client>,
}

impl Connection {
    pub fn new(endpoint: String) -> Self {
        Self { endpoint, client: None }
    }

    /// The client, connecting first if needed; `None` (after a pause) when
    /// the member cannot be reached.
    pub async fn get(&mut self) -> Option<&mut Client> {
        if self.client.is_none() {
            self.client = connect(&self.endpoint).await.ok();
            if self.client.is_none() {
                tokio::time::sleep(ERROR_PAUSE).await;
            }
        }
        self.client.as_mut()
    }

    /// Forgets the connection: the next operation starts on a fresh one.
    pub fn reset(&mut self) {
        self.client = None;
    }
}

/// A client as Jepsen numbers it: after an indeterminate operation it goes
/// on as a new process (the old one may still be "in flight"); process
/// numbers stay distinct across clients (`client + k * clients`).
pub struct Process {
    pub id: u32,
    clients: u32,
    /// Values this client made unique so far.
    counter: u64,
}

impl Process {
    pub fn new(client: u32, clients: u32) -> Self {
        Self { id: client, clients, counter: 0 }
    }

    /// A value no other operation of the run writes.
    pub fn unique_value(&mut self) -> u64 {
        self.counter += 1;
        u64::from(self.id + 1) * 1_000_000_000 + self.counter
    }

    /// After an operation: an indeterminate one makes this a new process
    /// on a new connection; any error pauses before the next operation.
    pub async fn finish(&mut self, outcome: Outcome, failed: bool, connection: &mut Connection) {
        if outcome == Outcome::Info {
            self.id += self.clients;
            connection.reset();
        }
        // With auth on, a failure may be a token the member lost when it
        // restarted: a fresh connection authenticates again.
        if failed && crate::cluster::authenticating() {
            connection.reset();
        }
        if failed {
            tokio::time::sleep(ERROR_PAUSE).await;
        }
    }
}
