//! The fault-injecting network: a TCP proxy on every directed peer link.
//!
//! Members advertise proxy addresses as their peer URLs, so all member-to-
//! member traffic crosses this process. Each connection is attributed to a
//! directed link (from -> to): rtcd members dial a dedicated listener per
//! link (`RTCD_PEER_DIAL_OVERRIDES`); etcd members all dial one listener per
//! target, and the proxy reads the `X-Server-From` header etcd puts on every
//! peer request. A link can be cut (existing connections are closed; new ones
//! on a known link are accepted and left silent, like dropped packets, and
//! etcd's are closed as soon as their sender is known) or slowed.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Member indexes: 0..n.
pub type Link = (usize, usize);

#[derive(Debug, Clone, Copy, Default)]
struct LinkState {
    cut: bool,
    delay: Duration,
}

/// How every link behaves now; connections re-check on every change.
#[derive(Debug)]
pub struct Network {
    links: Mutex<HashMap<Link, LinkState>>,
    /// etcd member ID -> member index, for attributing etcd connections.
    etcd_ids: Mutex<HashMap<u64, usize>>,
    changed: watch::Sender<u64>,
    /// Bumped by `drop_connections`: connections older than the bump close.
    drops: AtomicU64,
}

impl Default for Network {
    fn default() -> Self {
        Self {
            links: Mutex::default(),
            etcd_ids: Mutex::default(),
            changed: watch::channel(0).0,
            drops: AtomicU64::new(0),
        }
    }
}

const CHUNK: usize = 64 * 1024;
/// The longest request head the proxy reads looking for `X-Server-From`.
const MAX_HEAD: usize = 16 * 1024;

impl Network {
    fn state(&self, link: Link) -> LinkState {
        self.links.lock().unwrap_or_else(|e| e.into_inner()).get(&link).copied().unwrap_or_default()
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    /// Cuts every link between a member of `a` and a member of `b`, both ways.
    pub fn cut(&self, a: &[usize], b: &[usize]) {
        {
            let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
            for &x in a {
                for &y in b {
                    links.entry((x, y)).or_default().cut = true;
                    links.entry((y, x)).or_default().cut = true;
                }
            }
        }
        self.bump();
    }

    /// Delays every chunk on every link by `delay`.
    pub fn slow_all(&self, n: usize, delay: Duration) {
        {
            let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
            for x in 0..n {
                for y in 0..n {
                    links.entry((x, y)).or_default().delay = delay;
                }
            }
        }
        self.bump();
    }

    /// Every link up, no delay.
    pub fn heal(&self) {
        self.links.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.bump();
    }

    /// Closes every open connection now; links stay as they are
    /// (connection drops without a partition).
    pub fn drop_connections(&self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
        self.bump();
    }

    pub fn learn_etcd_id(&self, id: u64, member: usize) {
        self.etcd_ids.lock().unwrap_or_else(|e| e.into_inner()).insert(id, member);
    }

    /// A listener for the directed link `from -> to`, forwarding to `to`'s
    /// real peer address.
    pub async fn listen_link(
        self: &Arc<Self>,
        from: usize,
        to: usize,
        real: SocketAddr,
    ) -> std::io::Result<SocketAddr> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let net = self.clone();
        tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                tokio::spawn(net.clone().carry(conn, (from, to), real));
            }
        });
        Ok(addr)
    }

    /// A listener for everything addressed to `to`; the sender is read from
    /// the `X-Server-From` header etcd puts on its Raft requests. etcd reuses
    /// connections opened by header-less health probes for Raft messages, so
    /// the proxy follows the requests on a connection until one names its
    /// sender; until then the connection passes unharmed.
    pub async fn listen_target(self: &Arc<Self>, to: usize, real: SocketAddr) -> std::io::Result<SocketAddr> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let net = self.clone();
        tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                tokio::spawn(net.clone().carry_sniffed(conn, to, real));
            }
        });
        Ok(addr)
    }

    fn member_of(&self, etcd_id: u64) -> Option<usize> {
        self.etcd_ids.lock().unwrap_or_else(|e| e.into_inner()).get(&etcd_id).copied()
    }

    fn is_cut(&self, link: Option<Link>) -> bool {
        link.is_some_and(|l| self.state(l).cut)
    }

    /// Forwards a connection on a known link until either side closes or
    /// the link is cut. A connection opened while the link is cut is held
    /// silent, like dropped packets, and closed when the cut heals.
    async fn carry(self: Arc<Self>, client: TcpStream, link: Link, real: SocketAddr) {
        let mut changes = self.changed.subscribe();
        if self.is_cut(Some(link)) {
            while self.is_cut(Some(link)) {
                if changes.changed().await.is_err() {
                    return;
                }
            }
            return;
        }
        let Ok(server) = TcpStream::connect(real).await else { return };
        let (mut client_read, client_write, server_read, mut server_write) = split(client, server);
        let shared = Arc::new(Mutex::new(Some(link)));
        let delay = self.delay_of(shared.clone());
        let upstream = pump(&mut client_read, &mut server_write, delay);
        self.run_connection(upstream, client_write, server_read, shared, changes).await;
    }

    async fn carry_sniffed(self: Arc<Self>, client: TcpStream, to: usize, real: SocketAddr) {
        let changes = self.changed.subscribe();
        let Ok(server) = TcpStream::connect(real).await else { return };
        let (mut client_read, client_write, server_read, mut server_write) = split(client, server);
        let shared: Arc<Mutex<Option<Link>>> = Arc::new(Mutex::new(None));
        let net = self.clone();
        let link = shared.clone();
        let delay = self.delay_of(shared.clone());
        let upstream = async move {
            let mut pending = Vec::new();
            // Request by request until one names its sender.
            loop {
                let Some(head_len) = read_head(&mut client_read, &mut pending).await else { return Ok(()) };
                let head = &pending[..head_len];
                if let Some(from) = server_from(head).and_then(|id| net.member_of(id)) {
                    *link.lock().unwrap_or_else(|e| e.into_inner()) = Some((from, to));
                    if net.is_cut(Some((from, to))) {
                        return Ok(());
                    }
                    server_write.write_all(&pending).await?;
                    break;
                }
                let body = content_length(head);
                // HTTP/2 (an rtcd member dialling a peer URL directly) or
                // a chunked body: no later head to find; pass it through.
                if head.starts_with(b"PRI * HTTP/2.0") || (body.is_none() && is_chunked(head)) {
                    server_write.write_all(&pending).await?;
                    break;
                }
                let whole = head_len + body.unwrap_or(0);
                while pending.len() < whole {
                    let mut buf = vec![0u8; CHUNK];
                    let n = client_read.read(&mut buf).await?;
                    if n == 0 {
                        return server_write.write_all(&pending).await;
                    }
                    pending.extend_from_slice(&buf[..n]);
                }
                server_write.write_all(&pending[..whole]).await?;
                pending.drain(..whole);
            }
            pump(&mut client_read, &mut server_write, delay).await
        };
        self.run_connection(upstream, client_write, server_read, shared, changes).await;
    }

    fn delay_of(self: &Arc<Self>, link: Arc<Mutex<Option<Link>>>) -> impl Fn() -> Duration + Clone + use<> {
        let net = self.clone();
        move || {
            let link = *link.lock().unwrap_or_else(|e| e.into_inner());
            link.map(|l| net.state(l).delay).unwrap_or_default()
        }
    }

    /// Runs both directions until either ends, the connection's link is cut
    /// or connections are dropped.
    async fn run_connection(
        self: Arc<Self>,
        upstream: impl std::future::Future<Output = std::io::Result<()>>,
        mut client_write: OwnedWriteHalf,
        mut server_read: OwnedReadHalf,
        link: Arc<Mutex<Option<Link>>>,
        mut changes: watch::Receiver<u64>,
    ) {
        let drops = self.drops.load(Ordering::Relaxed);
        let delay = self.delay_of(link.clone());
        let downstream = pump(&mut server_read, &mut client_write, delay);
        let cut = async {
            loop {
                if changes.changed().await.is_err() {
                    return;
                }
                let current = *link.lock().unwrap_or_else(|e| e.into_inner());
                if self.is_cut(current) || self.drops.load(Ordering::Relaxed) != drops {
                    return;
                }
            }
        };
        tokio::select! {
            _ = upstream => {}
            _ = downstream => {}
            () = cut => {}
        }
    }
}

fn split(
    client: TcpStream,
    server: TcpStream,
) -> (OwnedReadHalf, OwnedWriteHalf, OwnedReadHalf, OwnedWriteHalf) {
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    (client_read, client_write, server_read, server_write)
}

async fn pump<R, W>(from: &mut R, to: &mut W, delay: impl Fn() -> Duration) -> std::io::Result<()>
where
    R: AsyncReadExt + Unpin,
    W: AsyncWriteExt + Unpin,
{
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            return to.shutdown().await;
        }
        let wait = delay();
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        to.write_all(&buf[..n]).await?;
    }
}

/// Reads into `pending` until it holds a whole HTTP/1 request head; returns
/// the head's length (`None` at EOF, on a timeout or an oversized head).
async fn read_head(conn: &mut OwnedReadHalf, pending: &mut Vec<u8>) -> Option<usize> {
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            return Some(end + 4);
        }
        if pending.len() > MAX_HEAD {
            return None;
        }
        match conn.read(&mut buf).await {
            Ok(n) if n > 0 => pending.extend_from_slice(&buf[..n]),
            _ => return None,
        }
    }
}

fn header<'a>(head: &'a [u8], name: &str) -> Option<&'a str> {
    let text = std::str::from_utf8(head).ok()?;
    text.lines().find_map(|line| {
        let (n, value) = line.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

fn content_length(head: &[u8]) -> Option<usize> {
    header(head, "content-length")?.parse().ok()
}

fn is_chunked(head: &[u8]) -> bool {
    header(head, "transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
}

/// The sender's member ID from etcd's `X-Server-From: <hex>` header.
fn server_from(head: &[u8]) -> Option<u64> {
    u64::from_str_radix(header(head, "x-server-from")?, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etcd_sender_is_read_from_the_request_head() {
        let head = b"GET /raft/stream/msgapp/8e9e05c52164694d HTTP/1.1\r\nHost: x\r\nX-Server-From: 91bc3c398fb3c146\r\n\r\n";
        assert_eq!(server_from(head), Some(0x91bc3c398fb3c146));
        assert_eq!(server_from(b"GET /version HTTP/1.1\r\n\r\n"), None);
        let post = b"POST /raft HTTP/1.1\r\nContent-Length: 12\r\n\r\n";
        assert_eq!(content_length(post), Some(12));
        assert!(!is_chunked(post));
    }
}
