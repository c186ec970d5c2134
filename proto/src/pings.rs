//! grpc-go's guard against a PING flood, which h2 lacks: h2 answers every
//! PING a client sends, 200,000 of them as readily as one. etcd (grpc-go)
//! counts a PING that comes sooner than its keepalive minimum time
//! (`--grpc-keepalive-min-time`, 5 s) after the previous one as a strike,
//! forgives all strikes whenever it sends the client HEADERS or DATA (so
//! the pings grpc clients send to size their windows while data flows are
//! fine), and past two strikes sends GOAWAY (ENHANCE_YOUR_CALM,
//! `too_many_pings`) and closes the connection. [`PingGuard`] does the
//! same between the socket and hyper, reading only frame headers in both
//! directions: the bytes themselves go through untouched.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tonic::transport::server::Connected;

use crate::http2::{DATA, FRAME_HEADER, GOAWAY, HEADERS, PING, PREFACE};

/// PING's flag for an answer.
const ACK: u8 = 0x1;
const ENHANCE_YOUR_CALM: u32 = 0xb;
/// grpc-go's `maxPingStrikes`.
const MAX_STRIKES: u32 = 2;
/// etcd's default `--grpc-keepalive-min-time`.
pub const MIN_TIME: Duration = Duration::from_secs(5);

/// Frame boundaries in one direction of a connection: which frame each
/// header starts, payloads skipped unread.
#[derive(Debug)]
struct Frames {
    /// Bytes of the client preface still to come before the first frame.
    preface_left: usize,
    header: [u8; FRAME_HEADER],
    have: usize,
    payload_left: usize,
    /// Not HTTP/2 (an HTTP/1 request on the same port): nothing to read.
    off: bool,
}

impl Frames {
    fn after_preface() -> Frames {
        Frames {
            preface_left: PREFACE.len(),
            header: [0; FRAME_HEADER],
            have: 0,
            payload_left: 0,
            off: false,
        }
    }

    fn from_start() -> Frames {
        Frames { preface_left: 0, ..Frames::after_preface() }
    }

    /// Whether the bytes so far end on a frame boundary.
    fn at_boundary(&self) -> bool {
        self.preface_left == 0 && self.have == 0 && self.payload_left == 0
    }

    /// Reads `bytes`, calling `frame(kind, flags, stream)` for each frame
    /// header completed.
    fn feed(&mut self, mut bytes: &[u8], mut frame: impl FnMut(u8, u8, u32)) {
        while !bytes.is_empty() && !self.off {
            if self.preface_left > 0 {
                let at = PREFACE.len() - self.preface_left;
                let n = self.preface_left.min(bytes.len());
                if bytes[..n] != PREFACE[at..at + n] {
                    self.off = true;
                    return;
                }
                self.preface_left -= n;
                bytes = &bytes[n..];
            } else if self.payload_left > 0 {
                let n = self.payload_left.min(bytes.len());
                self.payload_left -= n;
                bytes = &bytes[n..];
            } else {
                let n = (FRAME_HEADER - self.have).min(bytes.len());
                self.header[self.have..self.have + n].copy_from_slice(&bytes[..n]);
                self.have += n;
                bytes = &bytes[n..];
                if self.have == FRAME_HEADER {
                    let h = self.header;
                    self.have = 0;
                    self.payload_left = usize::from(h[0]) << 16 | usize::from(h[1]) << 8 | usize::from(h[2]);
                    let stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
                    frame(h[3], h[4], stream);
                }
            }
        }
    }
}

/// grpc-go's ping strikes.
#[derive(Debug, Default)]
struct Strikes {
    count: u32,
    last_ping: Option<Instant>,
}

impl Strikes {
    /// A client PING at `now`: whether the client has now pinged too often.
    fn ping(&mut self, now: Instant, min_time: Duration) -> bool {
        if self.last_ping.is_some_and(|last| now.duration_since(last) < min_time) {
            self.count += 1;
        }
        self.last_ping = Some(now);
        self.count > MAX_STRIKES
    }

    fn forgive(&mut self) {
        self.count = 0;
    }
}

/// Where a connection is in ending for too many pings.
#[derive(Debug)]
enum Ending {
    Serving,
    /// The GOAWAY frame, and how much of it is written.
    GoingAway(Vec<u8>, usize),
    Closed,
}

/// A client connection whose PINGs are counted as grpc-go counts them.
pub struct PingGuard<T> {
    io: T,
    incoming: Frames,
    outgoing: Frames,
    strikes: Strikes,
    min_time: Duration,
    /// The highest stream the client opened (GOAWAY's last stream id).
    last_stream: u32,
    ending: Ending,
}

impl<T> PingGuard<T> {
    pub fn new(io: T) -> Self {
        Self::with_min_time(io, MIN_TIME)
    }

    pub fn with_min_time(io: T, min_time: Duration) -> Self {
        PingGuard {
            io,
            incoming: Frames::after_preface(),
            outgoing: Frames::from_start(),
            strikes: Strikes::default(),
            min_time,
            last_stream: 0,
            ending: Ending::Serving,
        }
    }

    /// Reads the client's `bytes`; whether they hold one PING too many.
    fn read_client(&mut self, bytes: &[u8]) -> bool {
        let (strikes, last_stream, min_time) = (&mut self.strikes, &mut self.last_stream, self.min_time);
        let mut flooded = false;
        let now = Instant::now();
        self.incoming.feed(bytes, |kind, flags, stream| match kind {
            PING if flags & ACK == 0 => flooded |= strikes.ping(now, min_time),
            HEADERS => *last_stream = (*last_stream).max(stream),
            _ => {}
        });
        flooded
    }

    /// Reads what hyper wrote: HEADERS and DATA forgive the strikes.
    fn read_server(&mut self, bytes: &[u8]) {
        let strikes = &mut self.strikes;
        self.outgoing.feed(bytes, |kind, _, _| {
            if kind == HEADERS || kind == DATA {
                strikes.forgive();
            }
        });
    }

    fn go_away(&mut self) {
        let mut frame = Vec::with_capacity(FRAME_HEADER + 8 + 14);
        let debug = b"too_many_pings";
        frame.extend_from_slice(&((8 + debug.len()) as u32).to_be_bytes()[1..]);
        frame.extend_from_slice(&[GOAWAY, 0, 0, 0, 0, 0]);
        frame.extend_from_slice(&self.last_stream.to_be_bytes());
        frame.extend_from_slice(&ENHANCE_YOUR_CALM.to_be_bytes());
        frame.extend_from_slice(debug);
        // Mid-frame of hyper's, a GOAWAY would corrupt the stream: close only.
        self.ending = if self.outgoing.at_boundary() { Ending::GoingAway(frame, 0) } else { Ending::Closed };
    }
}

fn too_many_pings() -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionAborted, "the client sent too many pings")
}

impl<T: Connected> Connected for PingGuard<T> {
    type ConnectInfo = T::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.io.connect_info()
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncRead for PingGuard<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            match &mut this.ending {
                Ending::Closed => return Poll::Ready(Err(too_many_pings())),
                Ending::GoingAway(frame, written) if *written < frame.len() => {
                    let n = ready!(Pin::new(&mut this.io).poll_write(cx, &frame[*written..]))?;
                    if n == 0 {
                        this.ending = Ending::Closed;
                    } else {
                        *written += n;
                    }
                }
                Ending::GoingAway(..) => {
                    ready!(Pin::new(&mut this.io).poll_flush(cx))?;
                    this.ending = Ending::Closed;
                }
                Ending::Serving => {
                    let before = buf.filled().len();
                    ready!(Pin::new(&mut this.io).poll_read(cx, buf))?;
                    if !this.read_client(&buf.filled()[before..]) {
                        return Poll::Ready(Ok(()));
                    }
                    // What came with the ping too many is not served.
                    buf.set_filled(before);
                    this.go_away();
                }
            }
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for PingGuard<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if !matches!(this.ending, Ending::Serving) {
            return Poll::Ready(Err(too_many_pings()));
        }
        let n = ready!(Pin::new(&mut this.io).poll_write(cx, buf))?;
        this.read_server(&buf[..n]);
        Poll::Ready(Ok(n))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if !matches!(this.ending, Ending::Serving) {
            return Poll::Ready(Err(too_many_pings()));
        }
        let n = ready!(Pin::new(&mut this.io).poll_write_vectored(cx, bufs))?;
        let mut left = n;
        for buf in bufs {
            let taken = left.min(buf.len());
            this.read_server(&buf[..taken]);
            left -= taken;
            if left == 0 {
                break;
            }
        }
        Poll::Ready(Ok(n))
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

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut bytes = (payload.len() as u32).to_be_bytes()[1..].to_vec();
        bytes.extend_from_slice(&[kind, flags]);
        bytes.extend_from_slice(&stream.to_be_bytes());
        bytes.extend_from_slice(payload);
        bytes
    }

    fn ping() -> Vec<u8> {
        frame(PING, 0, 0, &[0; 8])
    }

    #[test]
    fn frames_are_found_however_the_bytes_are_cut() {
        let mut stream = PREFACE.to_vec();
        stream.extend(frame(0x4, 0, 0, &[]));
        stream.extend(frame(HEADERS, 0x4, 1, &[1, 2, 3]));
        stream.extend(ping());
        stream.extend(frame(DATA, 0, 1, &[9; 20_000]));
        for cut in [1, 2, 7, 9, 100, stream.len()] {
            let mut frames = Frames::after_preface();
            let mut seen = Vec::new();
            for chunk in stream.chunks(cut) {
                frames.feed(chunk, |kind, _, stream| seen.push((kind, stream)));
            }
            assert_eq!(seen, [(0x4, 0), (HEADERS, 1), (PING, 0), (DATA, 1)], "cut {cut}");
            assert!(frames.at_boundary());
        }
        let mut http1 = Frames::after_preface();
        http1.feed(b"GET /health HTTP/1.1\r\n\r\n", |_, _, _| panic!("no frames in HTTP/1"));
    }

    #[test]
    fn strikes_follow_grpc_go() {
        let mut strikes = Strikes::default();
        let start = Instant::now();
        // Pings a keepalive period apart never strike.
        for i in 0..10 {
            assert!(!strikes.ping(start + MIN_TIME * i, MIN_TIME));
        }
        let now = start + MIN_TIME * 20;
        assert!(!strikes.ping(now, MIN_TIME));
        assert!(!strikes.ping(now, MIN_TIME));
        assert!(!strikes.ping(now, MIN_TIME));
        strikes.forgive();
        assert!(!strikes.ping(now, MIN_TIME));
        assert!(!strikes.ping(now, MIN_TIME));
        assert!(strikes.ping(now, MIN_TIME), "the third strike");
    }

    #[tokio::test]
    async fn a_flood_gets_goaway_and_the_connection_ends() {
        let (client, server) = tokio::io::duplex(1 << 16);
        let mut guarded = PingGuard::new(server);
        let (mut client_read, mut client_write) = tokio::io::split(client);
        let mut flood = PREFACE.to_vec();
        flood.extend(frame(HEADERS, 0x5, 3, &[]));
        for _ in 0..100 {
            flood.extend(ping());
        }
        client_write.write_all(&flood).await.unwrap();
        let mut served = Vec::new();
        let error = loop {
            let mut chunk = [0; 1024];
            match guarded.read(&mut chunk).await {
                Ok(0) => panic!("the connection was not ended"),
                Ok(n) => served.extend_from_slice(&chunk[..n]),
                Err(e) => break e,
            }
        };
        assert_eq!(error.kind(), io::ErrorKind::ConnectionAborted);
        // No more than the preface, the request and three pings were served.
        assert!(served.len() <= PREFACE.len() + 9 + 3 * 17, "{} bytes served", served.len());
        let mut goaway = vec![0; FRAME_HEADER + 8 + 14];
        client_read.read_exact(&mut goaway).await.unwrap();
        assert_eq!(goaway[3], GOAWAY);
        assert_eq!(&goaway[9..13], &3u32.to_be_bytes(), "the last stream the client opened");
        assert_eq!(&goaway[13..17], &ENHANCE_YOUR_CALM.to_be_bytes());
        assert_eq!(&goaway[17..], b"too_many_pings");
        assert!(guarded.write(b"more").await.is_err());
    }

    #[tokio::test]
    async fn pings_while_data_flows_are_forgiven() {
        let (client, server) = tokio::io::duplex(1 << 20);
        let mut guarded = PingGuard::new(server);
        let (mut client_read, mut client_write) = tokio::io::split(client);
        client_write.write_all(PREFACE).await.unwrap();
        let mut chunk = [0; 1024];
        let _ = guarded.read(&mut chunk).await.unwrap();
        // A window-sizing ping for each DATA frame the server sends.
        for _ in 0..50 {
            guarded.write_all(&frame(DATA, 0, 1, &[7; 100])).await.unwrap();
            client_write.write_all(&ping()).await.unwrap();
            let n = guarded.read(&mut chunk).await.unwrap();
            assert_eq!(n, 17);
        }
        let mut sent = vec![0; 50 * 109];
        client_read.read_exact(&mut sent).await.unwrap();
    }
}
