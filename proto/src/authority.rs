//! A mend for one client: etcdctl 3.4 sends the endpoint as given
//! (`http://127.0.0.1:2379`) as the HTTP/2 `:authority` of its maintenance
//! calls (`endpoint status`, `hashkv`, `defrag`, `--cluster`). grpc-go (etcd)
//! ignores the authority; the h2 crate under hyper refuses the request as
//! malformed (RST_STREAM PROTOCOL_ERROR), so those commands failed against
//! rtcd.
//!
//! Between the socket and hyper, this reads the client's HTTP/2 frames
//! until its first request's header block. If that block's authority has a
//! scheme, the connection is rewritten for its whole life: every header
//! block is decoded (HPACK, with the client's dynamic table) and encoded
//! again as literals without indexing, the authority without its scheme, so
//! h2's decoder never depends on entries the rewriting changed. Otherwise,
//! the usual case, the connection is handed on untouched from then on at
//! no cost. Anything unexpected (not HTTP/2, a block that does not decode)
//! also hands the bytes on as they are, for hyper to answer as it would.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tonic::transport::server::Connected;

use crate::http2::{CONTINUATION, FRAME_HEADER, HEADERS, PREFACE};

const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY: u8 = 0x20;
/// HTTP/2's default SETTINGS_MAX_FRAME_SIZE, which hyper keeps.
const MAX_PAYLOAD: usize = 16_384;
/// A frame longer than this is not one a client may send: hand it on.
const LARGEST_FRAME: usize = 1 << 20;
/// HTTP/2's default SETTINGS_HEADER_TABLE_SIZE, which hyper keeps.
const TABLE_SIZE: usize = 4096;
/// The most of one header block held back to be looked at. hyper takes
/// header lists of 16 KiB at most and h2 ends a connection whose block
/// runs past a few frames (a CONTINUATION flood); a block past this is
/// handed on as it is, for h2 to refuse, instead of being held here
/// without bound.
const MAX_BLOCK: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Waiting for the client's preface.
    Preface,
    /// Frames until the first header block decides.
    Deciding,
    /// Every header block rewritten.
    Rewriting,
    /// Bytes handed on as they come.
    Passthrough,
}

/// A header block being assembled from HEADERS and CONTINUATION frames.
struct Block {
    stream: u32,
    end_stream: bool,
    priority: Option<[u8; 5]>,
    fragment: Vec<u8>,
    /// The frames as received, handed on if the block is not rewritten.
    raw: Vec<u8>,
}

/// The frame rewriting, apart from any socket.
pub struct Rewriter {
    mode: Mode,
    block: Option<Block>,
    decoder: loona_hpack::Decoder<'static>,
}

impl Default for Rewriter {
    fn default() -> Self {
        let mut decoder = loona_hpack::Decoder::new();
        decoder.set_max_allowed_table_size(TABLE_SIZE);
        Self { mode: Mode::Preface, block: None, decoder }
    }
}

impl Rewriter {
    /// Whether bytes now go through untouched.
    pub fn passing_through(&self) -> bool {
        self.mode == Mode::Passthrough
    }

    /// The client closed: whatever is held back goes on as it is.
    pub fn finish(&mut self, input: &mut Vec<u8>, output: &mut Vec<u8>) {
        self.mode = Mode::Passthrough;
        self.process(input, output);
    }

    /// Takes what it can of `input` (whole frames) and appends what hyper
    /// gets to `output`.
    pub fn process(&mut self, input: &mut Vec<u8>, output: &mut Vec<u8>) {
        loop {
            match self.mode {
                Mode::Passthrough => {
                    if let Some(block) = self.block.take() {
                        output.extend_from_slice(&block.raw);
                    }
                    output.append(input);
                    return;
                }
                Mode::Preface => {
                    let seen = input.len().min(PREFACE.len());
                    if input[..seen] != PREFACE[..seen] {
                        self.mode = Mode::Passthrough;
                    } else if seen == PREFACE.len() {
                        output.extend(input.drain(..PREFACE.len()));
                        self.mode = Mode::Deciding;
                    } else {
                        return;
                    }
                }
                Mode::Deciding | Mode::Rewriting => {
                    if input.len() < FRAME_HEADER {
                        return;
                    }
                    let length =
                        usize::from(input[0]) << 16 | usize::from(input[1]) << 8 | usize::from(input[2]);
                    if length > LARGEST_FRAME {
                        self.mode = Mode::Passthrough;
                        continue;
                    }
                    if input.len() < FRAME_HEADER + length {
                        return;
                    }
                    let frame: Vec<u8> = input.drain(..FRAME_HEADER + length).collect();
                    self.frame(frame, output);
                }
            }
        }
    }

    fn frame(&mut self, frame: Vec<u8>, output: &mut Vec<u8>) {
        let (kind, flags) = (frame[3], frame[4]);
        let stream = u32::from_be_bytes([frame[5], frame[6], frame[7], frame[8]]) & 0x7fff_ffff;
        let payload = &frame[FRAME_HEADER..];
        match (kind, &mut self.block) {
            (HEADERS, None) => {
                let Some((priority, fragment)) = headers_payload(flags, payload) else {
                    return self.give_up(frame, output);
                };
                let fragment = fragment.to_vec();
                let end_stream = flags & END_STREAM != 0;
                self.block = Some(Block { stream, end_stream, priority, fragment, raw: frame.clone() });
                if flags & END_HEADERS != 0 {
                    self.finish_block(output);
                }
            }
            (CONTINUATION, Some(block)) if block.stream == stream => {
                block.fragment.extend_from_slice(payload);
                block.raw.extend_from_slice(&frame);
                if flags & END_HEADERS != 0 {
                    self.finish_block(output);
                } else if block.raw.len() > MAX_BLOCK {
                    self.pass_through(output);
                }
            }
            // Any other frame inside a header block is the client's error.
            (_, Some(_)) | (CONTINUATION, None) => self.give_up(frame, output),
            (_, None) => output.extend_from_slice(&frame),
        }
    }

    /// Hands `frame` (and a pending block) on as they are, and all after.
    fn give_up(&mut self, frame: Vec<u8>, output: &mut Vec<u8>) {
        self.pass_through(output);
        output.extend_from_slice(&frame);
    }

    /// Hands a pending block on as it is, and all after.
    fn pass_through(&mut self, output: &mut Vec<u8>) {
        if let Some(block) = self.block.take() {
            output.extend_from_slice(&block.raw);
        }
        self.mode = Mode::Passthrough;
    }

    fn finish_block(&mut self, output: &mut Vec<u8>) {
        let Some(block) = self.block.take() else { return };
        let Some(headers) = self.decode(&block.fragment) else {
            output.extend_from_slice(&block.raw);
            self.mode = Mode::Passthrough;
            return;
        };
        if self.mode == Mode::Deciding {
            let schemed =
                headers.iter().any(|(name, value)| name == b":authority" && schemed(value).is_some());
            if !schemed {
                output.extend_from_slice(&block.raw);
                self.mode = Mode::Passthrough;
                return;
            }
            self.mode = Mode::Rewriting;
        }
        let mut encoded = Vec::new();
        for (name, value) in &headers {
            let value = match name.as_slice() {
                b":authority" => schemed(value).unwrap_or(value),
                _ => value,
            };
            literal(name, value, &mut encoded);
        }
        write_block(&block, &encoded, output);
    }

    /// The block's fields. The decoder is a third party's, fed bytes from
    /// the network: should it ever panic, the block counts as undecodable.
    fn decode(&mut self, fragment: &[u8]) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
        let decoder = &mut self.decoder;
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decoder.decode(fragment).ok()))
            .ok()
            .flatten()
    }
}

/// The authority without its `scheme://` (and trailing slash), if it has one.
fn schemed(authority: &[u8]) -> Option<&[u8]> {
    let at = authority.windows(3).position(|w| w == b"://")?;
    let rest = &authority[at + 3..];
    Some(rest.strip_suffix(b"/").unwrap_or(rest))
}

/// A HEADERS payload's priority fields and header block fragment.
fn headers_payload(flags: u8, payload: &[u8]) -> Option<(Option<[u8; 5]>, &[u8])> {
    let mut rest = payload;
    let mut padding = 0;
    if flags & PADDED != 0 {
        let (&pad, after) = rest.split_first()?;
        padding = usize::from(pad);
        rest = after;
    }
    let mut priority = None;
    if flags & PRIORITY != 0 {
        let (fields, after) = rest.split_first_chunk::<5>()?;
        priority = Some(*fields);
        rest = after;
    }
    let end = rest.len().checked_sub(padding)?;
    Some((priority, &rest[..end]))
}

/// HPACK "literal header field without indexing, new name", no Huffman.
fn literal(name: &[u8], value: &[u8], out: &mut Vec<u8>) {
    out.push(0);
    for text in [name, value] {
        integer(text.len(), out);
        out.extend_from_slice(text);
    }
}

/// An HPACK integer with a 7-bit prefix (the string length, H bit clear).
fn integer(mut n: usize, out: &mut Vec<u8>) {
    if n < 127 {
        out.push(n as u8);
        return;
    }
    out.push(127);
    n -= 127;
    while n >= 128 {
        out.push((n % 128) as u8 | 0x80);
        n /= 128;
    }
    out.push(n as u8);
}

/// The rewritten block as a HEADERS frame and as many CONTINUATIONs as it
/// takes.
fn write_block(block: &Block, encoded: &[u8], output: &mut Vec<u8>) {
    let priority: &[u8] = block.priority.as_ref().map_or(&[], |p| &p[..]);
    let first_room = MAX_PAYLOAD - priority.len();
    let (first, mut rest) = encoded.split_at(encoded.len().min(first_room));
    let mut flags = if block.end_stream { END_STREAM } else { 0 };
    if block.priority.is_some() {
        flags |= PRIORITY;
    }
    if rest.is_empty() {
        flags |= END_HEADERS;
    }
    frame_header(priority.len() + first.len(), HEADERS, flags, block.stream, output);
    output.extend_from_slice(priority);
    output.extend_from_slice(first);
    while !rest.is_empty() {
        let (chunk, after) = rest.split_at(rest.len().min(MAX_PAYLOAD));
        let flags = if after.is_empty() { END_HEADERS } else { 0 };
        frame_header(chunk.len(), CONTINUATION, flags, block.stream, output);
        output.extend_from_slice(chunk);
        rest = after;
    }
}

fn frame_header(length: usize, kind: u8, flags: u8, stream: u32, out: &mut Vec<u8>) {
    out.extend_from_slice(&(length as u32).to_be_bytes()[1..]);
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// A client connection read through a [`Rewriter`].
pub struct AuthorityFix<T> {
    io: T,
    rewriter: Rewriter,
    input: Vec<u8>,
    output: Vec<u8>,
    /// How much of `output` hyper has taken.
    taken: usize,
}

impl<T> AuthorityFix<T> {
    pub fn new(io: T) -> Self {
        Self { io, rewriter: Rewriter::default(), input: Vec::new(), output: Vec::new(), taken: 0 }
    }
}

impl<T: Connected> Connected for AuthorityFix<T> {
    type ConnectInfo = T::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.io.connect_info()
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for AuthorityFix<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.taken < this.output.len() {
                let n = buf.remaining().min(this.output.len() - this.taken);
                buf.put_slice(&this.output[this.taken..this.taken + n]);
                this.taken += n;
                if this.taken == this.output.len() {
                    this.output.clear();
                    this.taken = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.rewriter.passing_through() {
                return Pin::new(&mut this.io).poll_read(cx, buf);
            }
            let mut chunk = [0u8; 8192];
            let mut read = ReadBuf::new(&mut chunk);
            ready!(Pin::new(&mut this.io).poll_read(cx, &mut read))?;
            if read.filled().is_empty() {
                // The client is done: what is left goes on as it is.
                this.rewriter.finish(&mut this.input, &mut this.output);
                if this.output.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                continue;
            }
            this.input.extend_from_slice(read.filled());
            this.rewriter.process(&mut this.input, &mut this.output);
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for AuthorityFix<T> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A client's opening: preface, an empty SETTINGS, then one request
    /// whose block is `fields` as literals (split across a CONTINUATION
    /// when `split`).
    fn opening(fields: &[(&str, &str)], split: bool) -> Vec<u8> {
        let mut block = Vec::new();
        for (name, value) in fields {
            literal(name.as_bytes(), value.as_bytes(), &mut block);
        }
        let mut bytes = PREFACE.to_vec();
        frame_header(0, 0x4, 0, 0, &mut bytes);
        let cut = if split { block.len() / 2 } else { block.len() };
        frame_header(cut, HEADERS, if split { 0 } else { END_HEADERS }, 1, &mut bytes);
        bytes.extend_from_slice(&block[..cut]);
        if split {
            frame_header(block.len() - cut, CONTINUATION, END_HEADERS, 1, &mut bytes);
            bytes.extend_from_slice(&block[cut..]);
        }
        bytes
    }

    /// The header fields of every header block in `bytes` (after the
    /// preface), as h2 would decode them.
    fn requests(bytes: &[u8]) -> Vec<Vec<(String, String)>> {
        let mut decoder = loona_hpack::Decoder::new();
        let mut rest = &bytes[PREFACE.len()..];
        let mut blocks = Vec::new();
        let mut block = Vec::new();
        while rest.len() >= FRAME_HEADER {
            let length = usize::from(rest[1]) << 8 | usize::from(rest[2]);
            let (kind, flags) = (rest[3], rest[4]);
            let payload = &rest[FRAME_HEADER..FRAME_HEADER + length];
            if kind == HEADERS || kind == CONTINUATION {
                let fragment =
                    if kind == HEADERS { headers_payload(flags, payload).unwrap().1 } else { payload };
                block.extend_from_slice(fragment);
                if flags & END_HEADERS != 0 {
                    let fields = decoder.decode(&block).unwrap();
                    let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
                    blocks.push(fields.iter().map(|(n, v)| (text(n), text(v))).collect());
                    block.clear();
                }
            }
            rest = &rest[FRAME_HEADER + length..];
        }
        blocks
    }

    fn through(bytes: &[u8], chunk: usize) -> Vec<u8> {
        let mut rewriter = Rewriter::default();
        let (mut input, mut output) = (Vec::new(), Vec::new());
        for piece in bytes.chunks(chunk) {
            input.extend_from_slice(piece);
            rewriter.process(&mut input, &mut output);
        }
        output
    }

    #[test]
    fn a_schemed_authority_loses_its_scheme() {
        let fields = [(":method", "POST"), (":authority", "http://127.0.0.1:2379"), (":path", "/x")];
        for split in [false, true] {
            for chunk in [1, 7, 1000] {
                let out = through(&opening(&fields, split), chunk);
                assert_eq!(requests(&out)[0][1], (":authority".into(), "127.0.0.1:2379".into()));
                assert_eq!(requests(&out)[0][2], (":path".into(), "/x".into()));
            }
        }
    }

    #[test]
    fn an_endless_header_block_is_handed_on_not_held() {
        let mut flood = PREFACE.to_vec();
        frame_header(3, HEADERS, 0, 1, &mut flood);
        flood.extend_from_slice(b"\x00\x01a");
        let mut rewriter = Rewriter::default();
        let (mut input, mut output) = (flood.clone(), Vec::new());
        rewriter.process(&mut input, &mut output);
        for _ in 0..100 {
            frame_header(MAX_PAYLOAD, CONTINUATION, 0, 1, &mut input);
            input.extend(std::iter::repeat_n(0x7f, MAX_PAYLOAD));
            rewriter.process(&mut input, &mut output);
        }
        // Past the bound, everything went on to h2 (which ends the
        // connection); nothing is held back.
        assert!(rewriter.passing_through());
        assert!(input.is_empty());
        assert_eq!(output.len(), flood.len() + 100 * (FRAME_HEADER + MAX_PAYLOAD));
    }

    #[test]
    fn other_connections_pass_untouched() {
        let plain = opening(&[(":method", "POST"), (":authority", "127.0.0.1:2379")], false);
        assert_eq!(through(&plain, 5), plain);
        let http1 = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n".to_vec();
        assert_eq!(through(&http1, 3), http1);
        // A block that does not decode goes on as it is, for h2 to refuse.
        let mut broken = PREFACE.to_vec();
        frame_header(3, HEADERS, END_HEADERS, 1, &mut broken);
        broken.extend_from_slice(&[0xff, 0xff, 0xff]);
        assert_eq!(through(&broken, 4), broken);
    }

    #[test]
    fn later_requests_on_a_rewritten_connection_use_the_clients_table() {
        // The client indexes the authority and then refers to it: the
        // rewriter follows the client's table, h2 gets literals.
        let mut encoder_block = vec![0x41]; // literal with incremental indexing, name index 1 (:authority)
        integer(21, &mut encoder_block);
        encoder_block.extend_from_slice(b"http://127.0.0.1:2379");
        let mut bytes = PREFACE.to_vec();
        frame_header(encoder_block.len(), HEADERS, END_HEADERS, 1, &mut bytes);
        bytes.extend_from_slice(&encoder_block);
        frame_header(1, HEADERS, END_HEADERS | END_STREAM, 3, &mut bytes);
        bytes.push(0x80 | 62); // indexed: the first dynamic entry
        let out = through(&bytes, 10);
        let expected = vec![(":authority".to_string(), "127.0.0.1:2379".to_string())];
        assert_eq!(requests(&out), vec![expected.clone(), expected]);
    }
}
