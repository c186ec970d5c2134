//! A TCP connection hyper (and rustls) read and write while requests can
//! still look at it: the stream is shared, so that a request's
//! [`ClientPresence`] can ask whether the client has gone. Reads and
//! writes go through the stream's readiness, as tokio's own do.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use crate::request::ClientPresence;

pub struct SharedTcp(Arc<TcpStream>);

impl SharedTcp {
    /// The stream for hyper, and the handle its requests carry.
    pub fn new(tcp: TcpStream) -> (SharedTcp, ClientPresence) {
        let shared = Arc::new(tcp);
        (SharedTcp(shared.clone()), ClientPresence::new(shared))
    }
}

impl AsyncRead for SharedTcp {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        loop {
            ready!(self.0.poll_read_ready(cx))?;
            match self.0.try_read(buf.initialize_unfilled()) {
                Ok(n) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                // Readiness was stale: it is cleared, wait again.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for SharedTcp {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.0.poll_write_ready(cx))?;
            match self.0.try_write(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                written => return Poll::Ready(written),
            }
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.0.poll_write_ready(cx))?;
            match self.0.try_write_vectored(bufs) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                written => return Poll::Ready(written),
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(socket2::SockRef::from(self.0.as_ref()).shutdown(std::net::Shutdown::Write))
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn reads_writes_and_shuts_down_like_the_stream_itself() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let (mut shared, presence) = SharedTcp::new(server);
        let big = vec![7u8; 4 << 20];
        let echo = tokio::spawn(async move {
            let mut got = vec![0u8; 4 << 20];
            shared.read_exact(&mut got).await.unwrap();
            shared.write_all(&got).await.unwrap();
            shared.shutdown().await.unwrap();
            shared
        });
        client.write_all(&big).await.unwrap();
        let mut back = Vec::new();
        client.read_to_end(&mut back).await.unwrap();
        assert_eq!(back, big);
        let _shared = echo.await.unwrap();
        assert!(!presence.is_gone(), "the client has not closed its side");
        drop(client);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(presence.is_gone());
    }
}
