//! Many requests' frames in one socket write.
//!
//! hyper's HTTP/2 connection task writes as soon as it has a frame to send.
//! Under load, the tasks using one connection (a server's request handlers,
//! a client's callers) finish one after another on the same worker, and
//! tokio runs the woken connection task right after each: every response,
//! or request, became its own `writev` and its own segment for the peer to
//! read. grpc-go, etcd's transport on both sides, gathers the frames of all
//! its streams before writing.
//!
//! [`Coalesce`] lets a connection's first write after a flush wait one turn
//! of the runtime (`tokio::task::yield_now`: the task runs again once its
//! worker has run every other ready task and polled for I/O), so the tasks
//! ready meanwhile add their frames to the same write. With nothing else to
//! run, the turn costs a few microseconds.

use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tonic::transport::server::Connected;

/// `io` whose writes wait one runtime turn after each flush.
pub struct Coalesce<T> {
    io: T,
    /// The turn was taken since the last flush.
    waited: bool,
}

impl<T> Coalesce<T> {
    pub fn new(io: T) -> Self {
        Coalesce { io, waited: false }
    }

    /// `Pending` (the task woken after the worker's other ready tasks) the
    /// first time since the last flush, `Ready` after.
    fn wait_turn(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.waited {
            return Poll::Ready(());
        }
        self.waited = true;
        pin!(tokio::task::yield_now()).poll(cx)
    }
}

impl<T: Connected> Connected for Coalesce<T> {
    type ConnectInfo = T::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.io.connect_info()
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Coalesce<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Coalesce<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        std::task::ready!(this.wait_turn(cx));
        Pin::new(&mut this.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        std::task::ready!(this.wait_turn(cx));
        Pin::new(&mut this.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let flushed = Pin::new(&mut this.io).poll_flush(cx);
        if flushed.is_ready() {
            this.waited = false;
        }
        flushed
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::future::poll_fn;

    use tokio::io::AsyncReadExt;
    use tokio::net::{TcpListener, TcpStream};

    use super::*;

    /// The contract the batching rests on: a write after a flush first
    /// yields (so other ready tasks run), later writes before the next
    /// flush go straight through, and nothing is lost or reordered.
    #[tokio::test(flavor = "current_thread")]
    async fn the_first_write_after_each_flush_waits_one_turn() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut io = Coalesce::new(TcpStream::connect(listener.local_addr().unwrap()).await.unwrap());
        let (mut peer, _) = listener.accept().await.unwrap();
        for round in 0..2 {
            let first = poll_fn(|cx| Poll::Ready(Pin::new(&mut io).poll_write(cx, b"ab"))).await;
            assert!(first.is_pending(), "round {round}: the first write waits");
            let written = poll_fn(|cx| Pin::new(&mut io).poll_write(cx, b"ab")).await.unwrap();
            assert_eq!(written, 2, "round {round}: after the turn it goes through");
            let more = poll_fn(|cx| Poll::Ready(Pin::new(&mut io).poll_write(cx, b"cd"))).await;
            assert!(matches!(more, Poll::Ready(Ok(2))), "round {round}: no second wait before a flush");
            poll_fn(|cx| Pin::new(&mut io).poll_flush(cx)).await.unwrap();
            let mut got = [0u8; 4];
            peer.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"abcd", "round {round}");
        }
    }
}
