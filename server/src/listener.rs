//! Client connections as the gRPC server accepts them: TCP without Nagle's
//! delay (as tonic sets it), and a deadline for the first bytes.
//!
//! Why the deadline: hyper waits for a connection's HTTP/2 preface forever,
//! so connections that open and send nothing (or a byte now and then) each
//! hold a socket and its buffers for as long as the peer likes. grpc-go
//! (etcd) closes a connection that has not completed its handshake within
//! its connection timeout; rtcd closes one that has not sent its first
//! [`PREFACE_LEN`] bytes within [`PREFACE_TIMEOUT`]. After that, keepalive
//! pings (`--grpc-keepalive-*`) find peers that went away.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Sleep;
use tokio_stream::{Stream, StreamExt};
use tonic::transport::server::{Connected, TcpConnectInfo, TcpIncoming};

use rtcd_proto::coalesce::Coalesce;

use rtcd_proto::authority::AuthorityFix;
use rtcd_proto::pings::PingGuard;

/// HTTP/2's client preface; an HTTP/1 request line and headers are longer.
const PREFACE_LEN: usize = 24;
/// A client sends its preface as soon as it connects; a peer that has not
/// sent it in this long is not a client about to.
const PREFACE_TIMEOUT: Duration = Duration::from_secs(10);

/// A plain client connection as served.
pub type Plain = Coalesce<AuthorityFix<PingGuard<PrefaceDeadline>>>;

/// Accepts client connections on `addr`; their responses are written in
/// batches (`coalesce`), their requests read through `authority`'s mend,
/// their PINGs counted (`pings`) against `--grpc-keepalive-min-time`.
pub fn bind(addr: SocketAddr, ping_min_time: Duration) -> io::Result<impl Stream<Item = io::Result<Plain>>> {
    let incoming = TcpIncoming::bind(addr)?.with_nodelay(Some(true));
    let serve = move |tcp| {
        Coalesce::new(AuthorityFix::new(PingGuard::with_min_time(PrefaceDeadline::new(tcp), ping_min_time)))
    };
    Ok(incoming.map(move |accepted| accepted.map(serve)))
}

/// A TCP connection that fails its reads once [`PREFACE_TIMEOUT`] has passed
/// without [`PREFACE_LEN`] bytes received.
pub struct PrefaceDeadline {
    io: TcpStream,
    /// Until the preface has arrived.
    deadline: Option<Pin<Box<Sleep>>>,
    received: usize,
}

impl PrefaceDeadline {
    fn new(io: TcpStream) -> Self {
        PrefaceDeadline { io, deadline: Some(Box::pin(tokio::time::sleep(PREFACE_TIMEOUT))), received: 0 }
    }
}

impl Connected for PrefaceDeadline {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.io.connect_info()
    }
}

impl AsyncRead for PrefaceDeadline {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let read = Pin::new(&mut this.io).poll_read(cx, buf);
        match read {
            Poll::Ready(Ok(())) => {
                this.received += buf.filled().len() - before;
                if this.received >= PREFACE_LEN {
                    this.deadline = None;
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => match this.deadline.as_mut().map(|d| d.as_mut().poll(cx)) {
                Some(Poll::Ready(())) => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no HTTP/2 preface within the connection's first 10 seconds",
                ))),
                _ => Poll::Pending,
            },
            failed => failed,
        }
    }
}

impl AsyncWrite for PrefaceDeadline {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// How long a TLS client has to finish its handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection over TLS, with who the client's certificate says it is;
/// its PINGs counted (`pings`).
pub struct TlsConnection {
    io: PingGuard<tokio_rustls::server::TlsStream<PrefaceDeadline>>,
    info: TlsInfo,
}

/// What requests on a TLS connection know of it: the remote address and the
/// common name of the client's verified certificate (etcd's user with
/// `--client-cert-auth`).
#[derive(Debug, Clone)]
pub struct TlsInfo {
    pub tcp: TcpConnectInfo,
    pub common_name: Option<String>,
}

impl Connected for TlsConnection {
    type ConnectInfo = TlsInfo;

    fn connect_info(&self) -> TlsInfo {
        self.info.clone()
    }
}

/// Accepts TLS connections on `addr` with `tls`'s configuration as it is at
/// each connection. Handshakes run concurrently, each within
/// [`HANDSHAKE_TIMEOUT`]; one that fails (garbage, an unknown CA, no
/// certificate where one is required, a peer of another name) closes that
/// connection only.
pub fn bind_tls(
    addr: SocketAddr,
    tls: std::sync::Arc<crate::tls::Reloading>,
    ping_min_time: Duration,
) -> io::Result<impl Stream<Item = io::Result<Coalesce<TlsConnection>>>> {
    let mut incoming = TcpIncoming::bind(addr)?.with_nodelay(Some(true));
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                () = tx.closed() => return,
                next = incoming.next() => match next {
                    Some(accepted) => accepted,
                    None => return,
                },
            };
            let tcp = match accepted {
                Ok(tcp) => tcp,
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    continue;
                }
            };
            let acceptor = tokio_rustls::TlsAcceptor::from(tls.config());
            let allowed_cn = tls.files().allowed_cn.clone();
            let tx = tx.clone();
            tokio::spawn(async move {
                let tcp_info = tcp.connect_info();
                let handshake = acceptor.accept(PrefaceDeadline::new(tcp));
                let io = match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await {
                    Ok(Ok(io)) => io,
                    Ok(Err(error)) => {
                        tracing::debug!(remote = ?tcp_info.remote_addr(), %error, "TLS handshake failed");
                        return;
                    }
                    Err(_) => return,
                };
                let common_name = io
                    .get_ref()
                    .1
                    .peer_certificates()
                    .and_then(|chain| chain.first())
                    .and_then(crate::tls::common_name);
                if let Some(allowed) = &allowed_cn
                    && common_name.as_ref() != Some(allowed)
                {
                    tracing::warn!(remote = ?tcp_info.remote_addr(), ?common_name, %allowed, "peer certificate of another common name refused");
                    return;
                }
                let info = TlsInfo { tcp: tcp_info, common_name };
                let io = PingGuard::with_min_time(io, ping_min_time);
                let _ = tx.send(Ok(Coalesce::new(TlsConnection { io, info }))).await;
            });
        }
    });
    Ok(tokio_stream::wrappers::ReceiverStream::new(rx))
}

impl AsyncRead for TlsConnection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for TlsConnection {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}
