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

/// HTTP/2's client preface; an HTTP/1 request line and headers are longer.
const PREFACE_LEN: usize = 24;
/// A client sends its preface as soon as it connects; a peer that has not
/// sent it in this long is not a client about to.
const PREFACE_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepts client connections on `addr`; their responses are written in
/// batches (`coalesce`).
pub fn bind(addr: SocketAddr) -> io::Result<impl Stream<Item = io::Result<Coalesce<PrefaceDeadline>>>> {
    let incoming = TcpIncoming::bind(addr)?.with_nodelay(Some(true));
    Ok(incoming.map(|accepted| accepted.map(|tcp| Coalesce::new(PrefaceDeadline::new(tcp)))))
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
