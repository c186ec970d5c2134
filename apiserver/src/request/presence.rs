//! Whether the client of a request is still there, for work that runs
//! without awaiting (CEL evaluation) and so is not dropped when hyper sees
//! the connection go: such work asks now and then, and stops once the
//! client has closed its side, as Go's server cancels a request's context
//! when its connection's background read meets the end.

use std::mem::MaybeUninit;
use std::sync::Arc;

use socket2::SockRef;
use tokio::net::TcpStream;

/// The connection a request came on, shared with hyper, which reads and
/// writes it (see `server::shared_tcp`).
#[derive(Debug, Clone)]
pub struct ClientPresence(Arc<TcpStream>);

impl ClientPresence {
    pub fn new(connection: Arc<TcpStream>) -> ClientPresence {
        ClientPresence(connection)
    }

    /// Whether the client has closed the connection (or it broke). Looks
    /// without taking anything: what is waiting to be read stays for
    /// hyper, and a client that has sent more (a next request, HTTP/2
    /// frames) is taken to be there.
    pub fn is_gone(&self) -> bool {
        let mut byte = [MaybeUninit::uninit()];
        match SockRef::from(self.0.as_ref()).peek(&mut byte) {
            Ok(0) => true,
            Ok(_) => false,
            // The socket is non-blocking: nothing to read, the client waits.
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
            Err(_) => true,
        }
    }
}

/// A connected pair over loopback, for tests: the server's side as a
/// presence, and the client's stream.
#[cfg(test)]
pub async fn connected() -> (ClientPresence, TcpStream) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
    let (server, _) = listener.accept().await.unwrap();
    (ClientPresence::new(Arc::new(server)), client)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_client_that_waits_or_sends_is_there_one_that_closed_is_gone() {
        let (presence, client) = connected().await;
        assert!(!presence.is_gone());
        client.try_write(b"GET").unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!presence.is_gone(), "sent more: still there");
        drop(client);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        // What it sent before closing is still waiting: not yet seen as gone.
        let mut read = [0u8; 3];
        presence.0.try_read(&mut read).unwrap();
        assert_eq!(&read, b"GET");
        assert!(presence.is_gone());
    }
}
